// Where one broker build's CPU goes per forwarded call, counted in CPU time (not wall-clock time):
// raw-client echo calls in blocks, the broker's CPU per call split by thread and into user and
// system time, and (with --perf) Linux `perf` samples of the broker only while it runs on a CPU.
//
//   node bench/cpu-profile.mjs [--build <dist/broker.js copy>] [--blocks 3] [--calls 4000] [--sessions 1] [--perf <out.data>]
//
// --sessions N: each block's calls run over N sessions at once (each its share), as agents in parallel do.
// --client sdk: the sessions are the SDK's client (Streamable HTTP, what an agent sends) instead of raw POSTs;
// --client stateless: raw 2026-07-28 POSTs (no session).
// --node-flags "--flag --other": more Node/V8 flags for the broker, after the bench's own (BROKER_NODE_FLAGS).
// --env KEY=VALUE (repeatable): more environment for the broker (OTEL_TRACES_SAMPLER=always_off with --telemetry).
// --telemetry: the broker exports spans and metrics over OTLP/HTTP to a loopback sink (what telemetry
// on costs, and where: run once with it and once without).
//
// Why not `--cpu-prof` alone (bench/compare.mjs --profile): V8's profiler samples by the wall clock,
// so on a shared machine a broker preempted inside a write() is counted as writing; here it showed
// `writev`/`writeUtf8String` at 32% of the samples while the process spent 75–80% of its CPU in user
// space. `perf record -e cpu-clock` counts only time on a CPU; the broker runs under
// `--perf-basic-prof` so that JavaScript frames have names. Needs `perf` and a
// kernel.perf_event_paranoid that lets this user record its own processes.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { Broker, BROKER_JS, REPO, removeTempSettled } from './lib/systems.mjs';
import { rawSession, rawStateless } from './lib/rawClient.mjs';
import { killAll } from './lib/proc.mjs';
import { otlpSink, telemetryOnEnv } from './telemetry.mjs';

const opt = {
  build: BROKER_JS,
  blocks: 3,
  calls: 4000,
  warmup: 2000,
  sessions: 1,
  client: 'raw',
  perf: undefined,
  telemetry: false,
  nodeFlags: [],
  env: {},
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === '--build') opt.build = next();
  else if (a === '--blocks') opt.blocks = Number(next());
  else if (a === '--calls') opt.calls = Number(next());
  else if (a === '--warmup') opt.warmup = Number(next());
  else if (a === '--perf') opt.perf = next();
  else if (a === '--sessions') opt.sessions = Number(next());
  else if (a === '--client') opt.client = next();
  else if (a === '--telemetry') opt.telemetry = true;
  else if (a === '--env') {
    const [key, ...value] = next().split('=');
    opt.env[key] = value.join('=');
  } else if (a === '--node-flags') opt.nodeFlags = next().split(/\s+/).filter(Boolean);
  else throw new Error(`unknown option ${a}`);
}

/** Per thread of `pid`: CPU µs (schedstat) and user/system ticks (stat). */
function threads(pid) {
  const out = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      const ns = Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      out.set(tid, { name, us: ns / 1000, user: Number(stat[11]), system: Number(stat[12]) });
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

function blockFigures(before, after, calls) {
  const byName = {};
  let total = 0;
  let user = 0;
  let system = 0;
  for (const [tid, t] of after) {
    const b = before.get(tid) ?? { us: t.us, user: t.user, system: t.system };
    const us = (t.us - b.us) / calls;
    total += us;
    user += t.user - b.user;
    system += t.system - b.system;
    if (us >= 0.5) byName[t.name] = (byName[t.name] ?? 0) + us;
  }
  return { total, byName, userShare: user + system ? user / (user + system) : undefined };
}

/** Categories of `perf script` stacks (leaf first); a sample counts in every category its stack matches. */
const CATEGORIES = [
  ['socket write (res.end → writev)', (s) => s.some((f) => f.includes('Socket._writev'))],
  ['stdin write to the upstream (setImmediate → write)', (s) => s.some((f) => f.includes('processImmediate'))],
  ['upstream answer read (onStdout)', (s) => s.some((f) => f.includes('onStdout'))],
  ['epoll_wait', (s) => s.some((f) => f.includes('epoll_wait') || f.includes('epoll_pwait'))],
  ['garbage collection', (s) => s.some((f) => /Scaveng|GarbageCollect|MinorGC|Marking|Heap::/.test(f))],
  [
    'V8 runtime calls (slow paths) under the broker',
    (s) => s.some((f) => f.includes('Runtime_')) && s.some((f) => f.includes('broker.js')),
  ],
  ['a broker frame on the stack', (s) => s.some((f) => f.includes('broker.js'))],
];

function summarizePerf(file) {
  const script = spawnSync('perf', ['script', '-i', file, '-F', 'ip,sym'], { maxBuffer: 1 << 30, encoding: 'utf8' });
  if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);
  const stacks = [];
  let current = [];
  for (const line of script.stdout.split('\n')) {
    if (!line.trim()) {
      if (current.length) stacks.push(current);
      current = [];
      continue;
    }
    current.push(line.trim().split(' ').slice(1).join(' '));
  }
  if (current.length) stacks.push(current);
  const counts = CATEGORIES.map(([name, match]) => [name, stacks.filter(match).length]);
  const self = new Map();
  for (const s of stacks) self.set(s[0], (self.get(s[0]) ?? 0) + 1);
  const pct = (n) => `${((n / stacks.length) * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `${stacks.length} samples (CPU time only)`,
    '',
    'Shares of the samples (a stack can count in several):',
  ];
  for (const [name, n] of counts) lines.push(`  ${pct(n)}  ${name}`);
  lines.push('', 'Top 20 by self samples:');
  for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) lines.push(`  ${pct(n)}  ${name}`);
  return lines.join('\n');
}

async function main() {
  const extraNodeArgs = [...opt.nodeFlags, ...(opt.perf ? ['--perf-basic-prof'] : [])];
  const sink = opt.telemetry ? await otlpSink() : undefined;
  const env = { ...(sink ? telemetryOnEnv(sink.url) : {}), ...opt.env };
  const broker = new Broker({ brokerJs: opt.build, extraNodeArgs, env });
  await broker.start();
  await broker.waitForTools({ names: ['echo__echo'] });
  const sdk = await broker.connect();
  await broker.resolveTools(sdk, ['echo']);
  broker.echo = broker.toolNames.echo;
  const raws = [];
  for (let i = 0; i < opt.sessions; i++) {
    if (opt.client === 'stateless') raws.push(rawStateless(broker));
    else if (opt.client !== 'sdk') raws.push(await rawSession(broker));
    else {
      const client = i === 0 ? sdk : await broker.connect();
      const call = () => client.callTool({ name: broker.echo, arguments: { text: 'hello' } });
      raws.push({ call, close: () => (client === sdk ? undefined : client.close()) });
    }
  }
  // `calls` calls spread over the sessions, all running at once.
  const run = (calls) =>
    Promise.all(
      raws.map(async (raw, s) => {
        const mine = Math.floor(calls / raws.length) + (s < calls % raws.length ? 1 : 0);
        for (let i = 0; i < mine; i++) await raw.call();
      }),
    );
  await run(opt.warmup);
  await broker.tokensCounted();
  let perf;
  if (opt.perf) {
    const args = ['record', '-F', '4999', '-e', 'cpu-clock', '-g', '-o', opt.perf, '-p', String(broker.mainPid)];
    perf = spawn('perf', args, { stdio: ['ignore', 'ignore', 'inherit'] });
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  for (let b = 0; b < opt.blocks; b++) {
    const before = threads(broker.mainPid);
    await run(opt.calls);
    const f = blockFigures(before, threads(broker.mainPid), opt.calls);
    const threadsText = Object.entries(f.byName)
      .map(([name, us]) => `${name} ${us.toFixed(0)} µs`)
      .join(', ');
    const share = f.userShare === undefined ? '' : `, ${(f.userShare * 100).toFixed(0)}% user`;
    process.stdout.write(`block ${b + 1}: broker CPU ${f.total.toFixed(0)} µs per call (${threadsText}${share})\n`);
  }
  if (perf) {
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.once('exit', resolve));
  }
  for (const raw of raws) raw.close();
  await sdk.close();
  await broker.stop();
  await sink?.close?.();
  if (!opt.perf) return;
  process.stdout.write(`\n${summarizePerf(opt.perf)}\n`);
  // What --perf-basic-prof leaves behind: the symbol map and V8's log in the broker's cwd. The map is
  // kept with PERF_KEEP_MAP=1, for `perf report -i <out.data> --children` afterwards.
  if (!process.env.PERF_KEEP_MAP) fs.rmSync(`/tmp/perf-${broker.mainPid}.map`, { force: true });
  for (const f of fs.readdirSync(REPO)) if (f.endsWith(`-${broker.mainPid}-v8.log`)) fs.rmSync(path.join(REPO, f));
}

main()
  .catch((err) => {
    process.stderr.write(`cpu-profile failed: ${err.stack ?? err}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    killAll();
    await removeTempSettled();
  });
