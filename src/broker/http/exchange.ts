// One stateless HTTP exchange of a 2026-07-28 request: its answer as one JSON body, upgraded to
// an SSE stream when a notification (progress) comes before the result; closed early by the
// client is the revision's cancellation.
import type * as http from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CallCancel } from '../shared/callCancel';
import { rememberedJson, rememberJson } from '../shared/rawJson';
import type { JsonObject } from '../shared/mcpTypes';
import { endWithMessage, SSE_HEADERS, toJsonRpcError, writeEvent, type Id } from './wire';
import { merged } from '../shared/objects';

const OPEN_BRACE = 0x7b;

/** HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion: answered with HTTP 400. */
const REQUEST_ERROR_CODES = new Set([-32020, -32021, -32022]);

/**
 * A result with `resultType` set (2026-07-28 requires it), keeping an upstream's own bytes when
 * the broker forwards them unread: the field is spliced in front of the object's first key.
 */
export function withResultType(result: JsonObject, resultType = 'complete'): JsonObject {
  return withDefaults(result, { resultType });
}

/**
 * The honest cache hints of a result whose server gave none (a 2025-11-25 upstream, the broker's
 * own resources): stale at once, and for this caller only (what it sees depends on its token).
 * 2026-07-28 requires them on resources/read and the lists; an upstream's own are passed through.
 */
export const NO_CACHE_HINTS: JsonObject = { ttlMs: 0, cacheScope: 'private' };

/**
 * `result` with each of `defaults` that it lacks, keeping an upstream's own bytes when the broker
 * forwards them unread: the missing fields are spliced in front of the object's first key (a key
 * is found in the bytes as `"key":`, which inside a JSON string would be escaped).
 */
export function withDefaults(result: JsonObject, defaults: JsonObject): JsonObject {
  const raw = rememberedJson(result);
  if (raw === undefined) return merged(defaults, result);
  const missing = Object.entries(defaults).filter(([k]) => !raw.includes(`${JSON.stringify(k)}:`));
  if (!missing.length) return result;
  const text = typeof raw === 'string' ? raw : undefined;
  const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
  let at = 1;
  while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09)) {
    at++;
  }
  if (bytes[0] !== OPEN_BRACE) return merged(defaults, JSON.parse(text ?? bytes.toString('utf8')) as JsonObject);
  const empty = bytes[at] === 0x7d;
  const fields = missing.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',');
  const head = Buffer.from(`{${fields}${empty ? '' : ','}`);
  const spliced = Buffer.concat([head, bytes.subarray(1)]);
  const placeholder = {};
  rememberJson(placeholder, text === undefined ? spliced : spliced.toString('utf8'));
  return placeholder;
}

/** The HTTP side of one request: write notifications and the final answer; aborted on hang-up. */
export class Exchange {
  private streaming = false;
  private finished = false;
  /** Cancelled when the client closes the response stream; no AbortSignal unless one is read (callCancel.ts). */
  readonly cancel = new CallCancel();

  constructor(
    private readonly res: http.ServerResponse,
    readonly id: Id,
    private readonly onClose?: () => void,
  ) {
    res.on('close', () => {
      if (this.finished) return;
      this.finished = true;
      // The revision's cancellation on HTTP: the client closed the response stream.
      this.cancel.abort(new Error('the client closed the response stream (cancelled)'));
      this.onClose?.();
    });
  }

  get done(): boolean {
    return this.finished;
  }

  /** A notification about this request (progress): the answer becomes an SSE stream. */
  notify(method: string, params: JsonObject): void {
    if (this.finished) return;
    this.upgrade();
    writeEvent(this.res, { jsonrpc: '2.0', method, params } as JSONRPCMessage);
  }

  /** Opens the SSE stream now (a listen stream, or the first notification). */
  upgrade(): void {
    if (this.streaming || this.finished) return;
    this.streaming = true;
    this.res.writeHead(200, merged(SSE_HEADERS, { 'x-accel-buffering': 'no' }));
  }

  /** Writes a raw SSE comment (keep-alive) on an open stream. */
  comment(text: string): void {
    if (this.streaming && !this.finished) this.res.write(`: ${text}\n\n`);
  }

  result(result: JsonObject): void {
    this.finish({ jsonrpc: '2.0', id: this.id, result } as JSONRPCMessage);
  }

  /** `status` defaults to 400 for the revision's request errors (an upstream's passed on), else 200. */
  error(err: unknown, status?: number): void {
    const error = toJsonRpcError(err);
    const code = (error as { code?: unknown }).code;
    status ??= typeof code === 'number' && REQUEST_ERROR_CODES.has(code) ? 400 : 200;
    this.finish({ jsonrpc: '2.0', id: this.id, error } as JSONRPCMessage, status);
  }

  private finish(message: JSONRPCMessage, status = 200): void {
    if (this.finished) return;
    this.finished = true;
    if (this.streaming) {
      writeEvent(this.res, message);
      this.res.end();
      return;
    }
    endWithMessage(this.res, message, status);
  }
}
