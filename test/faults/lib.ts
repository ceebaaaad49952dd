// Shared plumbing of the faults suite: process accounting through /proc, a raw HTTP/JSON-RPC
// client (node:http, so Host/Origin can be forged and sockets closed on demand), and the figures
// every test reports. Everything talks to 127.0.0.1 only; every process started here is tracked
// and checked dead at the end of the run.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Client as SdkClient, type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Endpoint, type EndpointOptions } from '../../src/broker/http/endpoint';
import { McpFailure } from '../../src/broker/shared/mcpTypes';
import { REPO, fixture, isAlive, startBrokerProcess, track, type BrokerProcess } from '../helpers/broker';

export type Json = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// Figures: each test reports what it did; the run ends with one table and one JSON file.

export const FIGURES_FILE = path.join(REPO, 'out', 'faults-figures.json');
const figures: Record<string, Json> = {};
const suiteStarted = Date.now();

export function report(test: string, data: Json): void {
  figures[test] = { ...figures[test], ...data };
  process.stdout.write(`      [figures] ${test}: ${JSON.stringify(data)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Process accounting. Every pid the suite starts (directly or as an upstream of a broker it
// started) is noted, so the run can prove at the end that none of them outlived it.

const noted = new Map<number, string>();

export function notePid(pid: number | undefined, what: string): void {
  if (pid && pid > 0) noted.set(pid, what);
}

export function startedCount(): number {
  return noted.size;
}

/** ppid of a process, or undefined when it is gone. */
function ppidOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: split after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** A process that exists and is not a zombie. */
export function running(pid: number): boolean {
  return isAlive(pid) && !isZombie(pid);
}

/** bubblewrap's monitor process (one per sandboxed server, its parent): not a server of its own. */
function isSandboxMonitor(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bwrap';
  } catch {
    return false;
  }
}

/**
 * The broker's own token counter (`<broker entry> count-tokens`, src/broker/catalog/tokenCounts.ts): a
 * short-lived child running the broker's bundle, not a server.
 */
function isTokenCounter(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('count-tokens');
  } catch {
    return false;
  }
}

/**
 * Every live descendant of `root` (children, grandchildren, ...), zombies excluded; a sandboxed
 * server's bwrap monitor is looked through, so one server counts once with or without the sandbox,
 * and the broker's token counter is not counted.
 */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const ppid = ppidOf(pid);
    if (ppid === undefined || isZombie(pid)) continue;
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length && out.length < 10_000) {
    const pid = queue.shift()!;
    if (!isSandboxMonitor(pid) && !isTokenCounter(pid)) out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Children of `pid` that exited but were never reaped (a supervisor that forgets to wait). */
export function zombieChildren(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = Number(entry);
    if (ppidOf(child) === pid && isZombie(child) && fs.existsSync(`/proc/${child}`)) out.push(child);
  }
  return out;
}

export function rssMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return Math.round(kb / 102.4) / 10;
  } catch {
    return 0;
  }
}

export function fdCount(pid: number): number {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

/**
 * What each open descriptor of a process is: a path, `pipe`, or for a TCP socket its state and
 * both ends (from /proc/net/tcp{,6}), so a leak names itself instead of being only a count.
 */
export function describeFds(pid: number): string[] {
  const tcp = new Map<string, string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const state =
        cols[3] === '0A'
          ? 'LISTEN'
          : cols[3] === '01'
            ? 'ESTABLISHED'
            : cols[3] === '08'
              ? 'CLOSE_WAIT'
              : `state ${cols[3]}`;
      tcp.set(cols[9], `tcp ${state} ${endpoint(cols[1])} -> ${endpoint(cols[2])}`);
    }
  }
  const out: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of names) {
    let link: string;
    try {
      link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const socket = /^socket:\[(\d+)\]$/.exec(link);
    out.push(socket ? (tcp.get(socket[1]) ?? 'socket (not TCP)') : link.startsWith('pipe:') ? 'pipe' : link);
  }
  return out.sort();
}

function endpoint(hexPair: string): string {
  const [hex, portHex] = hexPair.split(':');
  return `${decodeAddress(hex)}:${parseInt(portHex, 16)}`;
}

/** The entries of `after` that `before` does not have (a multiset difference). */
export function added(before: string[], after: string[]): string[] {
  const left = new Map<string, number>();
  for (const b of before) left.set(b, (left.get(b) ?? 0) + 1);
  return after.filter((a) => {
    const n = left.get(a) ?? 0;
    if (n > 0) {
      left.set(a, n - 1);
      return false;
    }
    return true;
  });
}

/** Local addresses of the TCP sockets a process listens on, from /proc/net/tcp{,6}. */
export function listeningAddresses(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  const out: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [local, , state] = [cols[1], cols[2], cols[3]];
      if (state !== '0A' || !inodes.has(cols[9])) continue; // 0A = LISTEN
      const [hex, portHex] = local.split(':');
      out.push(`${decodeAddress(hex)}:${parseInt(portHex, 16)}`);
    }
  }
  return out;
}

function decodeAddress(hex: string): string {
  if (hex.length === 8) {
    const bytes = Buffer.from(hex, 'hex');
    return [bytes[3], bytes[2], bytes[1], bytes[0]].join('.');
  }
  // IPv6: four little-endian 32-bit words.
  const words = hex.match(/.{8}/g)!.map((w) => Buffer.from(w, 'hex').reverse().toString('hex'));
  return `[${words.join('').match(/.{4}/g)!.join(':')}]`;
}

/** Kills what is left (should be nothing) and says how many there were. */
export function leftovers(): { pid: number; what: string }[] {
  const alive = [...noted].filter(([pid]) => running(pid)).map(([pid, what]) => ({ pid, what }));
  for (const { pid } of alive) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  return alive;
}

// The root hook: one table of figures, one JSON file, and the process count of the whole run.
after(function () {
  this.timeout(20_000);
  const left = leftovers();
  const stray = descendants(process.pid);
  figures.suite = {
    ...figures.suite,
    durationS: Math.round((Date.now() - suiteStarted) / 100) / 10,
    processesStarted: noted.size,
    processesLeftRunning: left.length,
    strayDescendants: stray.length,
    node: process.version,
    finishedAt: new Date().toISOString(),
  };
  fs.mkdirSync(path.dirname(FIGURES_FILE), { recursive: true });
  fs.writeFileSync(FIGURES_FILE, JSON.stringify(figures, null, 2) + '\n');
  process.stdout.write(`\n  faults suite figures (also in ${path.relative(process.cwd(), FIGURES_FILE)}):\n`);
  for (const [name, data] of Object.entries(figures))
    process.stdout.write(`    ${name.padEnd(26)} ${JSON.stringify(data)}\n`);
  if (left.length)
    process.stdout.write(`  !! processes still running at the end (killed now): ${JSON.stringify(left)}\n`);
});

// ---------------------------------------------------------------------------------------------
// Brokers and fixtures.

export async function startBroker(opts: Parameters<typeof startBrokerProcess>[0]): Promise<BrokerProcess> {
  // FAULTS_BROKER_NODE_OPTIONS (e.g. --max-old-space-size=96) tells a leak from late GC.
  const extra = process.env.FAULTS_BROKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.FAULTS_BROKER_NODE_OPTIONS } : {};
  const broker = await startBrokerProcess({ ...opts, env: { ...extra, ...opts.env } });
  notePid(broker.proc.pid, 'broker');
  return broker;
}

/** Notes the broker's current upstream processes (children) so the end-of-run check covers them. */
export function noteUpstreams(broker: BrokerProcess): number[] {
  const pids = descendants(broker.proc.pid!);
  for (const pid of pids) notePid(pid, 'upstream');
  return pids;
}

/** Fixtures of this suite (test/faults/fixtures), which start faster than the SDK-based ones. */
export const FAULT_FIXTURES = path.join(REPO, 'test', 'faults', 'fixtures');

/** A stdio server definition running one of this suite's fixtures. */
export function faultServer(name: string, script: string, extra: string[] = [], more = ''): string {
  const args = [path.join(FAULT_FIXTURES, script), ...extra].map((a) => JSON.stringify(a)).join(', ');
  return `name: ${name}\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${args}]\n${more}`;
}

/**
 * connect() for clients that make thousands of calls: the SDK transport passes one long-lived
 * AbortSignal to every fetch and undici only drops its listener from it at GC, so a busy client
 * trips MaxListenersExceededWarning. A per-request signal that follows it avoids the noise.
 */
export async function connectBusy(url: string, token: string, name: string): Promise<Client> {
  const client = new SdkClient({ name, version: '1.0.0' }, { capabilities: {} });
  const perRequest: typeof fetch = (input, init) =>
    fetch(input, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: perRequest,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

// The facade calls every suite shares (test/helpers/broker.ts), under the names this suite uses.
export { facade, status } from '../helpers/broker';

export interface FixtureHttp {
  proc: ChildProcess;
  url: string;
  port: number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a fixture in --http/--sse mode on `port` (0 = any) and waits for its listening line. */
export async function startFixtureHttp(
  script: string,
  port: number,
  mode: 'http' | 'sse' = 'http',
  extra: string[] = [],
): Promise<FixtureHttp> {
  for (let attempt = 0; ; attempt++) {
    const proc = track(
      spawn(process.execPath, [fixture(script), `--${mode}`, String(port), ...extra], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    notePid(proc.pid, `fixture ${script} --${mode}`);
    const stderr: string[] = [];
    proc.stderr!.setEncoding('utf8').on('data', (c: string) => stderr.push(c));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`fixture ${script} did not listen: ${stderr.join('')}`)),
          15_000,
        );
        readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
          try {
            const m = JSON.parse(line) as { listening?: string };
            if (m.listening) {
              clearTimeout(timer);
              resolve(m.listening);
            }
          } catch {
            /* not it */
          }
        });
        proc.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`fixture ${script} exited ${code}: ${stderr.join('')}`));
        });
      });
      return {
        proc,
        url,
        port: Number(new URL(url).port),
        stop: (signal: NodeJS.Signals = 'SIGTERM') =>
          new Promise<void>((resolve) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
            const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
            proc.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
            proc.kill(signal);
          }),
      };
    } catch (err) {
      // A port that was just freed can be briefly unavailable: retry a few times, bounded.
      if (port !== 0 && attempt < 20 && /EADDRINUSE/.test(String(err))) {
        await sleep(100);
        continue;
      }
      throw err;
    }
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Runs `tasks` with at most `limit` in flight. */
export async function pool<T>(
  items: T[],
  limit: number,
  run: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await run(items[i], i);
    }
  });
  await Promise.all(workers);
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP: node:http with an agent of our own, so Host/Origin can be forged, bodies can be
// anything, and every socket is closed when the test is done (no keep-alive fd left in the broker).

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface RawRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string | undefined>;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked (no Content-Length). */
  chunked?: boolean;
  timeoutMs?: number;
}

export class RawHttp {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  constructor(
    readonly port: number,
    readonly token?: string,
  ) {}

  request(req: RawRequest): Promise<RawResponse> {
    const headers: Record<string, string> = {};
    const defaults: Record<string, string | undefined> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: this.token ? `Bearer ${this.token}` : undefined,
    };
    for (const [k, v] of Object.entries({ ...defaults, ...req.headers })) if (v !== undefined) headers[k] = v;
    const body =
      req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    if (body && !req.chunked) headers['content-length'] = String(body.length);
    return new Promise((resolve, reject) => {
      let answered = false;
      const r = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          method: req.method ?? 'POST',
          path: req.path ?? '/mcp',
          headers,
          agent: this.agent,
          setHost: !('host' in headers),
        },
        (res) => {
          // A server may answer before the body is sent (413) and close: the answer still counts.
          answered = true;
          const chunks: Buffer[] = [];
          const done = () => {
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            });
            if (!r.writableFinished) r.destroy();
          };
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        },
      );
      r.setTimeout(req.timeoutMs ?? 30_000, () =>
        r.destroy(new Error(`no answer within ${req.timeoutMs ?? 30_000} ms`)),
      );
      r.on('error', (err) => {
        if (!answered) reject(err);
      });
      if (body && body.length > 1024 * 1024) {
        // A big body goes out in pieces, and stops once the server has answered (413 before the
        // end): writing on into a socket the server closed would only turn its answer into EPIPE.
        const step = 256 * 1024;
        let offset = 0;
        const pump = (): void => {
          while (!answered && offset < body.length) {
            const piece = body.subarray(offset, offset + step);
            offset += piece.length;
            if (!r.write(piece)) {
              r.once('drain', pump);
              return;
            }
          }
          if (!answered) r.end();
        };
        r.flushHeaders();
        // A declared length over the limit is answered at once: give that answer time to arrive.
        setTimeout(pump, 300);
        return;
      }
      if (body) {
        if (req.chunked) {
          // Several chunks, so the broker sees a streamed body of unknown length.
          const step = Math.max(1, Math.ceil(body.length / 8));
          for (let i = 0; i < body.length; i += step) r.write(body.subarray(i, i + step));
        } else {
          r.write(body);
        }
      }
      r.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The JSON-RPC messages of a response body: plain JSON (one or a batch) or an SSE stream. */
export function messagesOf(res: RawResponse): Json[] {
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    const out: Json[] = [];
    for (const event of res.body.split(/\n\n/)) {
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data) out.push(JSON.parse(data) as Json);
    }
    return out;
  }
  if (!res.body) return [];
  const parsed = JSON.parse(res.body) as Json | Json[];
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** A hand-driven MCP session over RawHttp: its own ids, batches, and an exact account of answers. */
export class RawSession {
  sessionId?: string;
  private nextId = 1;
  constructor(
    readonly http: RawHttp,
    readonly idPrefix: string,
    readonly path = '/mcp',
  ) {}

  newId(): string {
    return `${this.idPrefix}-${this.nextId++}`;
  }

  async initialize(): Promise<void> {
    const res = await this.http.request({
      path: this.path,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: this.newId(),
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: this.idPrefix, version: '1' } },
      }),
    });
    if (res.status !== 200) throw new Error(`initialize: HTTP ${res.status} ${res.body}`);
    this.sessionId = String(res.headers['mcp-session-id']);
    const ack = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    if (ack.status !== 202) throw new Error(`initialized: HTTP ${ack.status}`);
  }

  headers(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
    return { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': '2025-06-18', ...extra };
  }

  async post(message: Json | Json[], extra: RawRequest = {}): Promise<RawResponse & { messages: Json[] }> {
    const res = await this.http.request({
      path: this.path,
      body: JSON.stringify(message),
      ...extra,
      headers: this.headers(extra.headers),
    });
    let messages: Json[];
    try {
      messages = res.status === 202 ? [] : messagesOf(res);
    } catch {
      messages = [];
    }
    return { ...res, messages };
  }

  call(name: string, args: Json = {}, id = this.newId()): Json {
    return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
  }

  async close(): Promise<number> {
    const res = await this.http.request({ method: 'DELETE', path: this.path, headers: this.headers() });
    return res.status;
  }
}

/** A JSON-RPC error object as the endpoint must send it. */
export function isJsonRpcError(m: unknown): boolean {
  const e = (m as Json | undefined)?.error;
  return (
    !!m &&
    (m as Json).jsonrpc === '2.0' &&
    !!e &&
    typeof e.code === 'number' &&
    Number.isInteger(e.code) &&
    typeof e.message === 'string' &&
    e.message.length > 0
  );
}

/** The session count, from the broker's own state resource. */
export async function sessionCount(client: Client): Promise<number> {
  const state = JSON.parse(
    ((await client.readResource({ uri: 'switchboard://state' })).contents[0] as { text: string }).text,
  ) as Json;
  return state.broker.sessions as number;
}

export { REPO };

/**
 * An endpoint in-process with a router that serves nothing, for tests of the endpoint's own limits:
 * its callers only open sessions, ping and listen. Each name in `clients` gets the token `token-<name>`.
 */
export async function endpointServingNothing(
  clients: string[],
  limits: Pick<EndpointOptions, 'sessionLimits' | 'listenLimits'>,
): Promise<Endpoint> {
  const idents = new Map(clients.map((c) => [`token-${c}`, { client: c, operator: false }]));
  const nothing = () => Promise.reject(new McpFailure(-32601, 'nothing is served here'));
  const endpoint = new Endpoint({
    port: 0,
    version: 'test',
    instance: 'test',
    router: {
      hasServer: () => false,
      instructions: () => undefined,
      listTools: () => [],
      listPrompts: () => [],
      listResources: () => [],
      listResourceTemplates: () => [],
      callTool: nothing,
      getPrompt: nothing,
      readResource: nothing,
      complete: nothing,
      subscribe: async () => undefined,
      unsubscribe: async () => undefined,
      sessionClosed: () => undefined,
    },
    authenticate: (token) => idents.get(token),
    ...limits,
  });
  await endpoint.listen();
  return endpoint;
}
