#!/usr/bin/env node
// MCP Switchboard benchmark suite: `npm run bench` (builds, then runs this file).
//
//   node bench/run.mjs                 full run (~12 min on 2 cores); writes docs/benchmarks.md,
//                                      docs/bench-*.svg and bench/results/bench-<stamp>.json
//   node bench/run.mjs --quick         smoke run (a few hundred calls); writes under bench/results/
//   node bench/run.mjs --only <s>[,<s>] only these sections (latency, throughput, payload, fanout,
//                                      catalog, reload, coldstart, tokens, recall, scale-start,
//                                      scale-lazy, scale-first-call, scanner, telemetry, telemetry-floor,
//                                      guardrails); writes under
//                                      bench/results/
//   node bench/run.mjs --profile       CPU profile of the broker under the echo load (node --cpu-prof);
//                                      prints the top 25 self-time functions
//   node bench/run.mjs --render <json> re-render the markdown/SVG from a results file
//
// Benchmarks, not tests: nothing here fails on a slow figure. Targets are reported, not enforced.
// Only loopback traffic; every loop is bounded in count and time; every process started is killed.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  DirectStdio,
  DirectHttp,
  Broker,
  McpHub,
  Supergateway,
  McpProxy,
  RelayFloor,
  listAllTools,
  serverYaml,
  removeTemp,
  removeTempSettled,
  stopLoadClients,
  versionOf,
  REPO,
  BENCH,
  NODE,
  ECHO,
  TOOLS,
  BROKER_JS,
  BROKER_ENV,
  BROKER_NODE_FLAGS,
} from './lib/systems.mjs';
import {
  cpuSnapshot,
  cpuDelta,
  rssOf,
  pssOf,
  killAll,
  leftovers,
  sleep,
  spawnTracked,
  stopGracefully,
  tree,
} from './lib/proc.mjs';
import { summarize, rotate } from './lib/stats.mjs';
import { renderMarkdown, renderCharts, verdicts } from './lib/render.mjs';
import { summarizeProfile, formatProfile } from './lib/profile.mjs';
import { callTree, flameGraphSvg } from './lib/flame.mjs';
import { rawSession } from './lib/rawClient.mjs';
import { sectionTokens, sectionRecall } from './search.mjs';
import { SCALE_SECTIONS, SCALE_BUDGET_S, SCALE_RUNNERS } from './scale.mjs';
import { sectionScanner } from './scanner.mjs';
import { TELEMETRY_SECTIONS, TELEMETRY_BUDGET_S, TELEMETRY_RUNNERS } from './telemetry.mjs';
import { TELEMETRY_FLOOR_SECTIONS, TELEMETRY_FLOOR_BUDGET_S, TELEMETRY_FLOOR_RUNNERS } from './telemetry-floor.mjs';
import { GUARDRAIL_SECTIONS, GUARDRAIL_BUDGET_S, GUARDRAIL_RUNNERS } from './guardrails.mjs';

const SECTIONS = [
  'latency',
  'throughput',
  'payload',
  'fanout',
  'catalog',
  'reload',
  'coldstart',
  'profile',
  'tokens',
  'recall',
  ...SCALE_SECTIONS,
  'scanner',
  ...TELEMETRY_SECTIONS,
  ...TELEMETRY_FLOOR_SECTIONS,
  ...GUARDRAIL_SECTIONS,
];

// ---- arguments -------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const opt = { quick: false, only: [], profile: false, render: undefined };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--quick') opt.quick = true;
  else if (a === '--profile') opt.profile = true;
  else if (a === '--only')
    opt.only.push(
      ...String(argv[++i] ?? '')
        .split(',')
        .filter(Boolean),
    );
  else if (a.startsWith('--only=')) opt.only.push(...a.slice(7).split(',').filter(Boolean));
  else if (a === '--render') opt.render = argv[++i];
  else if (a === '--help' || a === '-h') {
    process.stdout.write(
      fs
        .readFileSync(new URL(import.meta.url), 'utf8')
        .split('\n')
        .slice(1, 14)
        .map((l) => l.replace(/^\/\/ ?/, ''))
        .join('\n') + '\n',
    );
    process.exit(0);
  } else {
    process.stderr.write(`bench: unknown argument ${a}\n`);
    process.exit(2);
  }
}
for (const s of opt.only)
  if (!SECTIONS.includes(s)) {
    process.stderr.write(`bench: unknown section '${s}' (one of ${SECTIONS.join(', ')})\n`);
    process.exit(2);
  }
const wanted = (s) => opt.only.length === 0 || opt.only.includes(s);

// ---- sizes: full run vs --quick ---------------------------------------------------------------
const CFG = opt.quick
  ? {
      warmup: 60,
      latency: { calls: 300, min: 300, block: 50 },
      throughput: { concurrency: [1, 8, 32], durationMs: 400, rounds: 1, cap: 20_000 },
      payload: { sizes: [1024, 102_400, 1_048_576], calls: [40, 20, 6], rounds: 2 },
      fanout: { n: [1, 4], m: 5 },
      catalog: {
        configs: [
          [10, 1],
          [100, 10],
          [1000, 1],
          [1000, 10],
        ],
        lists: 10,
        compareLists: 10,
        compareRounds: 2,
      },
      reload: { count: 5, min: 5 },
      coldstart: { count: 2 },
      profile: { calls: 1000, concurrentMs: 1000, bigCalls: 10 },
      profileSection: { calls: 800 },
    }
  : {
      // Every system first answers this many calls, unmeasured: a gateway is a long-lived process,
      // and its first few thousand calls also pay for V8 compiling its hot path (on the process's
      // own threads, so in its CPU figure); 200 left the broker at ~2x its steady-state CPU per call.
      warmup: 3000,
      latency: { calls: 2200, min: 2000, block: 100 },
      throughput: { concurrency: [1, 8, 32], durationMs: 1500, rounds: 2, cap: 60_000 },
      payload: { sizes: [1024, 102_400, 1_048_576], calls: [300, 150, 40], rounds: 5 },
      fanout: { n: [1, 4, 16], m: 5 },
      catalog: {
        configs: [
          [10, 1],
          [10, 10],
          [100, 1],
          [100, 10],
          [100, 50],
          [1000, 1],
          [1000, 10],
          [1000, 50],
        ],
        lists: 40,
        compareLists: 40,
        compareRounds: 4,
      },
      reload: { count: 22, min: 20 },
      coldstart: { count: 5 },
      profile: { calls: 4000, concurrentMs: 3000, bigCalls: 60 },
      profileSection: { calls: 6000 },
    };
// Time budgets: a section stops early (and says so) past its budget or the run's; the watchdog
// kills everything if the run somehow outlives both.
const SECTION_BUDGET_S = opt.quick
  ? {
      latency: 40,
      throughput: 150,
      payload: 30,
      fanout: 60,
      catalog: 60,
      reload: 40,
      coldstart: 20,
      profile: 40,
      tokens: 60,
      recall: 40,
    }
  : {
      latency: 120,
      throughput: 150,
      payload: 50,
      fanout: 100,
      catalog: 100,
      reload: 80,
      coldstart: 30,
      profile: 60,
      tokens: 90,
      recall: 60,
    };
Object.assign(SECTION_BUDGET_S, SCALE_BUDGET_S[opt.quick ? 'quick' : 'full'], { scanner: 30 });
Object.assign(SECTION_BUDGET_S, TELEMETRY_BUDGET_S[opt.quick ? 'quick' : 'full']);
Object.assign(SECTION_BUDGET_S, TELEMETRY_FLOOR_BUDGET_S[opt.quick ? 'quick' : 'full']);
Object.assign(SECTION_BUDGET_S, GUARDRAIL_BUDGET_S[opt.quick ? 'quick' : 'full']);
const SCALE_BUDGET_MS = Object.values(SCALE_BUDGET_S[opt.quick ? 'quick' : 'full']).reduce((a, b) => a + b) * 1000;
// The telemetry floor (stop 48) came after the 9 minutes were set: its own budget is added.
const RUN_BUDGET_MS =
  (opt.quick ? 5 : 9) * 60_000 +
  SCALE_BUDGET_MS +
  TELEMETRY_FLOOR_BUDGET_S[opt.quick ? 'quick' : 'full']['telemetry-floor'] * 1000;
const WATCHDOG_MS = 15 * 60_000;
let sectionDeadline = Infinity;
const overBudget = () => performance.now() > sectionDeadline;

// ---- bookkeeping -----------------------------------------------------------------------------
const startedAt = new Date();
const T0 = performance.now();
const log = (...a) =>
  process.stderr.write(`[bench ${((performance.now() - T0) / 1000).toFixed(1).padStart(6)}s] ${a.join(' ')}\n`);
let exiting = false;
function emergencyExit(code, why) {
  if (exiting) return;
  exiting = true;
  log(`stopping: ${why}`);
  killAll();
  try {
    removeTemp();
  } catch {
    /* best effort */
  }
  process.exit(code);
}
process.on('SIGINT', () => emergencyExit(130, 'SIGINT'));
process.on('SIGTERM', () => emergencyExit(143, 'SIGTERM'));
process.on('exit', () => killAll());
process.on('unhandledRejection', (err) => log(`unhandled rejection: ${err?.stack ?? err}`));
// The SDK's StreamableHTTPClientTransport passes one session-long AbortSignal to every fetch, and
// undici drops each request's abort listener only when the Request is garbage-collected, so a long
// run of calls on one session trips Node's MaxListenersExceededWarning (a client-side cost, the
// same for every HTTP system). Count those instead of printing thousands of lines.
const clientWarnings = {};
process.removeAllListeners('warning');
process.on('warning', (w) => {
  clientWarnings[w.name] = (clientWarnings[w.name] ?? 0) + 1;
  if (clientWarnings[w.name] === 1) log(`warning (counted, shown once): ${w.name}: ${w.message}`);
});
setTimeout(() => emergencyExit(3, `watchdog: the run passed ${WATCHDOG_MS / 60_000} minutes`), WATCHDOG_MS).unref();

const us = (ms) => ms * 1000;
const MB = (b) => b / 1024 / 1024;
const ECHO_ARGS = { text: 'hello' };
/**
 * Client processes a throughput cell spreads its sessions over: with all sessions in the bench
 * process, that one process at a full core capped the 8- and 32-session cells, not the servers.
 */
const CLIENT_PROCS = 4;
/** The largest cell of the throughput section's raw-client cells. */
const RAW_MAX_SESSIONS = 8;

/** Cores kept busy by everything on the machine over `ms` (from /proc/stat), before we start. */
async function backgroundBusyCores(ms = 2000) {
  const read = () => {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3] + (f[4] ?? 0);
    const total = f.reduce((a, b) => a + b, 0);
    return { idle, total };
  };
  try {
    const a = read();
    await sleep(ms);
    const b = read();
    const total = b.total - a.total;
    return total > 0 ? ((total - (b.idle - a.idle)) / total) * os.cpus().length : undefined;
  } catch {
    return undefined;
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
    cores: cpus.length,
    ramBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    sdk: versionOf('@modelcontextprotocol/sdk'),
    peers: {
      'mcp-hub': versionOf('mcp-hub'),
      supergateway: versionOf('supergateway'),
      'mcp-proxy': versionOf('mcp-proxy'),
    },
    loadavgStart: os.loadavg(),
  };
}

async function callEcho(client, name) {
  const r = await client.callTool({ name, arguments: ECHO_ARGS });
  return r;
}

function textOf(result) {
  return (result?.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('');
}

/** Runs `calls` sequential calls of fn(client) and measures latency, server CPU and client CPU. */
async function timedBlock(system, client, calls, fn, acc) {
  const pids = system.serverPids();
  const gw = system.gatewayPids();
  const before = cpuSnapshot(pids);
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await fn(client);
    acc.samples.push(performance.now() - t);
  }
  const c = process.cpuUsage(c0);
  acc.serverCpuUs += cpuDelta(before, pids);
  acc.gatewayCpuUs += cpuDelta(before, gw);
  acc.clientCpuUs += c.user + c.system;
  acc.calls += calls;
}
const newAcc = () => ({ samples: [], serverCpuUs: 0, gatewayCpuUs: 0, clientCpuUs: 0, calls: 0 });
function accResult(acc, hasGateway) {
  const s = summarize(acc.samples);
  return {
    calls: acc.calls,
    p50Us: us(s.p50),
    p90Us: us(s.p90),
    p99Us: us(s.p99),
    meanUs: us(s.mean),
    minUs: us(s.min),
    maxUs: us(s.max),
    serverCpuPerCallUs: acc.serverCpuUs / acc.calls,
    gatewayCpuPerCallUs: hasGateway ? acc.gatewayCpuUs / acc.calls : null,
    clientCpuPerCallUs: acc.clientCpuUs / acc.calls,
  };
}

// ---- the six systems of sections 1-3 (same echo fixture behind each) ---------------------------
let core;
async function coreSystems() {
  if (core) return core;
  const systems = [new DirectStdio(), new DirectHttp(), new Broker(), new McpHub(), new Supergateway(), new McpProxy()];
  core = [];
  for (const s of systems) {
    const t = performance.now();
    await s.start();
    if (s instanceof Broker) await s.waitForTools({ names: ['echo__echo'] });
    const [client] = await s.pool(1);
    await s.resolveTools(client, ['echo', 'payload']);
    const probe = await callEcho(client, s.toolNames.echo);
    if (textOf(probe) !== `echo: ${ECHO_ARGS.text}`)
      throw new Error(`${s.key}: unexpected echo result ${JSON.stringify(probe)}`);
    for (let i = 0; i < CFG.warmup; i++) await callEcho(client, s.toolNames.echo);
    s.startMs = performance.now() - t;
    core.push(s);
    log(
      `${s.key.padEnd(13)} up in ${s.startMs.toFixed(0)} ms${s.listening ? `, listening only on ${s.listening.join(', ')}` : ''}; tool '${s.toolNames.echo}'`,
    );
  }
  await sleep(500);
  for (const s of core) if (s.tokensCounted) await s.tokensCounted();
  for (const s of core) {
    const pids = s.serverPids();
    s.idle = {
      processes: pids.length,
      gatewayRssBytes: s.gatewayPids().length ? rssOf(s.gatewayPids()) : null,
      serverRssBytes: rssOf(pids),
      serverPssBytes: pssOf(pids),
      listening: s.listening ?? null,
    };
  }
  return core;
}
let coreInfo;
async function stopCore() {
  if (!core) return;
  coreInfo = Object.fromEntries(core.map((s) => [s.key, systemInfo(s)]));
  for (const s of core) await s.stop().catch((err) => log(`stop ${s.key}: ${err.message}`));
  await stopLoadClients();
  core = undefined;
  await sleep(300);
}
const systemInfo = (s) => ({ key: s.key, label: s.label, tool: s.toolNames.echo, startMs: s.startMs, idle: s.idle });

// ---- 1. sequential latency ---------------------------------------------------------------------
/**
 * The floor rows: bench/fixtures/http-echo.mjs (answers on its socket alone) or, for the relay floor,
 * bench/fixtures/http-relay.mjs (puts each request through the echo upstream's stdio pipe and back,
 * as the broker does, and nothing else), over keep-alive HTTP, posted by the bench process with
 * node:http (no SDK on either side). Shaped like a system for timedBlock(); the relay's own process
 * is its "gateway", the relay and its upstream its servers.
 */
async function httpFloor({ fixture = 'http-echo.mjs', key = 'floor-http', args = [] } = {}) {
  const proc = spawnTracked(NODE, [path.join(BENCH, 'fixtures', fixture), '0', ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  const url = new URL(
    await new Promise((resolve, reject) => {
      readline.createInterface({ input: proc.stdout }).once('line', (l) => resolve(JSON.parse(l).listening));
      proc.once('exit', (c) => reject(new Error(`${fixture} exited ${c}`)));
    }),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let id = 0;
  const post = () =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'echo', arguments: ECHO_ARGS },
      });
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < CFG.warmup; i++) await post();
  const relay = fixture === 'http-relay.mjs';
  return {
    key,
    clients: [undefined],
    call: post,
    serverPids: () => (relay ? tree(proc.pid) : [proc.pid]),
    gatewayPids: () => (relay ? [proc.pid] : []),
    stop: async () => {
      agent.destroy();
      await stopGracefully(proc, 3000);
    },
  };
}

/**
 * The broker of section 1 once more, called by the raw client (bench/lib/rawClient.mjs: node:http,
 * one keep-alive connection, no SDK): the broker's own cost per call, next to the floor's, without
 * the SDK client's in the way. Shaped like a system for timedBlock().
 */
async function rawBrokerRow(broker) {
  const raw = await rawSession({ url: broker.url, token: broker.token, echo: broker.toolNames.echo });
  for (let i = 0; i < CFG.warmup; i++) await raw.call();
  return {
    key: 'broker-raw',
    clients: [undefined],
    call: raw.call,
    serverPids: () => broker.serverPids(),
    gatewayPids: () => broker.gatewayPids(),
    stop: async () => raw.close(),
  };
}

async function sectionLatency() {
  const systems = await coreSystems();
  const floor = await httpFloor();
  const relay = await httpFloor({ fixture: 'http-relay.mjs', key: 'floor-relay', args: [NODE, ECHO] });
  const broker = systems.find((s) => s.key === 'broker');
  const raw = broker && (await rawBrokerRow(broker));
  const extra = [floor, relay, ...(raw ? [raw] : [])];
  const { calls, block, min } = CFG.latency;
  const rounds = Math.ceil(calls / block);
  const minRounds = Math.ceil(min / block); // the budget may only cut rounds beyond the minimum
  const accs = new Map(systems.map((s) => [s.key, newAcc()]));
  let done = 0;
  for (const s of extra) accs.set(s.key, newAcc());
  for (let r = 0; r < rounds && (r < minRounds || !overBudget()); r++, done++) {
    for (const s of rotate([...systems, ...extra], r)) {
      const call = extra.includes(s) ? () => s.call() : (c) => callEcho(c, s.toolNames.echo);
      await timedBlock(s, s.clients[0], block, call, accs.get(s.key));
    }
  }
  for (const s of extra) await s.stop();
  const out = { callsPerSystem: done * block, truncated: done < rounds, block, systems: {} };
  for (const s of systems)
    out.systems[s.key] = { ...systemInfo(s), ...accResult(accs.get(s.key), s.gatewayPids().length > 0) };
  out.floor = accResult(accs.get(floor.key), false);
  out.relayFloor = accResult(accs.get(relay.key), true);
  if (raw) out.brokerRaw = accResult(accs.get(raw.key), true);
  for (const s of systems)
    log(
      `latency ${s.key.padEnd(13)} p50 ${out.systems[s.key].p50Us.toFixed(0)} µs  p99 ${out.systems[s.key].p99Us.toFixed(0)} µs  server CPU/call ${out.systems[s.key].serverCpuPerCallUs.toFixed(0)} µs`,
    );
  return out;
}

// ---- 2. throughput -----------------------------------------------------------------------------
async function closedLoop(system, clients, durationMs, cap) {
  const pids = system.serverPids();
  const gw = system.gatewayPids();
  const before = cpuSnapshot(pids);
  const c0 = process.cpuUsage();
  const lat = [];
  let issued = 0;
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + durationMs;
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < end && issued < cap) {
        issued++;
        const t = performance.now();
        try {
          await callEcho(client, system.toolNames.echo);
          lat.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return {
    calls: lat.length,
    errors,
    elapsedMs: elapsed,
    serverCpuUs: cpuDelta(before, pids),
    gatewayCpuUs: cpuDelta(before, gw),
    clientCpuUs: c.user + c.system,
    lat,
  };
}

/**
 * The closed loop of one throughput cell over client processes (bench/lib/loadClient.mjs): c
 * sessions spread over min(c, CLIENT_PROCS) processes, all starting at one instant.
 */
async function closedLoopProcs(system, c, durationMs, cap, raw = false) {
  const procs = Math.min(c, CLIENT_PROCS);
  const loaders = (raw ? system.rawLoaders : system.loaders).slice(0, procs);
  const pids = system.serverPids();
  const gw = system.gatewayPids();
  const startAt = Date.now() + 30;
  const before = cpuSnapshot(pids);
  const runs = await Promise.all(
    loaders.map((l, i) =>
      l.ask({
        cmd: 'run',
        key: raw ? `${system.key}:raw` : system.key,
        // c is a multiple of procs here (1, 8, 32 over 1 or 4 processes); any remainder goes to the first.
        sessions: Math.floor(c / procs) + (i < c % procs ? 1 : 0),
        durationMs,
        cap: Math.ceil(cap / procs),
        tool: system.toolNames.echo,
        args: ECHO_ARGS,
        startAt,
      }),
    ),
  );
  const failed = runs.find((r) => r.firstError);
  if (failed)
    log(
      `throughput ${system.key}${raw ? ' (raw)' : ''} c=${c}: ${failed.errors} errors, the first: ${failed.firstError}`,
    );
  return {
    calls: runs.reduce((a, r) => a + r.calls, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    elapsedMs: Math.max(...runs.map((r) => r.elapsedMs)),
    serverCpuUs: cpuDelta(before, pids),
    gatewayCpuUs: cpuDelta(before, gw),
    clientCpuUs: runs.reduce((a, r) => a + r.cpuUs, 0),
    lat: runs.flatMap((r) => r.lat),
  };
}

/**
 * The relay floor in the throughput cells (bench/lib/systems.mjs RelayFloor): what a forwarder that
 * does nothing else reaches with the same clients, beside the broker and direct SDK HTTP.
 */
async function relayFloorSystem() {
  const relay = await new RelayFloor().start();
  const [client] = await relay.pool(1);
  await relay.resolveTools(client, ['echo']);
  for (let i = 0; i < CFG.warmup; i++) await callEcho(client, relay.toolNames.echo);
  return relay;
}

async function sectionThroughput() {
  const relay = await relayFloorSystem();
  try {
    return await throughputCells([...(await coreSystems()), relay]);
  } finally {
    await relay.stop();
  }
}

async function throughputCells(systems) {
  const { concurrency, durationMs, rounds, cap } = CFG.throughput;
  const maxC = Math.max(...concurrency);
  for (const s of systems) {
    const t = performance.now();
    const loaders = await s.loadClients(Math.min(maxC, CLIENT_PROCS), Math.ceil(maxC / CLIENT_PROCS));
    // Warm every new session a little (the in-process session of section 1 is not used here).
    await Promise.all(
      loaders.map((l) =>
        l.ask({
          cmd: 'run',
          key: s.key,
          sessions: Math.ceil(maxC / CLIENT_PROCS),
          durationMs: 2000,
          cap: 20 * Math.ceil(maxC / CLIENT_PROCS),
          tool: s.toolNames.echo,
          args: ECHO_ARGS,
          startAt: 0,
        }),
      ),
    );
    log(
      `throughput: ${s.key} has ${maxC} sessions in ${loaders.length} client processes (${s.serverPids().length} server-side processes) in ${(performance.now() - t).toFixed(0)} ms`,
    );
  }
  // The same cells with the raw client (no SDK client: bench/lib/loadClient.mjs RawSession) for the
  // broker and the direct SDK HTTP server: with the SDK client ~70% of a cell's CPU is the client's,
  // which caps both sides alike; without it the cell measures the servers.
  // At most 8 sessions: the broker caps one client's open sessions at 64, and the SDK cells already
  // hold 32 of the bench client's (one more than the cap would close the least recently used).
  const rawSystems = systems.filter((s) => s.key === 'broker' || s.key === 'direct-http');
  const rawMax = Math.max(...concurrency.filter((c) => c <= RAW_MAX_SESSIONS));
  for (const s of rawSystems) {
    const loaders = await s.rawLoadClients(Math.min(rawMax, CLIENT_PROCS), Math.ceil(rawMax / CLIENT_PROCS));
    await Promise.all(
      loaders.map((l) =>
        l.ask({
          cmd: 'run',
          key: `${s.key}:raw`,
          sessions: Math.ceil(rawMax / CLIENT_PROCS),
          durationMs: 1000,
          cap: 50 * Math.ceil(rawMax / CLIENT_PROCS),
          tool: s.toolNames.echo,
          args: ECHO_ARGS,
          startAt: 0,
        }),
      ),
    );
  }
  const cells = [...systems.map((s) => ({ s, raw: false })), ...rawSystems.map((s) => ({ s, raw: true }))];
  await sleep(500);
  const acc = {};
  let truncated = false;
  for (let r = 0; r < rounds; r++) {
    for (const c of concurrency) {
      for (const { s, raw } of rotate(cells, r + c)) {
        if (raw && c > rawMax) continue;
        if (overBudget()) {
          truncated = true;
          continue;
        }
        const res = await closedLoopProcs(s, c, durationMs, cap, raw);
        const a = (acc[`${s.key}${raw ? ':raw' : ''}/${c}`] ??= {
          calls: 0,
          errors: 0,
          elapsedMs: 0,
          serverCpuUs: 0,
          gatewayCpuUs: 0,
          clientCpuUs: 0,
          lat: [],
        });
        a.calls += res.calls;
        a.errors += res.errors;
        a.elapsedMs += res.elapsedMs;
        a.serverCpuUs += res.serverCpuUs;
        a.gatewayCpuUs += res.gatewayCpuUs;
        a.clientCpuUs += res.clientCpuUs;
        for (const v of res.lat) a.lat.push(v);
      }
    }
  }
  const out = { concurrency, durationMs, rounds, truncated, clientProcs: CLIENT_PROCS, systems: {}, rawClient: {} };
  for (const { s, raw } of cells) {
    const into = raw ? out.rawClient : out.systems;
    into[s.key] = { label: s.label, processesAtMax: s.serverPids().length, byConcurrency: {} };
    for (const c of concurrency) {
      const a = acc[`${s.key}${raw ? ':raw' : ''}/${c}`];
      if (!a) continue;
      const lat = summarize(a.lat);
      into[s.key].byConcurrency[c] = {
        calls: a.calls,
        errors: a.errors,
        seconds: a.elapsedMs / 1000,
        callsPerSec: a.calls / (a.elapsedMs / 1000),
        p50Us: us(lat.p50),
        p99Us: us(lat.p99),
        serverCpuPerCallUs: a.serverCpuUs / a.calls,
        gatewayCpuPerCallUs: s.gatewayPids().length ? a.gatewayCpuUs / a.calls : null,
        clientCpuPerCallUs: a.clientCpuUs / a.calls,
      };
      log(
        `throughput ${(s.key + (raw ? ' (raw)' : '')).padEnd(17)} c=${String(c).padStart(2)}  ${(a.calls / (a.elapsedMs / 1000)).toFixed(0)} calls/s${a.errors ? ` (${a.errors} errors)` : ''}`,
      );
    }
  }
  return out;
}

// ---- 3. payload size ---------------------------------------------------------------------------
async function sectionPayload() {
  const systems = await coreSystems();
  const { sizes, calls, rounds } = CFG.payload;
  // One checked call per size and system first (and a warm-up of the big path).
  for (const s of systems) {
    for (const bytes of sizes) {
      const r = await s.clients[0].callTool({ name: s.toolNames.payload, arguments: { bytes } });
      const got = textOf(r).length;
      if (got !== bytes) throw new Error(`${s.key}: payload ${bytes} returned ${got} characters`);
    }
  }
  const accs = new Map();
  let truncated = false;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < sizes.length; i++) {
      const bytes = sizes[i];
      const per = Math.ceil(calls[i] / rounds);
      for (const s of rotate(systems, r + i)) {
        if (overBudget()) {
          truncated = true;
          continue;
        }
        const key = `${s.key}/${bytes}`;
        if (!accs.has(key)) accs.set(key, newAcc());
        await timedBlock(
          s,
          s.clients[0],
          per,
          (c) => c.callTool({ name: s.toolNames.payload, arguments: { bytes } }),
          accs.get(key),
        );
      }
    }
  }
  const out = { sizes, truncated, systems: {} };
  for (const s of systems) {
    out.systems[s.key] = { label: s.label, bySize: {} };
    for (const bytes of sizes) {
      const a = accs.get(`${s.key}/${bytes}`);
      if (!a) continue;
      out.systems[s.key].bySize[bytes] = accResult(a, s.gatewayPids().length > 0);
    }
    log(
      `payload ${s.key.padEnd(13)} ${sizes.map((b) => `${b}B p50 ${(out.systems[s.key].bySize[b]?.p50Us / 1000).toFixed(2)} ms`).join('  ')}`,
    );
  }
  return out;
}

// ---- 4. fan-out: N clients × M servers ----------------------------------------------------------
function serverSideCensus() {
  const procs = leftovers();
  const pids = procs.map((p) => p.pid);
  return {
    processes: pids.length,
    rssBytes: rssOf(pids),
    pssBytes: pssOf(pids),
    comms: [...new Set(procs.map((p) => p.comm))],
  };
}

async function limitAll(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

async function sectionFanout() {
  await stopCore();
  const { n: ns, m } = CFG.fanout;
  const names = Array.from({ length: m }, (_, i) => `s${i + 1}`);
  const servers = names.map((name) => ({ name, script: ECHO, args: ['--name', name] }));
  const rows = [];
  const before = leftovers();
  if (before.length)
    log(
      `fanout: ${before.length} processes still around before the section: ${before.map((p) => `${p.pid}:${p.comm}`).join(', ')}`,
    );
  let truncated = false;
  for (const n of ns) {
    if (overBudget()) {
      truncated = true;
      break;
    }
    const row = { n, m };
    // (a) without a broker: every client spawns its own M stdio servers.
    {
      const t = performance.now();
      const agents = await limitAll(Array.from({ length: n * m }), 4, async (_, i) => {
        const transport = new StdioClientTransport({
          command: NODE,
          args: [ECHO, '--name', names[i % m]],
          stderr: 'ignore',
          cwd: REPO,
        });
        const client = new Client({ name: 'fanout', version: '1' }, { capabilities: {} });
        await client.connect(transport, { timeout: 30_000 });
        return client;
      });
      for (const c of agents) await callEcho(c, 'echo');
      const setupMs = performance.now() - t;
      await sleep(300);
      row.direct = { ...serverSideCensus(), setupMs };
      await Promise.allSettled(agents.map((c) => c.close()));
      await sleep(300);
      for (const p of leftovers()) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    // (b) through the broker: one broker, M upstreams, N sessions.
    {
      const t = performance.now();
      const broker = new Broker({ servers });
      await broker.start();
      await broker.waitForTools({ names: names.map((s) => `${s}__echo`) });
      const clients = await limitAll(Array.from({ length: n }), 4, () => broker.connect());
      broker.clients.push(...clients);
      for (const c of clients) for (const s of names) await callEcho(c, `${s}__echo`);
      const setupMs = performance.now() - t;
      await broker.tokensCounted();
      await sleep(300);
      row.broker = { ...serverSideCensus(), setupMs, brokerRssBytes: rssOf([broker.mainPid]) };
      await broker.stop();
      await sleep(200);
    }
    // (c) through mcp-hub (also one process in front of M upstreams).
    {
      const t = performance.now();
      const hub = new McpHub({ servers });
      await hub.start();
      const clients = await limitAll(Array.from({ length: n }), 4, () => hub.connect());
      hub.clients.push(...clients);
      await hub.resolveTools(clients[0], ['echo']);
      const tools = await listAllTools(clients[0]);
      for (const c of clients)
        for (const s of names) {
          const tool =
            tools.find((x) => x.name === `${s}__echo`) ??
            tools.find((x) => x.name.startsWith(s) && x.name.endsWith('echo'));
          await callEcho(c, tool.name);
        }
      const setupMs = performance.now() - t;
      await sleep(300);
      row['mcp-hub'] = { ...serverSideCensus(), setupMs, hubRssBytes: rssOf([hub.mainPid]) };
      await hub.stop();
      await sleep(300);
    }
    rows.push(row);
    log(
      `fanout N=${n} M=${m}: direct ${row.direct.processes} procs ${MB(row.direct.rssBytes).toFixed(0)} MB | broker ${row.broker.processes} procs ${MB(row.broker.rssBytes).toFixed(0)} MB | mcp-hub ${row['mcp-hub'].processes} procs ${MB(row['mcp-hub'].rssBytes).toFixed(0)} MB`,
    );
  }
  return { m, rows, truncated };
}

// ---- 5. catalog scale --------------------------------------------------------------------------
async function timeLists(system, client, count, acc) {
  await timedBlock(
    system,
    client,
    count,
    async (c) => {
      acc.lastCount = (await listAllTools(c)).length;
    },
    acc,
  );
}

async function sectionCatalog() {
  await stopCore();
  const { configs, lists, compareLists, compareRounds } = CFG.catalog;
  const matrix = [];
  let truncated = false;
  for (const [total, nServers] of configs) {
    if (overBudget()) {
      truncated = true;
      break;
    }
    const per = total / nServers;
    const servers = Array.from({ length: nServers }, (_, i) => ({
      name: `c${i + 1}`,
      script: TOOLS,
      args: ['--count', String(per)],
    }));
    const broker = new Broker({ servers });
    const t = performance.now();
    await broker.start();
    const { own, tools } = await broker.waitForTools({ count: total }, 120_000);
    const catalogMs = performance.now() - t;
    const [client] = await broker.pool(1);
    for (let i = 0; i < 3; i++) await listAllTools(client);
    const acc = newAcc();
    // At least `lists` lists and at least ~0.5 s of them (CPU is read in 10 ms clock ticks), ≤ 500.
    const t1 = performance.now();
    await timeLists(broker, client, lists, acc);
    while (performance.now() - t1 < 500 && acc.calls < 500) await timeLists(broker, client, 10, acc);
    await broker.tokensCounted();
    await sleep(200);
    const r = accResult(acc, true);
    matrix.push({
      tools: total,
      servers: nServers,
      toolsPerServer: per,
      listed: tools.length,
      upstreamTools: own.length,
      listP50Us: r.p50Us,
      listP99Us: r.p99Us,
      brokerCpuPerListUs: r.gatewayCpuPerCallUs,
      brokerRssBytes: rssOf([broker.mainPid]),
      totalRssBytes: rssOf(broker.serverPids()),
      processes: broker.serverPids().length,
      catalogReadyMs: catalogMs,
    });
    log(
      `catalog ${String(total).padStart(4)} tools / ${String(nServers).padStart(2)} servers: list p50 ${(r.p50Us / 1000).toFixed(2)} ms, broker RSS ${MB(rssOf([broker.mainPid])).toFixed(0)} MB, ready in ${catalogMs.toFixed(0)} ms`,
    );
    await broker.stop();
  }
  // 1,000 tools on one upstream, interleaved across every system.
  const spec = { script: TOOLS, args: ['--count', '1000'] };
  const systems = [
    new DirectStdio(spec),
    new DirectHttp(spec),
    new Broker({ servers: [{ name: 'cat', ...spec }] }),
    new McpHub({ servers: [{ name: 'cat', ...spec }] }),
    new Supergateway(spec),
    new McpProxy(spec),
  ];
  const compare = {};
  try {
    for (const s of systems) {
      await s.start();
      if (s instanceof Broker) await s.waitForTools({ count: 1000 }, 60_000);
      const [c] = await s.pool(1);
      for (let i = 0; i < 3; i++) await listAllTools(c);
    }
    const accs = new Map(systems.map((s) => [s.key, newAcc()]));
    const per = Math.ceil(compareLists / compareRounds);
    for (let r = 0; r < compareRounds; r++)
      for (const s of rotate(systems, r)) await timeLists(s, s.clients[0], per, accs.get(s.key));
    for (const s of systems) {
      const a = accs.get(s.key);
      compare[s.key] = { label: s.label, toolsListed: a.lastCount, ...accResult(a, s.gatewayPids().length > 0) };
      log(
        `catalog 1000 tools via ${s.key.padEnd(13)} p50 ${(compare[s.key].p50Us / 1000).toFixed(2)} ms (${a.lastCount} tools listed)`,
      );
    }
  } finally {
    for (const s of systems) await s.stop().catch(() => {});
  }
  return { pageSize: 50, matrix, compare, truncated };
}

// ---- 6. hot reload -----------------------------------------------------------------------------
async function sectionReload() {
  await stopCore();
  const broker = new Broker({ servers: [{ name: 'echo' }] });
  await broker.start();
  await broker.waitForTools({ names: ['echo__echo'] });
  const client = await broker.connect();
  broker.clients.push(client);
  let notes = 0;
  let waiter;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    notes++;
    const w = waiter;
    waiter = undefined;
    w?.();
  });
  const nextNote = (ms) =>
    new Promise((resolve) => {
      const t = setTimeout(() => {
        waiter = undefined;
        resolve(false);
      }, ms);
      waiter = () => {
        clearTimeout(t);
        resolve(true);
      };
    });
  await listAllTools(client);
  await sleep(300); // let the GET stream open
  const dir = path.join(broker.root, 'mcp-servers.d');
  const add = [];
  const remove = [];
  const floor = [];
  const floorNetns = [];
  // Does the broker start upstreams in their own network namespace (no 'network' grant)? Then the
  // floor is also measured with the same `unshare --net` wrapper.
  const netnsOf = (pid) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/ns/net`);
    } catch {
      return undefined;
    }
  };
  const upstreamPid = broker.serverPids().find((p) => p !== broker.mainPid);
  const isolated =
    upstreamPid !== undefined && netnsOf(upstreamPid) !== undefined && netnsOf(upstreamPid) !== netnsOf(process.pid);
  async function spawnHandshake(command, args) {
    const tf = performance.now();
    const transport = new StdioClientTransport({ command, args, stderr: 'ignore', cwd: REPO });
    const direct = new Client({ name: 'floor', version: '1' }, { capabilities: {} });
    await direct.connect(transport, { timeout: 30_000 });
    await direct.listTools();
    const ms = performance.now() - tf;
    await direct.close();
    return ms;
  }
  let failures = 0;

  /** Waits (≤ 10 s) until has(tool) === want, looking after each list_changed, polling if none. */
  async function until(tool, want, t0) {
    let notifiedAt;
    const end = performance.now() + 10_000;
    while (performance.now() < end) {
      const got = await nextNote(Math.max(1, end - performance.now()));
      if (got && notifiedAt === undefined) notifiedAt = performance.now() - t0;
      const tools = await listAllTools(client);
      if (tools.some((t) => t.name === tool) === want)
        return { notifiedMs: notifiedAt ?? null, listedMs: performance.now() - t0 };
      if (!got) break;
    }
    return undefined;
  }
  let attempted = 0;
  let countersWaited = 0;
  const isTokenCounter = (pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('count-tokens');
    } catch {
      return false;
    }
  };
  for (let i = 1; i <= CFG.reload.count && (i <= CFG.reload.min || !overBudget()); i++) {
    attempted++;
    const name = `hot${i}`;
    const tool = `${name}__echo`;
    const staged = path.join(broker.root, `.${name}.yaml.tmp`);
    fs.writeFileSync(staged, serverYaml({ name, script: ECHO }));
    const notesBefore = notes;
    const childrenFile = `/proc/${broker.mainPid}/task/${broker.mainPid}/children`;
    const kids = () => {
      try {
        return fs.readFileSync(childrenFile, 'utf8').trim().split(/\s+/).filter(Boolean);
      } catch {
        return [];
      }
    };
    const known = new Set(kids());
    let spawnedMs = null;
    let t0 = performance.now();
    // When the broker spawns the upstream: a cheap read of its children list every 5 ms (≤ 10 s).
    const watch = setInterval(() => {
      if (spawnedMs === null && kids().some((k) => !known.has(k))) spawnedMs = performance.now() - t0;
      if (spawnedMs !== null || performance.now() - t0 > 10_000) clearInterval(watch);
    }, 5);
    fs.renameSync(staged, path.join(dir, `${name}.yaml`)); // atomic, as editors save
    const a = await until(tool, true, t0);
    clearInterval(watch);
    if (a) add.push({ ...a, spawnedMs, notifications: notes - notesBefore });
    else failures++;
    await sleep(150);
    t0 = performance.now();
    fs.unlinkSync(path.join(dir, `${name}.yaml`));
    const d = await until(tool, false, t0);
    if (d) remove.push(d);
    else failures++;
    // The broker counts a new tool's tokens in a child process (~0.5 s of CPU) 300 ms after its
    // catalog went quiet: on 2 cores it would slow the floor's spawn below, or the next reload.
    await sleep(400);
    while (kids().some(isTokenCounter)) {
      countersWaited++;
      await sleep(50);
    }
    // The floor: spawning the same upstream and doing the MCP handshake + tools/list directly.
    floor.push(await spawnHandshake(NODE, [ECHO, '--name', name]));
    await sleep(100);
    if (isolated) {
      try {
        floorNetns.push(await spawnHandshake('unshare', ['--net', '--', NODE, ECHO, '--name', name]));
      } catch (err) {
        log(`reload: unshare floor failed: ${err.message}`);
      }
      await sleep(100);
    }
  }
  await broker.stop();
  const pick = (xs, k) => summarize(xs.map((x) => x[k]).filter((v) => v !== null));
  const out = {
    reloads: add.length,
    attempted,
    failures,
    truncated: attempted < CFG.reload.count,
    /** 50 ms waits for the broker's token counter before a floor (it would compete for the CPU). */
    tokenCounterWaits: countersWaited,
    add: {
      listed: pick(add, 'listedMs'),
      notified: pick(add, 'notifiedMs'),
      spawned: pick(add, 'spawnedMs'),
      notificationsPerReload: summarize(add.map((x) => x.notifications)).p50,
      // Each reload against the floor measured right after it: the upstream's own start moves more
      // between runs on a shared machine than the target's 25 ms.
      overFloorPaired: failures === 0 ? summarize(add.map((x, i) => x.listedMs - floor[i])) : null,
    },
    remove: { listed: pick(remove, 'listedMs'), notified: pick(remove, 'notifiedMs') },
    floorSpawnHandshake: summarize(floor),
    upstreamInOwnNetns: isolated,
    floorSpawnHandshakeNetns: floorNetns.length ? summarize(floorNetns) : null,
    raw: { add, remove, floor, floorNetns },
  };
  log(
    `reload: add→listed p50 ${out.add.listed.p50?.toFixed(0)} ms (spawned ${out.add.spawned.p50?.toFixed(0)} ms, notified ${out.add.notified.p50?.toFixed(0)} ms${out.add.overFloorPaired ? `, listed − floor paired ${out.add.overFloorPaired.p50.toFixed(0)} ms` : ''}), remove→gone p50 ${out.remove.listed.p50?.toFixed(0)} ms, direct spawn+handshake p50 ${out.floorSpawnHandshake.p50?.toFixed(0)} ms${out.floorSpawnHandshakeNetns ? `, under unshare --net ${out.floorSpawnHandshakeNetns.p50.toFixed(0)} ms` : ''}`,
  );
  return out;
}

// ---- 7. cold start -----------------------------------------------------------------------------
/**
 * The stack floor of the idle-memory target: bench/fixtures/sdk-gateway.mjs (the SDK's Server with
 * sessions and its Client to one stdio upstream, nothing of the broker's own), bundled with the
 * broker's build options (scripts/build.mjs --stack-floor) and launched with its Node flags and
 * environment; its RSS read as the broker's is below: one session has listed the tools, 1 s later.
 */
function buildStackFloor() {
  const built = spawnSync(NODE, ['scripts/build.mjs', '--stack-floor'], { cwd: REPO, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`scripts/build.mjs --stack-floor failed: ${built.stderr}`);
  return path.join(BENCH, 'results', 'sdk-gateway.mjs');
}

async function stackFloorIdleRss(bundle) {
  const proc = spawnTracked(NODE, [...BROKER_NODE_FLAGS, bundle, NODE, ECHO], {
    cwd: REPO,
    env: { ...BROKER_ENV, ...process.env },
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  try {
    const url = await new Promise((resolve, reject) => {
      readline.createInterface({ input: proc.stdout }).once('line', (l) => resolve(JSON.parse(l).listening));
      proc.once('exit', (c) => reject(new Error(`sdk-gateway exited ${c}`)));
    });
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    if (!(await listAllTools(client)).some((t) => t.name === 'echo')) throw new Error('sdk-gateway: no echo tool');
    await sleep(1000);
    const rss = rssOf([proc.pid]);
    await client.close();
    return rss;
  } finally {
    await stopGracefully(proc, 3000);
  }
}

async function sectionColdstart() {
  await stopCore();
  const runs = [];
  const floorBundle = buildStackFloor();
  const stackFloorRss = [];
  for (let i = 0; i < CFG.coldstart.count && !overBudget(); i++) {
    stackFloorRss.push(await stackFloorIdleRss(floorBundle));
    const broker = new Broker({ servers: [{ name: 'echo' }] });
    const t0 = performance.now();
    await broker.start();
    const readyMs = performance.now() - t0;
    let firstListMs;
    let echoListedMs;
    let client;
    const end = performance.now() + 30_000;
    while (performance.now() < end && echoListedMs === undefined) {
      try {
        client ??= await broker.connect();
        const tools = await listAllTools(client);
        firstListMs ??= performance.now() - t0;
        if (tools.some((t) => t.name === 'echo__echo')) echoListedMs = performance.now() - t0;
      } catch {
        /* not yet */
      }
      if (echoListedMs === undefined) await sleep(5);
    }
    if (client) broker.clients.push(client);
    await broker.tokensCounted();
    await sleep(1000);
    runs.push({
      readyMs,
      firstListMs,
      echoListedMs,
      idleBrokerRssBytes: rssOf([broker.mainPid]),
      idleTotalRssBytes: rssOf(broker.serverPids()),
    });
    await broker.stop();
  }
  const pick = (k) => summarize(runs.map((r) => r[k]).filter((v) => v !== undefined));
  const out = {
    runs,
    ready: pick('readyMs'),
    firstList: pick('firstListMs'),
    echoListed: pick('echoListedMs'),
    idleBrokerRss: pick('idleBrokerRssBytes'),
    stackFloorIdleRss: summarize(stackFloorRss),
  };
  log(
    `coldstart: ready p50 ${out.ready.p50.toFixed(0)} ms, first tools/list ${out.firstList.p50.toFixed(0)} ms, echo listed ${out.echoListed.p50?.toFixed(0)} ms, idle broker RSS ${MB(out.idleBrokerRss.p50).toFixed(1)} MB (the stack floor ${MB(out.stackFloorIdleRss.p50).toFixed(1)} MB)`,
  );
  return out;
}

// ---- profile: where the broker's CPU goes, in every full run ------------------------------------
/**
 * A broker of its own under `node --cpu-prof`, echo calls from the raw client and then the SDK
 * client, the profile kept to the measured calls: the top functions by self time, the time by area
 * and a flame graph (docs/bench-flame-echo.svg), so every run says where the time went.
 */
async function sectionProfile() {
  const dir = path.join(BENCH, 'results', 'profile-section');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const broker = new Broker({ servers: [{ name: 'echo' }], extraNodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir] });
  await broker.start();
  await broker.waitForTools({ names: ['echo__echo'] });
  const [client] = await broker.pool(1);
  await broker.resolveTools(client, ['echo']);
  const raw = await rawSession({ url: broker.url, token: broker.token, echo: broker.toolNames.echo });
  const { calls } = CFG.profileSection;
  for (let i = 0; i < calls / 4; i++) await raw.call();
  for (let i = 0; i < calls / 8; i++) await callEcho(client, broker.toolNames.echo);
  if (broker.tokensCounted) await broker.tokensCounted();
  const nowUs = () => Number(process.hrtime.bigint() / 1000n); // the profiler's clock (monotonic)
  const window = { startUs: nowUs() };
  const before = cpuSnapshot([broker.mainPid]);
  let done = 0;
  for (; done < calls && !overBudget(); done++) await raw.call();
  const rawCpu = cpuDelta(before, [broker.mainPid]);
  const rawCalls = done;
  const mid = cpuSnapshot([broker.mainPid]);
  let sdkCalls = 0;
  for (; sdkCalls < calls / 2 && !overBudget(); sdkCalls++) await callEcho(client, broker.toolNames.echo);
  const sdkCpu = cpuDelta(mid, [broker.mainPid]);
  window.endUs = nowUs();
  raw.close();
  const existing = new Set(fs.readdirSync(dir));
  await broker.stop();
  await sleep(300);
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && !existing.has(f));
  if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const summary = summarizeProfile(profile, REPO, window);
  const load = `${rawCalls} sequential echo__echo calls from the raw client, then ${sdkCalls} from the SDK client`;
  log(`profile: ${load}; busy ${summary.busyMs.toFixed(0)} ms`);
  return {
    load,
    rawCalls,
    sdkCalls,
    rawCpuPerCallUs: rawCpu / Math.max(1, rawCalls),
    sdkCpuPerCallUs: sdkCpu / Math.max(1, sdkCalls),
    busyMs: summary.busyMs,
    windowed: summary.windowed,
    functions: summary.functions.slice(0, 15).map(({ name, where, area, selfMs, pctOfBusy }) => ({
      name,
      where,
      area,
      selfMs,
      pctOfBusy,
    })),
    areas: summary.areas.slice(0, 10),
    flameSvg: flameGraphSvg(callTree(profile, REPO, window), `broker CPU, ${load}`),
  };
}

// ---- --profile ---------------------------------------------------------------------------------
async function profileOnce(kind, dir) {
  const broker = new Broker({ servers: [{ name: 'echo' }], extraNodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir] });
  await broker.start();
  await broker.waitForTools({ names: ['echo__echo'] });
  const clients = await broker.pool(kind === 'echo' ? 8 : 1);
  await broker.resolveTools(clients[0], ['echo', 'payload']);
  let load;
  const nowUs = () => Number(process.hrtime.bigint() / 1000n); // the profiler's clock (monotonic)
  let window;
  if (kind === 'echo') {
    for (const c of clients) for (let i = 0; i < 50; i++) await callEcho(c, broker.toolNames.echo);
    window = { startUs: nowUs() };
    const before = cpuSnapshot([broker.mainPid]);
    const t = performance.now();
    for (let i = 0; i < CFG.profile.calls; i++) await callEcho(clients[0], broker.toolNames.echo);
    const seqMs = performance.now() - t;
    const seqCpu = cpuDelta(before, [broker.mainPid]);
    const loop = await closedLoop(broker, clients, CFG.profile.concurrentMs, 100_000);
    window.endUs = nowUs();
    if (loop.errors) throw new Error(`${loop.errors} calls failed during the profile load`);
    load = `${CFG.profile.calls} sequential echo__echo calls (${(us(seqMs) / CFG.profile.calls).toFixed(0)} µs/call, broker CPU ${(seqCpu / CFG.profile.calls).toFixed(0)} µs/call while profiled), then ${loop.calls} calls over 8 sessions in ${CFG.profile.concurrentMs} ms`;
  } else {
    const n = CFG.profile.bigCalls;
    const call = (c) => c.callTool({ name: broker.toolNames.payload, arguments: { bytes: 1_048_576 } });
    for (let i = 0; i < 5; i++) await call(clients[0]);
    window = { startUs: nowUs() };
    const before = cpuSnapshot([broker.mainPid]);
    const t = performance.now();
    for (let i = 0; i < n; i++) await call(clients[0]);
    window.endUs = nowUs();
    load = `${n} sequential echo__payload {bytes: 1048576} calls (${((performance.now() - t) / n).toFixed(1)} ms/call, broker CPU ${(cpuDelta(before, [broker.mainPid]) / n / 1000).toFixed(1)} ms/call while profiled)`;
  }
  log(`profile ${kind}: ${load}`);
  const existing = new Set(fs.readdirSync(dir));
  await broker.stop();
  await sleep(300);
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && !existing.has(f));
  if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
  const target = path.join(dir, `broker-${kind}.cpuprofile`);
  fs.renameSync(path.join(dir, file), target);
  const profile = JSON.parse(fs.readFileSync(target, 'utf8'));
  const summary = summarizeProfile(profile, REPO, window);
  const flame = path.join(dir, `broker-${kind}.flame.svg`);
  fs.writeFileSync(flame, flameGraphSvg(callTree(profile, REPO, window), `broker CPU, ${load}`));
  log(`profile ${kind}: flame graph ${path.relative(REPO, flame)}`);
  return formatProfile(summary, kind === 'echo' ? 25 : 15, { file: path.relative(REPO, target), load });
}

async function runProfile() {
  const dir = path.join(BENCH, 'results', 'profile');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const text = [await profileOnce('echo', dir), await profileOnce('payload-1mb', dir)].join('\n');
  fs.writeFileSync(path.join(BENCH, 'results', 'profile-top.txt'), text);
  process.stdout.write(text);
  log(
    `wrote ${path.relative(REPO, path.join(BENCH, 'results', 'profile-top.txt'))}; the .cpuprofile files (open them in Chrome DevTools) are in ${path.relative(REPO, dir)}/`,
  );
}

// ---- main --------------------------------------------------------------------------------------
function writeOutputs(results) {
  const full = !results.quick && results.only.length === 0;
  const resultsDir = path.join(BENCH, 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const stamp = results.startedAt.replace(/[:.]/g, '-');
  const jsonFile = path.join(resultsDir, `bench-${stamp}${results.quick ? '-quick' : ''}.json`);
  fs.writeFileSync(jsonFile, JSON.stringify(results, null, 1));
  fs.writeFileSync(path.join(resultsDir, 'latest.json'), JSON.stringify(results, null, 1));
  const docsDir = full ? path.join(REPO, 'docs') : resultsDir;
  fs.mkdirSync(docsDir, { recursive: true });
  const charts = renderCharts(results);
  for (const [name, svg] of Object.entries(charts)) fs.writeFileSync(path.join(docsDir, name), svg);
  const mdFile = path.join(docsDir, 'benchmarks.md');
  fs.writeFileSync(mdFile, renderMarkdown(results, Object.keys(charts)));
  log(
    `wrote ${path.relative(REPO, mdFile)}, ${Object.keys(charts)
      .map((c) => path.relative(REPO, path.join(docsDir, c)))
      .join(', ')} and ${path.relative(REPO, jsonFile)}`,
  );
  return mdFile;
}

async function main() {
  if (opt.render) {
    const results = JSON.parse(fs.readFileSync(opt.render, 'utf8'));
    results.verdicts = verdicts(results);
    writeOutputs(results);
    return;
  }
  if (!fs.existsSync(BROKER_JS)) throw new Error('dist/broker.js is missing: run `npm run build` (or `npm run bench`)');
  if (opt.profile) {
    await runProfile();
    return;
  }
  const results = {
    startedAt: startedAt.toISOString(),
    quick: opt.quick,
    only: opt.only,
    config: CFG,
    machine: machine(),
    sections: {},
  };
  results.machine.backgroundBusyCores = await backgroundBusyCores();
  log(
    `before the run, other processes kept ${results.machine.backgroundBusyCores?.toFixed(2)} of ${results.machine.cores} cores busy`,
  );
  log(
    `${opt.quick ? 'quick' : 'full'} run on ${results.machine.cpuModel} × ${results.machine.cores}, Node ${process.version}, sections: ${SECTIONS.filter(wanted).join(', ')}`,
  );
  const runners = {
    latency: sectionLatency,
    throughput: sectionThroughput,
    payload: sectionPayload,
    fanout: sectionFanout,
    catalog: sectionCatalog,
    reload: sectionReload,
    coldstart: sectionColdstart,
    profile: sectionProfile,
    tokens: () => sectionTokens({ log, quick: opt.quick }),
    recall: () => sectionRecall({ log }),
    ...Object.fromEntries(Object.entries(SCALE_RUNNERS).map(([k, run]) => [k, () => run({ quick: opt.quick })])),
    scanner: () => sectionScanner({ log }),
    ...Object.fromEntries(
      Object.entries(TELEMETRY_RUNNERS).map(([k, run]) => [k, () => run({ quick: opt.quick, overBudget })]),
    ),
    ...Object.fromEntries(
      Object.entries(TELEMETRY_FLOOR_RUNNERS).map(([k, run]) => [k, () => run({ quick: opt.quick, overBudget })]),
    ),
    ...Object.fromEntries(
      Object.entries(GUARDRAIL_RUNNERS).map(([k, run]) => [k, () => run({ quick: opt.quick, overBudget })]),
    ),
  };
  for (const name of SECTIONS) {
    if (!wanted(name)) continue;
    const t = performance.now();
    const runLeft = T0 + RUN_BUDGET_MS - t;
    if (runLeft < 5_000) {
      log(`== ${name}: skipped, the run's time budget is spent`);
      results.sections[name] = { error: 'skipped: the run time budget was spent', seconds: 0 };
      continue;
    }
    sectionDeadline = t + Math.min(SECTION_BUDGET_S[name] * 1000, runLeft);
    log(`== ${name}`);
    try {
      results.sections[name] = await runners[name]();
    } catch (err) {
      log(`section ${name} failed: ${err.stack ?? err}`);
      results.sections[name] = { error: String(err.message ?? err) };
    }
    results.sections[name].seconds = (performance.now() - t) / 1000;
    if (name === 'payload') await stopCore(); // sections after it count processes
  }
  await stopCore();
  if (coreInfo) results.systems = coreInfo;
  results.machine.loadavgEnd = os.loadavg();
  results.totalSeconds = (performance.now() - T0) / 1000;
  await sleep(300);
  const left = leftovers();
  results.leftoverProcesses = left.map((p) => `${p.pid} ${p.comm}`);
  results.clientWarnings = clientWarnings;
  if (left.length) log(`killing ${left.length} leftover processes: ${results.leftoverProcesses.join(', ')}`);
  killAll();
  results.verdicts = verdicts(results);
  writeOutputs(results);
  for (const v of results.verdicts)
    log(`target ${v.met === null ? 'n/a ' : v.met ? 'MET ' : 'MISS'} ${v.target}: ${v.measured}`);
  log(`total ${results.totalSeconds.toFixed(1)} s`);
}

main()
  .then(async () => {
    killAll();
    await removeTempSettled();
    process.exit(0);
  })
  .catch((err) => {
    log(`failed: ${err.stack ?? err}`);
    killAll();
    try {
      removeTemp();
    } catch {
      /* */
    }
    process.exit(1);
  });
