// Results forwarded as the bytes the upstream sent: a 1 MB tool result is neither decoded, parsed
// nor serialized by the broker. The endpoint looks the bytes up when it writes the response.

const known = new WeakMap<object, string | Buffer>();

/** Remembers `json` as the exact JSON of `value` (an object that will not be changed afterwards). */
export function rememberJson(value: object, json: string | Buffer): void {
  known.set(value, json);
}

/** The JSON of `value` if it was remembered (text, or an upstream's bytes), else undefined. */
export function rememberedJson(value: unknown): string | Buffer | undefined {
  return value && typeof value === 'object' ? known.get(value) : undefined;
}

/**
 * A result known only by its bytes: an object standing for them, empty but for `isError` when the
 * result says it (the audit log records it). Only for results the broker forwards without reading
 * (tool results, resource contents).
 */
export function rawResult(bytes: Buffer): Record<string, unknown> {
  const placeholder: Record<string, unknown> = {};
  if (rawIsError(bytes)) placeholder.isError = true;
  known.set(placeholder, bytes);
  return placeholder;
}

const IS_ERROR_KEY = Buffer.from('"isError"');
const IS_ERROR_LAST = Buffer.from(',"isError":true}');
const IS_NOT_ERROR_LAST = Buffer.from(',"isError":false}');

/**
 * Whether a result object's own `isError` is true, read from its bytes. Without the key anywhere
 * (a quote inside a JSON string is escaped, so `"isError"` cannot appear in a text) it is false;
 * the SDKs write it as the last key, read at the end; anywhere else the bytes are parsed.
 */
export function rawIsError(bytes: Buffer): boolean {
  if (bytes.indexOf(IS_ERROR_KEY) === -1) return false;
  if (endsWith(bytes, IS_ERROR_LAST)) return true;
  if (endsWith(bytes, IS_NOT_ERROR_LAST)) return false;
  try {
    return (JSON.parse(bytes.toString('utf8')) as { isError?: unknown } | null)?.isError === true;
  } catch {
    return false;
  }
}

function endsWith(bytes: Buffer, tail: Buffer): boolean {
  return bytes.length >= tail.length && bytes.compare(tail, 0, tail.length, bytes.length - tail.length) === 0;
}

const RESULT_PREFIX = Buffer.from('{"result":');
const ID_SUFFIX = Buffer.from(',"jsonrpc":"2.0","id":');

/**
 * Reads a response line in the layout the MCP SDKs write (`{"result":{…},"jsonrpc":"2.0","id":N}`)
 * without decoding it: the numeric id and the bytes of the result object, when the object closes
 * exactly where that suffix starts (so no second "id" or an "error" can ride along). The result
 * itself is not validated: a broken upstream can break only the call it answers. `wanted` is
 * asked about the id before the line is scanned.
 */
export function splitResponseLine(
  line: Buffer,
  wanted: (id: number) => boolean = () => true,
): { id: number; result: Buffer } | undefined {
  let end = line.length;
  if (line[end - 1] === 13) end--; // CRLF
  if (
    end < RESULT_PREFIX.length + ID_SUFFIX.length + 3 ||
    line.compare(RESULT_PREFIX, 0, RESULT_PREFIX.length, 0, RESULT_PREFIX.length) !== 0
  )
    return undefined;
  if (line[end - 1] !== 125 || line[RESULT_PREFIX.length] !== 123) return undefined;
  const suffixAt = line.lastIndexOf(ID_SUFFIX, end - 1);
  if (suffixAt < RESULT_PREFIX.length) return undefined;
  const digits = line.toString('latin1', suffixAt + ID_SUFFIX.length, end - 1);
  if (!/^[1-9][0-9]{0,15}$/.test(digits) || !wanted(Number(digits))) return undefined;
  if (endOfJsonBytes(line, RESULT_PREFIX.length, suffixAt) !== suffixAt) return undefined;
  return { id: Number(digits), result: line.subarray(RESULT_PREFIX.length, suffixAt) };
}

/**
 * Where the object or array that starts at `from` ends (one past its closing bracket), looking no
 * further than `limit`; -1 if it does not close there or is not an object or array. It tracks
 * brackets and strings, not the grammar; strings are skipped with indexOf, so a result that is
 * mostly one long text costs little more than a memchr.
 */
function endOfJsonBytes(buf: Buffer, from: number, limit: number): number {
  let depth = 0;
  let i = from;
  while (i < limit) {
    const c = buf[i];
    if (c === 34) {
      let q = buf.indexOf(34, i + 1);
      while (q !== -1 && q < limit) {
        let backslashes = 0;
        for (let b = q - 1; buf[b] === 92; b--) backslashes++;
        if (backslashes % 2 === 0) break;
        q = buf.indexOf(34, q + 1);
      }
      if (q === -1 || q >= limit) return -1;
      i = q + 1;
      continue;
    }
    if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return i + 1;
    } else if (depth === 0) {
      return -1;
    }
    i++;
  }
  return -1;
}
