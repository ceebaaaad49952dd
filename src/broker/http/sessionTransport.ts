// One MCP session's transport (the SDK's Transport interface, written for this endpoint): a POST's
// messages in, its answers out as one JSON body, upgraded to an SSE stream only when the call
// sends notifications first; the session's GET stream; cancellation when the client cancels or
// hangs up. The per-call methods skip the SDK's protocol layer and go straight to a handler.
import type * as http from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CallCancel } from '../shared/callCancel';
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import type { RequestExtra } from '../routing/requestContext';
import {
  endWithMessage,
  idKey,
  joinBatch,
  serialize,
  SSE_HEADERS,
  toJsonRpcError,
  writeEvent,
  writeJsonRpcError,
  type Id,
} from './wire';
import { merged } from '../shared/objects';

/**
 * Requests the session transport hands straight to the router, past the SDK's protocol layer:
 * the per-call path. Everything else (initialize, ping, lists, subscriptions, logging) goes
 * through the SDK server.
 */
export const DIRECT_METHODS = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
  'completion/complete',
  // A task's tasks/result may carry the server's requests for it (input_required): they need its caller.
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
]);

export type DirectHandler = (
  request: { method: string; params?: JsonObject },
  extra: RequestExtra,
) => Promise<JsonObject>;

const ID_REUSED =
  'Invalid Request: a request id must not be reused while a request with that id is in flight in this session';

type DirectRequest = { id: Id; method: string; params?: JsonObject };

/** Who the session's client is, for the requests an upstream sends it during a call. */
export interface SessionClient {
  /** The client's registry name. */
  name: string;
  /** What it declared at initialize. */
  capabilities(): JsonObject | undefined;
}

/** A request the broker sent the client (for an upstream), waiting for its answer in a later POST. */
interface OutgoingRequest {
  resolve(result: JsonObject): void;
  reject(error: Error): void;
}

/** A POST whose requests are not all answered yet: where their answers go. */
interface PendingPost {
  res: http.ServerResponse;
  waiting: Set<string>;
  responses: JSONRPCMessage[];
  streaming: boolean;
  headers: Record<string, string>;
}

/**
 * A direct request's RequestExtra. A class, so that `signal` is a getter on the prototype: an object
 * literal with a getter is defined through V8's slow path, on every call.
 */
class DirectExtra implements RequestExtra {
  caller?: RequestExtra['caller'];
  trace?: RequestExtra['trace'];
  constructor(
    readonly cancel: CallCancel,
    readonly progressToken: string | number | undefined,
    readonly meta: JsonObject | undefined,
    readonly sendProgress: RequestExtra['sendProgress'],
  ) {}

  /** Made on first read (callCancel.ts). */
  get signal(): AbortSignal {
    return this.cancel.signal;
  }
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
  private readonly inFlight = new Map<string, CallCancel>();
  /** Requests sent to the client, by id key; their ids are the broker's own (`sb-<n>`). */
  private readonly outgoing = new Map<string, OutgoingRequest>();
  private nextOutgoing = 0;

  constructor(
    sessionId: string,
    private readonly direct?: DirectHandler,
    private readonly client?: SessionClient,
  ) {
    this.sessionId = sessionId;
  }

  async start(): Promise<void> {
    // Nothing to start: the endpoint feeds messages in through deliver().
  }

  /** Whether the client holds the session's GET stream (where requests outside its calls go). */
  get hasOpenStream(): boolean {
    return this.standalone !== undefined && !this.closed;
  }

  get busy(): boolean {
    return this.pending.size > 0 || this.standalone !== undefined;
  }

  /** Delivers one POST's messages; the response is written once every request in it is answered. */
  deliver(messages: JSONRPCMessage[], res: http.ServerResponse, headers: Record<string, string>): void {
    if (messages.length === 1 && this.deliverDirect(messages[0], res, headers)) return;
    const requestIds = messages.filter((m) => 'method' in m && 'id' in m).map((m) => idKey((m as { id: Id }).id));
    // An id still waiting for its answer (or twice in one batch) would be answered once, to one
    // POST, and leave the other waiting forever: refuse the reuse instead.
    if (new Set(requestIds).size !== requestIds.length || requestIds.some((key) => this.pending.has(key))) {
      writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, ID_REUSED, null, headers);
      return;
    }
    // Answers to requests the broker sent the client go back to whoever asked, not to the SDK server.
    messages = messages.filter((m) => !this.settleOutgoing(m));
    if (requestIds.length === 0) {
      res.writeHead(202, headers).end();
    } else {
      const post: PendingPost = { res, waiting: new Set(requestIds), responses: [], streaming: false, headers };
      for (const key of requestIds) this.pending.set(key, post);
      res.on('close', () => this.postClosed(post));
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

  /**
   * The common POST, one request on the direct path (a tools/call): what deliver() does for it,
   * without the batch's bookkeeping. False for anything else, which deliver() handles.
   */
  private deliverDirect(message: JSONRPCMessage, res: http.ServerResponse, headers: Record<string, string>): boolean {
    if (!this.direct || !('method' in message) || !('id' in message) || !DIRECT_METHODS.has(message.method)) {
      return false;
    }
    const key = idKey(message.id);
    if (this.pending.has(key)) {
      writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, ID_REUSED, null, headers);
      return true;
    }
    const post: PendingPost = { res, waiting: new Set([key]), responses: [], streaming: false, headers };
    this.pending.set(key, post);
    res.on('close', () => this.postClosed(post));
    this.runDirect(message as DirectRequest);
    return true;
  }

  /** A POST's connection closed: its requests still waiting are no longer anyone's to answer. */
  private postClosed(post: PendingPost): void {
    for (const key of post.waiting) {
      if (this.pending.get(key) === post) this.pending.delete(key);
      // Nobody is left to read the answer: stop the work (the upstream gets a cancellation).
      this.inFlight.get(key)?.abort(new Error('the client closed the connection'));
    }
  }

  private runDirect(request: DirectRequest): void {
    const key = idKey(request.id);
    // No AbortSignal unless something asks for one (shared/callCancel.ts): most calls never do.
    const cancel = new CallCancel();
    this.inFlight.set(key, cancel);
    const meta = request.params?._meta as JsonObject | undefined;
    const progressToken = meta?.progressToken as string | number | undefined;
    const extra: RequestExtra = new DirectExtra(cancel, progressToken, meta, (p) => {
      if (progressToken === undefined || cancel.aborted) return;
      const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: merged(p, { progressToken }) };
      void this.send(progress as JSONRPCMessage, { relatedRequestId: request.id });
    });
    const client = this.client;
    if (client) {
      extra.caller = {
        session: this.sessionId,
        client: client.name,
        capabilities: () => client.capabilities(),
        ask: (asked) => this.requestClient(asked.method, asked.params, request.id, asked.signal),
      };
    }
    const done = (): boolean => {
      if (this.inFlight.get(key) === cancel) this.inFlight.delete(key);
      // A cancelled request was answered already (-32800), as the SDK server would not answer it.
      return !cancel.aborted;
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

  /**
   * Sends the client a request on the stream of the call it belongs to (the POST turns into SSE),
   * else (or with no `relatedId`) on the session's GET stream; resolves with the client's answer,
   * which comes in a later POST.
   */
  requestClient(
    method: string,
    params: JsonObject,
    relatedId: Id | undefined,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    const cancelledBy = (): Error =>
      signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason ?? 'cancelled'));
    if (signal.aborted) return Promise.reject(cancelledBy());
    const id = `sb-${++this.nextOutgoing}`;
    const key = idKey(id);
    return new Promise<JsonObject>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.outgoing.delete(key)) return;
        const error = cancelledBy();
        const params = { requestId: id, reason: error.message };
        const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params };
        this.writeToClient(cancelled as JSONRPCMessage, relatedId);
        reject(error);
      };
      const settle =
        <T>(done: (value: T) => void) =>
        (value: T): void => {
          signal.removeEventListener('abort', onAbort);
          done(value);
        };
      this.outgoing.set(key, { resolve: settle(resolve), reject: settle(reject) });
      signal.addEventListener('abort', onAbort, { once: true });
      if (!this.writeToClient({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage, relatedId)) {
        this.outgoing
          .get(key)
          ?.reject(
            new McpFailure(
              ErrorCodes.InternalError,
              `The ${method} request could not reach the client: no call of it is waiting ` +
                'and it has no open GET stream.',
            ),
          );
        this.outgoing.delete(key);
      }
    });
  }

  /** An answer to a request the broker sent: handed to whoever waits for it; false if not one. */
  private settleOutgoing(message: JSONRPCMessage): boolean {
    if ('method' in message || !('id' in message)) return false;
    const key = idKey((message as { id: Id }).id);
    const waiting = this.outgoing.get(key);
    if (!waiting) return false;
    this.outgoing.delete(key);
    const answer = message as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (answer.result && typeof answer.result === 'object') {
      waiting.resolve(answer.result as JsonObject);
    } else {
      // The client's error goes back to the upstream as it is: its code, message and data.
      const error = answer.error ?? {};
      const code = typeof error.code === 'number' ? error.code : ErrorCodes.InternalError;
      const text = typeof error.message === 'string' ? error.message : 'the client answered with an error';
      waiting.reject(new McpFailure(code, text, error.data));
    }
    return true;
  }

  /** Writes a message on a call's stream (upgrading its POST to SSE) or the GET stream; false if neither is open. */
  private writeToClient(message: JSONRPCMessage, relatedId: Id | undefined): boolean {
    if (this.closed) return false;
    const related = relatedId !== undefined ? this.pending.get(idKey(relatedId)) : undefined;
    if (related) {
      this.stream(related, message);
      return true;
    }
    if (!this.standalone) return false;
    writeEvent(this.standalone, message);
    return true;
  }

  private stream(post: PendingPost, message: JSONRPCMessage): void {
    if (!post.streaming) {
      post.streaming = true;
      post.res.writeHead(200, merged(SSE_HEADERS, post.headers));
      for (const earlier of post.responses) writeEvent(post.res, earlier);
      post.responses = [];
    }
    writeEvent(post.res, message);
  }

  openStandaloneStream(res: http.ServerResponse, headers: Record<string, string>): void {
    // A newer GET stream replaces an older one: the client reconnected.
    this.standalone?.end();
    res.writeHead(200, merged(SSE_HEADERS, headers));
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
          if (post.responses.length === 1) {
            endWithMessage(post.res, post.responses[0], 200, post.headers);
          } else {
            const body = joinBatch(post.responses.map(serialize));
            post.res.writeHead(
              200,
              merged(post.headers, {
                'content-type': 'application/json',
                'content-length': String(Buffer.byteLength(body)),
              }),
            );
            post.res.end(body);
          }
        }
      }
      return;
    }
    const related =
      options?.relatedRequestId !== undefined ? this.pending.get(idKey(options.relatedRequestId)) : undefined;
    if (related) {
      this.stream(related, message);
      return;
    }
    if (this.standalone) writeEvent(this.standalone, message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.standalone?.end();
    for (const cancel of this.inFlight.values()) cancel.abort(new Error('the session was closed'));
    this.inFlight.clear();
    for (const waiting of this.outgoing.values()) {
      waiting.reject(new McpFailure(ErrorCodes.ConnectionClosed, 'The client session closed before it answered.'));
    }
    this.outgoing.clear();
    for (const post of new Set(this.pending.values())) {
      if (!post.res.headersSent) writeJsonRpcError(post.res, 404, ErrorCodes.InvalidRequest, 'Session closed');
      else post.res.end();
    }
    this.pending.clear();
    this.onclose?.();
  }
}
