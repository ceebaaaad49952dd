// Shared by the Switchboard suites that run inside the real VS Code extension host.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SwitchboardApi } from '../../../src/extension/extension';
import type { FolderEntry } from '../../../src/extension/ctx';

export const EXTENSION_ID = 'switchboard.mcp-switchboard';
/** The repository (this file runs from out/test/vscode/suite). */
export const REPO = path.resolve(__dirname, '..', '..', '..', '..');
export const ECHO_FIXTURE = path.join(REPO, 'test', 'fixtures', 'echo.mjs');
/** Node for the fixtures: the extension host's own in code-server; in desktop VS Code that is Electron, so `node` from PATH. */
export const NODE = process.versions.electron ? 'node' : process.execPath;

export async function api(): Promise<SwitchboardApi> {
  const ext = vscode.extensions.getExtension<SwitchboardApi>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed`);
  return ext.activate();
}

export function folder(): vscode.WorkspaceFolder {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f, 'no workspace folder is open');
  return f;
}

/** Waits until `pred` holds, re-checking on every broker change and diagnostics change (no sleeps in between). */
export async function waitFor<T>(
  a: SwitchboardApi,
  pred: () => T | undefined | false | null,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const first = pred();
  if (first) return first;
  return new Promise<T>((resolve, reject) => {
    const subs: vscode.Disposable[] = [];
    const done = (err?: Error, v?: T): void => {
      clearTimeout(timer);
      clearInterval(tick);
      for (const s of subs) s.dispose();
      if (err) reject(err);
      else resolve(v as T);
    };
    const check = (): void => {
      try {
        const v = pred();
        if (v) done(undefined, v);
      } catch (e) {
        done(e as Error);
      }
    };
    subs.push(a.ctx.onDidChange(check), vscode.languages.onDidChangeDiagnostics(check));
    // A safety net for conditions no event announces (a file appearing); the views never poll.
    const tick = setInterval(check, 500);
    const timer = setTimeout(() => {
      const e = a.ctx.entries()[0];
      done(
        new Error(
          `timed out after ${timeoutMs} ms waiting for ${what} (broker ${e?.phase}, ${e?.conn.lastError ?? 'no error'}; ` +
            `servers: ${e?.state?.servers.map((s) => `${s.name}=${s.state}`).join(', ') ?? 'none'})`,
        ),
      );
    }, timeoutMs);
  });
}

export async function connectedEntry(a: SwitchboardApi): Promise<FolderEntry> {
  return waitFor(
    a,
    () => a.ctx.entries().find((e) => e.phase === 'connected' && e.state),
    'the broker to be connected',
    45_000,
  );
}

/** A builtin server definition running this repository's echo fixture, with absolute paths. */
export function echoServerYaml(name: string, description?: string): string {
  return `# Rewritten by the VS Code tests: absolute paths, since the workspace is a temp copy.
name: ${name}
${description ? `description: ${description}\n` : ''}trust: builtin
command: ${JSON.stringify(NODE)}
args: [${JSON.stringify(ECHO_FIXTURE)}, --name, ${name}]
`;
}

/**
 * The harness opens a temp copy of workspace/, whose echo.yaml points at ../test/fixtures with a
 * relative path. Point it at this repository's fixture (the broker reloads the file and starts it).
 */
export async function useAbsoluteEcho(a: SwitchboardApi): Promise<void> {
  const entry = await connectedEntry(a);
  const file = path.join(entry.root, 'mcp-servers.d', 'echo.yaml');
  const wanted = echoServerYaml(
    'echo',
    'Echo fixture from this repository — handy to see a call go through the broker.',
  );
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== wanted) fs.writeFileSync(file, wanted);
  await waitFor(a, () => entry.server('echo')?.state === 'running', 'echo to run', 45_000);
}

export function expectTrusted(): boolean {
  return process.env.SWITCHBOARD_EXPECT_TRUSTED !== 'false';
}

/** Runs a Switchboard command (`switchboard.<name>`) with its arguments, as the palette or a test would. */
export const run = <T>(name: string, ...args: unknown[]): Thenable<T> =>
  vscode.commands.executeCommand<T>(`switchboard.${name}`, ...args);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `pred` (for conditions no broker or diagnostics event announces) until it holds. */
export async function until<T>(
  pred: () => T | undefined | false | Thenable<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await pred();
    if (v) return v;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Asks the runner (run.mjs) for a screenshot of the workbench as it is, and waits until it is written. */
export async function screenshot(name: string): Promise<void> {
  const file = path.join(REPO, 'docs', 'screenshots', name);
  const before = fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0;
  console.log(`[screenshot] docs/screenshots/${name}`);
  const deadline = Date.now() + 20_000;
  while ((fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0) === before) {
    assert.ok(Date.now() < deadline, `the runner did not write ${name}`);
    await sleep(200);
  }
}

/** Every file below `dir` (symlinks not followed) whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  if (!fs.existsSync(dir)) return found;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) found.push(...filesContaining(p, needle));
    else if (e.isFile() && fs.readFileSync(p).includes(needle)) found.push(p);
  }
  return found;
}

/** One answer to a pick or input box a command shows: what it must ask, and what a person would do. */
export interface QuickAnswer {
  /** The pick's placeholder, the input box's prompt, or the password box's title. */
  asks: RegExp;
  /** The item to choose (its label without the `$(icon)` prefix), or the text to type. */
  answer: string;
  /** A screenshot for the README (docs/screenshots/<name>) while it is shown, before answering. */
  screenshot?: string;
}

/** What the command showed, for the test to check afterwards (labels and descriptions as shown). */
export interface QuickShown {
  asked: string;
  items: { label: string; description?: string; detail?: string }[];
}

const bare = (label: string): string => label.replace(/^\$\([\w-]+\)\s*/, '');

/**
 * Answers a command's picks and input boxes (the extension's test hooks, on only under this suite)
 * through the workbench's own quick input, in order: checks that each asks what it should, chooses
 * the item or types the text, and accepts it as Enter would. `result` rejects on an unexpected or
 * extra question.
 */
export function answerQuickInputs(
  a: SwitchboardApi,
  answers: readonly QuickAnswer[],
): { shown: QuickShown[]; done(): Promise<void> } {
  const queue = [...answers];
  const shown: QuickShown[] = [];
  const errors: Error[] = [];
  let pending = Promise.resolve();
  const accept = async (set: () => void, name?: string): Promise<void> => {
    if (name) await screenshot(name);
    set();
    // Property changes reach the workbench on the extension host's next tick; then press Enter.
    await sleep(300);
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  };
  const next = (asked: string): QuickAnswer | undefined => {
    const step = queue.shift();
    if (!step) errors.push(new Error(`an unexpected question: "${asked}"`));
    else if (!step.asks.test(asked)) errors.push(new Error(`asked "${asked}", expected ${step.asks}`));
    else return step;
    return undefined;
  };
  const handle = (work: () => Promise<void>): void => {
    pending = pending.then(work).catch((e: Error) => {
      errors.push(e);
    });
  };
  const subs = [
    a.onDidShowQuickInput((s) => {
      if (s.kind === 'pick') {
        const items = s.pick.items.map((i) => ({ label: i.label, description: i.description, detail: i.detail }));
        shown.push({ asked: s.placeholder, items });
        const step = next(s.placeholder);
        if (!step) return void s.pick.hide();
        const item = s.pick.items.find((i) => bare(i.label) === step.answer);
        if (!item) {
          errors.push(
            new Error(`no item '${step.answer}' in "${s.placeholder}": ${items.map((i) => i.label).join(', ')}`),
          );
          return void s.pick.hide();
        }
        handle(() =>
          accept(() => {
            s.pick.activeItems = [item];
          }, step.screenshot),
        );
      } else {
        shown.push({ asked: s.prompt, items: [] });
        const step = next(s.prompt);
        if (!step) return void s.box.hide();
        handle(() =>
          accept(() => {
            s.box.value = step.answer;
          }, step.screenshot),
        );
      }
    }),
    a.secrets.onDidShowSecretInput((s) => {
      const asked = s.box.title ?? s.input;
      shown.push({ asked, items: [] });
      const step = next(asked);
      if (!step) return void s.box.hide();
      assert.strictEqual(s.box.password, true, `${asked} is a password box`);
      handle(() =>
        accept(() => {
          s.box.value = step.answer;
        }, step.screenshot),
      );
    }),
  ];
  return {
    shown,
    async done() {
      await pending;
      for (const s of subs) s.dispose();
      if (errors.length) throw errors[0];
      assert.deepStrictEqual(
        queue.map((q) => String(q.asks)),
        [],
        'every expected question was asked',
      );
    },
  };
}
