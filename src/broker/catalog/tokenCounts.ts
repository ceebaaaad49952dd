// What tool definitions cost a model's context: tokens (js-tiktoken, cl100k_base) of each tool as
// tools/list sends it, per server and per client profile. Counted off the request path and out of
// the broker's memory: the tokenizer takes ~0.5 s of CPU and ~80 MB to load, so the broker hands the
// definitions to a short-lived process running its own entry point as `count-tokens` once the
// catalog has been quiet for a moment (see processCounter).
// Each definition is counted once by its text, so an upstream that restarts with the same tools
// (new objects, same JSON) loads no tokenizer again.
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import type { Catalog, Route } from './catalog';
import type { Tool } from '../shared/mcpTypes';

/** The encoding used (OpenAI's GPT-4 family); other models' counts differ by some percent. */
export const TOKEN_ENCODING = 'cl100k_base';

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

/** Tokens of one definition as it is listed: the JSON of the tool object under its listed name. */
export function countToolTokens(tool: Tool): number {
  return encoderNow().encode(JSON.stringify(tool)).length;
}

/** Counts texts, returning one count per text in order. */
export type TokenCounter = (texts: readonly string[]) => Promise<number[]>;

/** In this process (tests, tools): the tokenizer stays loaded. */
export const countHere: TokenCounter = async (texts) => texts.map((t) => encoderNow().encode(t).length);

/** The hidden CLI command the broker's entry point runs as to count (see processCounter). */
export const COUNT_TOKENS_COMMAND = 'count-tokens';

/** `count-tokens`: a JSON array of strings on stdin, their token counts on stdout. */
export async function countTokensFromStdin(): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const texts = JSON.parse(Buffer.concat(chunks).toString('utf8')) as string[];
  process.stdout.write(JSON.stringify(await countHere(texts)));
  return 0;
}

/**
 * Counts in a short-lived child process running the broker's entry point (`script`). A process, not
 * a worker thread: a thread's native allocations (the tokenizer's ~80 MB) come from the broker's own
 * malloc arena, and glibc kept a good part of them after the thread ended (measured: +17 MB of RSS
 * for good, on a broker of ~60 MB); a process gives everything back when it exits.
 */
export function processCounter(script: string): TokenCounter {
  return (texts) =>
    new Promise((resolve, reject) => {
      // execPath may be an editor's Electron binary: the broker's environment (ELECTRON_RUN_AS_NODE) passes on.
      const child = spawn(process.execPath, [script, COUNT_TOKENS_COMMAND], {
        stdio: ['pipe', 'pipe', 'ignore'],
        windowsHide: true,
      });
      const out: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.on('error', reject);
      child.stdin.on('error', () => undefined); // an early exit is reported by 'close'
      child.on('close', (code) => {
        try {
          const counts = JSON.parse(Buffer.concat(out).toString('utf8')) as number[];
          if (code === 0 && counts.length === texts.length) return resolve(counts);
        } catch {
          /* reported below */
        }
        reject(new Error(`counting tokens failed (exit ${code})`));
      });
      child.stdin.end(JSON.stringify(texts));
    });
}

export class ToolTokens {
  /** Tokens per definition text (its digest), bounded by the catalog's size (see prune). */
  private readonly perText = new Map<string, number>();
  /** The digest of each tool object as listed, so a count or a record hashes a definition once. */
  private readonly digestOf = new WeakMap<Tool, string>();
  /** Tokens per listed (namespaced) name, and the names each server contributed. */
  private readonly perExposed = new Map<string, number>();
  private readonly namesOf = new Map<string, string[]>();
  private readonly perServer = new Map<string, number>();
  /** Client totals, per key, until the next count or catalog change. */
  private readonly totals = new Map<string, number>();
  private totalsOf?: object;
  private readonly pending = new Set<string>();
  private timer?: NodeJS.Timeout;
  private counting = false;
  /** Failed counts in a row: each retry waits twice as long (the counting child may fail under load). */
  private failures = 0;
  private built = false;
  private closed = false;

  constructor(
    private readonly catalog: Catalog,
    /** Told when counts changed (the state resource is then re-read). */
    private readonly onCounted: () => void,
    private readonly counter: TokenCounter = countHere,
    private readonly quietMs = 300,
  ) {}

  /** Servers whose tools a catalog rebuild changed; they are counted again once things are quiet. */
  invalidate(servers: readonly string[]): void {
    if (!this.built) {
      this.built = true;
      for (const tool of this.catalog.listTools()) this.pending.add(this.catalog.resolveTool(tool.name)!.server);
    }
    for (const server of servers) this.pending.add(server);
    if (this.pending.size && !this.counting) this.schedule();
  }

  /** A server's tool-definition tokens; undefined until counted (or while it lists no tools). */
  ofServer(server: string): number | undefined {
    return this.pending.has(server) ? undefined : this.perServer.get(server);
  }

  /**
   * The tokens of every listed tool `visible` admits, remembered under `key` until counts or the
   * catalog change; undefined while servers are still being counted.
   */
  total(key: string, visible: (route: Route) => boolean): number | undefined {
    if (this.pending.size || !this.built) return undefined;
    const list = this.catalog.listTools();
    if (this.totalsOf !== list) {
      this.totalsOf = list;
      this.totals.clear();
    }
    let sum = this.totals.get(key);
    if (sum === undefined) {
      sum = 0;
      for (const tool of list) {
        const route = this.catalog.resolveTool(tool.name);
        if (route && visible(route)) sum += this.perExposed.get(tool.name) ?? 0;
      }
      this.totals.set(key, sum);
    }
    return sum;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs = this.quietMs): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.countPending(), delayMs);
    this.timer.unref();
  }

  /** Counts every pending server in one batch: only definitions not counted before are sent. */
  private async countPending(): Promise<void> {
    if (this.closed) return;
    this.counting = true;
    const servers = [...this.pending];
    const fresh = new Map<string, string>();
    for (const server of servers) {
      const view = this.catalog.server(server);
      for (const tool of view.tools) {
        const exposed = view.exposedTool(tool.name);
        if (exposed === undefined) continue;
        const text = JSON.stringify({ ...tool, name: exposed });
        const digest = createHash('sha256').update(text).digest('base64');
        this.digestOf.set(tool, digest);
        if (!this.perText.has(digest)) fresh.set(digest, text);
      }
    }
    try {
      const counts = fresh.size ? await this.counter([...fresh.values()]) : [];
      [...fresh.keys()].forEach((digest, i) => this.perText.set(digest, counts[i]));
    } catch {
      // No counts this time (the state has none yet): try again later rather than wait for a catalog
      // change that may never come (a fleet of idle lazy servers), backing off up to a minute.
      this.counting = false;
      this.failures++;
      if (!this.closed) this.schedule(Math.min(60_000, this.quietMs * 2 ** this.failures + 1_000 * this.failures));
      return;
    }
    this.counting = false;
    this.failures = 0;
    if (this.closed) return;
    for (const server of servers) {
      this.pending.delete(server);
      this.record(server);
    }
    this.totals.clear();
    this.prune();
    // Servers that changed while counting get their own batch.
    if (this.pending.size) this.schedule();
    else this.onCounted();
  }

  /**
   * Keeps the counts bounded by the catalog's size, oldest first out. Not pruned to exactly what is
   * listed: a server that restarts drops out of the catalog for a moment and comes back with the same
   * definitions, which should not need a tokenizer again.
   */
  private prune(): void {
    const cap = 2 * this.catalog.listTools().length + 1_000;
    for (const digest of this.perText.keys()) {
      if (this.perText.size <= cap) break;
      this.perText.delete(digest);
    }
  }

  private record(server: string): void {
    for (const name of this.namesOf.get(server) ?? []) this.perExposed.delete(name);
    const view = this.catalog.server(server);
    const names: string[] = [];
    let sum = 0;
    for (const tool of view.tools) {
      const exposed = view.exposedTool(tool.name);
      const digest = this.digestOf.get(tool);
      const n = digest === undefined ? undefined : this.perText.get(digest);
      if (exposed === undefined || n === undefined) continue;
      this.perExposed.set(exposed, n);
      names.push(exposed);
      sum += n;
    }
    this.namesOf.set(server, names);
    if (names.length) this.perServer.set(server, sum);
    else this.perServer.delete(server);
  }
}
