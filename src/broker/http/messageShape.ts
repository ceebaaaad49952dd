// The shape of what arrives in a POST body, checked before anything else sees it. Pure (no SDK,
// no I/O): the endpoint and the tests share one definition.

/**
 * Nesting no MCP message needs. Deeper JSON cannot be serialized again (JSON.stringify overflows
 * the stack when forwarding it upstream), and the SDK keeps a request whose send failed until its
 * timeout: a few 4 MB bodies of nested arrays would exhaust the broker's heap.
 */
export const MAX_JSON_DEPTH = 512;

/** Whether a JSON text nests arrays/objects deeper than `limit` (brackets inside strings do not count). */
export function nestedDeeperThan(text: string, limit: number): boolean {
  if (text.length <= limit * 2) return false; // each level takes two characters at least
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/** A JSON-RPC message's shape, checked cheaply: full schema validation happens in the SDK. */
export function isMessage(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return false;
  const hasId = typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id));
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method.length === 0 || m.method.length > 256) return false;
    if ('id' in m && !hasId) return false;
    if ('params' in m && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params))) return false;
    // The SDK silently drops a request its schema rejects (a fractional or unsafe id, an extra
    // top-level key, a malformed _meta), which would leave the POST unanswered: refuse it here.
    if ('id' in m && !isWellFormedRequest(m)) return false;
    return true;
  }
  return hasId && ('result' in m || 'error' in m);
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What the SDK's JSONRPCRequestSchema accepts (strict top level, a string or safe-integer id,
 * loose params whose `_meta` has a string or safe-integer progressToken and a related task with
 * a string taskId), written out by hand: the zod parse it replaces was 3-4% of the broker's CPU
 * per forwarded call. test/broker/http/messageShape.test.ts checks the two agree.
 */
export function isWellFormedRequest(m: Record<string, unknown>): boolean {
  for (const key in m) if (!REQUEST_KEYS.has(key)) return false;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return false;
  if (typeof m.id !== 'string' && !Number.isSafeInteger(m.id)) return false;
  if (m.params === undefined) return true;
  if (!isObject(m.params)) return false;
  const meta = m.params._meta;
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  const token = meta.progressToken;
  if (token !== undefined && typeof token !== 'string' && !Number.isSafeInteger(token)) return false;
  const related = meta[RELATED_TASK_KEY];
  return related === undefined || (isObject(related) && typeof related.taskId === 'string');
}
