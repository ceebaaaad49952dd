// Turns one run's results into docs/benchmarks.md and hand-written SVG charts (no chart library).
import { BROKER_NODE_FLAGS, BROKER_ENV } from './systems.mjs';
import { renderSearch, searchVerdicts } from './render-search.mjs';
import { renderScale, scaleVerdicts } from './renderScale.mjs';
import { renderScanner } from './renderScanner.mjs';
import { renderTelemetry } from './renderTelemetry.mjs';
import { renderGuardrails } from './renderGuardrails.mjs';
/** The registry watcher's default debounce (src/registry/watcher.ts). */
const WATCHER_QUIET_MS = 15;
const BROKER_ENV_TEXT = Object.entries(BROKER_ENV)
  .map(([k, v]) => `${k}=${v}`)
  .join(' ');
const ORDER = ['direct-stdio', 'direct-http', 'relay-floor', 'broker', 'mcp-hub', 'supergateway', 'mcp-proxy'];
const PEERS = ['mcp-hub', 'supergateway', 'mcp-proxy'];
const COLORS = {
  'direct-stdio': '#8c8c8c',
  'direct-http': '#1f77b4',
  broker: '#d62728',
  'mcp-hub': '#2ca02c',
  supergateway: '#9467bd',
  'mcp-proxy': '#ff7f0e',
  'relay-floor': '#bcbd22',
};
const NAMES = {
  'direct-stdio': 'a. direct, stdio',
  'direct-http': 'b. direct, SDK Streamable HTTP',
  broker: 'c. Switchboard → stdio',
  'mcp-hub': 'd. mcp-hub → stdio',
  supergateway: 'd. supergateway → stdio',
  'mcp-proxy': 'd. mcp-proxy → stdio',
  'relay-floor': 'relay floor: node:http → stdio, nothing else',
};
const SHORT = {
  'direct-stdio': 'direct stdio',
  'direct-http': 'direct SDK HTTP',
  broker: 'Switchboard',
  'mcp-hub': 'mcp-hub',
  supergateway: 'supergateway',
  'mcp-proxy': 'mcp-proxy',
  'relay-floor': 'relay floor',
};

const n0 = (x) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : Math.round(x).toLocaleString('en-US'));
const n2 = (x) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(2));
const usStr = (x) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : `${n0(x)} µs`);
const msStr = (x, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : `${x.toFixed(d)} ms`);
const mbStr = (b) =>
  b === null || b === undefined || !Number.isFinite(b) ? '—' : `${(b / 1024 / 1024).toFixed(1)} MB`;
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : null);
const xStr = (r) => (r === null ? '—' : `${r.toFixed(2)}×`);
const x3 = (r) => (r === null ? '—' : `${r.toFixed(3)}×`);
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const present = (obj) => ORDER.filter((k) => obj && obj[k]);
function sizeLabel(b) {
  return b >= 1024 * 1024 ? `${b / 1024 / 1024} MB` : b >= 1024 ? `${b / 1024} KB` : `${b} B`;
}

function table(head, rows, align) {
  const a = align ?? head.map((_, i) => (i === 0 ? ':--' : '--:'));
  return [`| ${head.join(' | ')} |`, `| ${a.join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

// ---- targets ---------------------------------------------------------------------------------
/** 32 sessions, broker / direct SDK HTTP calls/s, in the last run before issue 35 (docs/benchmarks.md then). */
const RATIO_32_BEFORE = 1.31;

export function verdicts(results) {
  const S = results.sections ?? {};
  const out = [];
  const lat = S.latency?.systems;
  const add = (target, met, measured, context) => out.push({ target, met, measured, ...(context ? { context } : {}) });
  if (lat?.broker && lat['direct-http']) {
    const r = ratio(lat.broker.p50Us, lat['direct-http'].p50Us);
    add(
      'broker p50 per call (stdio upstream) ≤ 1.0× direct SDK Streamable HTTP',
      r <= 1.0,
      `${usStr(lat.broker.p50Us)} vs ${usStr(lat['direct-http'].p50Us)} = ${x3(r)}`,
    );
    const peers = PEERS.filter((p) => lat[p]);
    if (peers.length) {
      const best = peers.reduce((a, b) => (lat[a].p50Us <= lat[b].p50Us ? a : b));
      add(
        'broker p50 below every peer',
        peers.every((p) => lat.broker.p50Us < lat[p].p50Us),
        `${usStr(lat.broker.p50Us)} vs fastest peer ${best} ${usStr(lat[best].p50Us)} (${x3(ratio(lat.broker.p50Us, lat[best].p50Us))})`,
      );
    }
    const floor = S.latency.floor;
    const raw = S.latency.brokerRaw;
    const context = `same call: the SDK's own Streamable HTTP server (direct b) spends ${usStr(lat['direct-http'].serverCpuPerCallUs)}, the stdio upstream alone (a) ${usStr(lat['direct-stdio']?.serverCpuPerCallUs)}; the broker writes to and reads from its upstream's pipe on every call, which the floor does not; where the broker's time goes: section "Where the broker's CPU goes" and \`node bench/run.mjs --profile\``;
    const direct = lat['direct-stdio'];
    if (floor && direct) {
      const row = raw ?? lat.broker;
      const bound = 1.5 * floor.p50Us + direct.p50Us;
      add(
        `broker p50 ≤ 1.5× the floor's p50 + the direct stdio round trip (${raw ? 'raw client' : 'SDK client'})`,
        row.p50Us <= bound,
        `${usStr(row.p50Us)} vs 1.5 × ${usStr(floor.p50Us)} + ${usStr(direct.p50Us)} = ${usStr(bound)}`,
        [
          raw ? `SDK client: ${usStr(lat.broker.p50Us)} (its own client's work is in that figure)` : undefined,
          S.latency.relayFloor
            ? `the relay floor (no MCP work of its own, the same upstream's pipe): ${usStr(S.latency.relayFloor.p50Us)}`
            : undefined,
        ]
          .filter(Boolean)
          .join('; ') || undefined,
      );
    }
    if (floor) {
      const relay = S.latency.relayFloor;
      // The relay floor does what the broker must (a pipe's write, read and wake-ups) and nothing else;
      // where it already costs ~2× the node:http floor, the target leaves the broker no room at all.
      const relayContext = relay
        ? `; the relay floor (a bare node:http server putting each call through the same upstream's pipe, no MCP work of its own) spends ${usStr(relay.gatewayCpuPerCallUs)} = ${x3(ratio(relay.gatewayCpuPerCallUs, floor.serverCpuPerCallUs))} the floor`
        : '';
      for (const [label, row] of [
        ['SDK client', lat.broker],
        ['raw client', raw],
      ]) {
        if (!row) continue;
        const r = ratio(row.gatewayCpuPerCallUs, floor.serverCpuPerCallUs);
        add(
          `broker CPU per forwarded call ≤ 2.0× the node:http floor (${label})`,
          r <= 2.0,
          `${usStr(row.gatewayCpuPerCallUs)} vs ${usStr(floor.serverCpuPerCallUs)} = ${x3(r)}` +
            (relay ? `; ${x3(ratio(row.gatewayCpuPerCallUs, relay.gatewayCpuPerCallUs))} the relay floor` : ''),
          context + relayContext,
        );
      }
    } else {
      add('broker CPU per forwarded call ≤ 2.0× the node:http floor', null, 'the floor was not measured', context);
    }
  } else {
    add(
      'broker p50 ≤ 1.0× direct SDK Streamable HTTP, below every peer; broker CPU/call ≤ 500 µs',
      null,
      'latency section not run',
    );
  }
  const tp = S.throughput?.systems;
  if (tp?.broker?.byConcurrency?.[8] && tp['direct-http']?.byConcurrency?.[8]) {
    const b = tp.broker.byConcurrency[8].callsPerSec;
    const h = tp['direct-http'].byConcurrency[8].callsPerSec;
    const busy = (v) => n2(((v.clientCpuPerCallUs + v.serverCpuPerCallUs) * v.callsPerSec) / 1e6);
    add(
      '8 sessions through the broker ≥ 1.5× calls/s of direct SDK Streamable HTTP',
      b >= 1.5 * h,
      `${n0(b)}/s vs ${n0(h)}/s = ${x3(ratio(b, h))}`,
      `cores busy (client + server) ${busy(tp.broker.byConcurrency[8])} vs ${busy(tp['direct-http'].byConcurrency[8])}; the ${S.throughput.clientProcs ? `${Math.min(8, S.throughput.clientProcs)} client processes spend` : 'one client process spends'} ${usStr(tp.broker.byConcurrency[8].clientCpuPerCallUs)} vs ${usStr(tp['direct-http'].byConcurrency[8].clientCpuPerCallUs)} per call` +
        (tp['relay-floor']?.byConcurrency?.[8]
          ? `; the relay floor (node:http → the same stdio upstream, no MCP work of its own) reaches ${n0(tp['relay-floor'].byConcurrency[8].callsPerSec)}/s = ${x3(ratio(tp['relay-floor'].byConcurrency[8].callsPerSec, h))} with the same clients`
          : ''),
    );
  } else add('8 sessions through the broker ≥ 1.5× direct SDK HTTP', null, 'throughput section not run');
  const rawTp = S.throughput?.rawClient;
  if (rawTp?.broker?.byConcurrency?.[8] && rawTp['direct-http']?.byConcurrency?.[8]) {
    const b = rawTp.broker.byConcurrency[8];
    const h = rawTp['direct-http'].byConcurrency[8];
    add(
      '8 sessions through the broker ≥ 1.5× calls/s of direct SDK Streamable HTTP (raw client)',
      b.callsPerSec >= 1.5 * h.callsPerSec,
      `${n0(b.callsPerSec)}/s vs ${n0(h.callsPerSec)}/s = ${x3(ratio(b.callsPerSec, h.callsPerSec))}`,
      `the same cell with the raw client (no SDK client): server side ${usStr(b.serverCpuPerCallUs)} vs ${usStr(h.serverCpuPerCallUs)} per call, client ${usStr(b.clientCpuPerCallUs)} vs ${usStr(h.clientCpuPerCallUs)}`,
    );
  }
  if (tp?.broker?.byConcurrency?.[32] && tp['direct-http']?.byConcurrency?.[32]) {
    const r = ratio(tp.broker.byConcurrency[32].callsPerSec, tp['direct-http'].byConcurrency[32].callsPerSec);
    add(
      `32 sessions: broker / direct SDK HTTP calls/s no worse than before issue 35 (${x3(RATIO_32_BEFORE)})`,
      r >= RATIO_32_BEFORE,
      `${n0(tp.broker.byConcurrency[32].callsPerSec)}/s vs ${n0(tp['direct-http'].byConcurrency[32].callsPerSec)}/s = ${x3(r)}`,
      'the ratio the run of 2026-12-04 22:24 UTC measured; both sides share the same 2 cores with the client processes, so it moves with the load of the machine',
    );
  }
  const cat = S.catalog?.compare;
  if (cat?.broker && cat['direct-stdio']) {
    const r = ratio(cat.broker.p50Us, cat['direct-stdio'].p50Us);
    add(
      'tools/list of 1,000 tools no slower than direct stdio',
      r <= 1.0,
      `${msStr(cat.broker.p50Us / 1000, 2)} vs ${msStr(cat['direct-stdio'].p50Us / 1000, 2)} = ${x3(r)}`,
    );
  } else add('tools/list of 1,000 tools no slower than direct stdio', null, 'catalog section not run');
  const pay = S.payload?.systems;
  const MB1 = 1_048_576;
  if (pay?.broker?.bySize?.[MB1] && pay['direct-http']?.bySize?.[MB1]) {
    const r = ratio(pay.broker.bySize[MB1].p50Us, pay['direct-http'].bySize[MB1].p50Us);
    add(
      '1 MB result ≤ 1.2× direct SDK HTTP',
      r <= 1.2,
      `${msStr(pay.broker.bySize[MB1].p50Us / 1000)} vs ${msStr(pay['direct-http'].bySize[MB1].p50Us / 1000)} = ${x3(r)}`,
      `server CPU per 1 MB call: broker ${msStr(pay.broker.bySize[MB1].gatewayCpuPerCallUs / 1000)} (+ upstream = ${msStr(pay.broker.bySize[MB1].serverCpuPerCallUs / 1000)}) vs direct SDK HTTP upstream ${msStr(pay['direct-http'].bySize[MB1].serverCpuPerCallUs / 1000)}`,
    );
  } else add('1 MB result ≤ 1.2× direct SDK HTTP', null, 'payload section not run');
  const idle = results.systems?.broker?.idle?.gatewayRssBytes ?? S.coldstart?.idleBrokerRss?.p50;
  if (Number.isFinite(idle)) {
    const cs = S.coldstart?.idleBrokerRss?.p50;
    const fixture = results.systems?.['direct-stdio']?.idle?.serverRssBytes;
    add(
      'idle broker RSS ≤ 60 MB',
      idle <= 60 * 1024 * 1024,
      `${mbStr(idle)}${results.systems?.broker?.idle && Number.isFinite(cs) ? ` (after cold start, 1 idle session: ${mbStr(cs)})` : ''}`,
      [
        Number.isFinite(S.coldstart?.stackFloorIdleRss?.p50)
          ? `the stack floor (bench/fixtures/sdk-gateway.mjs: the SDK's Server with one session and its Client to one stdio upstream, nothing of the broker's own, bundled and launched as the broker is) idles at ${mbStr(S.coldstart.stackFloorIdleRss.p50)}, read as the cold-start figure is`
          : undefined,
        Number.isFinite(fixture)
          ? `for scale: the echo fixture upstream alone (Node ${results.machine?.node ?? ''} + SDK + zod, idle) is ${mbStr(fixture)}`
          : undefined,
      ]
        .filter(Boolean)
        .join('; ') || undefined,
    );
  } else add('idle broker RSS ≤ 60 MB', null, 'no section measured it');
  const rl = S.reload;
  if (rl?.add?.listed?.n) {
    add(
      'hot reload ≤ spawn floor + 25 ms p50 (YAML written → new tool listed)',
      rl.add.listed.p50 <= rl.floorSpawnHandshake.p50 + 25,
      `${msStr(rl.add.listed.p50, 0)} p50 over ${rl.add.listed.n} reloads (list_changed at ${msStr(rl.add.notified.p50, 0)})`,
      `floor: spawning the Node upstream + handshake + tools/list directly takes ${msStr(rl.floorSpawnHandshake.p50, 0)} p50${rl.floorSpawnHandshakeNetns ? `, ${msStr(rl.floorSpawnHandshakeNetns.p50, 0)} under \`unshare --net\` as the broker runs it` : ''}${rl.add.spawned?.n ? `; the broker has spawned the upstream ${msStr(rl.add.spawned.p50, 0)} after the write (p50; a rename into place is read without the registry watcher's ${WATCHER_QUIET_MS} ms quiet time on Linux)` : ''}${rl.add.overFloorPaired?.n ? `; listed − floor paired per reload ${msStr(rl.add.overFloorPaired.p50, 0)} p50` : ''}`,
    );
    add(
      'a deleted server gone ≤ 50 ms p50 (YAML deleted → tool gone)',
      rl.remove.listed.p50 <= 50,
      `${msStr(rl.remove.listed.p50, 0)} p50 over ${rl.remove.listed.n} removals`,
    );
  } else add('hot reload ≤ spawn floor + 25 ms; a deleted server gone ≤ 50 ms', null, 'reload section not run');
  out.push(...searchVerdicts(S));
  out.push(...scaleVerdicts(S));
  return out;
}

// ---- SVG charts ------------------------------------------------------------------------------
function latencyChart(lat) {
  const keys = present(lat);
  const W = 760,
    left = 210,
    right = 150,
    top = 46,
    row = 34,
    H = top + keys.length * row + 44;
  const scaleMax = niceCeil(Math.max(...keys.map((k) => lat[k].p90Us)) * 1.05);
  const x = (v) => left + (Math.min(v, scaleMax) / scaleMax) * (W - left - right);
  const parts = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
  );
  parts.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">tools/call echo, sequential, one session — p50 (bar) to p90 (whisker)</text>`,
  );
  parts.push(
    `<text x="${W / 2}" y="36" text-anchor="middle" fill="#555">µs per call, lower is better; labels p50 / p90 / p99; same SDK client and fixture upstream, interleaved runs</text>`,
  );
  for (const t of ticks(scaleMax)) {
    parts.push(`<line x1="${x(t)}" y1="${top - 4}" x2="${x(t)}" y2="${top + keys.length * row}" stroke="#e5e5e5"/>`);
    parts.push(
      `<text x="${x(t)}" y="${top + keys.length * row + 16}" text-anchor="middle" fill="#555">${n0(t)}</text>`,
    );
  }
  parts.push(`<text x="${left + (W - left - right) / 2}" y="${H - 8}" text-anchor="middle" fill="#555">µs</text>`);
  keys.forEach((k, i) => {
    const y = top + i * row;
    const v = lat[k];
    parts.push(`<text x="${left - 8}" y="${y + row / 2 + 4}" text-anchor="end">${esc(NAMES[k])}</text>`);
    parts.push(
      `<rect x="${left}" y="${y + 7}" width="${Math.max(1, x(v.p50Us) - left)}" height="${row - 14}" fill="${COLORS[k]}"><title>${esc(SHORT[k])}: p50 ${n0(v.p50Us)} µs, p90 ${n0(v.p90Us)} µs, p99 ${n0(v.p99Us)} µs</title></rect>`,
    );
    parts.push(
      `<line x1="${x(v.p50Us)}" y1="${y + row / 2}" x2="${x(v.p90Us)}" y2="${y + row / 2}" stroke="#333" stroke-width="1.5"/>`,
    );
    parts.push(
      `<line x1="${x(v.p90Us)}" y1="${y + 10}" x2="${x(v.p90Us)}" y2="${y + row - 10}" stroke="#333" stroke-width="1.5"/>`,
    );
    parts.push(
      `<text x="${x(v.p90Us) + 6}" y="${y + row / 2 + 4}" fill="#222">${n0(v.p50Us)} / ${n0(v.p90Us)} / ${n0(v.p99Us)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function throughputChart(tp) {
  const keys = present(tp);
  const conc = [...new Set(keys.flatMap((k) => Object.keys(tp[k].byConcurrency).map(Number)))].sort((a, b) => a - b);
  const W = 760,
    left = 60,
    right = 20,
    top = 50,
    plotH = 240,
    H = top + plotH + 80;
  const maxV = niceCeil(Math.max(...keys.flatMap((k) => conc.map((c) => tp[k].byConcurrency[c]?.callsPerSec ?? 0))));
  const groupW = (W - left - right) / conc.length;
  const barW = Math.min(26, (groupW - 30) / keys.length);
  const y = (v) => top + plotH - (v / maxV) * plotH;
  const parts = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
  );
  parts.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">Throughput: tools/call echo with 1, 8 and 32 concurrent sessions</text>`,
  );
  parts.push(
    `<text x="${W / 2}" y="36" text-anchor="middle" fill="#555">calls/s, higher is better; one call in flight per session</text>`,
  );
  for (const t of ticks(maxV)) {
    parts.push(`<line x1="${left}" y1="${y(t)}" x2="${W - right}" y2="${y(t)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${left - 6}" y="${y(t) + 4}" text-anchor="end" fill="#555">${n0(t)}</text>`);
  }
  conc.forEach((c, gi) => {
    const gx = left + gi * groupW + (groupW - barW * keys.length) / 2;
    keys.forEach((k, i) => {
      const v = tp[k].byConcurrency[c]?.callsPerSec ?? 0;
      parts.push(
        `<rect x="${gx + i * barW}" y="${y(v)}" width="${barW - 3}" height="${top + plotH - y(v)}" fill="${COLORS[k]}"><title>${esc(SHORT[k])}, ${c} sessions: ${n0(v)} calls/s</title></rect>`,
      );
      parts.push(
        `<text x="${gx + i * barW + (barW - 3) / 2}" y="${y(v) - 4}" text-anchor="middle" font-size="10" fill="#333">${n0(v)}</text>`,
      );
    });
    parts.push(
      `<text x="${left + gi * groupW + groupW / 2}" y="${top + plotH + 18}" text-anchor="middle">${c} session${c > 1 ? 's' : ''}</text>`,
    );
  });
  // legend
  let lx = left;
  const ly = H - 28;
  for (const k of keys) {
    parts.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${COLORS[k]}"/>`);
    parts.push(`<text x="${lx + 16}" y="${ly}">${esc(SHORT[k])}</text>`);
    lx += 30 + SHORT[k].length * 6.6;
  }
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function fanoutChart(fo) {
  const rows = fo.rows;
  const series = [
    ['direct', 'direct-stdio', 'no broker (N×M upstreams)'],
    ['broker', 'broker', 'Switchboard (1 + M)'],
    ['mcp-hub', 'mcp-hub', 'mcp-hub (1 + M)'],
  ].filter(([k]) => rows.some((r) => r[k]));
  const W = 760,
    left = 70,
    right = 20,
    top = 50,
    plotH = 220,
    H = top + plotH + 80;
  const maxV = niceCeil(Math.max(...rows.flatMap((r) => series.map(([k]) => (r[k]?.rssBytes ?? 0) / 1048576))));
  const groupW = (W - left - right) / rows.length;
  const barW = Math.min(46, (groupW - 40) / series.length);
  const y = (v) => top + plotH - (v / maxV) * plotH;
  const parts = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
  );
  parts.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">Fan-out: N clients × ${fo.m} stdio servers — server-side RSS and process count</text>`,
  );
  parts.push(
    `<text x="${W / 2}" y="36" text-anchor="middle" fill="#555">MB of RSS summed over the server-side processes (bar label: processes), lower is better</text>`,
  );
  for (const t of ticks(maxV)) {
    parts.push(`<line x1="${left}" y1="${y(t)}" x2="${W - right}" y2="${y(t)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${left - 6}" y="${y(t) + 4}" text-anchor="end" fill="#555">${n0(t)}</text>`);
  }
  rows.forEach((r, gi) => {
    const gx = left + gi * groupW + (groupW - barW * series.length) / 2;
    series.forEach(([k, color], i) => {
      const v = (r[k]?.rssBytes ?? 0) / 1048576;
      parts.push(
        `<rect x="${gx + i * barW}" y="${y(v)}" width="${barW - 4}" height="${top + plotH - y(v)}" fill="${COLORS[color]}"><title>N=${r.n}: ${n0(v)} MB, ${r[k]?.processes} processes</title></rect>`,
      );
      parts.push(
        `<text x="${gx + i * barW + (barW - 4) / 2}" y="${y(v) - 4}" text-anchor="middle" font-size="10" fill="#333">${r[k]?.processes ?? ''} proc</text>`,
      );
    });
    parts.push(
      `<text x="${left + gi * groupW + groupW / 2}" y="${top + plotH + 18}" text-anchor="middle">N = ${r.n}</text>`,
    );
  });
  let lx = left;
  const ly = H - 28;
  for (const [, color, label] of series) {
    parts.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${COLORS[color]}"/>`);
    parts.push(`<text x="${lx + 16}" y="${ly}">${esc(label)}</text>`);
    lx += 40 + label.length * 6.6;
  }
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function niceCeil(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
function ticks(max) {
  const raw = max / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
  const out = [];
  for (let t = 0; t <= max + 1e-9; t += step) out.push(t);
  return out;
}

export function renderCharts(results) {
  const charts = {};
  if (results.sections?.latency?.systems) charts['bench-latency.svg'] = latencyChart(results.sections.latency.systems);
  if (results.sections?.throughput?.systems)
    charts['bench-throughput.svg'] = throughputChart(results.sections.throughput.systems);
  if (results.sections?.fanout?.rows?.length) charts['bench-fanout.svg'] = fanoutChart(results.sections.fanout);
  if (results.sections?.profile?.flameSvg) charts['bench-flame-echo.svg'] = results.sections.profile.flameSvg;
  return charts;
}

// ---- markdown --------------------------------------------------------------------------------
/** The profile section: where the broker's CPU went under echo calls, as a flame graph and tables. */
function renderProfile(p, chartFiles) {
  if (!p?.functions) return [];
  const L = ["## 8. Where the broker's CPU goes (profile)", ''];
  L.push(
    `A broker of its own under \`node --cpu-prof\` (the profiler adds its own cost): ${p.load}; the samples of those calls only (${p.windowed ? 'start-up and warm-up left out' : 'the whole process life: the window was not found'}), ${msStr(p.busyMs, 0)} busy. Broker CPU per call while profiled: ${usStr(p.rawCpuPerCallUs)} (raw client), ${usStr(p.sdkCpuPerCallUs)} (SDK client). "(vm/native)" holds the system calls (\`writev\` is the socket write of the answer, \`writeUtf8String\` the write to the upstream's stdin pipe) and the garbage collector.`,
  );
  L.push('');
  if (chartFiles.includes('bench-flame-echo.svg')) {
    L.push(
      "[![flame graph of the broker under echo calls](bench-flame-echo.svg)](bench-flame-echo.svg) (callers on top, width = CPU time; open the SVG for each frame's name and time)",
    );
    L.push('');
  }
  L.push(
    table(
      ['function', 'source', 'self', '% of busy'],
      p.functions.map((f) => [esc(f.name), esc(f.where || 'native'), msStr(f.selfMs, 0), `${f.pctOfBusy.toFixed(1)}%`]),
      [':--', ':--', '--:', '--:'],
    ),
  );
  L.push('');
  L.push(
    table(
      ['area', 'self', '% of busy'],
      p.areas.map((a) => [esc(a.name), msStr(a.selfMs, 0), `${a.pctOfBusy.toFixed(1)}%`]),
      [':--', '--:', '--:'],
    ),
  );
  L.push('');
  return L;
}

export function renderMarkdown(results, chartFiles = []) {
  const S = results.sections ?? {};
  const m = results.machine;
  const L = [];
  const date = results.startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  L.push('# Benchmarks');
  L.push('');
  L.push(
    `Generated by \`npm run bench\` (\`bench/run.mjs\`) on ${date}${results.quick ? ' — **quick smoke run, not the reference figures**' : ''}${results.only?.length ? ` — only: ${results.only.join(', ')}` : ''}. The whole run took ${n0(results.totalSeconds)} s.`,
  );
  L.push(
    'All figures come from that one run on one machine; every comparison is a ratio of figures measured in the same run, with the same SDK client and the same fixture upstream, the systems interleaved block by block. These are benchmarks, not tests: nothing fails on a number.',
  );
  L.push('');
  L.push('## Machine');
  L.push('');
  L.push(
    table(
      ['', ''],
      [
        ['CPU', `${esc(m.cpuModel)}, ${m.cores} cores`],
        ['RAM', `${(m.ramBytes / 1024 ** 3).toFixed(1)} GiB`],
        ['OS', esc(m.os)],
        ['Node', m.node],
        ['MCP SDK (client everywhere, server in the fixtures)', m.sdk],
        [
          'Peers (devDependencies, from npm)',
          Object.entries(m.peers)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ],
        [
          'Load average at start / end (1 min)',
          `${n2(m.loadavgStart?.[0])} / ${n2(m.loadavgEnd?.[0])} — a shared machine; other work ran alongside`,
        ],
        ...(m.backgroundBusyCores !== undefined
          ? [['Other work, sampled for 2 s before the run', `${n2(m.backgroundBusyCores)} of ${m.cores} cores busy`]]
          : []),
      ],
      [':--', ':--'],
    ),
  );
  L.push('');

  // targets
  if (results.verdicts?.length) {
    L.push('## Targets (from the issue), this run');
    L.push('');
    L.push(
      table(
        ['target', 'this run', 'met?', 'context'],
        results.verdicts.map((v) => [
          esc(v.target),
          esc(v.measured),
          v.met === null ? 'not measured' : v.met ? '**yes**' : '**no**',
          esc(v.context ?? ''),
        ]),
        [':--', ':--', ':-:', ':--'],
      ),
    );
    L.push('');
  }

  // 1. latency
  const lat = S.latency?.systems;
  if (lat) {
    L.push('## 1. Per-call latency, `tools/call` echo');
    L.push('');
    L.push(
      `Each system first answers ${n0(results.config?.warmup ?? 0)} calls that are not measured (JIT warm-up: a gateway is a long-lived process). Then ${n0(S.latency.callsPerSystem)} sequential calls per system on one session, in blocks of ${S.latency.block} interleaved round-robin (rotating the order each round)${S.latency.truncated ? ' — **stopped early at the section time budget**' : ''}. Server CPU is utime+stime from \`/proc/<pid>/stat\` of every server-side process (gateway + upstream children; for the direct rows the upstream itself) read before and after each block, divided by the calls; "gateway CPU" counts the broker or peer process alone. Client CPU is the bench process (the SDK client).`,
    );
    L.push('');
    if (chartFiles.includes('bench-latency.svg')) {
      L.push('![latency chart](bench-latency.svg)');
      L.push('');
    }
    L.push(
      table(
        [
          'system',
          'p50',
          'p90',
          'p99',
          'server CPU / call',
          'gateway CPU / call',
          'client CPU / call',
          'idle RSS gateway / all server-side',
        ],
        present(lat)
          .map((k) => {
            const v = lat[k];
            const idle = results.systems?.[k]?.idle ?? v.idle;
            return [
              NAMES[k],
              usStr(v.p50Us),
              usStr(v.p90Us),
              usStr(v.p99Us),
              usStr(v.serverCpuPerCallUs),
              usStr(v.gatewayCpuPerCallUs),
              usStr(v.clientCpuPerCallUs),
              idle ? `${mbStr(idle.gatewayRssBytes)} / ${mbStr(idle.serverRssBytes)} (${idle.processes} proc)` : '—',
            ];
          })
          .concat(
            [
              [S.latency.brokerRaw, 'c. Switchboard → stdio, raw client (node:http, no SDK)', '(the same broker)'],
              [S.latency.floor, 'floor: bare node:http JSON echo (no MCP)', '—'],
              [S.latency.relayFloor, 'relay floor: bare node:http → the echo upstream over stdio', '—'],
            ]
              .filter(([row]) => row)
              .map(([row, label, idle]) => [
                label,
                usStr(row.p50Us),
                usStr(row.p90Us),
                usStr(row.p99Us),
                usStr(row.serverCpuPerCallUs),
                row.gatewayCpuPerCallUs == null ? '—' : usStr(row.gatewayCpuPerCallUs),
                usStr(row.clientCpuPerCallUs),
                idle,
              ]),
          ),
      ),
    );
    L.push('');
    const a = lat['direct-stdio'],
      b = lat['direct-http'],
      c = lat.broker;
    if (a && b && c) {
      L.push('Ratios (p50):');
      L.push('');
      const rows = [
        ['overhead c − a (Switchboard − direct stdio)', usStr(c.p50Us - a.p50Us)],
        ['c / a (Switchboard / direct stdio)', xStr(ratio(c.p50Us, a.p50Us))],
        ['c / b (Switchboard / direct SDK Streamable HTTP)', xStr(ratio(c.p50Us, b.p50Us))],
      ];
      for (const p of PEERS) if (lat[p]) rows.push([`d / c (${p} / Switchboard)`, xStr(ratio(lat[p].p50Us, c.p50Us))]);
      rows.push(['server CPU per call, c / b', xStr(ratio(c.serverCpuPerCallUs, b.serverCpuPerCallUs))]);
      L.push(table(['ratio', 'value'], rows, [':--', '--:']));
      L.push('');
    }
    L.push(
      'Idle RSS is read after start-up, one connected session and the warm-up calls; "gateway" is the broker or peer process alone, "all server-side" adds its upstream children.',
    );
    if (S.latency.floor)
      L.push(
        '',
        'The floor row is `bench/fixtures/http-echo.mjs`: a bare `node:http` server that parses the JSON-RPC body and answers its arguments back in one write, posted to by the bench with `node:http` over one keep-alive connection, in the same interleaved blocks. It is what any Node HTTP JSON server pays per request; the broker also forwards each call to its stdio upstream and reads the answer back (a write to a pipe and a read from it, two more system calls and a wake-up of another process per call), so its CPU per call cannot reach this floor.' +
          (S.latency.brokerRaw
            ? ' The raw-client row is the same broker (row c) called the way the floor is called: `bench/lib/rawClient.mjs` opens a session by hand and posts bare `tools/call` requests with `node:http` on one keep-alive connection, so neither the SDK client nor its extra headers are in the figure.'
            : '') +
          (S.latency.relayFloor
            ? ' The relay floor row is `bench/fixtures/http-relay.mjs`: the same bare server, but each request goes to the same echo upstream the broker runs, over its stdin, and the upstream\'s answer comes back (no sessions, tokens, scopes, pins, audit or timeouts). It is the least any Node process pays to forward a call to a stdio server; its "gateway" column is the relay process alone.'
            : ''),
      );
    L.push('');
  }

  // 2. throughput
  const tp = S.throughput?.systems;
  if (tp) {
    const conc = S.throughput.concurrency;
    L.push('## 2. Throughput');
    L.push('');
    L.push(
      `Closed loop: each of N sessions keeps one \`tools/call\` echo in flight; ${S.throughput.rounds} interleaved rounds of ${(S.throughput.durationMs / 1000).toFixed(1)} s per cell${S.throughput.truncated ? ' (**some cells cut by the time budget**)' : ''}. Direct stdio runs one upstream process per session; direct HTTP one upstream process serving all sessions; the last column shows how many server-side processes each gateway needed for ${Math.max(...conc)} sessions. ${S.throughput.clientProcs ? `The N sessions are spread over min(N, ${S.throughput.clientProcs}) client processes (\`bench/lib/loadClient.mjs\`, the same SDK client; they start each cell together), so that no single client process at a full core sets the ceiling; they still share the machine's cores with the server side` : 'All N sessions live in one client process (the bench) on the same 2 cores, so the client competes with the server side'}: "cores busy" = (client + server CPU per call) × calls/s is the CPU a cell used of the machine's ${results.machine?.cores ?? 2} cores (which other jobs shared): where it is near the cores available, the machine and the client, not the server, set the ceiling.`,
    );
    L.push('');
    if (chartFiles.includes('bench-throughput.svg')) {
      L.push('![throughput chart](bench-throughput.svg)');
      L.push('');
    }
    const busy = (v) => (v ? n2(((v.clientCpuPerCallUs + v.serverCpuPerCallUs) * v.callsPerSec) / 1e6) : '—');
    L.push(
      table(
        [
          'system',
          ...conc.map((c) => `${c} session${c > 1 ? 's' : ''}`),
          ...conc.map((c) => `server CPU / call @${c}`),
          ...conc.map((c) => `cores busy @${c}`),
          `server processes @${Math.max(...conc)}`,
        ],
        present(tp).map((k) => [
          NAMES[k],
          ...conc.map((c) => {
            const v = tp[k].byConcurrency[c];
            return v ? `${n0(v.callsPerSec)}/s${v.errors ? ` (${v.errors} err)` : ''}` : '—';
          }),
          ...conc.map((c) => usStr(tp[k].byConcurrency[c]?.serverCpuPerCallUs)),
          ...conc.map((c) => busy(tp[k].byConcurrency[c])),
          String(tp[k].processesAtMax),
        ]),
      ),
    );
    L.push('');
    if (tp.broker) {
      const rows = [];
      for (const base of ['direct-stdio', 'direct-http', 'relay-floor', ...PEERS]) {
        if (!tp[base]) continue;
        rows.push([
          `Switchboard / ${SHORT[base]}`,
          ...conc.map((c) =>
            xStr(ratio(tp.broker.byConcurrency[c]?.callsPerSec, tp[base].byConcurrency[c]?.callsPerSec)),
          ),
        ]);
      }
      L.push(table(['calls/s ratio', ...conc.map((c) => `${c}`)], rows));
      L.push('');
      L.push(
        table(
          ['p50 under load', ...conc.map((c) => `${c}`)],
          present(tp).map((k) => [NAMES[k], ...conc.map((c) => usStr(tp[k].byConcurrency[c]?.p50Us))]),
        ),
      );
      L.push('');
    }
    const rawTp = S.throughput.rawClient;
    if (rawTp?.broker && rawTp['direct-http']) {
      L.push(
        "**With the raw client.** The same cells, interleaved with the ones above, with a client that opens its session by hand and sends each `tools/call` as a bare POST on a keep-alive socket (`RawSession` in `bench/lib/loadClient.mjs`; it reads the JSON or one-event SSE answer whole). The SDK client spends ~1 ms of CPU per call, most of a cell's CPU, and caps every server alike; without it the cells measure the servers (up to 8 sessions: the SDK cells already hold 32 of the bench client's sessions, and the broker caps one client at 64).",
      );
      L.push('');
      const raw = ['broker', 'direct-http'];
      const conc = S.throughput.concurrency.filter((c) => rawTp.broker.byConcurrency[c]);
      L.push(
        table(
          [
            'system (raw client)',
            ...conc.map((c) => `${c} session${c > 1 ? 's' : ''}`),
            ...conc.map((c) => `server CPU / call @${c}`),
            ...conc.map((c) => `client CPU / call @${c}`),
            ...conc.map((c) => `cores busy @${c}`),
          ],
          [
            ...raw.map((k) => [
              NAMES[k],
              ...conc.map((c) => {
                const v = rawTp[k].byConcurrency[c];
                return v ? `${n0(v.callsPerSec)}/s${v.errors ? ` (${v.errors} err)` : ''}` : '—';
              }),
              ...conc.map((c) => usStr(rawTp[k].byConcurrency[c]?.serverCpuPerCallUs)),
              ...conc.map((c) => usStr(rawTp[k].byConcurrency[c]?.clientCpuPerCallUs)),
              ...conc.map((c) => busy(rawTp[k].byConcurrency[c])),
            ]),
            [
              'Switchboard / direct HTTP calls/s',
              ...conc.map((c) =>
                xStr(
                  ratio(rawTp.broker.byConcurrency[c]?.callsPerSec, rawTp['direct-http'].byConcurrency[c]?.callsPerSec),
                ),
              ),
              ...conc.flatMap(() => ['', '']),
              ...conc.map(() => ''),
            ],
          ],
        ),
      );
      L.push('');
    }
  }

  // 3. payload
  const pay = S.payload?.systems;
  if (pay) {
    const sizes = S.payload.sizes;
    L.push('## 3. Payload size');
    L.push('');
    L.push(
      `\`tools/call payload {bytes}\` returning a text of that many characters; calls per system: ${S.payload.sizes.map((b, i) => `${results.config?.payload?.calls?.[i] ?? '?'} × ${sizeLabel(b)}`).join(', ')}, interleaved${S.payload.truncated ? ' (**cut by the time budget**)' : ''}.`,
    );
    L.push('');
    L.push(
      table(
        [
          'system',
          ...sizes.map((b) => `${sizeLabel(b)} p50`),
          ...sizes.map((b) => `${sizeLabel(b)} p99`),
          `server CPU / call @${sizeLabel(sizes.at(-1))}`,
        ],
        present(pay).map((k) => [
          NAMES[k],
          ...sizes.map((b) => msStr(pay[k].bySize[b]?.p50Us / 1000, 2)),
          ...sizes.map((b) => msStr(pay[k].bySize[b]?.p99Us / 1000, 2)),
          msStr(pay[k].bySize[sizes.at(-1)]?.serverCpuPerCallUs / 1000, 2),
        ]),
      ),
    );
    L.push('');
    if (pay.broker && pay['direct-http']) {
      L.push(
        table(
          ['p50 ratio', ...sizes.map(sizeLabel)],
          ['direct-stdio', 'direct-http', ...PEERS]
            .filter((k) => pay[k])
            .map((k) => [
              `Switchboard / ${SHORT[k]}`,
              ...sizes.map((b) => xStr(ratio(pay.broker.bySize[b]?.p50Us, pay[k].bySize[b]?.p50Us))),
            ]),
        ),
      );
      L.push('');
    }
  }

  // 4. fan-out
  const fo = S.fanout;
  if (fo?.rows) {
    L.push(`## 4. Fan-out: N clients × M = ${fo.m} stdio servers`);
    L.push('');
    if (fo.truncated) L.push('**Cut short by the time budget.**');
    L.push(
      'Without a broker every client spawns its own M upstreams (N×M processes). Through Switchboard (or mcp-hub) the N clients share one process in front of M upstreams. Counted: every live process below the bench process (the server side only; the clients are sessions inside the bench process), after each client called every server once. RSS double-counts shared pages; PSS splits them.',
    );
    L.push('');
    L.push(
      table(
        [
          'N',
          'direct: processes',
          'direct: RSS',
          'direct: PSS',
          'Switchboard: processes',
          'Switchboard: RSS (broker alone)',
          'Switchboard: PSS',
          'mcp-hub: processes',
          'mcp-hub: RSS (hub alone)',
          'setup direct / Switchboard / mcp-hub',
        ],
        fo.rows.map((r) => [
          String(r.n),
          String(r.direct.processes),
          mbStr(r.direct.rssBytes),
          mbStr(r.direct.pssBytes),
          String(r.broker.processes),
          `${mbStr(r.broker.rssBytes)} (${mbStr(r.broker.brokerRssBytes)})`,
          mbStr(r.broker.pssBytes),
          String(r['mcp-hub']?.processes ?? '—'),
          r['mcp-hub'] ? `${mbStr(r['mcp-hub'].rssBytes)} (${mbStr(r['mcp-hub'].hubRssBytes)})` : '—',
          `${msStr(r.direct.setupMs, 0)} / ${msStr(r.broker.setupMs, 0)} / ${msStr(r['mcp-hub']?.setupMs, 0)}`,
        ]),
      ),
    );
    L.push('');
    if (chartFiles.includes('bench-fanout.svg')) {
      L.push('![fan-out chart](bench-fanout.svg)');
      L.push('');
    }
    const last = fo.rows.at(-1);
    if (last)
      L.push(
        `At N = ${last.n}: ${last.direct.processes} processes become ${last.broker.processes} (${xStr(ratio(last.direct.rssBytes, last.broker.rssBytes))} less RSS).`,
      );
    L.push('');
  }

  // 5. catalog
  const cat = S.catalog;
  if (cat?.matrix) {
    L.push('## 5. Catalog scale');
    L.push('');
    L.push(
      `${cat.truncated ? '**Cut short by the time budget.** ' : ''}Upstreams are \`bench/fixtures/tools.mjs\` (exactly T/S tools each, paginated by ${cat.pageSize} like the repo's many-tools fixture). The broker lists its whole catalog in one page from memory; its list also holds its own \`switchboard__*\` facade tools. "ready" is from spawning the broker to the last upstream tool being listed.`,
    );
    L.push('');
    L.push(
      table(
        [
          'upstream tools',
          'servers',
          'tools/list p50',
          'p99',
          'broker CPU / list',
          'broker RSS',
          'all RSS (processes)',
          'catalog ready',
        ],
        cat.matrix.map((r) => [
          n0(r.tools),
          String(r.servers),
          msStr(r.listP50Us / 1000, 2),
          msStr(r.listP99Us / 1000, 2),
          usStr(r.brokerCpuPerListUs),
          mbStr(r.brokerRssBytes),
          `${mbStr(r.totalRssBytes)} (${r.processes})`,
          msStr(r.catalogReadyMs, 0),
        ]),
      ),
    );
    L.push('');
    if (cat.compare && Object.keys(cat.compare).length) {
      L.push('1,000 tools on one upstream, every system, interleaved (the client follows `nextCursor` until done):');
      L.push('');
      L.push(
        table(
          ['system', 'tools listed', 'tools/list p50', 'p99', 'server CPU / list'],
          present(cat.compare).map((k) => [
            NAMES[k],
            n0(cat.compare[k].toolsListed),
            msStr(cat.compare[k].p50Us / 1000, 2),
            msStr(cat.compare[k].p99Us / 1000, 2),
            usStr(cat.compare[k].serverCpuPerCallUs),
          ]),
        ),
      );
      L.push('');
      const partial = present(cat.compare).filter((k) => k !== 'broker' && cat.compare[k].toolsListed < 1000);
      for (const k of partial)
        L.push(
          `- **${SHORT[k]} lists only ${n0(cat.compare[k].toolsListed)} of the 1,000 upstream tools**: it takes the upstream's first page and does not follow \`nextCursor\`, so its time is for a smaller list and not comparable.`,
        );
      if (cat.compare.broker)
        L.push(
          `- Switchboard's list holds ${n0(cat.compare.broker.toolsListed)} tools: the 1,000 upstream tools plus its own \`switchboard__*\` facade tools.`,
        );
      L.push('');
    }
  }

  // 6. reload
  const rl = S.reload;
  if (rl?.add) {
    L.push('## 6. Hot reload');
    L.push('');
    L.push(
      `A connected session (with its GET stream open) waits for \`notifications/tools/list_changed\` and then lists; ${rl.reloads} reloads${rl.failures ? `, **${rl.failures} timed out**` : ''}${rl.truncated ? ' (**cut short by the time budget**)' : ''}. Each YAML file is staged next to the registry and renamed into \`mcp-servers.d/\` (atomic, as editors save). The floor is what the broker cannot avoid: spawning the same upstream and doing the MCP handshake + \`tools/list\` directly over stdio.`,
    );
    L.push('');
    L.push(
      table(
        ['event', 'p50', 'p90', 'max'],
        [
          ...(rl.add.spawned?.n
            ? [
                [
                  'YAML written → broker has spawned the upstream (its children in /proc)',
                  msStr(rl.add.spawned.p50, 0),
                  msStr(rl.add.spawned.p90, 0),
                  msStr(rl.add.spawned.max, 0),
                ],
              ]
            : []),
          [
            'YAML written → list_changed received',
            msStr(rl.add.notified.p50, 0),
            msStr(rl.add.notified.p90, 0),
            msStr(rl.add.notified.max, 0),
          ],
          [
            'YAML written → new tool listed',
            msStr(rl.add.listed.p50, 0),
            msStr(rl.add.listed.p90, 0),
            msStr(rl.add.listed.max, 0),
          ],
          [
            'YAML deleted → list_changed received',
            msStr(rl.remove.notified.p50, 0),
            msStr(rl.remove.notified.p90, 0),
            msStr(rl.remove.notified.max, 0),
          ],
          [
            'YAML deleted → tool gone from the list',
            msStr(rl.remove.listed.p50, 0),
            msStr(rl.remove.listed.p90, 0),
            msStr(rl.remove.listed.max, 0),
          ],
          [
            'floor: spawn upstream + handshake + tools/list, direct',
            msStr(rl.floorSpawnHandshake.p50, 0),
            msStr(rl.floorSpawnHandshake.p90, 0),
            msStr(rl.floorSpawnHandshake.max, 0),
          ],
          ...(rl.floorSpawnHandshakeNetns
            ? [
                [
                  'floor, same but under `unshare --net` (as the broker starts it)',
                  msStr(rl.floorSpawnHandshakeNetns.p50, 0),
                  msStr(rl.floorSpawnHandshakeNetns.p90, 0),
                  msStr(rl.floorSpawnHandshakeNetns.max, 0),
                ],
              ]
            : []),
        ],
      ),
    );
    if (rl.upstreamInOwnNetns) {
      L.push('');
      L.push(
        'The broker starts this upstream (no `network` grant) in its own network namespace (`unshare --net`), seen from `/proc/<pid>/ns/net`; the last row is the floor with that wrapper.',
      );
    }
    L.push('');
    if (Number.isFinite(rl.add.notificationsPerReload)) {
      L.push(`list_changed notifications per added server (p50): ${rl.add.notificationsPerReload}.`);
      L.push('');
    }
  }

  // 7. cold start
  const cs = S.coldstart;
  if (cs?.ready) {
    L.push('## 7. Cold start');
    L.push('');
    L.push(
      `\`${BROKER_ENV_TEXT} node ${BROKER_NODE_FLAGS.join(' ')} dist/broker.js serve --root <registry with one echo server> --port 0 --json\`, fresh \`SWITCHBOARD_HOME\` each time, ${cs.runs.length} runs; the client connects as soon as the ready line is printed and lists until the upstream's tool is there.`,
    );
    L.push('');
    L.push(
      table(
        ['milestone', 'p50', 'max'],
        [
          ['spawn → ready line on stdout', msStr(cs.ready.p50, 0), msStr(cs.ready.max, 0)],
          ['spawn → first successful tools/list', msStr(cs.firstList.p50, 0), msStr(cs.firstList.max, 0)],
          ['spawn → tools/list includes echo__echo', msStr(cs.echoListed.p50, 0), msStr(cs.echoListed.max, 0)],
          ['idle broker RSS 1 s later (one session)', mbStr(cs.idleBrokerRss.p50), mbStr(cs.idleBrokerRss.max)],
          ...(cs.stackFloorIdleRss?.n
            ? [
                [
                  'the stack floor, idle RSS the same way (bench/fixtures/sdk-gateway.mjs)',
                  mbStr(cs.stackFloorIdleRss.p50),
                  mbStr(cs.stackFloorIdleRss.max),
                ],
              ]
            : []),
        ],
      ),
    );
    L.push('');
  }

  L.push(...renderProfile(S.profile, chartFiles));
  L.push(...renderSearch(S));
  L.push(...renderScale(S));
  L.push(...renderScanner(S));
  L.push(...renderTelemetry(S));
  L.push(...renderGuardrails(S));

  const failed = Object.entries(S).filter(([, v]) => v?.error);
  if (failed.length) {
    L.push('## Sections that failed in this run');
    L.push('');
    for (const [k, v] of failed) L.push(`- ${k}: ${esc(v.error)}`);
    L.push('');
  }

  L.push('## How it was measured');
  L.push('');
  const listening = Object.entries(results.systems ?? {})
    .filter(([, s]) => s.idle?.listening)
    .map(([k, s]) => `${SHORT[k]} ${s.idle.listening.join(', ')}`);
  L.push(
    [
      '- **Client**: `@modelcontextprotocol/sdk` `Client` for every system — `StdioClientTransport` (a), `StreamableHTTPClientTransport` (b, c, supergateway, mcp-proxy), `SSEClientTransport` (mcp-hub, whose `/mcp` endpoint is HTTP+SSE only). Calls go through `client.callTool()` after one `tools/list`, so the client validates `structuredContent` the same way everywhere. Latency is wall time around each call (`performance.now()`).',
      '- **Upstream**: `test/fixtures/echo.mjs` (SDK `McpServer`) for sections 1–4, 6, 7; `bench/fixtures/tools.mjs` for 5.',
      `- **Switchboard**: \`${BROKER_ENV_TEXT} node ${BROKER_NODE_FLAGS.join(' ')} dist/broker.js serve --root <tmp registry> --port 0 --json\` (the Node flags and environment every launch of the broker uses) with \`SWITCHBOARD_HOME\` in a temp dir, bearer token from the token file.`,
      `- **mcp-hub**: \`mcp-hub --port <p> --config <tmp>/mcp-servers.json\`, with \`HOME\`/\`XDG_*\` in a temp dir and a pre-seeded, fresh marketplace cache so it does not fetch its registry at start. mcp-hub is reported to loop on client disconnect (its issue #144); on this machine a closed or SIGKILLed SSE client only made it log the disconnect several times and then idle at 0 CPU, but the bench still keeps its sessions open until it kills mcp-hub with SIGKILL.`,
      '- **supergateway**: `supergateway --stdio "<node> echo.mjs" --outputTransport streamableHttp --stateful --port <p> --logLevel none`, stdin kept open (it exits when stdin closes). Stateful mode starts one upstream per session.',
      '- **mcp-proxy**: `mcp-proxy --host 127.0.0.1 --port <p> --server stream -- <node> echo.mjs`.',
      `- **Loopback only**: the peers run with \`--require bench/loopback-preload.cjs\`, which pins every \`listen()\` to 127.0.0.1 (without it mcp-hub and supergateway listen on \`*\`, as does mcp-proxy without \`--host\`; checked with \`ss -ltn\`) and refuses non-loopback connections and \`curl\`. After start, each server's listening sockets are read from \`/proc/net/tcp{,6}\` and its fds, and the run aborts if any is not loopback.${listening.length ? ` Seen in this run: ${listening.join('; ')}.` : ''}`,
      '- **CPU** comes from `/proc/<pid>/stat` (utime + stime, clock ticks of 10 ms summed over each block), **RSS** from `/proc/<pid>/status` (VmRSS), **PSS** from `/proc/<pid>/smaps_rollup`.',
      '- **Noise**: 2 shared cores; the client, the gateway and the upstream(s) compete for them, and other jobs ran on the machine. Interleaving spreads that noise across the systems instead of onto one of them; p99 stays noisy.',
      ...(results.clientWarnings?.MaxListenersExceededWarning
        ? [
            `- **Client-side note**: the SDK's \`StreamableHTTPClientTransport\` hands one session-long \`AbortSignal\` to every \`fetch\`, and undici removes each request's abort listener only when the request is garbage-collected, so long runs on one session pile up listeners (Node warned ${results.clientWarnings.MaxListenersExceededWarning} times in this run; the bench counts the warnings instead of printing them). It is client-side work, the same for every HTTP system.`,
          ]
        : []),
      `- **Cleanup**: every process the bench starts is tracked and killed (process groups, SIGKILL for mcp-hub); ${results.leftoverProcesses?.length ? `${results.leftoverProcesses.length} were still alive at the end and were killed: ${results.leftoverProcesses.join(', ')}` : 'none was left at the end of this run'}.`,
      '- Reproduce: `npm ci && npm run bench` (quick smoke: `node bench/run.mjs --quick`; one section: `--only <name>`; broker CPU profile: `--profile`). Raw figures: `bench/results/*.json` (not committed).',
    ].join('\n'),
  );
  L.push('');
  return L.join('\n');
}
