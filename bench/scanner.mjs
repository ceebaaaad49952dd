// The tool-description scanner measured (issue 33 item 4): precision and recall of
// src/broker/trust/toolScanner.ts on the labelled set bench/data/tool-poisoning.json, on each half.
// The rules were written looking at the tune half only; the test half is the figure to quote.
// A definition counts as flagged when the scanner has any finding (high or medium) in it. Each
// benign tool is scanned with its own server's tools as context (as the broker does); a poisoned
// one on its own. No network, no processes: the scanner is bundled from source with esbuild.
//
// Poisoned families and the write-ups they follow:
//   tpa        Invariant Labs, "MCP Security Notification: Tool Poisoning Attacks" (2025)
//   shadow     Invariant Labs, same post: shadowing another server's tool
//   whatsapp   Invariant Labs, "WhatsApp MCP Exploited: Exfiltrating your message history via MCP" (2025)
//   tags       ASCII smuggling with Unicode tag characters (Embrace The Red, 2024; Riley Goodside)
//   zwsp       zero-width characters and bidi controls (Trojan Source, Boucher & Anderson 2021)
//   ansi       Trail of Bits, "Deceiving users with ANSI terminal codes in MCP" (2025)
//   linejump   Trail of Bits, "Jumping the line: how MCP servers can attack you before you ever use them" (2025)
//   schema     CyberArk, "Poison everywhere: no output from your MCP server is safe" (2025), full-schema poisoning
//   exfil      Elastic Security Labs, "MCP tools: attack vectors and defense recommendations" (2025)
//   preference preference manipulation (MPMA, Wang et al. 2025): "always use this tool instead of …"
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
export const DATASET = path.join(HERE, 'data', 'tool-poisoning.json');

async function loadScanner() {
  const built = await esbuild.build({
    entryPoints: [path.join(REPO, 'src/broker/trust/toolScanner.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    write: false,
  });
  const code = built.outputFiles[0].text;
  return import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
}

function figures(rows) {
  const tp = rows.filter((r) => r.poisoned && r.flagged).length;
  const fp = rows.filter((r) => !r.poisoned && r.flagged).length;
  const fn = rows.filter((r) => r.poisoned && !r.flagged).length;
  const tn = rows.filter((r) => !r.poisoned && !r.flagged).length;
  return {
    benign: fp + tn,
    poisoned: tp + fn,
    tp,
    fp,
    fn,
    tn,
    precision: tp + fp ? tp / (tp + fp) : 1,
    recall: tp + fn ? tp / (tp + fn) : 1,
  };
}

/** The section: figures per half, and the misses of the test half by name (so a reader can judge them). */
export async function sectionScanner({ log = () => undefined } = {}) {
  const { scanTool } = await loadScanner();
  const data = JSON.parse(fs.readFileSync(DATASET, 'utf8'));
  const byServer = {};
  for (const b of data.benign) (byServer[b.server] ??= []).push(b.tool.name);
  const rows = [
    ...data.benign.map((b) => ({
      ...b,
      poisoned: false,
      findings: scanTool(b.tool, { ownTools: byServer[b.server] }),
    })),
    ...data.poisoned.map((p) => ({ ...p, poisoned: true, findings: scanTool(p.tool) })),
  ].map((r) => ({ ...r, flagged: r.findings.length > 0 }));
  const halves = {};
  for (const half of ['tune', 'test']) halves[half] = figures(rows.filter((r) => r.half === half));
  const name = (r) => `${r.server ?? r.family}/${r.tool.name}`;
  const test = rows.filter((r) => r.half === 'test');
  const missed = test.filter((r) => r.poisoned && !r.flagged).map(name);
  const falseAlarms = test
    .filter((r) => !r.poisoned && r.flagged)
    .map((r) => `${name(r)} (${r.findings.map((f) => f.sign).join(', ')})`);
  for (const [half, f] of Object.entries(halves))
    log(
      `  scanner ${half}: precision ${f.precision.toFixed(3)}, recall ${f.recall.toFixed(3)} ` +
        `(${f.poisoned} poisoned, ${f.benign} benign; tp ${f.tp}, fp ${f.fp}, fn ${f.fn})`,
    );
  if (missed.length) log(`  scanner test misses: ${missed.join(', ')}`);
  if (falseAlarms.length) log(`  scanner test false alarms: ${falseAlarms.join(', ')}`);
  return { dataset: path.relative(REPO, DATASET), halves, missed, falseAlarms };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const half = process.argv.includes('--tune') ? 'tune' : undefined;
  const r = await sectionScanner({ log: (l) => console.log(l) });
  if (half) console.log(JSON.stringify(r.halves.tune));
}
