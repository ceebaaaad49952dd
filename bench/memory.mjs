#!/usr/bin/env node
// Where an idle broker's memory is, for builds side by side (docs/performance.md, "Memory and
// reload, stop 39"). Not part of `npm run bench`; benchmarks, not tests: nothing fails.
//
//   node bench/memory.mjs [--build before=/tmp/old/dist/broker.js] [--build now=dist/broker.js]
//        [--rounds 2] [--burst] [--env now=KEY:VALUE,KEY:VALUE] [--node-args now=--flag,--flag]
//
// Each round starts every build in turn (alternating) as the bench does (BROKER_NODE_FLAGS,
// BROKER_ENV) with one echo server and bench/memory-probe.cjs, lists until echo's tool is there,
// waits for the token counter and the idle collection, and prints its RSS; then, after one more
// compacting collection, the RSS split into file-backed pages (the node binary, libraries) and
// anonymous memory, malloc's heap, and V8's heap; its USS (private pages) and PSS; and for the broker
// with its echo upstream's processes, RSS summed against each physical page counted once (root only;
// bench/lib/proc.mjs memoryOf, docs/performance.md "Memory, stop 41").
// --burst first makes 30 calls with 1 MB arguments and 300 small ones (what large bodies leave).
// --env adds environment to one build's broker (a malloc setting tried on the same build), and
// --node-args Node or V8 flags. --spaces also prints V8's heap spaces (used / committed).
import fs from 'node:fs';
import path from 'node:path';
import { Broker, listAllTools, removeTempSettled, BENCH, REPO } from './lib/systems.mjs';
import { killAll, memoryOf, rssOf, sleep, tree } from './lib/proc.mjs';

const opt = { builds: [], rounds: 2, burst: false, spaces: false, env: {}, nodeArgs: {} };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--build') {
    const [label, file] = String(argv[++i]).split('=');
    opt.builds.push({ label, file: path.resolve(file) });
  } else if (a === '--rounds') opt.rounds = Number(argv[++i]);
  else if (a === '--burst') opt.burst = true;
  else if (a === '--spaces') opt.spaces = true;
  else if (a === '--env') {
    const [label, pairs] = String(argv[++i]).split('=');
    opt.env[label] = Object.fromEntries(pairs.split(',').map((kv) => kv.split(':')));
  } else if (a === '--node-args') {
    const [label, ...flags] = String(argv[++i]).split('=');
    opt.nodeArgs[label] = flags.join('=').split(',');
  } else throw new Error(`unknown option ${a}`);
}
if (!opt.builds.length) opt.builds.push({ label: 'this build', file: path.join(REPO, 'dist', 'broker.js') });

const PROBE = path.join(BENCH, 'memory-probe.cjs');
const MB = (bytes) => (bytes / 1048576).toFixed(1);
const KB_MB = (kb) => (kb / 1024).toFixed(1);

/** smaps: resident kB of malloc's heap ([heap]); smaps_rollup: file-backed and anonymous kB. */
function pages(pid) {
  const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0);
  const smaps = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const heap = /\[heap\]\n(?:.*\n)*?Rss:\s+(\d+)/.exec(smaps);
  return {
    anonKb: field('Anonymous'),
    fileKb: field('Rss') - field('Anonymous'),
    mallocHeapKb: Number(heap?.[1] ?? 0),
  };
}

async function measure(build) {
  const out = path.join(fs.mkdtempSync(path.join(BENCH, 'results', 'memprobe-')), 'probe.json');
  const broker = new Broker({
    brokerJs: build.file,
    key: build.label,
    label: build.label,
    extraNodeArgs: ['--require', PROBE, ...(opt.nodeArgs[build.label] ?? [])],
    env: { ...opt.env[build.label], MEMPROBE_OUT: out, MEMPROBE_GC: '1' },
  });
  await broker.start();
  try {
    const client = await broker.connect();
    broker.clients.push(client);
    for (let i = 0; i < 500; i++) {
      if ((await listAllTools(client)).some((t) => t.name === 'echo__echo')) break;
      await sleep(20);
    }
    await broker.tokensCounted();
    if (opt.burst) {
      const big = 'x'.repeat(1 << 20);
      for (let i = 0; i < 30; i++) await client.callTool({ name: 'echo__echo', arguments: { text: big } });
      for (let i = 0; i < 300; i++) await client.callTool({ name: 'echo__echo', arguments: { text: 'y' } });
    }
    // The idle collector runs 2–4 s after the last request; whether something allocated after it
    // varies from run to run (V8 heap 14–19 MB), so the probe runs the same compacting collection
    // before anything is read: what an idle broker settles at.
    await sleep(5000);
    const idleRss = rssOf([broker.mainPid]);
    process.kill(broker.mainPid, 'SIGUSR2');
    for (let i = 0; i < 100 && !fs.existsSync(out); i++) await sleep(100);
    await sleep(200);
    const probe = JSON.parse(fs.readFileSync(out, 'utf8'));
    const rss = rssOf([broker.mainPid]);
    const own = memoryOf([broker.mainPid]);
    const all = memoryOf(tree(broker.mainPid));
    return {
      idleRss,
      rss,
      uss: own.ussBytes,
      pss: own.pssBytes,
      treeRss: all.rssBytes,
      treeUnique: all.uniqueBytes,
      ...pages(broker.mainPid),
      heapTotal: probe.after.heapTotal,
      heapUsed: probe.after.heapUsed,
      spaces: probe.spaces,
      contexts: `${probe.heap.number_of_native_contexts} native, ${probe.heap.number_of_detached_contexts} detached`,
      code: probe.code,
    };
  } finally {
    await broker.stop();
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }
}

fs.mkdirSync(path.join(BENCH, 'results'), { recursive: true });
try {
  for (let round = 1; round <= opt.rounds; round++)
    for (const build of opt.builds) {
      const m = await measure(build);
      process.stdout.write(
        `round ${round} ${build.label.padEnd(12)} RSS ${MB(m.idleRss)} MB idle, ${MB(m.rss)} MB collected = file-backed ${KB_MB(m.fileKb)} + anonymous ` +
          `${KB_MB(m.anonKb)} (malloc heap ${KB_MB(m.mallocHeapKb)}, V8 heap ${MB(m.heapTotal)}, ${MB(m.heapUsed)} used); ` +
          `USS ${MB(m.uss)}, PSS ${MB(m.pss)}; with echo's processes RSS ${MB(m.treeRss)}, ` +
          `${m.treeUnique == null ? 'unique pages unread (not root)' : `each page once ${MB(m.treeUnique)}`}` +
          `${opt.burst ? ' after 30 × 1 MB calls' : ''}\n`,
      );
      if (opt.spaces)
        process.stdout.write(
          `  contexts ${m.contexts}; code ${JSON.stringify(m.code)}; V8 spaces, used/size MB: ${m.spaces.map(([name, used, size]) => `${name} ${MB(used)}/${MB(size)}`).join(', ')}\n`,
        );
    }
} finally {
  killAll();
  await removeTempSettled();
}
