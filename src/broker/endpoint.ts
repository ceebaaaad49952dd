// The broker's one local endpoint: MCP Streamable HTTP on loopback (the SDK's server side is
// imported here only). node:http is used directly, with a transport that answers a POST with a
// plain JSON body and upgrades to an SSE stream only when a request sends notifications first.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  SubscribeRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsubscribeRequestSchema,
  type JSONRPCMessage,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
// Errors thrown as McpFailure (an Error with a numeric `code`) reach the client with that code and
// message as they are; the SDK's McpError would prefix the message with "MCP error N:".
import { ErrorCodes, McpFailure, type JsonObject, type Prompt, type Resource, type ResourceTemplate, type Tool } from './mcpTypes';
import { isMessage, MAX_JSON_DEPTH, nestedDeeperThan } from './messageShape';
import { rememberJson, rememberedJson } from './rawJson';
import { sharedSchemaValidator } from './schemaValidator';
import type { Identity, RequestExtra, Router, SessionContext } from './routing';


export interface EndpointOptions {
  port: number;
  host?: string;
  authenticate(token: string): Identity | undefined;
  router: Router;
  maxBodyBytes?: number;
  idleSessionMs?: number;
  version: string;
  /** Identifies which workspace this broker serves, so a discovery record can be verified. */
  instance: string;
  /** Called for every request that is turned away, for the audit log (never with the token). */
  onRejected?(reason: string, status: number): void;
  /** Called at the start of every HTTP request, before any check (the idle collector's clock). */
  onRequest?(): void;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' };

type Id = string | number;
const idKey = (id: Id): string => `${typeof id}:${id}`;

/**
 * Requests the session transport hands straight to the router, past the SDK's protocol layer:
 * the per-call path. Everything else (initialize, ping, lists, subscriptions, logging) goes
 * through the SDK server.
 */
const DIRECT_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read', 'completion/complete']);

type DirectHandler = (request: { method: string; params?: JsonObject }, extra: RequestExtra) => Promise<JsonObject>;

/** An error as a JSON-RPC error object, the way the SDK's server would have written it. */
function toJsonRpcError(err: unknown): { code: number; message: string; data?: unknown } {
  const e = (err ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  const error: { code: number; message: string; data?: unknown } = {
    code: typeof e.code === 'number' && Number.isSafeInteger(e.code) ? e.code : ErrorCodes.InternalError,
    message: typeof e.message === 'string' && e.message ? e.message : 'Internal error',
  };
  if (e.data !== undefined) error.data = e.data;
  return error;
}

interface PendingPost {
  res: http.ServerResponse;
  waiting: Set<string>;
  responses: JSONRPCMessage[];
  streaming: boolean;
  headers: Record<string, string>;
}

/** One MCP session's transport: POST bodies in, JSON or SSE out, plus the optional GET stream. */
class SessionTransport implements Transport {
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

  async start(): Promise<void> { /* the endpoint feeds messages in */ }

  get busy(): boolean {
    return this.pending.size > 0 || this.standalone !== undefined;
  }

  /** Delivers one POST's messages; the response is written once every request in it is answered. */
  deliver(messages: JSONRPCMessage[], res: http.ServerResponse, headers: Record<string, string>): void {
    const requestIds = messages.filter((m) => 'method' in m && 'id' in m).map((m) => idKey((m as { id: Id }).id));
    // An id still waiting for its answer (or twice in one batch) would be answered once, to one
    // POST, and leave the other waiting forever: refuse the reuse instead.
    if (new Set(requestIds).size !== requestIds.length || requestIds.some((key) => this.pending.has(key))) {
      writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, 'Invalid Request: a request id must not be reused while a request with that id is in flight in this session', null, headers);
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
      if (this.direct && 'method' in message && 'id' in message && DIRECT_METHODS.has(message.method)) this.runDirect(message as { id: Id; method: string; params?: JsonObject });
      else this.onmessage?.(message);
    }
    // The SDK sends no response to a request the client cancelled (as the spec allows), which
    // would leave that request's POST open until the client hangs up: end it with an error
    // (-32800, "request cancelled") that the client, having cancelled, ignores.
    for (const message of messages) {
      if (!('method' in message) || message.method !== 'notifications/cancelled') continue;
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if ((typeof id === 'string' || typeof id === 'number') && this.pending.has(idKey(id))) {
        this.inFlight.get(idKey(id))?.abort(new Error('cancelled by the client'));
        void this.send({ jsonrpc: '2.0', id, error: { code: -32800, message: 'Request cancelled by the client' } } as JSONRPCMessage);
      }
    }
  }

  private runDirect(request: { id: Id; method: string; params?: JsonObject }): void {
    const key = idKey(request.id);
    const controller = new AbortController();
    this.inFlight.set(key, controller);
    const progressToken = (request.params?._meta as JsonObject | undefined)?.progressToken as string | number | undefined;
    const extra: RequestExtra = {
      signal: controller.signal,
      progressToken,
      sendProgress: (p) => {
        if (progressToken === undefined || controller.signal.aborted) return;
        void this.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken } } as JSONRPCMessage, { relatedRequestId: request.id });
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
      (result) => { if (done()) void this.send({ jsonrpc: '2.0', id: request.id, result } as JSONRPCMessage); },
      (err) => { if (done()) void this.send({ jsonrpc: '2.0', id: request.id, error: toJsonRpcError(err) } as JSONRPCMessage); },
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
          const body = post.responses.length === 1 ? serialize(post.responses[0]) : joinBatch(post.responses.map(serialize));
          post.res.writeHead(200, { ...post.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
          post.res.end(body);
        }
      }
      return;
    }
    const related = options?.relatedRequestId !== undefined ? this.pending.get(idKey(options.relatedRequestId)) : undefined;
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

/**
 * Results whose JSON is computed once (catalog lists: the same object until the catalog changes),
 * so a `tools/list` of a thousand tools costs a string concatenation instead of a serialization.
 */
const listResults = new WeakMap<object, object>();

function cachedListResult(key: 'tools' | 'prompts' | 'resources' | 'resourceTemplates', list: object[]): object {
  let result = listResults.get(list);
  if (!result) {
    result = { [key]: list };
    rememberJson(result, JSON.stringify(result));
    listResults.set(list, result);
  }
  return result;
}

/** A message's JSON; a response whose result is an upstream's bytes becomes bytes around them. */
function serialize(message: JSONRPCMessage): string | Buffer {
  const result = (message as { result?: unknown }).result;
  // Catalog lists, and large upstream results kept as the upstream's own text or bytes. The id
  // goes last so that it is the one a client reads even from a result with a duplicate key.
  const cached = rememberedJson(result);
  if (cached === undefined) return JSON.stringify(message);
  const head = '{"jsonrpc":"2.0","result":';
  const tail = `,"id":${JSON.stringify((message as { id: Id }).id)}}`;
  return typeof cached === 'string' ? head + cached + tail : Buffer.concat([Buffer.from(head), cached, Buffer.from(tail)]);
}

function joinBatch(parts: (string | Buffer)[]): string | Buffer {
  if (parts.every((p) => typeof p === 'string')) return `[${parts.join(',')}]`;
  const pieces: Buffer[] = [Buffer.from('[')];
  parts.forEach((p, i) => pieces.push(...(i ? [Buffer.from(',')] : []), typeof p === 'string' ? Buffer.from(p) : p));
  pieces.push(Buffer.from(']'));
  return Buffer.concat(pieces);
}

function writeEvent(res: http.ServerResponse, message: JSONRPCMessage): void {
  const raw = rememberedJson((message as { result?: unknown }).result);
  let data: string;
  if (Buffer.isBuffer(raw)) {
    // An upstream's unchecked bytes would break the event stream if they held a bare CR; on a
    // stream the result is checked and written again (the plain JSON answer is the fast path).
    const id = (message as { id: Id }).id;
    try {
      data = JSON.stringify({ jsonrpc: '2.0', id, result: JSON.parse(raw.toString('utf8')) });
    } catch {
      data = JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCodes.InternalError, message: 'The upstream server sent a result that is not valid JSON.' } });
    }
  } else {
    data = serialize(message) as string;
  }
  res.write(`event: message\ndata: ${data}\n\n`);
}

function writeJsonRpcError(res: http.ServerResponse, status: number, code: number, message: string, id: Id | null = null, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...extraHeaders });
  res.end(body);
}

interface Session {
  ctx: SessionContext;
  server: Server;
  transport: SessionTransport;
  lastSeen: number;
  subscriptions: Set<string>;
}


export class Endpoint {
  private readonly http: http.Server;
  private readonly sessions = new Map<string, Session>();
  private readonly maxBody: number;
  private evictTimer?: NodeJS.Timeout;
  private lastActivity = Date.now();
  port = 0;

  constructor(private readonly opts: EndpointOptions) {
    this.maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
    this.http = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => this.handle(req, res));
    this.http.on('connection', (socket) => socket.setNoDelay(true));
    this.http.on('clientError', (_err, socket) => socket.destroy());
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.opts.port, this.opts.host ?? '127.0.0.1', () => resolve());
    });
    this.port = (this.http.address() as AddressInfo).port;
    this.acceptedHost = undefined;
    const idle = this.opts.idleSessionMs ?? 30 * 60_000;
    this.evictTimer = setInterval(() => this.evictIdle(idle), Math.max(250, Math.min(idle / 2, 60_000)));
    this.evictTimer.unref();
    return this.port;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /**
   * How long nobody has used the broker: 0 while any session holds a stream or waits for an
   * answer. A client that vanished without DELETE stops counting once it stops sending.
   */
  idleMs(): number {
    for (const session of this.sessions.values()) if (session.transport.busy) return 0;
    return Date.now() - this.lastActivity;
  }

  sessionsOf(): SessionContext[] {
    return [...this.sessions.values()].map((s) => s.ctx);
  }

  async close(): Promise<void> {
    clearInterval(this.evictTimer);
    await Promise.all([...this.sessions.values()].map((s) => s.server.close().catch(() => undefined)));
    this.sessions.clear();
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  /** Tells sessions that a list changed; `server` limits it to sessions that can see that server. */
  listChanged(kind: 'tools' | 'prompts' | 'resources', server?: string): void {
    for (const session of this.sessions.values()) {
      if (server !== undefined && session.ctx.server !== undefined && session.ctx.server !== server) continue;
      const send = kind === 'tools' ? session.server.sendToolListChanged() : kind === 'prompts' ? session.server.sendPromptListChanged() : session.server.sendResourceListChanged();
      send.catch(() => undefined);
    }
  }

  resourceUpdated(uri: string): void {
    for (const session of this.sessions.values()) {
      if (session.subscriptions.has(uri)) session.server.sendResourceUpdated({ uri }).catch(() => undefined);
    }
  }

  /** Forwards an upstream's log message to the sessions that can see that server. */
  log(server: string, params: JsonObject): void {
    for (const session of this.sessions.values()) {
      if (session.ctx.server !== undefined && session.ctx.server !== server) continue;
      const logger = session.ctx.server ? (params.logger as string | undefined) : `${server}${params.logger ? `/${String(params.logger)}` : ''}`;
      session.server.sendLoggingMessage({ ...params, logger } as LoggingMessageNotification['params']).catch(() => undefined);
    }
  }

  /** Ends every session of a client (its token was revoked or its definition removed). */
  dropClient(client: string): void {
    for (const session of [...this.sessions.values()]) {
      if (session.ctx.identity.client === client && !session.ctx.identity.operator) void this.closeSession(session);
    }
  }

  private evictIdle(idleMs: number): void {
    const now = Date.now();
    for (const session of [...this.sessions.values()]) {
      if (!session.transport.busy && now - session.lastSeen > idleMs) void this.closeSession(session);
    }
  }

  private async closeSession(session: Session): Promise<void> {
    if (!this.sessions.delete(session.ctx.sessionId)) return;
    await session.server.close().catch(() => undefined);
  }

  private reject(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    this.opts.onRejected?.(message, status);
    writeJsonRpcError(res, status, status === 404 ? ErrorCodes.InvalidRequest : -32000, message, null, headers);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.lastActivity = Date.now();
    this.opts.onRequest?.();
    // DNS rebinding: a page on evil.example that resolves to 127.0.0.1 still sends its own Host/Origin.
    if (!this.isLoopbackHost(req.headers.host)) return this.reject(res, 403, 'Forbidden: the Host header must name this loopback endpoint');
    const origin = req.headers.origin;
    if (origin !== undefined && !this.isLoopbackOrigin(origin)) return this.reject(res, 403, 'Forbidden: requests from this Origin are not allowed');

    const url = req.url ?? '/';
    const pathname = url.split('?', 1)[0];
    if (pathname === '/health' && req.method === 'GET') {
      const body = JSON.stringify({ status: 'ok', name: 'mcp-switchboard', version: this.opts.version, instance: this.opts.instance });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    let server: string | undefined;
    if (pathname !== '/mcp') {
      const m = /^\/servers\/([a-z][a-z0-9-]{0,30})\/mcp$/.exec(pathname);
      if (!m) return this.reject(res, 404, `Not found: the MCP endpoint is /mcp (or /servers/<name>/mcp)`);
      server = m[1];
    }

    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined;
    const identity = token ? this.opts.authenticate(token) : undefined;
    if (!identity) {
      return this.reject(res, 401, token ? 'Unauthorized: this token is not valid (revoked or from another broker)' : 'Unauthorized: send "Authorization: Bearer <token>"; see `switchboard status` for where the token is', { 'www-authenticate': 'Bearer realm="switchboard"' });
    }

    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return this.reject(res, 400, `Bad Request: unsupported MCP protocol version ${version.slice(0, 40)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    }

    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = typeof sessionHeader === 'string' ? sessionHeader : undefined;

    switch (req.method) {
      case 'POST':
        return this.handlePost(req, res, identity, server, sessionId);
      case 'GET':
        return this.handleGet(req, res, identity, server, sessionId);
      case 'DELETE': {
        const session = this.findSession(res, identity, server, sessionId);
        if (!session) return;
        void this.closeSession(session).then(() => res.writeHead(200).end());
        return;
      }
      default:
        res.setHeader('allow', 'GET, POST, DELETE');
        return this.reject(res, 405, 'Method not allowed');
    }
  }

  /** The last Host header that passed: an agent sends the same one on every request. */
  private acceptedHost?: string;

  private isLoopbackHost(host: string | undefined): boolean {
    if (!host) return false;
    if (host === this.acceptedHost) return true;
    if (!this.checkLoopbackHost(host)) return false;
    this.acceptedHost = host;
    return true;
  }

  private checkLoopbackHost(host: string): boolean {
    const m = /^(\[::1\]|[^:]+)(?::(\d+))?$/.exec(host.toLowerCase());
    if (!m || !LOOPBACK_HOSTS.has(m[1])) return false;
    return m[2] === undefined ? false : Number(m[2]) === this.port;
  }

  private isLoopbackOrigin(origin: string): boolean {
    try {
      const u = new URL(origin);
      return (u.protocol === 'http:' || u.protocol === 'https:') && LOOPBACK_HOSTS.has(u.hostname === '::1' ? '[::1]' : u.hostname.replace(/^\[|\]$/g, '') === '::1' ? '[::1]' : u.hostname);
    } catch {
      return false;
    }
  }

  private findSession(res: http.ServerResponse, identity: Identity, server: string | undefined, sessionId: string | undefined): Session | undefined {
    if (!sessionId) {
      this.reject(res, 400, 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const session = this.sessions.get(sessionId);
    if (!session || session.ctx.server !== server) {
      this.reject(res, 404, 'Session not found: it expired or was closed; initialize a new one');
      return undefined;
    }
    if (session.ctx.identity.client !== identity.client) {
      this.reject(res, 403, 'Forbidden: this session belongs to another client');
      return undefined;
    }
    session.lastSeen = Date.now();
    return session;
  }

  private handleGet(req: http.IncomingMessage, res: http.ServerResponse, identity: Identity, server: string | undefined, sessionId: string | undefined): void {
    if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
      return this.reject(res, 406, 'Not Acceptable: a GET stream needs "Accept: text/event-stream"');
    }
    const session = this.findSession(res, identity, server, sessionId);
    if (!session) return;
    session.transport.openStandaloneStream(res, { 'mcp-session-id': session.ctx.sessionId });
  }

  private handlePost(req: http.IncomingMessage, res: http.ServerResponse, identity: Identity, server: string | undefined, sessionId: string | undefined): void {
    const contentType = String(req.headers['content-type'] ?? '');
    if (!/^application\/json\b/i.test(contentType)) {
      return this.reject(res, 415, 'Unsupported Media Type: send "Content-Type: application/json"');
    }
    const accept = String(req.headers.accept ?? '*/*');
    if (!(accept.includes('application/json') || accept.includes('*/*')) || !(accept.includes('text/event-stream') || accept.includes('*/*'))) {
      return this.reject(res, 406, 'Not Acceptable: accept both application/json and text/event-stream');
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > this.maxBody) {
      res.setHeader('connection', 'close');
      this.reject(res, 413, `Payload too large: the limit is ${this.maxBody} bytes`);
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let aborted = false;
    req.on('data', (chunk: Buffer) => {
      if (aborted) return;
      size += chunk.length;
      if (size > this.maxBody) {
        aborted = true;
        res.setHeader('connection', 'close');
        this.reject(res, 413, `Payload too large: the limit is ${this.maxBody} bytes`);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (aborted) return;
      const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
      this.onPostBody(text, res, identity, server, sessionId);
    });
    req.on('error', () => { aborted = true; });
  }

  private onPostBody(text: string, res: http.ServerResponse, identity: Identity, server: string | undefined, sessionId: string | undefined): void {
    if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
      return writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, `Invalid Request: the JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return writeJsonRpcError(res, 400, ErrorCodes.ParseError, 'Parse error: the body is not valid JSON');
    }
    const batch = Array.isArray(parsed);
    const messages = batch ? (parsed as unknown[]) : [parsed];
    if (messages.length === 0) return writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, 'Invalid Request: empty batch');
    if (messages.length > 100) return writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, 'Invalid Request: batches are limited to 100 messages');
    for (const m of messages) {
      if (!isMessage(m)) {
        const id = m && typeof m === 'object' && (typeof (m as { id?: unknown }).id === 'string' || typeof (m as { id?: unknown }).id === 'number') ? (m as { id: Id }).id : null;
        return writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0", a string "method" or a result/error, an object "params", a string or integer "id", no other top-level keys)', id);
      }
    }
    const list = messages as JSONRPCMessage[];
    const initialize = list.find((m) => 'method' in m && m.method === 'initialize');
    if (initialize) {
      if (list.length > 1) return writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, 'Invalid Request: initialize must be sent on its own');
      if (!('id' in initialize)) return writeJsonRpcError(res, 400, ErrorCodes.InvalidRequest, 'Invalid Request: initialize must be a request with an id');
      if (server !== undefined && !this.opts.router.hasServer(server)) {
        return this.reject(res, 404, `Not found: no server named '${server}' in this registry`);
      }
      const session = this.createSession(identity, server);
      session.transport.deliver(list, res, { 'mcp-session-id': session.ctx.sessionId });
      return;
    }
    const session = this.findSession(res, identity, server, sessionId);
    if (!session) return;
    session.transport.deliver(list, res, { 'mcp-session-id': session.ctx.sessionId });
  }

  private createSession(identity: Identity, serverName: string | undefined): Session {
    const sessionId = crypto.randomUUID();
    const ctx: SessionContext = { sessionId, identity, server: serverName };
    const router = this.opts.router;
    const server = new Server(
      { name: serverName ? `switchboard/${serverName}` : 'mcp-switchboard', version: this.opts.version },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          logging: {},
          completions: {},
        },
        instructions: router.instructions(serverName),
        jsonSchemaValidator: sharedSchemaValidator,
      },
    );
    // The per-call path (calls, reads, gets) skips the SDK's per-method schema parse of request
    // and result: params are checked here for what the broker needs, results pass as they came.
    const direct: DirectHandler = async (request, extra) => {
      const params = (request.params ?? {}) as JsonObject;
      const meta = params._meta as JsonObject | undefined;
      switch (request.method) {
        case 'tools/call': {
          if (typeof params.name !== 'string') throw new McpFailure(ErrorCodes.InvalidParams, 'tools/call needs a string "name"');
          const args = params.arguments ?? {};
          if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new McpFailure(ErrorCodes.InvalidParams, 'tools/call "arguments" must be an object');
          return router.callTool(ctx, params.name as string, args as JsonObject, meta, extra);
        }
        case 'prompts/get': {
          if (typeof params.name !== 'string') throw new McpFailure(ErrorCodes.InvalidParams, 'prompts/get needs a string "name"');
          const args = (params.arguments ?? {}) as Record<string, string>;
          if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new McpFailure(ErrorCodes.InvalidParams, 'prompts/get "arguments" must be an object');
          return router.getPrompt(ctx, params.name as string, args, extra);
        }
        case 'resources/read': {
          if (typeof params.uri !== 'string') throw new McpFailure(ErrorCodes.InvalidParams, 'resources/read needs a string "uri"');
          return router.readResource(ctx, params.uri as string, extra);
        }
        case 'completion/complete':
          return router.complete(ctx, params, extra);
        default:
          throw new McpFailure(ErrorCodes.MethodNotFound, `Method not found: ${request.method.slice(0, 100)}`);
      }
    };
    const transport = new SessionTransport(sessionId, direct);
    const session: Session = { ctx, server, transport, lastSeen: Date.now(), subscriptions: new Set() };

    // Lists are served whole from the catalog's cache: one page, no upstream round trip.
    server.setRequestHandler(ListToolsRequestSchema, () => cachedListResult('tools', router.listTools(ctx)) as never);
    server.setRequestHandler(ListPromptsRequestSchema, () => cachedListResult('prompts', router.listPrompts(ctx)) as never);
    server.setRequestHandler(ListResourcesRequestSchema, () => cachedListResult('resources', router.listResources(ctx)) as never);
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => cachedListResult('resourceTemplates', router.listResourceTemplates(ctx)) as never);
    server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      await router.subscribe(ctx, request.params.uri);
      session.subscriptions.add(request.params.uri);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      session.subscriptions.delete(request.params.uri);
      await router.unsubscribe(ctx, request.params.uri);
      return {};
    });
    // Methods nobody handles: the direct path answers them MethodNotFound, with a readable message.
    server.fallbackRequestHandler = async (request) => direct(request as { method: string; params?: JsonObject }, { signal: new AbortController().signal, sendProgress: () => undefined }) as never;
    server.onclose = () => {
      if (this.sessions.get(sessionId) === session) this.sessions.delete(sessionId);
    };
    this.sessions.set(sessionId, session);
    void server.connect(transport);
    return session;
  }
}
