// Telemetry on vs off for several builds of the broker in one interleaved run (issue 32): per build
// a broker with telemetry off and one with it on (OTLP/HTTP to a loopback sink), SDK-client echo
// calls in rotated blocks; CPU per call of the broker alone and of its echo upstream, and on/off
// ratios per build. Not a section of run.mjs: a tool for comparing builds of the telemetry path.
//
//   node bench/telemetry-ab.mjs --build main=/tmp/main-dist/broker.js --build now=dist/broker.js [--rounds 20 --block 200]
//   [--env now-on=OTEL_BSP_SCHEDULE_DELAY:500] (extra environment of one broker; its key is <build>-on or <build>-off)
//   [--tail-ms 6000] (idle wait after the last round before the whole-run CPU is read: the last blocks' spans leave on the 5 s schedule)
import { Broker, BROKER_JS } from './lib/systems.mjs';
import { preciseCpuSince, preciseCpuUs, preciseReadings, tree } from './lib/proc.mjs';
import { rotate, summarize } from './lib/stats.mjs';
import { otlpSink, startOnEcho, telemetryOnEnv } from './telemetry.mjs';

const opt = { builds: [], rounds: 20, block: 200, warmup: 3000, copies: 1, env: {}, flags: {}, tailMs: 6000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === '--build') {
    const [label, js] = next().split('=');
    opt.builds.push({ label, js });
  } else if (a === '--rounds') opt.rounds = Number(next());
  else if (a === '--block') opt.block = Number(next());
  else if (a === '--warmup') opt.warmup = Number(next());
  else if (a === '--copies') opt.copies = Number(next());
  else if (a === '--tail-ms') opt.tailMs = Number(next());
  else if (a === '--env') {
    const [key, kv] = next().split('=');
    const at = kv.indexOf(':');
    (opt.env[key] ??= {})[kv.slice(0, at)] = kv.slice(at + 1);
  } else if (a === '--node-flags') {
    const [key, ...flags] = next().split('=');
    opt.flags[key] = flags.join('=').split(' ').filter(Boolean);
  } else throw new Error(`unknown option ${a}`);
}
if (opt.builds.length === 0) opt.builds.push({ label: 'now', js: BROKER_JS });

/** CPU µs of these processes, all their threads (schedstat, ns; /proc/<pid>/stat counts 10 ms ticks). */
const cpuUs = (pids) => pids.reduce((sum, pid) => sum + (preciseCpuUs(pid) ?? 0), 0);

const log = (...a) => process.stderr.write(`${a.join(' ')}\n`);

const sink = await otlpSink();

// Each (build, on/off) runs as `copies` brokers: brokers of one build differ by up to ~20% in CPU
// per call from one process to the next (JIT decisions, placement), which a single pair cannot tell
// from telemetry's cost. A configuration's figure is the mean over its copies.
const systems = [];
for (let c = 0; c < opt.copies; c++) {
  for (const b of opt.builds) {
    for (const mode of ['off', 'on']) {
      const config = `${b.label}-${mode}`;
      const env = mode === 'on' ? telemetryOnEnv(sink.url) : {};
      const s = new Broker({
        key: `${config}#${c}`,
        label: config,
        brokerJs: b.js,
        env: { ...env, ...opt.env[config] },
        extraNodeArgs: opt.flags[config] ?? [],
      });
      s.config = config;
      systems.push(s);
    }
  }
}
try {
  await startOnEcho(systems);
  const call = (s) => s.clients[0].callTool({ name: s.toolNames.echo, arguments: { text: 'hi' } });
  for (const s of systems) for (let i = 0; i < opt.warmup; i++) await call(s);
  // With --node-flags <config>=--trace-gc: the collector's pauses while the blocks ran, per call.
  const gc = new Map();
  for (const s of systems) {
    const g = { scavenge: 0, scavenges: 0, markCompact: 0, markCompacts: 0, on: false };
    gc.set(s.key, g);
    s.proc.stdout.on('data', (chunk) => {
      if (!g.on) return;
      for (const m of String(chunk).matchAll(/ms: (Scavenge|Mark-Compact|Mark-sweep)[^,]*, ([\d.]+) \/ ([\d.]+) ms/g)) {
        const ms = Number(m[2]);
        if (m[1] === 'Scavenge') ((g.scavenge += ms), g.scavenges++);
        else ((g.markCompact += ms), g.markCompacts++);
      }
    });
  }
  const acc = new Map(systems.map((s) => [s.key, { broker: [], echo: [], lat: [] }]));
  // Each broker's CPU over the whole run as well, its idle time between its blocks included: the
  // batch processor exports what a block left in its queue on its 5 s schedule, mostly while other
  // brokers run, and a block's figure misses that export (more of it the larger the batches: with
  // batches of 2,048 most spans leave on the schedule; stop 46). Metric exports on their timer are
  // in it too (every 5 s here), so its ratios run above the blocks' at this bench's pace.
  const whole = new Map(systems.map((s) => [s.key, cpuUs([s.mainPid])]));
  for (let r = 0; r < opt.rounds; r++) {
    for (const s of rotate(systems, r)) {
      const a = acc.get(s.key);
      gc.get(s.key).on = true;
      const all = tree(s.mainPid);
      const kids = all.filter((p) => p !== s.mainPid);
      const b0 = cpuUs([s.mainPid]);
      const k0 = preciseReadings(kids);
      for (let i = 0; i < opt.block; i++) {
        const t = performance.now();
        await call(s);
        a.lat.push(performance.now() - t);
      }
      a.broker.push((cpuUs([s.mainPid]) - b0) / opt.block);
      a.echo.push(preciseCpuSince(k0) / opt.block);
      gc.get(s.key).on = false;
    }
  }
  // The last blocks' spans leave on the schedule (OTEL_BSP_SCHEDULE_DELAY, 5 s by default).
  await new Promise((resolve) => setTimeout(resolve, opt.tailMs));
  for (const s of systems) whole.set(s.key, (cpuUs([s.mainPid]) - whole.get(s.key)) / (opt.rounds * opt.block));
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
  const rows = {};
  for (const s of systems) {
    const a = acc.get(s.key);
    const x = {
      broker: mean(a.broker),
      wholeRun: whole.get(s.key),
      echo: mean(a.echo),
      p50: summarize(a.lat).p50 * 1000,
    };
    log(
      `${s.key.padEnd(14)} broker ${x.broker.toFixed(0)} µs  echo ${x.echo.toFixed(0)} µs  p50 ${x.p50.toFixed(0)} µs`,
    );
    (rows[s.config] ??= []).push(x);
    const g = gc.get(s.key);
    const calls = a.broker.length * opt.block;
    if (g.scavenges + g.markCompacts > 0)
      log(
        `${''.padEnd(14)} GC per call: scavenge ${((g.scavenge * 1000) / calls).toFixed(1)} µs (${((g.scavenges * 1000) / calls).toFixed(1)} per 1000 calls), mark-compact ${((g.markCompact * 1000) / calls).toFixed(1)} µs (${((g.markCompacts * 1000) / calls).toFixed(2)} per 1000 calls)`,
      );
  }
  const fig = {};
  for (const [config, xs] of Object.entries(rows)) {
    fig[config] = {
      broker: mean(xs.map((x) => x.broker)),
      // One broker of three measuring ~30% above its copies moves the mean by 10% (stops 41–46):
      // the median over copies is given beside it, not in its place.
      brokerMedian: med(xs.map((x) => x.broker)),
      wholeRun: mean(xs.map((x) => x.wholeRun)),
      echo: mean(xs.map((x) => x.echo)),
      p50: med(xs.map((x) => x.p50)),
    };
    const x = fig[config];
    log(
      `${config.padEnd(12)} broker ${x.broker.toFixed(0)} µs (median of copies ${x.brokerMedian.toFixed(0)}, whole run ${x.wholeRun.toFixed(0)})  echo ${x.echo.toFixed(0)} µs  both ${(x.broker + x.echo).toFixed(0)} µs  p50 ${x.p50.toFixed(0)} µs (${xs.length} brokers)`,
    );
  }
  const out = {};
  for (const b of opt.builds) {
    const on = fig[`${b.label}-on`];
    const off = fig[`${b.label}-off`];
    out[b.label] = {
      broker: on.broker / off.broker,
      brokerMedian: on.brokerMedian / off.brokerMedian,
      wholeRun: on.wholeRun / off.wholeRun,
      echo: on.echo / off.echo,
      both: (on.broker + on.echo) / (off.broker + off.echo),
    };
    log(
      `${b.label.padEnd(8)} on/off: broker ${out[b.label].broker.toFixed(3)}× (medians of copies ${out[b.label].brokerMedian.toFixed(3)}×, whole run ${out[b.label].wholeRun.toFixed(3)}×)  echo ${out[b.label].echo.toFixed(3)}×  broker+echo ${out[b.label].both.toFixed(3)}×  p50 ${(on.p50 / off.p50).toFixed(3)}×`,
    );
  }
  process.stdout.write(`${JSON.stringify({ figures: fig, ratios: out })}\n`);
} finally {
  for (const s of systems) await s.stop().catch(() => undefined);
  await sink.close();
}
