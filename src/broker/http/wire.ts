// How the endpoint encodes what it sends: JSON-RPC responses (spliced around an upstream's own
// bytes where it has them), batches, SSE events, JSON-RPC error bodies and cached list results.
import type * as http from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes } from '../shared/mcpTypes';
import { rememberJson, rememberedJson } from '../shared/rawJson';

export type Id = string | number;

/** A key that keeps the string id "1" and the number id 1 apart. */
export const idKey = (id: Id): string => `${typeof id}:${id}`;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
};

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** An error as a JSON-RPC error object, the way the SDK's server would have written it. */
export function toJsonRpcError(err: unknown): JsonRpcErrorObject {
  const e = (err ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  const error: JsonRpcErrorObject = {
    code: typeof e.code === 'number' && Number.isSafeInteger(e.code) ? e.code : ErrorCodes.InternalError,
    message: typeof e.message === 'string' && e.message ? e.message : 'Internal error',
  };
  if (e.data !== undefined) error.data = e.data;
  return error;
}

/**
 * Results whose JSON is computed once (catalog lists: the same object until the catalog changes),
 * so a `tools/list` of a thousand tools costs a string concatenation instead of a serialization.
 */
const listResults = new WeakMap<object, object>();

export type ListKey = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

export function cachedListResult(key: ListKey, list: object[]): object {
  let result = listResults.get(list);
  if (!result) {
    result = { [key]: list };
    rememberJson(result, JSON.stringify(result));
    listResults.set(list, result);
  }
  return result;
}

/**
 * A message's JSON as the pieces to write in order. A response whose result is remembered JSON
 * (a catalog list, an upstream's own bytes) is that JSON between a head and a tail, so a 1 MB
 * result goes to the socket as it came, never copied into a new buffer.
 */
function serializedParts(message: JSONRPCMessage): (string | Buffer)[] {
  const result = (message as { result?: unknown }).result;
  const cached = rememberedJson(result);
  if (cached === undefined) return [JSON.stringify(message)];
  // The id goes last so that it is the one a client reads even from a result with a duplicate key.
  return ['{"jsonrpc":"2.0","result":', cached, `,"id":${JSON.stringify((message as { id: Id }).id)}}`];
}

/** A message's JSON in one piece (text when every part is text). */
export function serialize(message: JSONRPCMessage): string | Buffer {
  const parts = serializedParts(message);
  if (parts.length === 1) return parts[0];
  if (parts.every((p) => typeof p === 'string')) return parts.join('');
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

/** Below this many bytes, an answer's pieces are joined into one string (copying them costs less than writing them apart). */
const ONE_STRING_MAX = 16 * 1024;

/**
 * A JSON answer's head as a flat [name, value, ...] list, which Node writes as it is: spreading the
 * session's headers into a new object took V8's slow property-definition path on every call.
 */
function jsonHead(headers: http.OutgoingHttpHeaders, length: number): http.OutgoingHttpHeader[] {
  const head: http.OutgoingHttpHeader[] = ['content-type', 'application/json', 'content-length', String(length)];
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && name !== 'content-type' && name !== 'content-length') head.push(name, value);
  }
  return head;
}

/** Answers with one JSON-RPC message as a JSON body, its pieces written together (one writev). */
export function endWithMessage(
  res: http.ServerResponse,
  message: JSONRPCMessage,
  status = 200,
  headers: http.OutgoingHttpHeaders = {},
): void {
  let parts = serializedParts(message);
  let length = 0;
  for (const p of parts) length += typeof p === 'string' ? Buffer.byteLength(p) : p.length;
  if (parts.length > 1 && length < ONE_STRING_MAX) {
    // A small result (an echo's): one string, which Node writes together with the head.
    const text = parts.map((p) => (typeof p === 'string' ? p : p.toString('utf8'))).join('');
    parts = [text];
    length = Buffer.byteLength(text);
  }
  res.writeHead(status, jsonHead(headers, length));
  if (parts.length === 1) {
    res.end(parts[0]);
    return;
  }
  // end() uncorks: the head, the result and the tail leave in one write.
  res.cork();
  for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]);
  res.end(parts[parts.length - 1]);
}

/** Serialized messages as one JSON array (text when every part is text). */
export function joinBatch(parts: (string | Buffer)[]): string | Buffer {
  if (parts.every((p) => typeof p === 'string')) return `[${parts.join(',')}]`;
  const pieces: Buffer[] = [Buffer.from('[')];
  parts.forEach((p, i) => pieces.push(...(i ? [Buffer.from(',')] : []), typeof p === 'string' ? Buffer.from(p) : p));
  pieces.push(Buffer.from(']'));
  return Buffer.concat(pieces);
}

const NOT_JSON_RESULT = 'The upstream server sent a result that is not valid JSON.';

/** The `data:` of one SSE event carrying `message`: always one line of valid JSON. */
export function eventData(message: JSONRPCMessage): string {
  const raw = rememberedJson((message as { result?: unknown }).result);
  if (!Buffer.isBuffer(raw)) return serialize(message) as string;
  // An upstream's unchecked bytes would break the event stream if they held a bare CR; on a
  // stream the result is checked and written again (the plain JSON answer is the fast path).
  const id = (message as { id: Id }).id;
  try {
    return JSON.stringify({ jsonrpc: '2.0', id, result: JSON.parse(raw.toString('utf8')) });
  } catch {
    const error = { code: ErrorCodes.InternalError, message: NOT_JSON_RESULT };
    return JSON.stringify({ jsonrpc: '2.0', id, error });
  }
}

export function writeEvent(res: http.ServerResponse, message: JSONRPCMessage): void {
  res.write(`event: message\ndata: ${eventData(message)}\n\n`);
}

/** The body of a JSON-RPC error response. */
export function errorBody(code: number, message: string, id: Id | null = null): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

/** The body of a JSON-RPC error response that may carry `data` (the 2026-07-28 errors do). */
export function errorBodyWithData(code: number, message: string, id: Id | null, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}

/** Answers with a JSON-RPC error; on a response already under way it can only end it. */
export function writeJsonRpcError(
  res: http.ServerResponse,
  status: number,
  code: number,
  message: string,
  id: Id | null = null,
  extraHeaders: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = errorBody(code, message, id);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...extraHeaders,
  });
  res.end(body);
}

/** The id of the one request a body holds (null for a batch, a notification or unparsable JSON). */
export function idOfBody(text: string): Id | null {
  try {
    const message = JSON.parse(text) as { id?: unknown } | null;
    const id = message && typeof message === 'object' && !Array.isArray(message) ? message.id : undefined;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}
