// Test helpers that start the real thing: the built broker as a child process, real SDK clients
// over real HTTP, and registries in real temp directories.
import { spawn, type ChildProcess } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const REPO = path.resolve(__dirname, '../../..');
export const FIXTURES = path.join(REPO, 'test', 'fixtures');
export const BROKER_JS = path.join(REPO, 'dist', 'broker.js');

export function fixture(name: string): string {
  return path.join(FIXTURES, name);
}

const tempDirs: string[] = [];
const started = new Set<ChildProcess>();

/** Every process a helper started is tracked, so a failing test cannot leave one running. */
export function track(proc: ChildProcess): ChildProcess {
  started.add(proc);
  proc.once('exit', () => started.delete(proc));
  return proc;
}

export async function killStarted(): Promise<void> {
  await Promise.all([...started].map((p) => stopProcess(p)));
}

export function tempDir(prefix = 'sb-test-'): string {
  const base = path.join(os.tmpdir(), 'switchboard-tests');
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const p of started) p.kill('SIGTERM');
  // A process just sent SIGTERM may still write its last file (a broker its record): ENOTEMPTY is retried.
  for (const dir of tempDirs.splice(0))
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}

/** Writes a registry: keys are paths relative to the root (`mcp-servers.d/echo.yaml`). */
export function writeRegistry(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}

/** A stdio server definition running one of our fixtures with the current Node. */
export function fixtureServer(name: string, script: string, extra: string[] = [], more = ''): string {
  const args = [fixture(script), ...extra].map((a) => JSON.stringify(a)).join(', ');
  return `name: ${name}\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${args}]\n${more}`;
}

export interface BrokerProcess {
  proc: ChildProcess;
  url: string;
  port: number;
  root: string;
  home: string;
  token: string;
  tokenFile: string;
  stderr: string[];
  stop(): Promise<void>;
}

export interface StartBrokerOptions {
  root: string;
  home?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * Pass --accept-workspace-trust (default true): the fixtures are `trust: trusted` and the tests
   * play the operator who accepted them. false tests the path where the operator has not.
   */
  acceptWorkspaceTrust?: boolean;
  /** The broker bundle to run (default: this checkout's dist/broker.js), e.g. one unpacked from a .vsix. */
  script?: string;
}

export async function startBrokerProcess(opts: StartBrokerOptions): Promise<BrokerProcess> {
  const home = opts.home ?? tempDir('sb-home-');
  const accept = (opts.acceptWorkspaceTrust ?? true) ? ['--accept-workspace-trust'] : [];
  const proc = spawn(
    process.execPath,
    [opts.script ?? BROKER_JS, 'serve', '--root', opts.root, '--port', '0', '--json', ...accept, ...(opts.args ?? [])],
    {
      env: { ...process.env, SWITCHBOARD_HOME: home, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  track(proc);
  const stderr: string[] = [];
  proc.stderr!.setEncoding('utf8');
  readline.createInterface({ input: proc.stderr! }).on('line', (l) => {
    stderr.push(l);
    if (process.env.SB_TEST_VERBOSE) process.stderr.write(`    [broker] ${l}\n`);
  });
  const ready = await new Promise<{ url: string; port: number; tokenFile: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`broker did not become ready:\n${stderr.join('\n')}`)),
      opts.timeoutMs ?? 20_000,
    );
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { event?: string; url: string; port: number; tokenFile: string };
        if (msg.event === 'ready') {
          clearTimeout(timer);
          resolve(msg);
        }
      } catch {
        /* not the ready line */
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited with ${code} before ready:\n${stderr.join('\n')}`));
    });
  });
  const token = fs.readFileSync(ready.tokenFile, 'utf8').trim();
  return {
    proc,
    url: ready.url,
    port: ready.port,
    root: opts.root,
    home,
    token,
    tokenFile: ready.tokenFile,
    stderr,
    stop: async () => {
      await stopProcess(proc);
      assertNoStateBug(stderr);
    },
  };
}

/**
 * An upstream that made a move its state machine does not declare (supervision/upstreamStates.ts) says
 * so on the broker's stderr instead of crashing it; every test that stops its broker fails on it.
 */
export function assertNoStateBug(stderr: readonly string[]): void {
  const bugs = stderr.filter((l) => l.includes('BUG: undeclared state move'));
  if (bugs.length)
    throw new Error(`the broker reported state moves upstreamStates.ts does not declare:\n${bugs.join('\n')}`);
}

export function stopProcess(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 8000);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill(signal);
  });
}

export function connect(url: string, token: string, name = 'test-client'): Promise<Client> {
  return connectClient(new Client({ name, version: '1.0.0' }, { capabilities: {} }), url, token);
}

/** Connects `client` (made with the capabilities and handlers a test needs) over Streamable HTTP with `token`. */
export async function connectClient<C extends Client>(client: C, url: string, token: string): Promise<C> {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** Polls until `check` returns a truthy value (bounded); returns that value. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
  );
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('');
}

/** Calls a facade tool (`switchboard__<tool>`); its structured result, or the tool's error thrown. */
export async function facade(
  client: Client,
  tool: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const result = await client.callTool({ name: `switchboard__${tool}`, arguments: args });
  if (result.isError) throw new Error(textOf(result));
  return result.structuredContent as Record<string, any>;
}

/** A broker on a registry of `files` (path → text) in a fresh temp workspace, and its operator connected. */
export async function startOperatorBroker(
  prefix: string,
  files: Record<string, string>,
  opts: Omit<StartBrokerOptions, 'root'> = {},
): Promise<{ broker: BrokerProcess; operator: Client }> {
  const root = tempDir(prefix);
  writeRegistry(root, files);
  const broker = await startBrokerProcess({ ...opts, root });
  return { broker, operator: await connect(broker.url, broker.token, 'operator') };
}

/** Closes `clients`, stops `broker`, removes the temp dirs: an after hook (any part may be missing if a start failed). */
export async function stopBroker(
  broker: BrokerProcess | undefined,
  clients: (Client | undefined)[] = [],
): Promise<void> {
  for (const client of clients) await client?.close();
  await broker?.stop();
  removeTempDirs();
}

/** The token of the registered client `name`: client_connection writes it to a file the operator reads. */
export async function clientToken(operator: Client, name: string): Promise<string> {
  const conn = await facade(operator, 'client_connection', { name });
  return fs.readFileSync(conn.tokenFile, 'utf8').trim();
}

/** Waits until list_servers shows `count` upstreams (or every one) running; `what` names them for the timeout. */
export async function waitForRunning(
  client: Client,
  count: number | 'every',
  what: string,
  timeoutMs = 40_000,
): Promise<void> {
  await waitFor(
    async () => {
      const servers = (await facade(client, 'list_servers')).servers as Record<string, any>[];
      const running = servers.filter((s) => s.state === 'running').length;
      return count === 'every' ? running === servers.length : running === count;
    },
    what,
    timeoutMs,
  );
}

/** A server's status through the facade (`switchboard__server_status`); the tool's error thrown. */
export function status(client: Client, name: string): Promise<Record<string, any>> {
  return facade(client, 'server_status', { name });
}

/** Calls a tool by its listed name: the text of the result and whether it is an error (not thrown). */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ text: string; isError: boolean }> {
  const result = await client.callTool({ name, arguments: args });
  return { text: textOf(result), isError: result.isError === true };
}

/** The text of a tool's result, an error's as well. */
export async function callText(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  return (await call(client, name, args)).text;
}

/**
 * Waits on an emitter: resolves with the first truthy value `check` returns for one of `events`
 * (given the event's arguments), or at once if `checkNow` and it holds already; rejects after
 * `timeoutMs` naming `what` and, if given, `detail()` (the state it was in). For polling, waitFor.
 */
export function waitForEvent<T>(
  emitter: EventEmitter,
  events: string | string[],
  check: (...args: any[]) => T | undefined | false,
  what: string,
  opts: { timeoutMs?: number; checkNow?: boolean; detail?: () => string } = {},
): Promise<T> {
  const names = typeof events === 'string' ? [events] : events;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const e of names) emitter.off(e, on);
    };
    const on = (...args: unknown[]): void => {
      const value = check(...args);
      if (!value) return;
      done();
      resolve(value);
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new Error(`timed out after ${timeoutMs} ms waiting for ${what}${opts.detail ? ` (${opts.detail()})` : ''}`),
      );
    }, timeoutMs);
    for (const e of names) emitter.on(e, on);
    if (opts.checkNow) on();
  });
}

/** Starts a fixture over Streamable HTTP on a free port; resolves with its URL once it listens. */
export async function startHttpFixture(
  script: string,
  timeoutMs = 15_000,
): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = track(spawn(process.execPath, [fixture(script), '--http', '0'], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const stderr: string[] = [];
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => stderr.push(c));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not listen: ${stderr.join('')}`)), timeoutMs);
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const m = JSON.parse(line) as { listening?: string };
        if (m.listening) {
          clearTimeout(timer);
          resolve(m.listening);
        }
      } catch {
        /* not the listening line */
      }
    });
    proc.once('exit', (code) => reject(new Error(`${script} exited ${code}: ${stderr.join('')}`)));
  });
  return { url, stop: () => stopProcess(proc) };
}

/** server-everything from npm (installed as a dev dependency), trusted, as a registry file. */
export function everythingServer(name = 'everything'): string {
  return (
    `name: ${name}\ntrust: trusted\ncommand: npx\nargs: [--no-install, mcp-server-everything, stdio]\n` +
    `cwd: ${JSON.stringify(REPO)}\n`
  );
}

/**
 * The audit log entries under a broker's per-user home (each workspace's audit.jsonl and its rotated
 * files) that `keep` accepts. Read as the operator would read the files, not through the broker.
 */
export function auditEntries(
  home: string,
  keep: (entry: Record<string, any>) => boolean = () => true,
): Record<string, any>[] {
  const found: Record<string, any>[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.startsWith('audit')) {
        for (const line of fs.readFileSync(full, 'utf8').split('\n')) {
          if (!line.trim()) continue;
          const parsed = JSON.parse(line) as Record<string, any>;
          if (keep(parsed)) found.push(parsed);
        }
      }
    }
  };
  walk(home);
  return found;
}
