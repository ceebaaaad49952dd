// Small statistics helpers (nearest-rank percentiles over latency samples in ms).
export function summarize(samples) {
  const a = Float64Array.from(samples).sort();
  const n = a.length;
  if (n === 0) return { n: 0 };
  const pct = (p) => a[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))];
  let sum = 0;
  for (const v of a) sum += v;
  return { n, min: a[0], p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), max: a[n - 1], mean: sum / n };
}
export const median = (xs) => summarize(xs).p50;
/** Rotates an array by r (interleaving: every system gets every position in turn). */
export const rotate = (arr, r) => arr.map((_, i) => arr[(i + r) % arr.length]);
