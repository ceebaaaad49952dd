// The tool-description scanner's section of docs/benchmarks.md (bench/scanner.mjs measures it).
const n3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : '—');

export function renderScanner(S) {
  const sc = S.scanner;
  if (!sc?.halves) return [];
  const L = ['## Tool-description scanner (guardrails)', ''];
  L.push(
    `Precision and recall of \`src/broker/trust/toolScanner.ts\` on the labelled set \`${sc.dataset}\` ` +
      '(benign: tools of installed npm servers and of well-known servers as published; poisoned: written after ' +
      'published attack write-ups). A definition counts as flagged when the scanner has any finding in it. The ' +
      'rules were written looking at the tune half; the test half is the figure to quote. ' +
      'What it misses and why: [docs/guardrails.md](guardrails.md#the-scanner).',
    '',
    '| half | poisoned | benign | precision | recall | false alarms | misses |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const [half, f] of Object.entries(sc.halves))
    L.push(`| ${half} | ${f.poisoned} | ${f.benign} | ${n3(f.precision)} | ${n3(f.recall)} | ${f.fp} | ${f.fn} |`);
  L.push('');
  if (sc.missed?.length) L.push(`Missed on the test half: ${sc.missed.join(', ')}.`, '');
  if (sc.falseAlarms?.length) L.push(`False alarms on the test half: ${sc.falseAlarms.join(', ')}.`, '');
  return L;
}
