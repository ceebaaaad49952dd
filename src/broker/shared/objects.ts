// Copies of objects made per request, without an object literal that opens with a spread and has
// anything after it (`{ ...params, _meta: meta }`, `{ ...a, ...b }`). On Node 20 (V8 11.3, the
// broker's runtime) each such object gets a hidden class of its own: 8 shared in 100,000 objects,
// ~0.4-0.9 µs each, and every new class is kept in the old generation, linked from its source's
// class, until a full collection (a CPU profile of a traced call showed V8 building maps in every
// call). Copying key by key reuses one hidden class per shape (~0.12 µs). V8 12 (Node 22 and 24)
// shares them either way; there this costs ~10-20 ns more than the spread. Lint keeps the per-call
// folders free of that literal (eslint.config.mjs, SPREAD_FIRST).
//
// Own enumerable string keys are copied, as a spread copies them (and JSON has no other kind).

type Part = object | null | undefined;

/** Sets `key` on `out` as a spread would define it: an own property, even when it is `__proto__`. */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

function copyInto(out: Record<string, unknown>, part: Part): void {
  if (part === null || part === undefined) return;
  const keys = Object.keys(part);
  for (let i = 0; i < keys.length; i++) put(out, keys[i], (part as Record<string, unknown>)[keys[i]]);
}

/**
 * `{ ...source }` to be added to afterwards: a spread copy given a new key later gets a hidden class
 * of its own on Node 20 too, where this copy's keys land on the shared one.
 */
export function copied<S extends Part>(source: S): NonNullable<S> {
  const out: Record<string, unknown> = {};
  copyInto(out, source);
  return out as NonNullable<S>;
}

/** `{ ...a, ...b }` (and `{ ...a, ...b, ...c }`): later parts' keys win; a missing part adds nothing. */
export function merged<A extends Part, B extends Part>(a: A, b: B): NonNullable<A> & NonNullable<B>;
export function merged<A extends Part, B extends Part, C extends Part>(
  a: A,
  b: B,
  c: C,
): NonNullable<A> & NonNullable<B> & NonNullable<C>;
export function merged<A extends Part, B extends Part, C extends Part, D extends Part>(
  a: A,
  b: B,
  c: C,
  d: D,
): NonNullable<A> & NonNullable<B> & NonNullable<C> & NonNullable<D>;
export function merged(...parts: Part[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < parts.length; i++) copyInto(out, parts[i]);
  return out;
}

/** `{ ...source, [key]: value }`: a copy of `source` with `key` set (in its place if it had one). */
export function copyWith<S extends Part, K extends string, V>(
  source: S,
  key: K,
  value: V,
): Omit<NonNullable<S>, K> & Record<K, V> {
  const out: Record<string, unknown> = {};
  copyInto(out, source);
  put(out, key, value);
  return out as Omit<NonNullable<S>, K> & Record<K, V>;
}

/** `const { [a]: _, [b]: __, ...rest } = source`: a copy without these keys (no `delete`, which makes a slow object). */
export function copyWithout<S extends Part, K extends string>(source: S, ...omit: K[]): Omit<NonNullable<S>, K> {
  const out: Record<string, unknown> = {};
  if (source === null || source === undefined) return out as Omit<NonNullable<S>, K>;
  const keys = Object.keys(source);
  for (let i = 0; i < keys.length; i++) {
    if (!(omit as string[]).includes(keys[i])) put(out, keys[i], (source as Record<string, unknown>)[keys[i]]);
  }
  return out as Omit<NonNullable<S>, K>;
}
