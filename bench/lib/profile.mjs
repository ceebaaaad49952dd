// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per function, with positions in
// the esbuild bundle mapped back to their source file through its source map (no dependencies).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64V = new Map([...B64].map((c, i) => [c, i]));

/** Decodes a v3 source map's mappings into lines of [genCol, src, srcLine, srcCol] (0-based). */
function decodeMappings(mappings) {
  const lines = [];
  let src = 0,
    srcLine = 0,
    srcCol = 0;
  for (const lineText of mappings.split(';')) {
    const segs = [];
    let genCol = 0;
    if (lineText) {
      for (const seg of lineText.split(',')) {
        const vals = [];
        let value = 0,
          shift = 0;
        for (const ch of seg) {
          const d = B64V.get(ch);
          value += (d & 31) << shift;
          if (d & 32) {
            shift += 5;
            continue;
          }
          vals.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
        genCol += vals[0];
        if (vals.length >= 4) {
          src += vals[1];
          srcLine += vals[2];
          srcCol += vals[3];
          segs.push([genCol, src, srcLine, srcCol]);
        }
      }
    }
    lines.push(segs);
  }
  return lines;
}

const maps = new Map();
function sourceMapFor(file) {
  if (maps.has(file)) return maps.get(file);
  let map = null;
  try {
    const raw = JSON.parse(fs.readFileSync(`${file}.map`, 'utf8'));
    map = {
      sources: raw.sources.map((s) => path.resolve(path.dirname(file), raw.sourceRoot ?? '', s)),
      lines: decodeMappings(raw.mappings),
    };
  } catch {
    /* no map */
  }
  maps.set(file, map);
  return map;
}

export function original(url, line, col, repo) {
  if (!url) return undefined;
  let file = url;
  if (url.startsWith('file://')) {
    try {
      file = fileURLToPath(url);
    } catch {
      return undefined;
    }
  }
  if (!path.isAbsolute(file)) return undefined;
  const map = sourceMapFor(file);
  if (!map) return { file: path.relative(repo, file), line: line + 1 };
  const segs = map.lines[line] ?? [];
  let hit;
  for (const s of segs) {
    if (s[0] <= col) hit = s;
    else break;
  }
  if (!hit) return { file: path.relative(repo, file), line: line + 1 };
  return { file: path.relative(repo, map.sources[hit[1]]), line: hit[2] + 1 };
}

/** Where a source file belongs, for the per-area totals. */
export function area(file, url) {
  if (!file) return url.startsWith('node:') ? 'node internals' : '(vm/native)';
  if (file.includes('node_modules/@modelcontextprotocol/sdk')) return 'MCP SDK';
  if (file.includes('node_modules/zod')) return 'zod';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (m) return m[1];
  // A subsystem of the source (src/broker/http), also for a bundle built in another checkout.
  const at = file.lastIndexOf('src/');
  if (at >= 0) return file.slice(at).split('/').slice(0, 3).join('/');
  return file;
}

/**
 * Self time per function and per area, in ms, from one profile. `window` ({ startUs, endUs } on the
 * monotonic clock, as process.hrtime) keeps only the samples taken under load, not start-up.
 */
export function summarizeProfile(profile, repo, window) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const { samples, timeDeltas } = profile;
  const collect = (win) => {
    const self = new Map();
    let t = profile.startTime;
    for (let i = 0; i < samples.length; i++) {
      t += timeDeltas[i];
      if (win && (t < win.startUs || t > win.endUs)) continue;
      const dt = timeDeltas[i + 1] ?? 0; // the interval after sample i belongs to it
      self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
    }
    return self;
  };
  let self = collect(window);
  let windowed = Boolean(window);
  if (window && self.size === 0) {
    self = collect(undefined);
    windowed = false;
  }
  const fns = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, t] of self) {
    const { callFrame: cf } = byId.get(id);
    total += t;
    if (cf.functionName === '(idle)') {
      idle += t;
      continue;
    }
    const orig = original(cf.url, cf.lineNumber, cf.columnNumber, repo);
    const where = orig
      ? `${orig.file}:${orig.line}`
      : cf.url
        ? `${cf.url.replace(/^node:/, 'node:')}:${cf.lineNumber + 1}`
        : '';
    const key = `${cf.functionName || '(anonymous)'}\u0000${where}`;
    const e = fns.get(key) ?? {
      name: cf.functionName || '(anonymous)',
      where,
      area: area(orig?.file, cf.url),
      selfUs: 0,
    };
    e.selfUs += t;
    fns.set(key, e);
  }
  const busy = total - idle;
  const list = [...fns.values()].sort((a, b) => b.selfUs - a.selfUs);
  const areas = new Map();
  for (const f of list) areas.set(f.area, (areas.get(f.area) ?? 0) + f.selfUs);
  return {
    windowed,
    totalMs: total / 1000,
    idleMs: idle / 1000,
    busyMs: busy / 1000,
    functions: list.map((f) => ({ ...f, selfMs: f.selfUs / 1000, pctOfBusy: (100 * f.selfUs) / busy })),
    areas: [...areas]
      .sort((a, b) => b[1] - a[1])
      .map(([name, t]) => ({ name, selfMs: t / 1000, pctOfBusy: (100 * t) / busy })),
  };
}

export function formatProfile(summary, top = 25, meta = {}) {
  const lines = [];
  lines.push(`CPU profile of the broker (${meta.file ?? ''})`);
  if (meta.load) lines.push(`load: ${meta.load}`);
  lines.push(
    `${summary.windowed ? 'samples taken during the load only' : 'whole process life (start-up included)'}: ${summary.totalMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms, busy ${summary.busyMs.toFixed(0)} ms`,
  );
  lines.push('');
  lines.push(`Top ${top} functions by self time (% of busy time):`);
  lines.push(`${'self ms'.padStart(9)} ${'%'.padStart(6)}  function  (source)`);
  for (const f of summary.functions.slice(0, top)) {
    lines.push(
      `${f.selfMs.toFixed(1).padStart(9)} ${f.pctOfBusy.toFixed(1).padStart(5)}%  ${f.name}  (${f.where || 'native'})  [${f.area}]`,
    );
  }
  lines.push('');
  lines.push('Self time by area:');
  for (const a of summary.areas.slice(0, 12))
    lines.push(`${a.selfMs.toFixed(1).padStart(9)} ${a.pctOfBusy.toFixed(1).padStart(5)}%  ${a.name}`);
  return lines.join('\n') + '\n';
}
