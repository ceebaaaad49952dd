// The systems under test, all driven by the same SDK client code:
//   direct-stdio  SDK client → upstream over stdio (one upstream process per client session)
//   direct-http   SDK client → upstream over Streamable HTTP (one upstream process, n sessions)
//   broker        SDK client → Switchboard (Streamable HTTP) → stdio upstream
//   mcp-hub       SDK client → mcp-hub 4.2.1 (its /mcp is legacy HTTP+SSE) → stdio upstream
//   supergateway  SDK client → supergateway 4.0.0 (--outputTransport streamableHttp --stateful) → stdio
//   mcp-proxy     SDK client → mcp-proxy 6.7.19 (--server stream) → stdio upstream
// Each system reports the pids that make up its server side, so CPU and RSS can be read from /proc.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { spawnTracked, tree, trackPid, stopGracefully, killHard, assertLoopbackOnly, sleep } from './proc.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '../..');
export const BENCH = path.join(REPO, 'bench');
export const NODE = process.execPath;
export const PRELOAD = path.join(BENCH, 'loopback-preload.cjs');
export const BROKER_JS = path.join(REPO, 'dist', 'broker.js');
/** The broker is measured as it is launched for users: BROKER_NODE_FLAGS and BROKER_ENV in src/broker/daemon/runtime.ts. */
export const BROKER_NODE_FLAGS = ['--max-semi-space-size=1', '--expose-gc'];
export const BROKER_ENV = { MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '131072' };
export const ECHO = path.join(REPO, 'test', 'fixtures', 'echo.mjs');
export const TOOLS = path.join(BENCH, 'fixtures', 'tools.mjs');
const MOD = path.join(REPO, 'node_modules');
export const PEER_BIN = {
  'mcp-hub': path.join(MOD, 'mcp-hub', 'dist', 'cli.js'),
  supergateway: path.join(MOD, 'supergateway', 'dist', 'index.js'),
  'mcp-proxy': path.join(MOD, 'mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs'),
};
export function versionOf(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(MOD, pkg, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

let tmpBase;
export function tempDir(prefix) {
  tmpBase ??= fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-bench-'));
  return fs.mkdtempSync(path.join(tmpBase, prefix));
}
export function removeTemp() {
  if (tmpBase) fs.rmSync(tmpBase, { recursive: true, force: true });
}
/** removeTemp(), again after a pause: a broker that was just stopped may still recreate its state dir. */
export async function removeTempSettled() {
  for (let i = 0; i < 3 && tmpBase; i++) {
    removeTemp();
    await sleep(300);
    if (!fs.existsSync(tmpBase)) break;
  }
  removeTemp();
  tmpBase = undefined;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(check, what, timeoutMs = 30_000, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Keeps the last lines of a stream for error messages, and drains it. */
function tail(stream, keep = 40) {
  const lines = [];
  if (!stream) return lines;
  readline.createInterface({ input: stream }).on('line', (l) => {
    lines.push(l);
    if (lines.length > keep) lines.shift();
  });
  return lines;
}

const clientInfo = { name: 'switchboard-bench', version: '1.0.0' };
const CONNECT_TIMEOUT = 30_000;

async function connectClient(transport) {
  const client = new Client(clientInfo, { capabilities: {} });
  await client.connect(transport, { timeout: CONNECT_TIMEOUT });
  return client;
}

/** Every page of tools/list (the same client code for every system). */
export async function listAllTools(client) {
  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const r = await client.listTools(cursor ? { cursor } : {});
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (++pages > 1000) throw new Error('tools/list: more than 1000 pages');
  } while (cursor);
  return tools;
}

/** Base class: a pool of connected clients, grown on demand; sessions stay open until stop(). */
class System {
  constructor(key, label) {
    this.key = key;
    this.label = label;
    this.clients = [];
    this.toolNames = {}; // base tool name → name exposed by this system
  }
  /** The first n clients, connecting more as needed (at most 4 handshakes at once). */
  async pool(n) {
    while (this.clients.length < n) {
      const batch = Math.min(4, n - this.clients.length);
      const made = await Promise.all(Array.from({ length: batch }, () => this.connect()));
      this.clients.push(...made);
    }
    return this.clients.slice(0, n);
  }
  /** Resolves exposed names of the upstream's tools (prefix or no prefix, whatever the system does). */
  async resolveTools(client, bases) {
    const tools = await listAllTools(client);
    for (const base of bases) {
      const hit =
        tools.find((t) => t.name === base) ??
        tools.find((t) => t.name.endsWith(`__${base}`)) ??
        tools.find((t) => t.name.endsWith(`_${base}`) || t.name.endsWith(`.${base}`) || t.name.endsWith(`-${base}`));
      if (!hit)
        throw new Error(
          `${this.key}: no tool '${base}' in ${tools
            .map((t) => t.name)
            .slice(0, 20)
            .join(', ')}`,
        );
      this.toolNames[base] = hit.name;
    }
    return tools;
  }
  /**
   * `sessions` sessions of this system in each of `procs` client processes (bench/lib/loadClient.mjs,
   * shared by every system: loadClients()), kept until stop(); for the throughput cells. What each
   * connects to: connectSpec().
   */
  async loadClients(procs, sessions) {
    const spec = this.connectSpec();
    this.loaders = loadClientPool(procs);
    await Promise.all(
      this.loaders.map(async (l) => {
        const { pids } = await l.ask({ cmd: 'connect', key: this.key, spec, sessions });
        this.adoptClientPids(pids);
      }),
    );
    return this.loaders;
  }
  /**
   * Raw-client sessions (bench/lib/loadClient.mjs RawSession: no SDK client) on the same client
   * processes, under the key `<key>:raw`; only for a system served over Streamable HTTP.
   */
  async rawLoadClients(procs, sessions) {
    const spec = { ...this.connectSpec(), raw: true };
    if (spec.transport !== 'http') throw new Error(`${this.key}: the raw client speaks Streamable HTTP only`);
    this.rawLoaders = loadClientPool(procs);
    await Promise.all(this.rawLoaders.map((l) => l.ask({ cmd: 'connect', key: `${this.key}:raw`, spec, sessions })));
    return this.rawLoaders;
  }
  /** Server processes a client process started (direct stdio: the upstream of each session). */
  adoptClientPids() {}
  async closeLoadClients() {
    await Promise.allSettled([
      ...(this.loaders ?? []).map((l) => l.ask({ cmd: 'close', key: this.key })),
      ...(this.rawLoaders ?? []).map((l) => l.ask({ cmd: 'close', key: `${this.key}:raw` })),
    ]);
    this.loaders = [];
    this.rawLoaders = [];
  }
  /** pids of the server side (gateway + upstream children), re-read from /proc. */
  serverPids() {
    return this.mainPid ? tree(this.mainPid) : [];
  }
  /** pids of the gateway/broker process alone (no upstreams). */
  gatewayPids() {
    return this.mainPid ? [this.mainPid] : [];
  }
  async closeClients() {
    await this.closeLoadClients();
    await Promise.allSettled(this.clients.map((c) => Promise.race([c.close(), sleep(2000)])));
    this.clients = [];
  }
}

const loadClientProcs = [];
/** Ends the client processes (each system's sessions in them closed first: closeLoadClients()). */
export async function stopLoadClients() {
  const procs = loadClientProcs.splice(0);
  await Promise.all(
    procs.map((l) => {
      l.proc.stdin.end();
      return stopGracefully(l.proc, 3000);
    }),
  );
}

/** The first n client processes, started as needed; they live until the bench kills its processes. */
function loadClientPool(n) {
  while (loadClientProcs.length < n) loadClientProcs.push(new LoadClient());
  return loadClientProcs.slice(0, n);
}

/** No `count-tokens` child under `pid` for 1.5 s in a row, or `timeoutMs` passed. */
export async function tokenCounterIdle(pid, timeoutMs = 60_000) {
  const deadline = performance.now() + timeoutMs;
  let quietSince = performance.now();
  while (performance.now() < deadline) {
    if (tree(pid).some((p) => readCmdline(p).includes('count-tokens'))) quietSince = performance.now();
    else if (performance.now() - quietSince >= 1500) return;
    await sleep(100);
  }
}

function readCmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** A client process of bench/lib/loadClient.mjs: questions answered in order, one line each. */
class LoadClient {
  constructor() {
    this.proc = spawnTracked(NODE, [path.join(HERE, 'loadClient.mjs')], {
      cwd: REPO,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.stderr = tail(this.proc.stderr);
    this.answers = [];
    readline.createInterface({ input: this.proc.stdout }).on('line', (l) => this.answers.shift()?.(JSON.parse(l)));
  }
  get pid() {
    return this.proc.pid;
  }
  ask(message) {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null)
      return Promise.reject(new Error('the load client has exited'));
    return new Promise((resolve, reject) => {
      const onExit = (c) => reject(new Error(`a load client exited ${c}: ${this.stderr.join('\n')}`));
      this.proc.once('exit', onExit);
      this.answers.push((m) => {
        this.proc.off('exit', onExit);
        if (m.error) reject(new Error(`load client: ${m.error}`));
        else resolve(m);
      });
      this.proc.stdin.write(JSON.stringify(message) + '\n');
    });
  }
}

// ---- a. direct stdio ------------------------------------------------------------------------
export class DirectStdio extends System {
  constructor({ script = ECHO, args = [] } = {}) {
    super('direct-stdio', 'direct stdio');
    this.script = script;
    this.args = args;
    this.pids = [];
  }
  async start() {
    return this;
  }
  async connect() {
    const transport = new StdioClientTransport({
      command: NODE,
      args: [this.script, ...this.args],
      stderr: 'ignore',
      cwd: REPO,
    });
    const client = await connectClient(transport);
    const pid = transport.pid;
    if (pid) {
      this.pids.push(pid);
      trackPid(pid);
    }
    return client;
  }
  connectSpec() {
    return { transport: 'stdio', command: NODE, args: [this.script, ...this.args], cwd: REPO };
  }
  adoptClientPids(pids) {
    for (const pid of pids) {
      if (this.pids.includes(pid)) continue;
      this.pids.push(pid);
      trackPid(pid);
    }
  }
  serverPids() {
    return this.pids.flatMap((p) => tree(p));
  }
  gatewayPids() {
    return [];
  }
  async stop() {
    await this.closeClients();
    await sleep(100);
    for (const p of this.pids) killHard(p);
    this.pids = [];
  }
}

// ---- b. direct Streamable HTTP --------------------------------------------------------------
export class DirectHttp extends System {
  constructor({ script = ECHO, args = [] } = {}) {
    super('direct-http', 'direct SDK Streamable HTTP');
    this.script = script;
    this.args = args;
  }
  /** The upstream serving Streamable HTTP itself. */
  spawnArgs() {
    return [this.script, '--http', '0', ...this.args];
  }
  async start() {
    this.proc = spawnTracked(NODE, this.spawnArgs(), {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.stderr = tail(this.proc.stderr);
    this.url = await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${this.key} did not listen: ${this.stderr.join('\n')}`)), 20_000);
      readline.createInterface({ input: this.proc.stdout }).on('line', (l) => {
        try {
          const m = JSON.parse(l);
          if (m.listening) {
            clearTimeout(t);
            resolve(m.listening);
          }
        } catch {
          /* other */
        }
      });
      this.proc.once('exit', (c) => {
        clearTimeout(t);
        reject(new Error(`${this.key} exited ${c}: ${this.stderr.join('\n')}`));
      });
    });
    this.mainPid = this.proc.pid;
    this.listening = assertLoopbackOnly(this.mainPid, this.key);
    return this;
  }
  connect() {
    return connectClient(new StreamableHTTPClientTransport(new URL(this.url)));
  }
  connectSpec() {
    return { transport: 'http', url: this.url };
  }
  gatewayPids() {
    return [];
  } // no gateway: the upstream itself serves HTTP
  async stop() {
    await this.closeClients();
    await stopGracefully(this.proc, 3000);
  }
}

// ---- the relay floor -----------------------------------------------------------------------
/**
 * bench/fixtures/http-relay.mjs as a system of the throughput cells: node:http, each request through
 * one echo upstream's pipe and back, no MCP work of its own (no sessions, scopes, audit, timeouts):
 * what any forwarder of one stdio upstream pays, with the same SDK clients as the others.
 */
export class RelayFloor extends DirectHttp {
  constructor() {
    super({ script: path.join(BENCH, 'fixtures', 'http-relay.mjs') });
    this.key = 'relay-floor';
    this.label = 'relay floor (node:http → stdio, nothing else)';
  }
  /** http-relay.mjs <port> <node> <upstream>: the same echo upstream the broker runs. */
  spawnArgs() {
    return [this.script, '0', NODE, ECHO];
  }
  gatewayPids() {
    return this.mainPid ? [this.mainPid] : [];
  }
}

// ---- c. Switchboard broker ------------------------------------------------------------------
/** servers: [{ name, script, args }]; extraNodeArgs e.g. ['--cpu-prof', '--cpu-prof-dir', dir]. */
export function writeRegistry(root, servers) {
  const dir = path.join(root, 'mcp-servers.d');
  fs.mkdirSync(dir, { recursive: true });
  for (const s of servers) fs.writeFileSync(path.join(dir, `${s.name}.yaml`), serverYaml(s));
}
export function serverYaml({ name, script = ECHO, args = [] }) {
  return `name: ${name}\ntrust: trusted\ncommand: ${JSON.stringify(NODE)}\nargs: ${JSON.stringify([script, ...args])}\n`;
}

export class Broker extends System {
  /** brokerJs: another build of the broker (bench/compare.mjs runs an older one beside this one). */
  constructor({
    servers = [{ name: 'echo' }],
    extraNodeArgs = [],
    key = 'broker',
    label = 'Switchboard',
    brokerJs = BROKER_JS,
    env = {},
  } = {}) {
    super(key, label);
    this.env = env;
    this.servers = servers;
    this.extraNodeArgs = extraNodeArgs;
    this.brokerJs = brokerJs;
  }
  async start() {
    this.root = tempDir('broker-root-');
    this.home = tempDir('broker-home-');
    writeRegistry(this.root, this.servers);
    this.t0 = performance.now();
    this.proc = spawnTracked(
      NODE,
      [
        ...BROKER_NODE_FLAGS,
        ...this.extraNodeArgs,
        this.brokerJs,
        'serve',
        '--root',
        this.root,
        '--port',
        '0',
        '--json',
        '--accept-workspace-trust',
      ],
      {
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        env: { ...BROKER_ENV, ...process.env, ...this.env, SWITCHBOARD_HOME: this.home },
      },
    );
    this.stderr = tail(this.proc.stderr, 80);
    const ready = await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`broker not ready: ${this.stderr.join('\n')}`)), 30_000);
      readline.createInterface({ input: this.proc.stdout }).on('line', (l) => {
        try {
          const m = JSON.parse(l);
          if (m.event === 'ready') {
            clearTimeout(t);
            resolve(m);
          }
        } catch {
          /* other */
        }
      });
      this.proc.once('exit', (c) => {
        clearTimeout(t);
        reject(new Error(`broker exited ${c}: ${this.stderr.join('\n')}`));
      });
    });
    this.readyMs = performance.now() - this.t0;
    this.url = ready.url;
    this.token = fs.readFileSync(ready.tokenFile, 'utf8').trim();
    this.mainPid = this.proc.pid;
    this.listening = assertLoopbackOnly(this.mainPid, this.key);
    return this;
  }
  connectSpec() {
    return { transport: 'http', url: this.url, headers: { Authorization: `Bearer ${this.token}` } };
  }
  connect(serverPath) {
    const url = serverPath ? this.url.replace(/\/mcp$/, `/servers/${serverPath}/mcp`) : this.url;
    return connectClient(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${this.token}` } },
      }),
    );
  }
  /**
   * Waits until the broker's token counter is done: it counts tool-definition tokens in a short-lived
   * child process (~100 MB while it runs, about a second) once its catalog has been quiet, and a
   * memory or process reading taken meanwhile would count that child as part of the server side.
   * Done: no counter under the broker for 1.5 s in a row (at most `timeoutMs`, then read anyway).
   */
  async tokensCounted(timeoutMs = 60_000) {
    await tokenCounterIdle(this.mainPid, timeoutMs);
  }
  /** Waits until the aggregated catalog holds every `names` (or `count` upstream tools). */
  async waitForTools({ names = [], count } = {}, timeoutMs = 60_000) {
    const client = await this.connect();
    try {
      return await waitFor(
        async () => {
          const tools = await listAllTools(client);
          const own = tools.filter((t) => !t.name.startsWith('switchboard__'));
          if (names.every((n) => tools.some((t) => t.name === n)) && (count === undefined || own.length >= count))
            return { tools, own };
          return undefined;
        },
        `broker tools ${names.join(', ')}${count ? ` (${count} tools)` : ''}`,
        timeoutMs,
        25,
      );
    } finally {
      await client.close().catch(() => {});
    }
  }
  async stop() {
    await this.closeClients();
    await stopGracefully(this.proc, 8000);
  }
}

// ---- d. peers -------------------------------------------------------------------------------
function peerEnv(dir) {
  const env = {
    ...process.env,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_STATE_HOME: path.join(dir, 'state'),
    XDG_CACHE_HOME: path.join(dir, 'cache'),
    NO_COLOR: '1',
  };
  delete env.NODE_OPTIONS;
  return env;
}

class Peer extends System {
  async spawnPeer(args, { env, stdinPipe = false } = {}) {
    this.proc = spawnTracked(NODE, ['--require', PRELOAD, ...args], {
      cwd: this.dir,
      env,
      stdio: [stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.stdout = tail(this.proc.stdout);
    this.stderr = tail(this.proc.stderr);
    this.mainPid = this.proc.pid;
    this.exited = false;
    this.proc.once('exit', () => {
      this.exited = true;
    });
  }
  async afterListen() {
    if (this.exited) throw new Error(`${this.key} exited: ${[...this.stdout, ...this.stderr].join('\n')}`);
    this.listening = assertLoopbackOnly(this.mainPid, this.key);
  }
  async stop() {
    // Kill first: mcp-hub is reported to loop on client disconnect (its issue #144), so it dies hard
    // before its sessions are closed.
    const pids = this.serverPids();
    killHard(this.mainPid);
    for (const p of pids) killHard(p);
    await this.closeClients();
  }
}

export class McpHub extends Peer {
  constructor({ servers = [{ name: 'echo' }] } = {}) {
    super('mcp-hub', `mcp-hub ${versionOf('mcp-hub')}`);
    this.servers = servers;
  }
  async start() {
    this.dir = tempDir('mcp-hub-');
    const env = peerEnv(this.dir);
    // A fresh, valid marketplace cache: mcp-hub fetches its registry at start unless the cache is fresh.
    const cacheDir = path.join(env.XDG_DATA_HOME, 'mcp-hub', 'cache');
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(
      path.join(cacheDir, 'registry.json'),
      JSON.stringify({
        registry: {
          version: 'bench',
          generatedAt: Date.now(),
          totalServers: 1,
          servers: [{ id: 'bench-placeholder', name: 'bench placeholder', description: 'keeps mcp-hub offline' }],
        },
        lastFetchedAt: Date.now(),
        serverDocumentation: {},
      }),
    );
    const config = {
      mcpServers: Object.fromEntries(
        this.servers.map((s) => [s.name, { command: NODE, args: [s.script ?? ECHO, ...(s.args ?? [])] }]),
      ),
    };
    const cfgFile = path.join(this.dir, 'mcp-servers.json');
    fs.writeFileSync(cfgFile, JSON.stringify(config, null, 2));
    this.port = await freePort();
    await this.spawnPeer([PEER_BIN['mcp-hub'], '--port', String(this.port), '--config', cfgFile], { env });
    const want = this.servers.length;
    await waitFor(
      async () => {
        if (this.exited) throw new Error('exited');
        const r = await fetch(`http://127.0.0.1:${this.port}/api/health`);
        if (!r.ok) return false;
        const h = await r.json();
        const connected = (h.servers ?? []).filter((s) => s.status === 'connected').length;
        return h.state === 'ready' && connected >= want;
      },
      `mcp-hub ready with ${want} servers (${this.stderr.slice(-3).join(' | ')})`,
      60_000,
      100,
    );
    await this.afterListen();
    this.url = `http://127.0.0.1:${this.port}/mcp`;
    return this;
  }
  connect() {
    return connectClient(new SSEClientTransport(new URL(this.url)));
  }
  connectSpec() {
    return { transport: 'sse', url: this.url };
  }
}

export class Supergateway extends Peer {
  constructor({ script = ECHO, args = [] } = {}) {
    super('supergateway', `supergateway ${versionOf('supergateway')}`);
    this.script = script;
    this.args = args;
  }
  async start() {
    this.dir = tempDir('supergateway-');
    this.port = await freePort();
    const cmd = [NODE, this.script, ...this.args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    // stdin stays a pipe we hold open: supergateway exits when its stdin closes.
    await this.spawnPeer(
      [
        PEER_BIN.supergateway,
        '--stdio',
        cmd,
        '--outputTransport',
        'streamableHttp',
        '--stateful',
        '--port',
        String(this.port),
        '--logLevel',
        'none',
      ],
      { env: peerEnv(this.dir), stdinPipe: true },
    );
    await waitFor(
      async () => {
        if (this.exited) throw new Error('exited');
        return portOpen(this.port);
      },
      'supergateway port',
      30_000,
    );
    await this.afterListen();
    this.url = `http://127.0.0.1:${this.port}/mcp`;
    return this;
  }
  connect() {
    return connectClient(new StreamableHTTPClientTransport(new URL(this.url)));
  }
  connectSpec() {
    return { transport: 'http', url: this.url };
  }
}

export class McpProxy extends Peer {
  constructor({ script = ECHO, args = [] } = {}) {
    super('mcp-proxy', `mcp-proxy ${versionOf('mcp-proxy')}`);
    this.script = script;
    this.args = args;
  }
  async start() {
    this.dir = tempDir('mcp-proxy-');
    this.port = await freePort();
    await this.spawnPeer(
      [
        PEER_BIN['mcp-proxy'],
        '--host',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--server',
        'stream',
        '--',
        NODE,
        this.script,
        ...this.args,
      ],
      { env: peerEnv(this.dir) },
    );
    await waitFor(
      async () => {
        if (this.exited) throw new Error('exited');
        return portOpen(this.port);
      },
      'mcp-proxy port',
      30_000,
    );
    await this.afterListen();
    this.url = `http://127.0.0.1:${this.port}/mcp`;
    return this;
  }
  connect() {
    return connectClient(new StreamableHTTPClientTransport(new URL(this.url)));
  }
  connectSpec() {
    return { transport: 'http', url: this.url };
  }
}
