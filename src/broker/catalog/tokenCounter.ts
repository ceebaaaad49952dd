// Counting tokens (js-tiktoken, cl100k_base) at a bounded cost, and the short-lived child process
// the broker counts in (`<broker entry> count-tokens`). The texts come from upstreams, so a hostile
// one chooses them: byte-pair encoding takes time growing with the square of one "piece" (a run of
// letters, of punctuation or of spaces: 10,000 letters took 18 s), so long runs are counted in short
// chunks and a very long text by its beginning; the child has a deadline, and it ends itself when the
// broker is gone (its stdin closes, or its parent process changes), so no orphan spins a core.
import { spawn } from 'node:child_process';

/** The encoding used (OpenAI's GPT-4 family); other models' counts differ by some percent. */
export const TOKEN_ENCODING = 'cl100k_base';

/**
 * A run longer than this is counted in chunks of this length: real words and symbols are far
 * shorter, and a chunk costs microseconds however the run was made.
 */
export const MAX_PIECE_LENGTH = 64;
/** Characters of one text counted; the rest is estimated at the rate of what was counted. */
export const MAX_COUNTED_LENGTH = 256 * 1024;
/** How long a counting child may take: a base, plus time for each megabyte it is given. */
const DEADLINE_BASE_MS = 60_000;
const DEADLINE_PER_MB_MS = 10_000;
/** How often the counting child checks that the broker that started it is still there. */
const PARENT_CHECK_MS = 500;

const LONG_RUN = new RegExp(
  `\\p{L}{${MAX_PIECE_LENGTH + 1},}|[^\\s\\p{L}\\p{N}]{${MAX_PIECE_LENGTH + 1},}|\\s{${MAX_PIECE_LENGTH + 1},}`,
  'gu',
);

interface Encoder {
  encode(text: string): number[];
}

let encoder: Encoder | undefined;
function encoderNow(): Encoder {
  // Required here, not imported: the ranks are a megabyte that only counting needs (js-tiktoken is
  // an ES module to TypeScript, and a plain CommonJS module in the bundle).
  if (!encoder) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { Tiktoken } = require('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => Encoder };
    encoder = new Tiktoken(require('js-tiktoken/ranks/cl100k_base'));
    /* eslint-enable @typescript-eslint/no-require-imports */
  }
  return encoder;
}

/**
 * Tokens of `text`, in time linear in its length: each run longer than MAX_PIECE_LENGTH is counted
 * chunk by chunk (the count of such a run is close to, not exactly, what the model's tokenizer says),
 * and past MAX_COUNTED_LENGTH characters the count is scaled up from the part counted.
 */
export function countTokens(text: string): number {
  const counted = text.length > MAX_COUNTED_LENGTH ? text.slice(0, MAX_COUNTED_LENGTH) : text;
  const enc = encoderNow();
  let total = 0;
  let at = 0;
  for (const run of counted.matchAll(LONG_RUN)) {
    if (run.index > at) total += enc.encode(counted.slice(at, run.index)).length;
    for (let i = 0; i < run[0].length; i += MAX_PIECE_LENGTH) {
      total += enc.encode(run[0].slice(i, i + MAX_PIECE_LENGTH)).length;
    }
    at = run.index + run[0].length;
  }
  if (at < counted.length) total += enc.encode(counted.slice(at)).length;
  return counted.length < text.length ? Math.ceil((total * text.length) / counted.length) : total;
}

/** Counts texts, returning one count per text in order; `signal` stops a count the broker no longer needs. */
export type TokenCounter = (texts: readonly string[], signal?: AbortSignal) => Promise<number[]>;

/** In this process (tests, tools): the tokenizer stays loaded. */
export const countHere: TokenCounter = async (texts) => texts.map((t) => countTokens(t));

/** The hidden CLI command the broker's entry point runs as to count (see processCounter). */
export const COUNT_TOKENS_COMMAND = 'count-tokens';

/**
 * `count-tokens [<broker pid>]`: one line on stdin (a JSON array of strings), their token counts on stdout. The
 * broker keeps stdin open while it waits: when it closes (the broker ended, however it ended) or the
 * parent process is another (the broker died and this process was re-parented), the count is
 * abandoned at the next text. Linux has no portable way for Node to ask the kernel for that signal
 * (prctl PDEATHSIG), so both are watched, which also holds on macOS and Windows.
 */
export function countTokensFromStdin(parentPid?: string): Promise<number> {
  // The broker names itself: a broker that died before this process got going has left it with
  // another parent already, which process.ppid alone would take for the broker.
  const parent = Number(parentPid) > 0 ? Number(parentPid) : process.ppid;
  const gone = (why: string): void => {
    process.stderr.write(`count-tokens: ${why}; stopping\n`);
    process.exit(3);
  };
  const watchdog = setInterval(() => {
    if (process.ppid !== parent) gone('the broker that started this count is gone');
    try {
      process.kill(parent, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') gone('the broker that started this count is gone');
    }
  }, PARENT_CHECK_MS);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let started = false;
    process.stdin.on('data', (chunk: Buffer) => {
      if (started) return;
      chunks.push(chunk);
      if (!chunk.includes(0x0a)) return;
      started = true;
      const line = Buffer.concat(chunks).toString('utf8');
      const texts = JSON.parse(line.slice(0, line.indexOf('\n'))) as string[];
      void countYielding(texts).then((counts) => {
        clearInterval(watchdog);
        process.stdin.destroy();
        process.stdout.write(JSON.stringify(counts), () => resolve(0));
      });
    });
    process.stdin.on('end', () => gone('stdin closed (the broker ended or stopped waiting)'));
  });
}

/** Counts text by text, letting the event loop run between them (the watchdog, stdin's end). */
async function countYielding(texts: readonly string[]): Promise<number[]> {
  const counts: number[] = [];
  for (const text of texts) {
    counts.push(countTokens(text));
    await new Promise((r) => setImmediate(r));
  }
  return counts;
}

/**
 * Counts in a short-lived child process running the broker's entry point (`script`). A process, not
 * a worker thread: a thread's native allocations (the tokenizer's ~80 MB) come from the broker's own
 * malloc arena, and glibc kept a good part of them after the thread ended (measured: +17 MB of RSS
 * for good, on a broker of ~60 MB); a process gives everything back when it exits. A child that
 * outlives its deadline is killed and the count fails (ToolTokens tries again later).
 */
export function processCounter(script: string, deadlineMs?: (bytes: number) => number): TokenCounter {
  return (texts, signal) =>
    new Promise((resolve, reject) => {
      const request = `${JSON.stringify(texts)}\n`;
      const bytes = Buffer.byteLength(request);
      const limit = deadlineMs?.(bytes) ?? DEADLINE_BASE_MS + Math.ceil(bytes / 1024 / 1024) * DEADLINE_PER_MB_MS;
      // execPath may be an editor's Electron binary: the broker's environment (ELECTRON_RUN_AS_NODE) passes on.
      const child = spawn(process.execPath, [script, COUNT_TOKENS_COMMAND, String(process.pid)], {
        stdio: ['pipe', 'pipe', 'ignore'],
        windowsHide: true,
      });
      let stopped: string | undefined;
      const stop = (why: string): void => {
        stopped ??= why;
        child.kill('SIGKILL');
      };
      const timer = setTimeout(() => stop(`it took longer than ${Math.round(limit / 1000)} s`), limit);
      timer.unref();
      const onAbort = (): void => stop('the broker is stopping');
      signal?.addEventListener('abort', onAbort, { once: true });
      const out: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.on('error', reject);
      child.stdin.on('error', () => undefined); // an early exit is reported by 'close'
      child.on('close', (code) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        child.stdin.destroy();
        try {
          const counts = JSON.parse(Buffer.concat(out).toString('utf8')) as number[];
          if (code === 0 && counts.length === texts.length) return resolve(counts);
        } catch {
          /* reported below */
        }
        reject(new Error(`counting tokens failed (${stopped ?? `exit ${code}`})`));
      });
      if (signal?.aborted) return stop('the broker is stopping');
      // Written, not ended: the open pipe is how the child knows the broker is still waiting.
      child.stdin.write(request);
    });
}
