// Definitions → YAML a person would have written: keys in the schema's (readable) order, fields
// left at their default omitted, comments in an existing file kept when it is rewritten.

import { isMap, isScalar, parseDocument, stringify, type Pair } from 'yaml';
import { parseDefinition, stemOf } from './parse';
import { SCHEMAS, type DefByKind, type Kind } from './schema';

// Written even when equal to the default: trust and transport are what a reader checks first
// (is this server allowed to start by itself? is it a process or a URL?).
const ALWAYS_WRITTEN: Record<Kind, readonly string[]> = {
  server: ['name', 'trust', 'transport'],
  prompt: ['name'],
  client: ['name'],
  policy: ['name'],
};

const STRINGIFY_OPTIONS = { lineWidth: 0, indent: 2 } as const;

type Shape = Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>;
interface Def {
  type: string;
  innerType?: unknown;
  shape?: Shape;
}
function defOf(s: unknown): Def | undefined {
  return (s as { _zod?: { def?: Def } } | undefined)?._zod?.def;
}
/** The object shape behind default/prefault/optional wrappers, if the schema is an object. */
function shapeOf(schema: unknown): Shape | undefined {
  let s = schema;
  for (let d = defOf(s); d; d = defOf(s)) {
    if (d.type === 'object') return d.shape;
    if (d.innerType === undefined) return undefined;
    s = d.innerType;
  }
  return undefined;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) =>
      Object.prototype.hasOwnProperty.call(b, k) &&
      deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** The value a field takes when the key is absent (undefined for optional fields). */
function defaultOf(field: Shape[string] | undefined): unknown {
  const r = field?.safeParse(undefined);
  return r?.success ? r.data : undefined;
}

/** Keeps, in shape order, only the fields that differ from their defaults (recursing into objects). */
function minimal(value: Record<string, unknown>, shape: Shape, keep: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) {
    const v = value[key];
    if (v === undefined) continue;
    const field = shape[key];
    if (!keep.includes(key) && deepEqual(v, defaultOf(field))) continue;
    const inner = shapeOf(field);
    if (inner && v && typeof v === 'object' && !Array.isArray(v)) {
      const sub = minimal(v as Record<string, unknown>, inner, []);
      if (Object.keys(sub).length > 0 || keep.includes(key)) out[key] = sub;
    } else {
      out[key] = v;
    }
  }
  return out;
}

function shapeFor(kind: Kind): Shape {
  const shape = shapeOf(SCHEMAS[kind]);
  if (!shape) throw new Error(`no object shape for kind ${kind}`);
  return shape;
}

/** Validates `def` (throws zod's error if invalid) and returns it with defaults applied. */
function normalize<K extends Kind>(kind: K, def: unknown): DefByKind[K] {
  return SCHEMAS[kind].parse(def);
}

/** The plain object toYaml writes: defaults dropped, keys in schema order. */
export function toMinimalObject<K extends Kind>(kind: K, def: unknown): Record<string, unknown> {
  const full = normalize(kind, def) as unknown as Record<string, unknown>;
  return minimal(full, shapeFor(kind), ALWAYS_WRITTEN[kind]);
}

/** Fresh YAML for a definition. Throws if `def` is not valid for `kind`. */
export function toYaml<K extends Kind>(kind: K, def: unknown): string {
  return stringify(toMinimalObject(kind, def), STRINGIFY_OPTIONS);
}

function keyText(pair: Pair<unknown, unknown>): string | undefined {
  return isScalar(pair.key) ? String(pair.key.value) : undefined;
}

/**
 * Rewrites `existingText` so it defines `def`, keeping the comments, the key order and any
 * explicitly written defaults of fields that did not change. Returns undefined when the existing
 * text cannot be used (not a valid YAML mapping, has unknown keys, or the result would not read back
 * as `def`);
 * the caller then writes fresh YAML.
 */
export function mergeIntoYaml<K extends Kind>(
  kind: K,
  fileName: string,
  existingText: string,
  def: unknown,
): string | undefined {
  const full = normalize(kind, def) as unknown as Record<string, unknown>;
  const shape = shapeFor(kind);
  const wanted = minimal(full, shape, ALWAYS_WRITTEN[kind]);
  const doc = parseDocument(existingText, { uniqueKeys: true });
  if (doc.errors.length > 0 || !isMap(doc.contents)) return undefined;
  const map = doc.contents;
  let existing: Record<string, unknown>;
  try {
    existing = doc.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  // The effective value an existing key stands for, defaults applied, for comparison.
  const effective = (key: string): unknown => {
    const r = shape[key]?.safeParse(existing[key]);
    return r?.success ? r.data : Symbol('invalid');
  };

  for (const pair of [...(map.items as Pair<unknown, unknown>[])]) {
    const key = keyText(pair);
    if (key === undefined || !(key in shape)) return undefined;
    if (deepEqual(effective(key), full[key])) continue;
    if (key in wanted) pair.value = doc.createNode(wanted[key]);
    else map.delete(key);
  }
  // New keys go where the schema order puts them among the keys already there, so a person's own
  // ordering survives and additions still land somewhere predictable.
  const order = Object.keys(shape);
  const stem = stemOf(fileName);
  for (const [key, value] of Object.entries(wanted)) {
    if (map.has(key)) continue;
    if (key === 'name' && value === stem) continue; // the file name already says it
    const rank = order.indexOf(key);
    const items = map.items as Pair<unknown, unknown>[];
    let at = 0;
    items.forEach((p, i) => {
      if (order.indexOf(keyText(p) ?? '') < rank) at = i + 1;
    });
    // A comment at the top of the file is attached to the first key; when something is inserted
    // before that key, lift the comment to the document so it stays at the top.
    const first = items[0]?.key;
    if (at === 0 && isScalar(first) && first.commentBefore) {
      doc.commentBefore = doc.commentBefore ? `${doc.commentBefore}\n${first.commentBefore}` : first.commentBefore;
      first.commentBefore = undefined;
    }
    items.splice(at, 0, doc.createPair(key, value) as Pair<unknown, unknown>);
  }

  const text = doc.toString(STRINGIFY_OPTIONS);
  const check = parseDefinition(kind, fileName, text);
  if (!check.def || !deepEqual(check.def, full)) return undefined;
  return text;
}
