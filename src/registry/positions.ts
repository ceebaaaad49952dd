// Maps a path inside the parsed data (['restart', 'maxRetries']) back to where it was written,
// so a validation error lands on the offending key or value rather than on line 1.

import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair } from 'yaml';

export interface Position {
  line: number;
  column: number;
}

export type DataPath = readonly PropertyKey[];

type Ranged = { range?: readonly [number, number, number] | null };

function keyText(pair: Pair<unknown, unknown>): string | undefined {
  const k = pair.key;
  if (isScalar(k)) return String(k.value);
  return typeof k === 'string' || typeof k === 'number' ? String(k) : undefined;
}

function rangeStart(node: unknown): number | undefined {
  const r = (node as Ranged | null | undefined)?.range;
  return r ? r[0] : undefined;
}

/** An empty scalar (`command:` with nothing after it) has a zero-width range; its key is the better target. */
function isEmptyScalar(node: unknown): boolean {
  if (!isScalar(node)) return false;
  const r = node.range;
  return node.value === null && (!r || r[0] === r[1]);
}

/**
 * Where `path` was written. `at: 'key'` points at the last segment's key (for unknown keys and
 * bad record keys), `at: 'value'` at its value (for wrong types). When the path does not exist
 * in the document (a missing required key, or a name taken from the file name), the deepest node
 * that does exist is used; if there is none, line 1, column 1.
 */
export function positionOf(doc: Document, lc: LineCounter, dataPath: DataPath, at: 'key' | 'value'): Position {
  let node: unknown = doc.contents;
  let best: number | undefined = rangeStart(node);
  for (let i = 0; i < dataPath.length; i++) {
    const seg = dataPath[i];
    const last = i === dataPath.length - 1;
    if (isMap(node)) {
      const pair = (node.items as Pair<unknown, unknown>[]).find((p) => keyText(p) === String(seg));
      if (!pair) break;
      const keyStart = rangeStart(pair.key);
      if (last && at === 'key') {
        best = keyStart ?? best;
        break;
      }
      node = pair.value;
      const valueStart = isEmptyScalar(node) ? undefined : rangeStart(node);
      best = valueStart ?? keyStart ?? best;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = (node.items as Node[])[seg];
      if (item === undefined) break;
      node = item;
      best = rangeStart(item) ?? best;
    } else {
      break;
    }
  }
  if (best === undefined) return { line: 1, column: 1 };
  const { line, col } = lc.linePos(best);
  return { line, column: col };
}
