// Builds of the broker given bursts of calls with idle gaps between them, as an agent gives one:
// what the idle collection after each burst (src/broker/daemon/idleCollector.ts, 2 s after the last
// request) leaves in memory, and what it costs the next burst per call. Every build is up at once
// and each burst runs every build in turn (the order reversed at every burst), so the machine's load
// is shared; run it with the builds in both orders too (a broker process's own offset, stop 44).
//
//   node bench/bursts.mjs [--bursts 5] [--calls 3000] [--kb 20] label=path/to/broker.js ...
//
// Per build and burst: broker CPU per call (schedstat), RSS and V8 heap used 3.5 s after the burst
// (every build has been idle ≥ 3.5 s then), V8's own full collections during the burst, and the forced collections (--trace-gc, reason
// "testing": the idle collector's) with their kind, Scavenge or Mark-Compact.
import readline from 'node:readline';
import { Broker, removeTempSettled } from './lib/systems.mjs';
import { killAll, preciseCpuUs, rss } from './lib/proc.mjs';
import { rawSession } from './lib/rawClient.mjs';

const opt = { bursts: 5, calls: 3000, kb: 20, builds: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--bursts') opt.bursts = Number(argv[++i]);
  else if (a === '--calls') opt.calls = Number(argv[++i]);
  else if (a === '--kb') opt.kb = Number(argv[++i]);
  else if (a.includes('=')) opt.builds.push(a.split('='));
  else throw new Error(`unknown option ${a}`);
}
if (!opt.builds.length) throw new Error('give at least one build: label=path/to/broker.js');
process.removeAllListeners('warning');
process.on('warning', () => undefined);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ARGS = { text: 'x'.repeat(opt.kb * 1024) };

async function startBuild([label, file]) {
  const broker = new Broker({ brokerJs: file, key: label, label, extraNodeArgs: ['--trace-gc'] });
  await broker.start();
  const collections = [];
  const own = { major: 0 };
  readline.createInterface({ input: broker.proc.stdout }).on('line', (line) => {
    const gc = /: (Mark-Compact|Scavenge) .*testing/.exec(line);
    if (gc) collections.push(gc[1] === 'Scavenge' ? 'S' : 'M');
    else if (/: Mark-Compact/.test(line)) own.major++;
  });
  await broker.waitForTools({ names: ['echo__echo'] });
  const sdk = await broker.connect();
  await broker.resolveTools(sdk, ['echo']);
  broker.echo = broker.toolNames.echo;
  const raw = await rawSession(broker, ARGS);
  await broker.tokensCounted();
  return { label, broker, sdk, raw, collections, own, cpu: [], rss: [], heap: [], gcs: [], majors: [] };
}

/** V8 heap used, from the broker's own state (read after RSS: the read is a request of its own). */
async function heapUsed(sdk) {
  const state = await sdk.readResource({ uri: 'switchboard://state' });
  return JSON.parse(state.contents[0].text).broker.memory.heapUsedBytes / 1e6;
}

const builds = [];
for (const b of opt.builds) builds.push(await startBuild(b));
await sleep(3500); // the first idle collection, on the start-up's heap
for (let k = 0; k < opt.bursts; k++) {
  for (const b of k % 2 ? [...builds].reverse() : builds) {
    const before = preciseCpuUs(b.broker.mainPid);
    const majors = b.own.major;
    for (let i = 0; i < opt.calls; i++) await b.raw.call();
    b.cpu.push((preciseCpuUs(b.broker.mainPid) - before) / opt.calls);
    await sleep(100); // the last --trace-gc lines of the burst
    b.majors.push(b.own.major - majors);
  }
  await sleep(3500);
  for (const b of builds) {
    b.rss.push(rss(b.broker.mainPid) / 1e6);
    b.heap.push(await heapUsed(b.sdk));
    b.gcs.push(b.collections.splice(0).join('') || '-');
  }
}
console.log(
  `${opt.bursts} bursts × ${opt.calls} calls of ${opt.kb} KB; order ${builds.map((b) => b.label).join(', ')}`,
);
for (const b of builds) {
  console.log(`${b.label} CPU per call, µs: ${b.cpu.map((x) => x.toFixed(0)).join(' ')}`);
  console.log(`${b.label} V8's own mark-compacts during each burst: ${b.majors.join(' ')}`);
  console.log(`${b.label} RSS 3.5 s after, MB: ${b.rss.map((x) => x.toFixed(1)).join(' ')}`);
  console.log(`${b.label} V8 heap used 3.5 s after, MB: ${b.heap.map((x) => x.toFixed(1)).join(' ')}`);
  console.log(`${b.label} forced collections (S scavenge, M mark-compact): ${b.gcs.join(' ')}`);
}
for (const b of builds) {
  b.raw.close();
  await b.sdk.close().catch(() => undefined);
  await b.broker.stop();
}
killAll();
await removeTempSettled();
