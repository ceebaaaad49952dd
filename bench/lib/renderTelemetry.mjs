// The telemetry section of docs/benchmarks.md (bench/telemetry.mjs measures it): what a call costs
// with telemetry off and on, the target being on ≤ 1.15× off.
const us = (x) => `${Math.round(x).toLocaleString('en-US')} µs`;
const x3 = (x) => (Number.isFinite(x) ? `${x.toFixed(3)}×` : '—');

export function renderTelemetry(S) {
  const t = S.telemetry;
  if (!t?.systems?.['telemetry-off'] || !t.systems['telemetry-on']) return [];
  const off = t.systems['telemetry-off'];
  const on = t.systems['telemetry-on'];
  const L = ['## Telemetry off and on', ''];
  const copies = t.copies ?? 1;
  if (t.measuredApart)
    L.push(
      `Measured apart from the rest of this run, on the same machine and code, at ${t.measuredApart}: ` +
        `${t.measuredApartWhy}`,
      '',
    );
  L.push(
    (copies > 1
      ? `Brokers on the echo upstream, ${copies} with telemetry off (the default) and ${copies} exporting spans and `
      : 'Two brokers on the same echo upstream, one with telemetry off (the default) and one exporting spans and ') +
      `metrics over OTLP/HTTP to a loopback endpoint that reads and drops each body (${t.exportedBodies} bodies ` +
      `received), called in interleaved blocks by the SDK client: ${t.callsPerSystem.toLocaleString('en-US')} ` +
      `calls per configuration. CPU per call is the broker's and its echo upstream's together (the upstream parses the ` +
      `trace context the broker passes on), then the broker process alone` +
      (copies > 1
        ? `, each the mean of the ${copies} brokers of that configuration (one broker's figure can stand 20–30% ` +
          `from another's of the same build; each one's is in the last column), read from schedstat`
        : '') +
      `. Target: on ≤ 1.15× off.`,
    '',
    '| broker | p50 | p99 | CPU / call, broker + upstream | the broker alone | each broker alone | ready after spawn | idle RSS |',
    '| :-- | --: | --: | --: | --: | --: | --: | --: |',
  );
  for (const s of [off, on])
    L.push(
      `| ${s.label} | ${us(s.p50Us)} | ${us(s.p99Us)} | ${us(s.brokerCpuPerCallUs)} | ` +
        `${s.brokerAloneCpuPerCallUs === undefined ? '—' : us(s.brokerAloneCpuPerCallUs)} | ` +
        `${s.brokerAloneByCopyUs ? s.brokerAloneByCopyUs.map((v) => Math.round(v)).join(', ') + ' µs' : '—'} | ` +
        `${Math.round(s.readyMs)} ms | ${s.idleRssMB.toFixed(1)} MB |`,
    );
  L.push(
    '',
    `On / off: p50 ${x3(t.ratio.p50)}, mean ${x3(t.ratio.mean)}, CPU per call ${x3(t.ratio.cpu)} ` +
      (t.ratio.brokerAloneCpu === undefined
        ? ''
        : `(the broker alone ${x3(t.ratio.brokerAloneCpu)}, its upstream ${x3(t.ratio.upstreamCpu)}) `) +
      `(${Math.max(t.ratio.cpu, t.ratio.brokerAloneCpu ?? 0) <= 1.15 ? 'target met' : 'target not met'} in this run).`,
    '',
  );
  return L;
}
