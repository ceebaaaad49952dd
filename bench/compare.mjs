// Two (or more) builds of the broker measured in one interleaved run, against the node:http floor:
// what a change costs or saves per forwarded call, with the machine's noise shared by every build.
//
//   node bench/compare.mjs --build before=/tmp/old/dist/broker.js --build after=dist/broker.js
//        [--rounds 8] [--calls 2000] [--warmup 2000] [--sessions 1] [--paced MS] [--node-flags after="--flag"]
//        [--out bench/results/compare.json] [--profile <dir>]
//
// --sessions N: the raw client's block runs N sessions at once (each its share of the calls), as
// agents in parallel do, and so does the relay floor (N clients at once); the node:http floor and the SDK
// client stay one sequential session.
//
// --paced MS: also a block of raw-client calls MS ms apart, for the floor and every build. A server
// called less often spends more CPU per call (each call finds its caches cold and wakes it from
// sleep): the SDK client, whose own work spaces its calls ~1 ms apart, costs the broker ~10-25% more
// per call than the back-to-back raw client for that reason, and the floor ~15% more at the same
// pace (docs/performance.md, stop 40). The paced rows compare the broker and the floor at one pace.
//
// --profile runs each build's broker under `node --cpu-prof` (into <dir>/<label>/) and prints, per
// build, the functions that took the most CPU while the calls ran (and a flame graph, flame.svg,
// beside each build's profile): where a difference comes from.
//
// Each round runs every build (in a rotating order) and the floor once: a block of sequential
// tools/call echo calls from a raw keep-alive HTTP client (node:http, no SDK: what the broker itself
// costs) and a block from the SDK client (what an agent sees). CPU is read from /proc: the broker's
// own process, without its upstream. A build of an older commit is made with
//   git worktree add /tmp/old <commit> && (cd /tmp/old && npm ci && npm run build)
import fs from 'node:fs';
import path from 'node:path';
import { Broker, BENCH, ECHO, NODE, REPO, removeTempSettled } from './lib/systems.mjs';
import { floorServer } from './lib/floorServer.mjs';
import { cpuDelta, cpuSnapshot, killAll, preciseCpuUs } from './lib/proc.mjs';
import { rotate, summarize } from './lib/stats.mjs';
import { formatProfile, summarizeProfile } from './lib/profile.mjs';
import { callTree, flameGraphSvg } from './lib/flame.mjs';
import { RAW_ARGS, rawSession } from './lib/rawClient.mjs';

const opt = {
  builds: [],
  rounds: 8,
  calls: 2000,
  warmup: 2000,
  sessions: 1,
  paced: 0,
  out: path.join(BENCH, 'results', 'compare.json'),
  profile: undefined,
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === '--build') {
    const [label, file] = String(next()).split('=');
    if (!label || !file) throw new Error('--build takes label=path/to/broker.js');
    opt.builds.push({ label, file: path.resolve(file), nodeFlags: [] });
  } else if (a === '--rounds') opt.rounds = Number(next());
  else if (a === '--calls') opt.calls = Number(next());
  else if (a === '--warmup') opt.warmup = Number(next());
  else if (a === '--sessions') opt.sessions = Number(next());
  else if (a === '--paced') opt.paced = Number(next());
  else if (a === '--node-flags') {
    // --node-flags label="--flag --other": Node flags for that build's broker, after the bench's own.
    const [label, ...flags] = String(next()).split('=');
    const build = opt.builds.find((b) => b.label === label);
    if (!build) throw new Error(`--node-flags: no --build labelled ${label} before it`);
    build.nodeFlags = flags.join('=').split(/\s+/).filter(Boolean);
  } else if (a === '--out') opt.out = path.resolve(next());
  else if (a === '--profile') opt.profile = path.resolve(next());
  else throw new Error(`unknown option ${a}`);
}
if (!opt.builds.length)
  opt.builds.push({ label: 'this build', file: path.join(REPO, 'dist', 'broker.js'), nodeFlags: [] });
for (const b of opt.builds) if (!fs.existsSync(b.file)) throw new Error(`${b.label}: ${b.file} does not exist`);

const ARGS = RAW_ARGS;
const log = (line) => process.stderr.write(`${line}\n`);
// The SDK client's session-long AbortSignal piles up listeners (see bench/run.mjs): count, print once.
const clientWarnings = {};
process.removeAllListeners('warning');
process.on('warning', (w) => {
  clientWarnings[w.name] = (clientWarnings[w.name] ?? 0) + 1;
  if (clientWarnings[w.name] === 1) log(`warning (counted, shown once): ${w.name}: ${w.message}`);
});

/**
 * A block of calls: each of `calls` (one per session) makes its share of `n` in sequence, the
 * sessions at once; latencies and the CPU `pid` spent on them.
 */
async function block(pid, calls, n, acc, allPids = [pid]) {
  const before = cpuSnapshot(allPids);
  const preciseBefore = preciseCpuUs(pid);
  const each = Math.ceil(n / calls.length);
  n = each * calls.length;
  await Promise.all(
    calls.map(async (call) => {
      for (let i = 0; i < each; i++) {
        const t = performance.now();
        await call();
        acc.samples.push((performance.now() - t) * 1000);
      }
    }),
  );
  // The broker's own CPU at ns resolution where /proc has it (Linux), else /proc/<pid>/stat's ticks.
  const precise = preciseBefore === undefined ? undefined : preciseCpuUs(pid);
  const cpu = precise === undefined ? cpuDelta(before, [pid]) : precise - preciseBefore;
  acc.cpuUs += cpu;
  acc.allCpuUs += cpuDelta(before, allPids);
  acc.calls += n;
  acc.rounds.push(cpu / n);
}

/** `call` made `ms` ms after the previous call's answer (a timer, so the process sleeps between). */
const paced = (call, ms) => () => new Promise((resolve) => setTimeout(resolve, ms)).then(call);

const newAcc = () => ({ samples: [], cpuUs: 0, allCpuUs: 0, calls: 0, rounds: [] });
const summary = (acc) => {
  const s = summarize(acc.samples);
  return {
    calls: acc.calls,
    cpuPerCallUs: acc.cpuUs / acc.calls,
    withUpstreamCpuPerCallUs: acc.allCpuUs / acc.calls,
    p50Us: s.p50,
    p99Us: s.p99,
    roundsCpuUs: acc.rounds,
  };
};

async function main() {
  log(
    `compare: ${opt.builds.map((b) => `${b.label} (${b.file})`).join(' vs ')}; ${opt.rounds} rounds × ${opt.calls} calls`,
  );
  const floor = await floorServer();
  for (let i = 0; i < opt.warmup; i++) await floor.call();
  const relay = await floorServer('http-relay.mjs', [NODE, ECHO]);
  for (let i = 0; i < opt.warmup; i++) await relay.call();
  // The relay floor runs as many clients at once as the broker's raw block has sessions: the same load.
  const relayCalls = [relay.call, ...Array.from({ length: opt.sessions - 1 }, () => relay.caller())];
  const accs = { floor: newAcc(), 'floor/paced': newAcc(), relay: newAcc() };
  const systems = [];
  for (const b of opt.builds) {
    const profileDir = opt.profile && path.join(opt.profile, b.label.replace(/[^\w.-]/g, '_'));
    if (profileDir) fs.mkdirSync(profileDir, { recursive: true });
    const extraNodeArgs = [...b.nodeFlags, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])];
    const broker = new Broker({ brokerJs: b.file, key: b.label, label: b.label, extraNodeArgs });
    await broker.start();
    await broker.waitForTools({ names: ['echo__echo'] });
    const sdk = await broker.connect();
    await broker.resolveTools(sdk, ['echo']);
    broker.echo = broker.toolNames.echo;
    const raws = [];
    for (let i = 0; i < opt.sessions; i++) raws.push(await rawSession(broker));
    const raw = { calls: raws.map((r) => r.call), close: () => raws.forEach((r) => r.close()) };
    for (let i = 0; i < opt.warmup; i++) await raws[i % raws.length].call();
    for (let i = 0; i < opt.warmup / 4; i++) await sdk.callTool({ name: broker.echo, arguments: ARGS });
    await broker.tokensCounted();
    systems.push({ label: b.label, broker, sdk, raw });
    broker.profileDir = profileDir;
    accs[`${b.label}/raw`] = newAcc();
    accs[`${b.label}/sdk`] = newAcc();
    accs[`${b.label}/paced`] = newAcc();
  }
  const measuredFrom = Number(process.hrtime.bigint() / 1000n);
  for (let r = 0; r < opt.rounds; r++) {
    const order = rotate(systems, r);
    await block(floor.pid, [floor.call], opt.calls, accs.floor);
    await block(relay.pid, relayCalls, opt.calls, accs.relay, relay.pids());
    if (opt.paced) await block(floor.pid, [paced(floor.call, opt.paced)], opt.calls, accs['floor/paced']);
    for (const s of order) {
      await block(s.broker.mainPid, s.raw.calls, opt.calls, accs[`${s.label}/raw`], s.broker.serverPids());
      await block(
        s.broker.mainPid,
        [() => s.sdk.callTool({ name: s.broker.echo, arguments: ARGS })],
        opt.calls,
        accs[`${s.label}/sdk`],
      );
      if (opt.paced) {
        const rawPaced = [paced(s.raw.calls[0], opt.paced)];
        await block(s.broker.mainPid, rawPaced, opt.calls, accs[`${s.label}/paced`], s.broker.serverPids());
      }
    }
    log(`round ${r + 1}/${opt.rounds} done`);
  }
  const measuredTo = Number(process.hrtime.bigint() / 1000n);
  const floorSum = summary(accs.floor);
  const relaySum = summary(accs.relay);
  const floorPaced = opt.paced ? summary(accs['floor/paced']) : undefined;
  const results = {
    at: new Date().toISOString(),
    node: process.version,
    opt,
    floor: floorSum,
    relay: relaySum,
    floorPaced,
    builds: {},
  };
  for (const s of systems) {
    const raw = summary(accs[`${s.label}/raw`]);
    const sdk = summary(accs[`${s.label}/sdk`]);
    results.builds[s.label] = {
      file: s.broker.brokerJs,
      raw,
      sdk,
      ...(opt.paced ? { paced: summary(accs[`${s.label}/paced`]) } : {}),
      rawCpuVsFloor: raw.cpuPerCallUs / floorSum.cpuPerCallUs,
      rawCpuVsRelay: raw.cpuPerCallUs / relaySum.cpuPerCallUs,
    };
  }
  for (const s of systems) {
    s.raw.close();
    await s.sdk.close().catch(() => undefined);
    await s.broker.stop();
  }
  await floor.stop();
  await relay.stop();
  if (opt.profile) {
    // The profiler's clock is the monotonic one this process reads too: keep the measured rounds only.
    const window = { startUs: measuredFrom, endUs: measuredTo };
    for (const s of systems) {
      const file = fs.readdirSync(s.broker.profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) {
        log(`${s.label}: no profile written`);
        continue;
      }
      const profile = JSON.parse(fs.readFileSync(path.join(s.broker.profileDir, file), 'utf8'));
      const text = formatProfile(summarizeProfile(profile, REPO, window), 25, { file: s.broker.brokerJs });
      fs.writeFileSync(path.join(s.broker.profileDir, 'top.txt'), text + '\n');
      const flame = path.join(s.broker.profileDir, 'flame.svg');
      fs.writeFileSync(
        flame,
        flameGraphSvg(callTree(profile, REPO, window), `${s.label}: broker CPU under the measured rounds`),
      );
      log(`${s.label}: flame graph ${flame}`);
      process.stdout.write(`\n### ${s.label}\n\n\`\`\`\n${text}\n\`\`\`\n`);
    }
  }
  fs.mkdirSync(path.dirname(opt.out), { recursive: true });
  fs.writeFileSync(opt.out, JSON.stringify(results, null, 2));
  const rows = [
    `| build | broker CPU per call, raw client${opt.sessions > 1 ? ` (${opt.sessions} sessions)` : ''} | × floor | × relay floor | broker + upstream, raw | p50, raw | broker CPU per call, SDK client | p50, SDK |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    `| node:http floor | ${floorSum.cpuPerCallUs.toFixed(0)} µs | 1.00 | | | ${floorSum.p50Us.toFixed(0)} µs | | |`,
    `| relay floor (node:http → stdio upstream)${opt.sessions > 1 ? `, ${opt.sessions} clients` : ''} | ${relaySum.cpuPerCallUs.toFixed(0)} µs | ${(relaySum.cpuPerCallUs / floorSum.cpuPerCallUs).toFixed(2)} | 1.00 | ${relaySum.withUpstreamCpuPerCallUs.toFixed(0)} µs | ${relaySum.p50Us.toFixed(0)} µs | | |`,
    ...Object.entries(results.builds).map(
      ([label, b]) =>
        `| ${label} | ${b.raw.cpuPerCallUs.toFixed(0)} µs | ${b.rawCpuVsFloor.toFixed(2)} | ${b.rawCpuVsRelay.toFixed(2)} | ${b.raw.withUpstreamCpuPerCallUs.toFixed(0)} µs | ${b.raw.p50Us.toFixed(0)} µs | ` +
        `${b.sdk.cpuPerCallUs.toFixed(0)} µs | ${b.sdk.p50Us.toFixed(0)} µs |`,
    ),
  ];
  process.stdout.write(`${rows.join('\n')}\n`);
  // Paired by round: each round ran every build back to back, so a ratio within a round shares
  // that round's load; the median of the rounds' ratios moves less than the ratio of the totals.
  const [first, ...others] = Object.entries(results.builds);
  const paired = (a, b) => {
    const ratios = a.map((v, i) => v / b[i]).sort((x, y) => x - y);
    const mid = ratios.length >> 1;
    const median = ratios.length % 2 ? ratios[mid] : (ratios[mid - 1] + ratios[mid]) / 2;
    return `${median.toFixed(3)} (${ratios[0].toFixed(2)}–${ratios.at(-1).toFixed(2)})`;
  };
  const pairedRows = [
    `| build | raw client: × floor, median of rounds (range) | raw: × relay floor | raw: × ${first[0]} | SDK: × ${first[0]} |`,
    '| --- | --- | --- | --- | --- |',
    `| relay floor | ${paired(relaySum.roundsCpuUs, floorSum.roundsCpuUs)} | 1 | | |`,
    ...Object.entries(results.builds).map(
      ([label, b]) =>
        `| ${label} | ${paired(b.raw.roundsCpuUs, floorSum.roundsCpuUs)} | ${paired(b.raw.roundsCpuUs, relaySum.roundsCpuUs)} | ` +
        (others.length && label !== first[0]
          ? `${paired(b.raw.roundsCpuUs, first[1].raw.roundsCpuUs)} | ${paired(b.sdk.roundsCpuUs, first[1].sdk.roundsCpuUs)} |`
          : '1 | 1 |'),
    ),
  ];
  process.stdout.write(`\n${pairedRows.join('\n')}\n`);
  if (floorPaced) {
    const pacedRows = [
      `| calls ${opt.paced} ms apart (raw client) | broker CPU per call | × floor at that pace, median of rounds (range) |${others.length ? ` × ${first[0]} |` : ''}`,
      `| --- | --- | --- |${others.length ? ' --- |' : ''}`,
      `| node:http floor | ${floorPaced.cpuPerCallUs.toFixed(0)} µs | 1 |${others.length ? ' |' : ''}`,
      ...Object.entries(results.builds).map(
        ([label, b]) =>
          `| ${label} | ${b.paced.cpuPerCallUs.toFixed(0)} µs | ${paired(b.paced.roundsCpuUs, floorPaced.roundsCpuUs)} |` +
          (others.length
            ? ` ${label === first[0] ? '1' : paired(b.paced.roundsCpuUs, first[1].paced.roundsCpuUs)} |`
            : ''),
      ),
    ];
    process.stdout.write(`\n${pacedRows.join('\n')}\n`);
  }
  log(`written: ${opt.out}`);
}

main()
  .catch((err) => {
    log(`compare failed: ${err.stack ?? err}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    killAll();
    await removeTempSettled();
  });
