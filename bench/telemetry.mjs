// The cost of telemetry per call (issue 32): the same broker and echo upstream with telemetry off
// and on (spans and metrics exported over OTLP/HTTP to a loopback sink that reads and drops what it
// gets), called in interleaved blocks so that both meet the same machine load. Each configuration
// runs as several brokers (`copies`), its figure their mean: brokers of one build differ by up to
// ~20-30% in CPU per call from one process to the next, which a single pair cannot tell from
// telemetry's cost (docs/performance.md, stops 41 and 42). CPU is read from schedstat (ns), not
// /proc/<pid>/stat's 10 ms ticks, too coarse for blocks of a hundred calls. Reports per-call
// latency and broker CPU, their on/off ratio (target ≤ 1.15), idle RSS and time to ready.
// Section of bench/run.mjs: telemetry.
import http from 'node:http';
import { Broker } from './lib/systems.mjs';
import { preciseCpuSince, preciseReadings, rss, sleep, tree } from './lib/proc.mjs';
import { rotate, summarize } from './lib/stats.mjs';

export const TELEMETRY_SECTIONS = ['telemetry'];
export const TELEMETRY_BUDGET_S = { full: { telemetry: 150 }, quick: { telemetry: 40 } };

const log = (...a) => process.stderr.write(`[bench telemetry] ${a.join(' ')}\n`);
const us = (ms) => ms * 1000;

/** What turns telemetry on for a broker: export to `url`, metrics every 5 s (the SDK's 60 s would miss the run). */
export const telemetryOnEnv = (url) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_METRIC_EXPORT_INTERVAL: '5000' });

/** Starts each broker on the echo upstream with one client whose echo tool name is resolved. */
export async function startOnEcho(systems) {
  for (const s of systems) {
    await s.start();
    await s.waitForTools({ names: ['echo__echo'] });
    const [client] = await s.pool(1);
    await s.resolveTools(client, ['echo']);
  }
}

/** An OTLP/HTTP endpoint that reads every body and answers 200: the exporter's cost, not a collector's. */
export async function otlpSink() {
  let bodies = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      bodies++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    get bodies() {
      return bodies;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const MODES = [
  { key: 'telemetry-off', label: 'telemetry off' },
  { key: 'telemetry-on', label: 'telemetry on (OTLP export)', on: true },
];

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function sectionTelemetry({ quick, overBudget }) {
  const { warmup, block, rounds, copies } = quick
    ? { warmup: 200, block: 50, rounds: 8, copies: 1 }
    : { warmup: 3000, block: 100, rounds: 30, copies: 3 };
  const collector = await otlpSink();
  const systems = [];
  for (let c = 0; c < copies; c++)
    for (const m of MODES) {
      const s = new Broker({ key: `${m.key}#${c}`, label: m.label, env: m.on ? telemetryOnEnv(collector.url) : {} });
      s.mode = m.key;
      systems.push(s);
    }
  try {
    await startOnEcho(systems);
    for (const s of systems) {
      for (let i = 0; i < warmup; i++)
        await s.clients[0].callTool({ name: s.toolNames.echo, arguments: { text: 'hi' } });
    }
    const acc = new Map(systems.map((s) => [s.key, { samples: [], brokerUs: 0, upstreamUs: 0, calls: 0 }]));
    let done = 0;
    for (let r = 0; r < rounds && (r < 2 || !overBudget()); r++, done++) {
      for (const s of rotate(systems, r)) {
        const a = acc.get(s.key);
        const broker = preciseReadings([s.mainPid]);
        const upstream = preciseReadings(tree(s.mainPid).filter((pid) => pid !== s.mainPid));
        for (let i = 0; i < block; i++) {
          const t = performance.now();
          await s.clients[0].callTool({ name: s.toolNames.echo, arguments: { text: 'hi' } });
          a.samples.push(performance.now() - t);
        }
        a.brokerUs += preciseCpuSince(broker);
        a.upstreamUs += preciseCpuSince(upstream);
        a.calls += block;
      }
    }
    await sleep(500);
    const out = { callsPerSystem: done * block * copies, copies, exportedBodies: collector.bodies, systems: {} };
    for (const m of MODES) {
      const mine = systems.filter((s) => s.mode === m.key);
      const perCopy = mine.map((s) => {
        const a = acc.get(s.key);
        return { brokerAlone: a.brokerUs / a.calls, upstream: a.upstreamUs / a.calls };
      });
      const st = summarize(mine.flatMap((s) => acc.get(s.key).samples));
      const brokerAlone = mean(perCopy.map((x) => x.brokerAlone));
      const upstream = mean(perCopy.map((x) => x.upstream));
      out.systems[m.key] = {
        label: m.label,
        p50Us: us(st.p50),
        p99Us: us(st.p99),
        meanUs: us(st.mean),
        // The broker and its echo upstream (which parses the traceparent in _meta), then each apart.
        brokerCpuPerCallUs: brokerAlone + upstream,
        brokerAloneCpuPerCallUs: brokerAlone,
        upstreamCpuPerCallUs: upstream,
        // Each broker's own figure: how far copies of one configuration stand apart.
        brokerAloneByCopyUs: perCopy.map((x) => x.brokerAlone),
        readyMs: mean(mine.map((s) => s.readyMs)),
        // The broker process alone (its echo child is the same in both).
        idleRssMB: mean(mine.map((s) => rss(s.mainPid))) / (1024 * 1024),
      };
    }
    const off = out.systems['telemetry-off'];
    const on = out.systems['telemetry-on'];
    out.ratio = {
      p50: on.p50Us / off.p50Us,
      mean: on.meanUs / off.meanUs,
      cpu: on.brokerCpuPerCallUs / off.brokerCpuPerCallUs,
      brokerAloneCpu: on.brokerAloneCpuPerCallUs / off.brokerAloneCpuPerCallUs,
      upstreamCpu: on.upstreamCpuPerCallUs / off.upstreamCpuPerCallUs,
    };
    for (const m of MODES) {
      const x = out.systems[m.key];
      log(
        `${m.key.padEnd(14)} p50 ${x.p50Us.toFixed(0)} µs  p99 ${x.p99Us.toFixed(0)} µs  CPU/call broker ${x.brokerAloneCpuPerCallUs.toFixed(0)} µs (copies ${x.brokerAloneByCopyUs.map((v) => v.toFixed(0)).join(', ')}) + upstream ${x.upstreamCpuPerCallUs.toFixed(0)} µs  ready ${x.readyMs.toFixed(0)} ms  RSS ${x.idleRssMB.toFixed(1)} MB`,
      );
    }
    log(
      `on/off: p50 ${out.ratio.p50.toFixed(3)}×  mean ${out.ratio.mean.toFixed(3)}×  broker + upstream CPU ${out.ratio.cpu.toFixed(3)}× (target ≤ 1.15×; the broker process alone ${out.ratio.brokerAloneCpu.toFixed(3)}×, its upstream ${out.ratio.upstreamCpu.toFixed(3)}×)`,
    );
    return out;
  } finally {
    for (const s of systems) {
      await s.stop().catch(() => undefined);
    }
    await collector.close();
  }
}

export const TELEMETRY_RUNNERS = { telemetry: sectionTelemetry };
