// Builds of the broker called in the order section 1 of bench/run.mjs calls its broker, to see what
// the broker's idle collections (src/broker/daemon/idleCollector.ts: 2 s after the last request)
// do to the measured blocks. Section 1 warms the broker up with 3,000 SDK-client calls, leaves it
// idle while the peers start (seconds: its first idle collection runs then), warms it up again with
// 3,000 raw-client calls and then measures blocks of 100 calls, raw and SDK, never 2 s apart.
//
//   node bench/idle-order.mjs [--order section1|settled] [--rounds 22] [--block 100] label=broker.js ...
//
// --order section1: SDK warm-up, 3.5 s idle (the first idle collection), raw warm-up, measure.
// --order settled: 3 s idle before any warm-up (the first idle collection runs on the start-up's
// heap), then the same warm-ups and no idle gap before measuring.
// Each broker runs with --trace-gc; the forced collections (V8's reason "testing": the idle
// collector's) are printed with the time they ran, next to the phases. Per build: broker CPU per
// call (schedstat) of every block, the first 4 blocks apart from the rest (a one-time recompile
// would show there), and the ratio to a node:http floor measured in the same rounds.
import path from 'node:path';
import readline from 'node:readline';
import { Broker, BENCH, NODE, removeTempSettled } from './lib/systems.mjs';
import { killAll, preciseCpuUs, spawnTracked, stopGracefully } from './lib/proc.mjs';
import { poster, RAW_ARGS, rawSession } from './lib/rawClient.mjs';

const opt = { order: 'section1', rounds: 22, block: 100, warmup: 3000, builds: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--order') opt.order = argv[++i];
  else if (a === '--rounds') opt.rounds = Number(argv[++i]);
  else if (a === '--block') opt.block = Number(argv[++i]);
  else if (a.includes('=')) opt.builds.push(a.split('='));
  else throw new Error(`unknown option ${a}`);
}
if (!['section1', 'settled'].includes(opt.order)) throw new Error('--order is section1 or settled');
if (!opt.builds.length) throw new Error('give at least one build: label=path/to/broker.js');
// The SDK client's session-long AbortSignal piles up listeners (bench/run.mjs counts them): quiet.
process.removeAllListeners('warning');
process.on('warning', () => undefined);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const t0 = performance.now();
const at = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
const log = (line) => process.stderr.write(`${at()}  ${line}\n`);

async function floorServer() {
  const proc = spawnTracked(NODE, [path.join(BENCH, 'fixtures', 'http-echo.mjs'), '0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  const url = await new Promise((resolve) =>
    readline.createInterface({ input: proc.stdout }).once('line', (l) => resolve(JSON.parse(l).listening)),
  );
  const { post, close } = poster(url, () => ({}));
  let id = 0;
  const call = () =>
    post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'echo', arguments: RAW_ARGS } });
  return { pid: proc.pid, call, stop: async () => (close(), stopGracefully(proc, 3000)) };
}

async function startBuild([label, file]) {
  const broker = new Broker({ brokerJs: file, key: label, label, extraNodeArgs: ['--trace-gc'] });
  await broker.start();
  const collections = [];
  readline.createInterface({ input: broker.proc.stdout }).on('line', (line) => {
    const gc = /: (Mark-Compact|Scavenge) .*testing/.exec(line);
    if (gc) collections.push(`${at()} ${gc[1]}`);
  });
  await broker.waitForTools({ names: ['echo__echo'] });
  const sdk = await broker.connect();
  await broker.resolveTools(sdk, ['echo']);
  broker.echo = broker.toolNames.echo;
  const raw = await rawSession(broker);
  await broker.tokensCounted();
  const sdkCall = () => sdk.callTool({ name: broker.echo, arguments: RAW_ARGS });
  if (opt.order === 'settled') await sleep(3000);
  for (let i = 0; i < opt.warmup; i++) await sdkCall();
  log(`${label}: SDK warm-up done`);
  return { label, broker, sdk, raw, sdkCall, collections, cpu: { sdk: [], raw: [] } };
}

async function block(pid, call, n) {
  const before = preciseCpuUs(pid);
  for (let i = 0; i < n; i++) await call();
  return (preciseCpuUs(pid) - before) / n;
}

const floor = await floorServer();
const builds = [];
for (const b of opt.builds) builds.push(await startBuild(b));
// Section 1: the peers start after the broker; the broker is idle for seconds.
if (opt.order === 'section1') await sleep(3500);
for (let i = 0; i < opt.warmup; i++) await floor.call();
for (const b of builds) for (let i = 0; i < opt.warmup; i++) await b.raw.call();
log('raw warm-up done; measuring');
const floorCpu = [];
for (let r = 0; r < opt.rounds; r++) {
  floorCpu.push(await block(floor.pid, floor.call, opt.block));
  for (const b of r % 2 ? [...builds].reverse() : builds) {
    const sdk = () => block(b.broker.mainPid, b.sdkCall, opt.block).then((us) => b.cpu.sdk.push(us));
    const raw = () => block(b.broker.mainPid, b.raw.call, opt.block).then((us) => b.cpu.raw.push(us));
    if (r % 2) await raw().then(sdk);
    else await sdk().then(raw);
  }
}
log('measured');
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const floorUs = mean(floorCpu);
const fmt = (xs) =>
  `${mean(xs).toFixed(0)} µs (${(mean(xs) / floorUs).toFixed(2)}× floor); first 4 blocks ${mean(xs.slice(0, 4)).toFixed(0)}, ` +
  `the rest ${mean(xs.slice(4)).toFixed(0)}; blocks ${xs.map((x) => x.toFixed(0)).join(' ')}`;
console.log(`order ${opt.order}, ${opt.rounds} rounds × ${opt.block} calls; floor ${floorUs.toFixed(0)} µs per call`);
for (const b of builds) {
  console.log(`${b.label} SDK client: ${fmt(b.cpu.sdk)}`);
  console.log(`${b.label} raw client: ${fmt(b.cpu.raw)}`);
  console.log(`${b.label} forced collections: ${b.collections.join(', ') || 'none'}`);
}
for (const b of builds) {
  b.raw.close();
  await b.sdk.close().catch(() => undefined);
  await b.broker.stop();
}
await floor.stop();
killAll();
await removeTempSettled();
