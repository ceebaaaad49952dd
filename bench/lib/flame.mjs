// A flame graph (icicle: callers on top) of a V8 .cpuprofile as a self-contained SVG: where the
// broker's CPU went under load, with every frame's inclusive time. Frames are merged by function
// and source position (mapped to src/ through the bundle's source map), idle time is left out,
// and frames under 0.2% of the busy time are dropped so the file stays small. Hover a frame for
// its name, source and time (the SVG's <title>); open it in a browser.
import { area, original } from './profile.mjs';

const WIDTH = 1200;
const ROW = 17;
const MIN_SHARE = 0.002;

const COLOURS = {
  src: ['#e8743b', '#f0a35e'],
  'node internals': ['#5b8ff9', '#8fb4fb'],
  '(vm/native)': ['#a0a0a0', '#c4c4c4'],
  other: ['#61c17c', '#94d7a6'],
};

const escapeXml = (s) =>
  String(s).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]);

function colourOf(areaName, name) {
  const pair = areaName.startsWith('src/')
    ? COLOURS.src
    : (COLOURS[areaName] ?? (areaName === 'node internals' ? COLOURS['node internals'] : COLOURS.other));
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return pair[h % 2];
}

/** The merged call tree of the samples in `window` (µs, monotonic), idle left out. */
export function callTree(profile, repo, window) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = new Map();
  const labelOf = (id) => {
    let l = label.get(id);
    if (!l) {
      const cf = byId.get(id).callFrame;
      const orig = original(cf.url, cf.lineNumber, cf.columnNumber, repo);
      const where = orig ? `${orig.file}:${orig.line}` : cf.url ? `${cf.url}:${cf.lineNumber + 1}` : '';
      l = { name: cf.functionName || '(anonymous)', where, area: area(orig?.file, cf.url) };
      label.set(id, l);
    }
    return l;
  };
  const root = { name: 'all', where: '', area: 'other', us: 0, children: new Map() };
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (window && (t < window.startUs || t > window.endUs)) continue;
    const id = profile.samples[i];
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (byId.get(id).callFrame.functionName === '(idle)') continue;
    const path = [];
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) path.push(cur);
    path.pop(); // V8's own (root)
    root.us += dt;
    let node = root;
    for (let k = path.length - 1; k >= 0; k--) {
      const l = labelOf(path[k]);
      const key = `${l.name}\u0000${l.where}`;
      let child = node.children.get(key);
      if (!child) node.children.set(key, (child = { ...l, us: 0, children: new Map() }));
      child.us += dt;
      node = child;
    }
  }
  return root;
}

/** The SVG of a call tree: one row per depth, widths in proportion to inclusive time. */
export function flameGraphSvg(tree, title) {
  const total = tree.us || 1;
  const rects = [];
  let depthMax = 0;
  const walk = (node, x, depth) => {
    const w = (node.us / total) * WIDTH;
    depthMax = Math.max(depthMax, depth);
    const pct = ((100 * node.us) / total).toFixed(1);
    const tip = `${node.name} ${node.where ? `(${node.where})` : ''} — ${(node.us / 1000).toFixed(1)} ms, ${pct}%`;
    const fill = depth === 0 ? '#d0d0d0' : colourOf(node.area, node.name);
    const text = w > 40 ? node.name.slice(0, Math.floor((w - 6) / 6.2)) : '';
    rects.push(
      `<g><title>${escapeXml(tip)}</title><rect x="${x.toFixed(1)}" y="${depth * ROW + 24}" width="${Math.max(w - 0.5, 0.5).toFixed(1)}" height="${ROW - 1}" fill="${fill}"/>` +
        (text ? `<text x="${(x + 3).toFixed(1)}" y="${depth * ROW + 24 + 12}">${escapeXml(text)}</text>` : '') +
        '</g>',
    );
    let cx = x;
    for (const child of [...node.children.values()].sort((a, b) => b.us - a.us)) {
      if (child.us / total < MIN_SHARE) continue;
      walk(child, cx, depth + 1);
      cx += (child.us / total) * WIDTH;
    }
  };
  walk(tree, 0, 0);
  const height = (depthMax + 1) * ROW + 40;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="monospace" font-size="11">`,
    `<text x="4" y="15" font-size="13">${escapeXml(title)} — ${(total / 1000).toFixed(0)} ms busy; orange: src/, blue: Node internals, grey: V8/native (syscalls, GC)</text>`,
    ...rects,
    '</svg>',
    '',
  ].join('\n');
}
