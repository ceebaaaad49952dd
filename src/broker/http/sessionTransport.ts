// One MCP session's transport (the SDK's Transport interface, written for this endpoint): a POST's
// messages in, its answers out as one JSON body, upgraded to an SSE stream only when the call
// sends notifications first; the session's GET stream; cancellation when the client cancels or
// hangs up. The per-call methods skip the SDK's protocol layer and go straight to a handler.
import type * as http from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, type JsonObject } from '../mcpTypes';
import type { RequestExtra } from '../routing';
import {
  idKey,
  joinBatch,
  serialize,
  SSE_HEADERS,
  toJsonRpcError,
  writeEvent,
  writeJsonRpcError,
  type Id,
} from './wire';

/**
 * Requests the session transport hands straight to the router, past the SDK's protocol layer:
 * the per-call path. Everything else (initialize, ping, lists, subscriptions, logging) goes
 * through the SDK server.
 */
export const DIRECT_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read', 'completion/complete']);

export type DirectHandler = (
  request: { method: string; params?: JsonObject },
  extra: RequestExtra,
) => Promise<JsonObject>;

const ID_REUSED =
  'Invalid Request: a request id must not be reused while a request with that id is in flight in this session';

type DirectRequest = { id: Id; method: string; params?: JsonObject };

/** A POST whose requests are not all answered yet: where their answers go. */
interface PendingPost {
  res: http.ServerResponse;
  waiting: Set<string>;
  responses: JSONRPCMessage[];
  streaming: boolean;
  headers: Record<string, string>;
}

/** One MCP session's transport: POST bodies in, JSON or SSE out, plus the optional GET stream. */
export class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly sessionId: string;
  private readonly pending = new Map<string, PendingPost>();
  private standalone?: http.ServerResponse;
  private closed = false;
  /** Direct requests in flight, by id key: aborted when the client cancels or hangs up. */
  private readonly inFlight = new Map<string, AbortController>();

  constructor(sessionId: string, private readonly direct?: DirectHandler) {
    this.sessionId = sessionId;
  }

  async start(): Promise<void> {
    // Nothing to start: the endpoint feeds messages in through deliver().
  }

  get busy(): boolean {
    return this.pending.size > 0 || this.standalone !== undefined;
  }

  /** Delivers one POST's messages; the response is written once every request in it is answered. */
  deliver(messages: JSONRPCMessage[], res: http.ServerResponse, headers: Record<string, string>): void {
    const requestIds = messages
      .filter((m) => 'method' in m && 'id' in m)
      .map((m) => idKey((m as { id: Id }).id));
    // An id still waiting for its answer (or twice in one batch) would be answered once, to one
    // POST, and leave the other waiting forever: refuse the reuse instead.
    if (new Set(requestIds).size !== requestIds.length || requestIds.some((key) => this.pending.has(key))) {
      writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, ID_REUSED, null, headers);
      return;
    }
    if (requestIds.length === 0) {
      res.writeHead(202, headers).end();
    } else {
      const post: PendingPost = { res, waiting: new Set(requestIds), responses: [], streaming: false, headers };
      for (const key of requestIds) this.pending.set(key, post);
      res.on('close', () => {
        for (const key of post.waiting) {
          if (this.pending.get(key) === post) this.pending.delete(key);
          // Nobody is left to read the answer: stop the work (the upstream gets a cancellation).
          this.inFlight.get(key)?.abort(new Error('the client closed the connection'));
        }
      });
    }
    for (const message of messages) {
      if (this.direct && 'method' in message && 'id' in message && DIRECT_METHODS.has(message.method)) {
        this.runDirect(message as DirectRequest);
      } else {
        this.onmessage?.(message);
      }
    }
    // The SDK sends no response to a request the client cancelled (as the spec allows), which
    // would leave that request's POST open until the client hangs up: end it with an error
    // (-32800, "request cancelled") that the client, having cancelled, ignores.
    for (const message of messages) {
      if (!('method' in message) || message.method !== 'notifications/cancelled') continue;
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if ((typeof id === 'string' || typeof id === 'number') && this.pending.has(idKey(id))) {
        this.inFlight.get(idKey(id))?.abort(new Error('cancelled by the client'));
        const error = { code: -32800, message: 'Request cancelled by the client' };
        void this.send({ jsonrpc: '2.0', id, error } as JSONRPCMessage);
      }
    }
  }

  private runDirect(request: DirectRequest): void {
    const key = idKey(request.id);
    const controller = new AbortController();
    this.inFlight.set(key, controller);
    const meta = request.params?._meta as JsonObject | undefined;
    const progressToken = meta?.progressToken as string | number | undefined;
    const extra: RequestExtra = {
      signal: controller.signal,
      progressToken,
      sendProgress: (p) => {
        if (progressToken === undefined || controller.signal.aborted) return;
        const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken } };
        void this.send(progress as JSONRPCMessage, { relatedRequestId: request.id });
      },
    };
    const done = (): boolean => {
      if (this.inFlight.get(key) === controller) this.inFlight.delete(key);
      // A cancelled request was answered already (-32800), as the SDK server would not answer it.
      return !controller.signal.aborted;
    };
    let answer: Promise<JsonObject>;
    try {
      answer = this.direct!(request, extra);
    } catch (err) {
      answer = Promise.reject(err);
    }
    answer.then(
      (result) => {
        if (done()) void this.send({ jsonrpc: '2.0', id: request.id, result } as JSONRPCMessage);
      },
      (err) => {
        if (done()) void this.send({ jsonrpc: '2.0', id: request.id, error: toJsonRpcError(err) } as JSONRPCMessage);
      },
    );
  }

  openStandaloneStream(res: http.ServerResponse, headers: Record<string, string>): void {
    // A newer GET stream replaces an older one: the client reconnected.
    this.standalone?.end();
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    res.write(': switchboard\n\n');
    this.standalone = res;
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 25_000);
    keepAlive.unref();
    res.on('close', () => {
      clearInterval(keepAlive);
      if (this.standalone === res) this.standalone = undefined;
    });
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return;
    const isResponse = !('method' in message) && 'id' in message;
    if (isResponse) {
      const key = idKey((message as { id: Id }).id);
      const post = this.pending.get(key);
      if (!post) return; // the client went away or cancelled; nothing to answer
      this.pending.delete(key);
      post.waiting.delete(key);
      if (post.streaming) {
        writeEvent(post.res, message);
        if (post.waiting.size === 0) post.res.end();
      } else {
        post.responses.push(message);
        if (post.waiting.size === 0) {
          const body =
            post.responses.length === 1 ? serialize(post.responses[0]) : joinBatch(post.responses.map(serialize));
          post.res.writeHead(200, {
            ...post.headers,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
          });
          post.res.end(body);
        }
      }
      return;
    }
    const related =
      options?.relatedRequestId !== undefined ? this.pending.get(idKey(options.relatedRequestId)) : undefined;
    if (related) {
      if (!related.streaming) {
        related.streaming = true;
        related.res.writeHead(200, { ...SSE_HEADERS, ...related.headers });
        for (const earlier of related.responses) writeEvent(related.res, earlier);
        related.responses = [];
      }
      writeEvent(related.res, message);
      return;
    }
    if (this.standalone) writeEvent(this.standalone, message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.standalone?.end();
    for (const controller of this.inFlight.values()) controller.abort(new Error('the session was closed'));
    this.inFlight.clear();
    for (const post of new Set(this.pending.values())) {
      if (!post.res.headersSent) writeJsonRpcError(post.res, 404, ErrorCodes.InvalidRequest, 'Session closed');
      else post.res.end();
    }
    this.pending.clear();
    this.onclose?.();
  }
}

