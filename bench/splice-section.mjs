// Puts one section of a later run (`node bench/run.mjs --only <section>`) into a full run's results,
// marked as measured apart with the reason given, so docs/benchmarks.md can be rendered again from
// one file (`node bench/run.mjs --render <out>`). Only sections whose renderer shows the mark:
// telemetry.
//   node bench/splice-section.mjs <full.json> <section-run.json> <section> "<why>" <out.json>
import fs from 'node:fs';

const [full, part, section, why, out] = process.argv.slice(2);
if (!out) {
  console.error('usage: node bench/splice-section.mjs <full.json> <section-run.json> <section> "<why>" <out.json>');
  process.exit(2);
}
const SHOWS_MARK = ['telemetry'];
if (!SHOWS_MARK.includes(section)) {
  console.error(`the ${section} section's renderer does not say it was measured apart: not spliced`);
  process.exit(2);
}
const results = JSON.parse(fs.readFileSync(full, 'utf8'));
const later = JSON.parse(fs.readFileSync(part, 'utf8'));
const taken = later.sections?.[section];
if (!taken) {
  console.error(`${part} has no ${section} section`);
  process.exit(2);
}
results.sections[section] = {
  ...taken,
  measuredApart: `${(later.startedAt ?? later.at ?? '').replace('T', ' ').slice(0, 16)} UTC`,
  measuredApartWhy: why,
};
fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.error(`${section} of ${part} put into ${out}`);
