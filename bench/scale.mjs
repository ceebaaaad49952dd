// Benchmarks of cost following use (issue 19): 50 configured servers, broker start → complete
// tools/list with no catalog cache (cold) and with one (warm); the memory of 50 lazy servers of
// which 2 are used against 50 eager ones; the first call to a cold lazy server against its floor
// (spawn + handshake + call, directly). Sections of bench/run.mjs: scale-start, scale-lazy, scale-first-call.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  BROKER_ENV,
  BROKER_JS,
  BROKER_NODE_FLAGS,
  ECHO,
  NODE,
  REPO,
  listAllTools,
  tempDir,
  tokenCounterIdle,
} from './lib/systems.mjs';
import { memoryOf, rssOf, sleep, spawnTracked, stopGracefully, tree } from './lib/proc.mjs';
import { summarize } from './lib/stats.mjs';

export const SCALE_SECTIONS = ['scale-start', 'scale-lazy', 'scale-first-call'];
/** Seconds per section (full run, --quick). */
export const SCALE_BUDGET_S = {
  full: { 'scale-start': 120, 'scale-lazy': 90, 'scale-first-call': 60 },
  quick: { 'scale-start': 60, 'scale-lazy': 60, 'scale-first-call': 30 },
};

const SERVERS = 50;
/** echo.mjs offers 7 tools. */
const TOOLS_PER_SERVER = 7;
const log = (...a) => process.stderr.write(`[bench scale] ${a.join(' ')}\n`);
const MB = (b) => b / (1024 * 1024);

function registry(root, count, more = '') {
  const dir = path.join(root, 'mcp-servers.d');
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 1; i <= count; i++) {
    const name = `s${String(i).padStart(2, '0')}`;
    const args = JSON.stringify([ECHO, '--name', name]);
    fs.writeFileSync(
      path.join(dir, `${name}.yaml`),
      `name: ${name}\ntrust: trusted\ncommand: ${JSON.stringify(NODE)}\nargs: ${args}\n${more}`,
    );
  }
}

const START_TRACE = path.join(REPO, 'bench', 'start-trace.cjs');

/**
 * A broker on a given root and home (so a second start finds the first one's catalog cache).
 * `traced`: with bench/start-trace.cjs, whose milestones land in `trace` (ms since process start).
 */
async function startBroker(root, home, { traced = false } = {}) {
  const t0 = performance.now();
  const preload = traced ? ['--require', START_TRACE] : [];
  const trace = [];
  const proc = spawnTracked(
    NODE,
    [
      ...BROKER_NODE_FLAGS,
      ...preload,
      BROKER_JS,
      'serve',
      '--root',
      root,
      '--port',
      '0',
      '--json',
      '--accept-workspace-trust',
    ],
    {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...BROKER_ENV, ...process.env, SWITCHBOARD_HOME: home },
    },
  );
  const stderr = [];
  readline.createInterface({ input: proc.stderr }).on('line', (l) => {
    const m = /^START-TRACE (\S+) ([\d.]+) ([\d.]+)$/.exec(l);
    if (m) trace.push({ name: m[1], ms: Number(m[2]), cpuMs: Number(m[3]), at: performance.now() - t0 });
    else if (stderr.push(l) > 40) stderr.shift();
  });
  const ready = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`broker not ready: ${stderr.join('\n')}`)), 60_000);
    readline.createInterface({ input: proc.stdout }).on('line', (l) => {
      try {
        const m = JSON.parse(l);
        if (m.event === 'ready') {
          clearTimeout(t);
          resolve(m);
        }
      } catch {
        /* another line */
      }
    });
    proc.once('exit', (c) => {
      clearTimeout(t);
      reject(new Error(`broker exited ${c}: ${stderr.join('\n')}`));
    });
  });
  const readyMs = performance.now() - t0;
  const token = fs.readFileSync(ready.tokenFile, 'utf8').trim();
  const connect = async () => {
    const client = new Client({ name: 'switchboard-bench', version: '1.0.0' }, { capabilities: {} });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(ready.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
      { timeout: 30_000 },
    );
    return client;
  };
  return { proc, t0, readyMs, connect, url: ready.url, token, trace, stop: () => stopGracefully(proc, 10_000) };
}

async function servers(client) {
  const r = await client.callTool({ name: 'switchboard__list_servers', arguments: {} });
  return r.structuredContent.servers;
}

async function until(check, what, timeoutMs = 90_000, everyMs = 20) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const v = await check();
    if (v) return v;
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** One POST of a JSON-RPC message with node:http; the answer's JSON (plain or as an SSE event). */
function post(url, headers, message, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode >= 300) return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
          const data = res.headers['content-type']?.startsWith('text/event-stream')
            ? text
                .split('\n')
                .filter((l) => l.startsWith('data:'))
                .map((l) => l.slice(5))
                .join('')
            : text;
          resolve({ headers: res.headers, body: data ? JSON.parse(data) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

/**
 * The client of the timed runs: initialize, notifications/initialized, then tools/list over plain
 * node:http until the list is complete. Measured: the last byte of that list received and parsed
 * by JSON.parse, nothing else (an SDK Client would also validate it and compile every tool's output
 * schema: that is timed apart, by sdkListMs).
 */
async function wireSession(broker) {
  const agent = new http.Agent({ keepAlive: true });
  const auth = { authorization: `Bearer ${broker.token}` };
  const init = await post(
    broker.url,
    auth,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'switchboard-bench', version: '1.0.0' },
      },
    },
    agent,
  );
  const initializedMs = performance.now() - broker.t0;
  const headers = {
    ...auth,
    'mcp-session-id': init.headers['mcp-session-id'],
    'mcp-protocol-version': init.body.result.protocolVersion,
  };
  await post(broker.url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' }, agent);
  let id = 2;
  const list = async () => {
    const tools = [];
    let cursor;
    do {
      const r = await post(
        broker.url,
        headers,
        { jsonrpc: '2.0', id: id++, method: 'tools/list', params: cursor ? { cursor } : {} },
        agent,
      );
      tools.push(...r.body.result.tools);
      cursor = r.body.result.nextCursor;
    } while (cursor);
    return tools;
  };
  return { initializedMs, list, close: () => agent.destroy() };
}

/** Broker start → the first tools/list holding every upstream tool; ms from spawn and from ready. */
async function timeToCompleteList(root, home, opts) {
  const broker = await startBroker(root, home, opts);
  const session = await wireSession(broker);
  let lists = 0;
  await until(async () => {
    lists++;
    const own = (await session.list()).filter((t) => !t.name.startsWith('switchboard__'));
    return own.length >= SERVERS * TOOLS_PER_SERVER;
  }, 'the complete tools/list');
  const completeMs = performance.now() - broker.t0;
  session.close();
  // The same list through the SDK's Client, as an agent built on it would take it (a new session).
  const client = await broker.connect();
  const t = performance.now();
  await listAllTools(client);
  const sdkListMs = performance.now() - t;
  const cached = (await servers(client)).filter((s) => s.catalog === 'cached').length;
  const afterReadyMs = completeMs - broker.readyMs;
  return {
    broker,
    client,
    sample: {
      readyMs: broker.readyMs,
      initializedMs: session.initializedMs,
      completeMs,
      afterReadyMs,
      sdkListMs,
      lists,
      cached,
    },
  };
}

/**
 * The floor under a warm start on this machine: a bare `node -e ''` from spawn to exit, and a bare
 * node:http server from spawn to its first answered request. No broker can start faster than these.
 */
export async function startFloor(runs) {
  const bare = [];
  const listen = [];
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    await new Promise((resolve, reject) => {
      const p = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
      p.on('error', reject);
      p.on('exit', resolve);
    });
    bare.push(performance.now() - t);
    t = performance.now();
    const code =
      "const s=require('node:http').createServer((q,r)=>r.end('{}'));" +
      "s.listen(0,'127.0.0.1',()=>console.log(s.address().port))";
    const p = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
    const port = await new Promise((resolve, reject) => {
      p.on('error', reject);
      p.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    });
    await new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => res.resume().on('end', resolve))
        .on('error', reject);
    });
    listen.push(performance.now() - t);
    p.kill();
  }
  return { nodeExitMs: summarize(bare), httpFirstAnswerMs: summarize(listen) };
}

export async function sectionScaleStart({ quick }) {
  const root = tempDir('scale-root-');
  const home = tempDir('scale-home-');
  registry(root, SERVERS);
  const cold = [];
  const warm = [];
  // Cold: no catalog cache (a fresh home each time); the first run also leaves the cache behind.
  const coldRuns = quick ? 1 : 2;
  for (let i = 0; i < coldRuns; i++) {
    const h = i === coldRuns - 1 ? home : tempDir('scale-home-');
    const { broker, client, sample } = await timeToCompleteList(root, h);
    cold.push(sample);
    log(`cold ${i + 1}: complete tools/list ${sample.completeMs.toFixed(0)} ms after spawn`);
    await until(async () => (await servers(client)).every((s) => s.catalog === 'live'), 'every server live');
    await client.close().catch(() => {});
    await broker.stop();
  }
  for (let i = 0; i < (quick ? 2 : 5); i++) {
    const { broker, client, sample } = await timeToCompleteList(root, home);
    warm.push(sample);
    log(`warm ${i + 1}: complete tools/list ${sample.completeMs.toFixed(0)} ms after spawn (${sample.cached} cached)`);
    // Let the upstreams confirm, so the next warm start reads a cache this one kept.
    await until(async () => (await servers(client)).every((s) => s.catalog === 'live'), 'every server live');
    await client.close().catch(() => {});
    await broker.stop();
  }
  // One more warm start, traced (bench/start-trace.cjs): where the time goes, not a timed run.
  const traced = await timeToCompleteList(root, home, { traced: true });
  const breakdown = {
    trace: traced.broker.trace,
    initializedMs: traced.sample.initializedMs,
    completeMs: traced.sample.completeMs,
    readyMs: traced.sample.readyMs,
  };
  await traced.client.close().catch(() => {});
  await traced.broker.stop();
  const stats = (rows, key) => summarize(rows.map((r) => r[key]));
  const floor = await startFloor(quick ? 3 : 7);
  log(
    `floor: bare node -e p50 ${floor.nodeExitMs.p50.toFixed(0)} ms, bare node:http first answer ${floor.httpFirstAnswerMs.p50.toFixed(0)} ms`,
  );
  return {
    breakdown,
    floor,
    servers: SERVERS,
    toolsPerServer: TOOLS_PER_SERVER,
    cold: { runs: cold, completeMs: stats(cold, 'completeMs'), afterReadyMs: stats(cold, 'afterReadyMs') },
    warm: {
      runs: warm,
      completeMs: stats(warm, 'completeMs'),
      afterReadyMs: stats(warm, 'afterReadyMs'),
      readyMs: stats(warm, 'readyMs'),
      initializedMs: stats(warm, 'initializedMs'),
      sdkListMs: stats(warm, 'sdkListMs'),
    },
  };
}

/**
 * Broker and every process under it: count, total RSS (each process's shared pages again), PSS, USS
 * and unique pages (each physical page once; null unless root), and the broker's own RSS and USS.
 */
function census(broker) {
  const pids = tree(broker.proc.pid);
  const all = memoryOf(pids);
  const own = memoryOf([broker.proc.pid]);
  return {
    processes: pids.length,
    rssBytes: rssOf(pids),
    pssBytes: all.pssBytes,
    ussBytes: all.ussBytes,
    uniqueBytes: all.uniqueBytes,
    brokerRssBytes: rssOf([broker.proc.pid]),
    brokerUssBytes: own.ussBytes,
  };
}

export async function sectionScaleLazy() {
  const out = {};
  for (const lifecycle of ['lazy', 'eager']) {
    const root = tempDir('scale-root-');
    registry(root, SERVERS, `lifecycle: ${lifecycle}\n`);
    const broker = await startBroker(root, tempDir('scale-home-'));
    const client = await broker.connect();
    const t = performance.now();
    // Lazy with no cache yet: each runs once to learn its catalog, then rests idle.
    const settled = lifecycle === 'lazy' ? 'idle' : 'running';
    await until(async () => (await servers(client)).every((s) => s.state === settled), `every server ${settled}`);
    const settledMs = performance.now() - t;
    for (const name of ['s01', 's02']) await client.callTool({ name: `${name}__echo`, arguments: { text: 'x' } });
    // Settled: the broker's token counter (a short-lived child process) has run and exited.
    await tokenCounterIdle(broker.proc.pid);
    await sleep(500);
    const list = await servers(client);
    out[lifecycle] = {
      ...census(broker),
      running: list.filter((s) => s.state === 'running').length,
      settledMs,
    };
    log(
      `${lifecycle}: ${out[lifecycle].processes} processes, ${MB(out[lifecycle].rssBytes).toFixed(0)} MB RSS, ` +
        `${MB(out[lifecycle].pssBytes).toFixed(0)} MB PSS, ${MB(out[lifecycle].ussBytes).toFixed(0)} MB USS, ` +
        `${out[lifecycle].uniqueBytes == null ? 'unique pages unread (not root)' : `${MB(out[lifecycle].uniqueBytes).toFixed(0)} MB unique`} ` +
        `(${out[lifecycle].running} upstreams running)`,
    );
    await client.close().catch(() => {});
    await broker.stop();
  }
  return { servers: SERVERS, used: 2, ...out };
}

export async function sectionScaleFirstCall({ quick }) {
  const n = quick ? 3 : 7;
  const root = tempDir('scale-root-');
  const dir = path.join(root, 'mcp-servers.d');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'cold.yaml'),
    `name: cold\ntrust: trusted\ncommand: ${JSON.stringify(NODE)}\nargs: ${JSON.stringify([ECHO])}\n` +
      'lifecycle: lazy\nidleStopMs: 200\n',
  );
  const broker = await startBroker(root, tempDir('scale-home-'));
  const client = await broker.connect();
  const idle = () => until(async () => (await servers(client))[0].state === 'idle', 'cold to go idle', 30_000);
  const lazy = [];
  for (let i = 0; i < n; i++) {
    await idle();
    const t = performance.now();
    await client.callTool({ name: 'cold__echo', arguments: { text: 'x' } });
    lazy.push(performance.now() - t);
  }
  await client.close().catch(() => {});
  await broker.stop();
  // The floor: what any client pays to spawn the same server, initialize it and make the call.
  const floor = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const direct = new Client({ name: 'switchboard-bench', version: '1.0.0' }, { capabilities: {} });
    await direct.connect(new StdioClientTransport({ command: NODE, args: [ECHO], stderr: 'ignore', cwd: REPO }));
    await direct.callTool({ name: 'echo', arguments: { text: 'x' } });
    floor.push(performance.now() - t);
    await direct.close();
  }
  const out = { samples: n, lazyMs: summarize(lazy), floorMs: summarize(floor) };
  log(`first call to a cold lazy server p50 ${out.lazyMs.p50.toFixed(0)} ms, floor ${out.floorMs.p50.toFixed(0)} ms`);
  return out;
}

export const SCALE_RUNNERS = {
  'scale-start': sectionScaleStart,
  'scale-lazy': sectionScaleLazy,
  'scale-first-call': sectionScaleFirstCall,
};
