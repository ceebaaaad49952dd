// Where a POST body is read (within the size limit) and parsed into JSON-RPC messages: depth,
// JSON syntax, batch rules and each message's shape, before the SDK or the router sees any of it.
import type * as http from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes } from '../shared/mcpTypes';
import { isMessage, MAX_JSON_DEPTH, nestedDeeperThan } from './messageShape';
import { payloadTooLarge, type Rejection } from './guards';
import type { Id } from './wire';

export const MAX_BATCH = 100;

/** Why a body is not something the transport can deliver: an HTTP 400 with a JSON-RPC error. */
export interface BodyError {
  code: number;
  message: string;
  id: Id | null;
}

const bodyError = (code: number, message: string, id: Id | null = null): BodyError => ({ code, message, id });

const TOO_DEEP = bodyError(
  ErrorCodes.InvalidRequest,
  `Invalid Request: the JSON is nested deeper than ${MAX_JSON_DEPTH} levels`,
);
const NOT_JSON = bodyError(ErrorCodes.ParseError, 'Parse error: the body is not valid JSON');
const EMPTY_BATCH = bodyError(ErrorCodes.InvalidRequest, 'Invalid Request: empty batch');
const BATCH_TOO_LONG = bodyError(
  ErrorCodes.InvalidRequest,
  `Invalid Request: batches are limited to ${MAX_BATCH} messages`,
);
const NOT_A_MESSAGE =
  'Invalid Request: not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0", a string "method" or a result/error, ' +
  'an object "params", a string or integer "id", no other top-level keys)';
const INITIALIZE_NOT_ALONE = bodyError(
  ErrorCodes.InvalidRequest,
  'Invalid Request: initialize must be sent on its own',
);
const INITIALIZE_NOT_REQUEST = bodyError(
  ErrorCodes.InvalidRequest,
  'Invalid Request: initialize must be a request with an id',
);

/** What a POST body holds: the messages, and the initialize request if it opens a session. */
export interface ParsedBody {
  messages: JSONRPCMessage[];
  initialize?: JSONRPCMessage;
}

/** Parses a POST body; the messages' shapes are checked here, their contents by the SDK or router. */
export function parseMessages(text: string): ParsedBody | BodyError {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) return TOO_DEEP;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
  const messages = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  if (messages.length === 0) return EMPTY_BATCH;
  if (messages.length > MAX_BATCH) return BATCH_TOO_LONG;
  for (const m of messages) {
    if (!isMessage(m)) return bodyError(ErrorCodes.InvalidRequest, NOT_A_MESSAGE, idOf(m));
  }
  const list = messages as JSONRPCMessage[];
  const initialize = list.find((m) => 'method' in m && m.method === 'initialize');
  if (!initialize) return { messages: list };
  if (list.length > 1) return INITIALIZE_NOT_ALONE;
  if (!('id' in initialize)) return INITIALIZE_NOT_REQUEST;
  return { messages: list, initialize };
}

export function isBodyError(parsed: ParsedBody | BodyError): parsed is BodyError {
  return 'code' in parsed;
}

/** The id of something that is not a valid message, when it has a usable one (for the error). */
function idOf(m: unknown): Id | null {
  const id = m && typeof m === 'object' ? (m as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** How long, and how many more bytes, a refused body is drained before its connection is cut. */
export const LINGER_MS = 2000;
export const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * Drains the rest of a refused (413) body unread, then lets the connection go on or cuts it. Closing
 * at once, as `Connection: close` makes Node do, leaves the client's next bytes to be answered with a
 * reset, which can discard the 413 before the client has read it (the client sees EPIPE; it happens
 * under load). Servers call this a lingering close. Bounded in time and bytes so that a client cannot
 * hold the connection open by sending forever.
 */
export function drainThenClose(req: http.IncomingMessage): void {
  const socket = req.socket;
  let drained = 0;
  const cut = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > LINGER_BYTES) cut();
  });
  req.on('end', () => clearTimeout(timer));
  socket.once('close', () => clearTimeout(timer));
  req.resume();
}

/**
 * Reads a request body up to `maxBytes`. Past the limit `onReject` gets the 413 (once) and the rest
 * is drained unread; a body that ends in an error is dropped.
 */
export function readBody(
  req: http.IncomingMessage,
  maxBytes: number,
  onBody: (text: string) => void,
  onReject: (rejection: Rejection) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let aborted = false;
  req.on('data', (chunk: Buffer) => {
    if (aborted) return;
    size += chunk.length;
    if (size > maxBytes) {
      aborted = true;
      onReject(payloadTooLarge(maxBytes));
      drainThenClose(req);
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (aborted) return;
    onBody(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
  });
  req.on('error', () => {
    aborted = true;
  });
}
