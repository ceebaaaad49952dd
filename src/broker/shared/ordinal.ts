// Names sort by UTF-16 code unit rather than by locale: the order is the same on every machine,
// and String#localeCompare loads ICU's collation data, ~2.7 MB of the broker's resident memory.
export function compareOrdinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
