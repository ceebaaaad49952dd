// Finds import cycles between the project's source files, type-only imports included: a cycle means
// two modules cannot be understood (or moved) apart. TypeScript's own module resolution decides what a
// specifier names, so what this sees is what the compiler sees. `npm run lint` runs it on src/ and
// webview/; test/unit/layers.test.ts runs it on a tree with a cycle in it, so it is known to find one.
//   node scripts/importCycles.mjs [dir ...]     exit 1 and each cycle printed, or exit 0
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

function sourceFiles(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every relative import and re-export of `file`, resolved to a file among `known`. */
function importsOf(file, known) {
  const text = fs.readFileSync(file, 'utf8');
  const options = { moduleResolution: ts.ModuleResolutionKind.Node10, allowJs: false };
  const found = new Set();
  for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
    if (!ref.fileName.startsWith('.')) continue;
    const resolved = ts.resolveModuleName(ref.fileName, file, options, ts.sys).resolvedModule;
    const target = resolved && path.resolve(resolved.resolvedFileName);
    if (target && known.has(target)) found.add(target);
  }
  return found;
}

/** One shortest cycle from `start` back to it inside a strongly connected `component`, as a file list. */
function cycleThrough(start, component, edges) {
  const from = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of edges.get(v)) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [v];
        for (let p = from.get(v); p !== undefined; p = from.get(p)) path.push(p);
        return path.reverse();
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...component];
}

/** The import cycles among the .ts files under `dirs`: one per tangle of files, each file importing the next. */
export function importCycles(dirs) {
  const files = dirs.flatMap((d) => sourceFiles(path.resolve(d)));
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, importsOf(f, known)]));
  // Tarjan's strongly connected components: every component of more than one file holds a cycle.
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (v) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || edges.get(v).has(v)) cycles.push(cycleThrough(v, new Set(component), edges));
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return cycles;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.length > 2 ? process.argv.slice(2) : ['src', 'webview'];
  const cycles = importCycles(dirs);
  for (const c of cycles) {
    const names = c.map((f) => path.relative(process.cwd(), f));
    console.error(`import cycle: ${names.join(' → ')} → ${names[0]}`);
  }
  if (cycles.length) {
    console.error(`${cycles.length} import cycle(s): move the shared part into a module both can import.`);
    process.exit(1);
  }
}
