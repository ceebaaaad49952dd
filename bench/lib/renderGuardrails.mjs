// The guardrails section of docs/benchmarks.md (bench/guardrails.mjs measures it): what a call costs
// the broker with no policy and with an approved policy that judges every call, target on ≤ 1.15× off.
const us = (x) => `${Math.round(x).toLocaleString('en-US')} µs`;
const x3 = (x) => (Number.isFinite(x) ? `${x.toFixed(3)}×` : '—');

export function renderGuardrails(S) {
  const g = S.guardrails;
  if (!g?.systems?.['guardrails-off'] || !g.systems['guardrails-on']) return [];
  const off = g.systems['guardrails-off'];
  const on = g.systems['guardrails-on'];
  const L = ['## Guardrails off and on', ''];
  L.push(
    `Two brokers on the same echo upstream, one with no guardrail policy and one with an approved policy of ` +
      `three rules (the one that decides the echo call has a CEL condition over its arguments) and a ` +
      `calls-per-minute limit that counts every call, none refusing it; called in interleaved blocks by the raw ` +
      `keep-alive client: ${g.callsPerSystem.toLocaleString('en-US')} calls each. Broker CPU is the broker ` +
      `process alone. Target: on ≤ 1.15× off.`,
    '',
    '| broker | p50 | p99 | broker CPU / call | median of rounds |',
    '| :-- | --: | --: | --: | --: |',
  );
  for (const s of [off, on])
    L.push(
      `| ${s.label} | ${us(s.p50Us)} | ${us(s.p99Us)} | ${us(s.brokerCpuPerCallUs)} | ${us(s.brokerCpuPerCallMedianRoundUs)} |`,
    );
  L.push(
    '',
    `On / off: broker CPU per call ${x3(g.ratio.cpu)} (median of rounds ${x3(g.ratio.cpuMedianRound)}), ` +
      `p50 ${x3(g.ratio.p50)} (${g.ratio.cpu <= 1.15 ? 'target met' : 'target not met'} in this run).`,
    '',
  );
  return L;
}
