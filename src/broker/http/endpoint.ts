// The broker's one local endpoint: MCP Streamable HTTP on loopback. This file is the entry: the
// HTTP server, the order of the checks and the session table (caps, eviction). The checks are in
// http/guards.ts, the body in http/requestBody.ts, the encoding in http/wire.ts, a session's SDK
// server and direct path in http/mcpSession.ts and its transport in http/sessionTransport.ts; the
// session caps in http/sessionLimits.ts, and what sessions are told unasked (list changes, updates,
// upstream logs within their rate) in http/sessionNotifier.ts. A request of the 2026-07-28 era (its
// version header or its `_meta` says so) has no session: http/statelessRequest.ts serves it.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { EditorLink } from '../supervision/editorLink';
import { ErrorCodes, type JsonObject } from '../shared/mcpTypes';
import type { Identity, Router, SessionContext } from '../routing/requestContext';
import {
  bearerToken,
  bodyTimedOut,
  checkDeclaredLength,
  checkGetAccept,
  checkHost,
  checkOrigin,
  checkPostHeaders,
  checkProtocolVersion,
  checkSessionOwner,
  isStatelessVersion,
  routeOf,
  SESSION_PROTOCOL_VERSIONS,
  SESSION_ID_REQUIRED,
  SESSION_NOT_FOUND,
  unauthorized,
  type Rejection,
} from './guards';
import { DEFAULT_LOG_RATE, type LogRate } from './logRateLimit';
import { SessionNotifier } from './sessionNotifier';
import { offerAsEditor, reportWhenInitialized, type SessionOpened } from './sessionHandshake';

export type { SessionOpened } from './sessionHandshake';
import { createMcpSession, type McpSession } from './mcpSession';
import { drainThenClose, isBodyError, parseMessages, readBody } from './requestBody';
import { DEFAULT_LISTEN_LIMITS, DEFAULT_SESSION_LIMITS, makeRoom, type SessionLimits } from './sessionLimits';
import { claimedVersion } from './statelessEnvelope';
import { StatelessEndpoint } from './statelessRequest';
import { errorBodyWithData, idOfBody, writeJsonRpcError, type Id } from './wire';
import { serveMetrics } from '../telemetry/metricsRoute';
import { merged } from '../shared/objects';

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
  /** Called when a 2025-era session completes its handshake: which client, which revision (for the audit log). */
  onSessionOpened?(opened: SessionOpened): void;
  /** Caps on open sessions, per client and in all (default 64 and 512). */
  sessionLimits?: Partial<SessionLimits>;
  /** Caps on open 2026-07-28 `subscriptions/listen` streams, per client and in all (default 64 and 512). */
  listenLimits?: Partial<SessionLimits>;
  /** How long a request may take to arrive, body included, from its first byte (default 30 s). */
  bodyTimeoutMs?: number;
  /** Log messages forwarded per upstream (default 50 a second, bursts of 100). */
  logRate?: LogRate;
  /** How long a 2026-07-28 call parked on input_required waits for the caller's retry (default 5 minutes). */
  parkTimeoutMs?: number;
  /** Where an operator session that declares itself the editor is registered (editorLink.ts). */
  editor?: EditorLink;
}

/** A session whose handshake completed, as the audit log records it. */

/** What initialize settles on (the SDK's own rule, which does not expose its answer). */
export function negotiatedSessionVersion(requested: unknown): string {
  return typeof requested === 'string' && SESSION_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : SESSION_PROTOCOL_VERSIONS[0];
}

const STATELESS_METHOD_NOT_ALLOWED: Rejection = {
  status: 405,
  message:
    'Method not allowed: 2026-07-28 has no session and no GET stream; POST subscriptions/listen for notifications',
  headers: { allow: 'POST' },
};

const METHOD_NOT_ALLOWED: Rejection = {
  status: 405,
  message: 'Method not allowed',
  headers: { allow: 'GET, POST, DELETE' },
};

export class Endpoint {
  private readonly http: http.Server;
  private readonly sessions = new Map<string, McpSession>();
  private readonly maxBody: number;
  private readonly limits: SessionLimits;
  private readonly bodyTimeoutMs: number;
  /** The response of each request whose body is still arriving, by socket: for the 408. */
  private readonly readingBody = new WeakMap<Socket, http.ServerResponse>();
  private readonly notifier: SessionNotifier;
  /** The 2026-07-28 requests: no session, each served on its own. */
  private readonly stateless: StatelessEndpoint;
  /** Pending "dropped N log messages" reports, by server. */
  private evictTimer?: NodeJS.Timeout;
  private lastActivity = Date.now();
  /** The last Host header that passed: an agent sends the same one on every request. */
  private acceptedHost?: string;
  port = 0;

  constructor(private readonly opts: EndpointOptions) {
    this.maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
    this.limits = merged(DEFAULT_SESSION_LIMITS, opts.sessionLimits);
    this.bodyTimeoutMs = opts.bodyTimeoutMs ?? 30_000;
    this.notifier = new SessionNotifier(this.sessions, opts.logRate ?? DEFAULT_LOG_RATE);
    this.stateless = new StatelessEndpoint(
      opts.router,
      opts.version,
      SESSION_PROTOCOL_VERSIONS,
      merged(DEFAULT_LISTEN_LIMITS, opts.listenLimits),
      opts.parkTimeoutMs,
    );
    // Node's requestTimeout is the body deadline: it runs from the request's first byte until the
    // whole body is in, and Node checks it for all connections at once (no timer per request).
    const serverOptions: http.ServerOptions = {
      keepAliveTimeout: 60_000,
      requestTimeout: this.bodyTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(this.bodyTimeoutMs / 4))),
    };
    this.http = http.createServer(serverOptions, (req, res) => this.handle(req, res));
    this.http.on('connection', (socket) => socket.setNoDelay(true));
    this.http.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.onClientError(err, socket));
  }

  /**
   * A connection Node gives up on. A POST whose body is late gets a 408 with a JSON-RPC error (Node
   * writes a bare one only when nobody listens for clientError), then the connection is closed;
   * anything else is just closed.
   */
  private onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    const res = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? this.readingBody.get(socket) : undefined;
    if (!res || res.headersSent || !socket.writable) {
      socket.destroy();
      return;
    }
    this.readingBody.delete(socket);
    res.once('finish', () => socket.destroy());
    // A client that does not read its answer does not keep the connection either.
    setTimeout(() => socket.destroy(), 1000).unref();
    this.reject(res, bodyTimedOut(this.bodyTimeoutMs));
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
    if (this.stateless.busy) return 0;
    return Date.now() - this.lastActivity;
  }

  async close(): Promise<void> {
    clearInterval(this.evictTimer);
    this.notifier.close();
    this.stateless.close();
    await Promise.all([...this.sessions.values()].map((s) => s.server.close().catch(() => undefined)));
    this.sessions.clear();
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  /** Tells sessions that a list changed; `server` limits it to sessions that can see that server. */
  listChanged(kind: 'tools' | 'prompts' | 'resources', server?: string): void {
    this.stateless.listChanged(kind, server);
    this.notifier.listChanged(kind, server);
  }

  /** Tells one session that its tool list changed (toolMode search: it found tools). */
  toolListChanged(sessionId: string): void {
    this.notifier.toolListChanged(sessionId);
  }

  resourceUpdated(uri: string): void {
    this.stateless.resourceUpdated(uri);
    this.notifier.resourceUpdated(uri);
  }

  /** Forwards an upstream's log message to the sessions that can see that server, within its rate. */
  log(server: string, params: JsonObject): void {
    this.notifier.log(server, params);
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

  private async closeSession(session: McpSession): Promise<void> {
    if (!this.sessions.delete(session.ctx.sessionId)) return;
    await session.server.close().catch(() => undefined);
  }

  private reject(res: http.ServerResponse, rejection: Rejection, id: Id | null = null): void {
    this.opts.onRejected?.(rejection.message, rejection.status);
    const code = rejection.code ?? (rejection.status === 404 ? ErrorCodes.InvalidRequest : -32000);
    if (rejection.data === undefined) {
      return writeJsonRpcError(res, rejection.status, code, rejection.message, id, rejection.headers);
    }
    const body = errorBodyWithData(code, rejection.message, id, rejection.data);
    res.writeHead(rejection.status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      ...rejection.headers,
    });
    res.end(body);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.lastActivity = Date.now();
    this.opts.onRequest?.();
    // DNS rebinding: a page on evil.example that resolves to 127.0.0.1 still sends its own Host/Origin.
    const host = req.headers.host;
    if (host !== this.acceptedHost || host === undefined) {
      const foreign = checkHost(host, this.port);
      if (foreign) return this.reject(res, foreign);
      this.acceptedHost = host;
    }
    const foreignOrigin = checkOrigin(req.headers.origin);
    if (foreignOrigin) return this.reject(res, foreignOrigin);

    const route = routeOf(req.url, req.method);
    if ('status' in route) return this.reject(res, route);
    if (route.kind === 'health') {
      const { version, instance } = this.opts;
      const body = JSON.stringify({ status: 'ok', name: 'mcp-switchboard', version, instance });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }

    const token = bearerToken(req.headers.authorization);
    const identity = token ? this.opts.authenticate(token) : undefined;
    if (!identity) return this.reject(res, unauthorized(token));
    if (route.kind === 'metrics') return serveMetrics(identity.operator, res);
    const server = route.server;

    const versionHeader = req.headers['mcp-protocol-version'];
    const badVersion = checkProtocolVersion(versionHeader);
    // A POST's error names its request (the id is in the body): read it first, then refuse.
    if (badVersion && req.method === 'POST') return this.handlePost(req, res, identity, server, undefined, badVersion);
    if (badVersion) return this.reject(res, badVersion);
    if (isStatelessVersion(versionHeader) && req.method !== 'POST') {
      // 2026-07-28 has no session to GET a stream of or to DELETE.
      return this.reject(res, STATELESS_METHOD_NOT_ALLOWED);
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
        return this.reject(res, METHOD_NOT_ALLOWED);
    }
  }

  private findSession(
    res: http.ServerResponse,
    identity: Identity,
    server: string | undefined,
    sessionId: string | undefined,
  ): McpSession | undefined {
    if (!sessionId) {
      this.reject(res, SESSION_ID_REQUIRED);
      return undefined;
    }
    const session = this.sessions.get(sessionId);
    if (!session || session.ctx.server !== server) {
      this.reject(res, SESSION_NOT_FOUND);
      return undefined;
    }
    const foreign = checkSessionOwner(session.ctx.identity, identity);
    if (foreign) {
      this.reject(res, foreign);
      return undefined;
    }
    session.lastSeen = Date.now();
    return session;
  }

  private handleGet(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    identity: Identity,
    server: string | undefined,
    sessionId: string | undefined,
  ): void {
    const notAcceptable = checkGetAccept(req.headers.accept);
    if (notAcceptable) return this.reject(res, notAcceptable);
    const session = this.findSession(res, identity, server, sessionId);
    if (!session) return;
    session.transport.openStandaloneStream(res, { 'mcp-session-id': session.ctx.sessionId });
  }

  private handlePost(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    identity: Identity,
    server: string | undefined,
    sessionId: string | undefined,
    /** Refuse the request once its body is read (its id known): an unsupported protocol version. */
    refusal?: Rejection,
  ): void {
    const badHeaders =
      checkPostHeaders(req.headers['content-type'], req.headers.accept) ??
      checkDeclaredLength(req.headers['content-length'], this.maxBody);
    if (badHeaders) {
      if (badHeaders.status === 413) {
        this.reject(res, badHeaders);
        drainThenClose(req);
        return;
      }
      return this.reject(res, badHeaders);
    }
    this.readingBody.set(req.socket, res);
    readBody(
      req,
      this.maxBody,
      (text) => {
        this.readingBody.delete(req.socket);
        if (refusal) return this.reject(res, refusal, idOfBody(text));
        this.onPostBody(text, req.headers, res, identity, server, sessionId);
      },
      (tooLarge) => {
        this.readingBody.delete(req.socket);
        this.reject(res, tooLarge);
      },
    );
  }

  private onPostBody(
    text: string,
    headers: http.IncomingHttpHeaders,
    res: http.ServerResponse,
    identity: Identity,
    server: string | undefined,
    sessionId: string | undefined,
  ): void {
    const parsed = parseMessages(text);
    if (isBodyError(parsed)) return writeJsonRpcError(res, 400, parsed.code, parsed.message, parsed.id);
    // The era is chosen per request: the 2026-07-28 header, or (without a session) a `_meta` that
    // claims a version, is served statelessly; initialize and session traffic as before.
    const single = parsed.messages.length === 1 ? parsed.messages[0] : undefined;
    if (
      isStatelessVersion(headers['mcp-protocol-version']) ||
      (sessionId === undefined && !parsed.initialize && claimedVersion(single) !== undefined)
    ) {
      return this.stateless.serve(single ?? parsed.messages, headers, res, identity, server);
    }
    if (parsed.initialize) {
      if (server !== undefined && !this.opts.router.hasServer(server)) {
        return this.reject(res, { status: 404, message: `Not found: no server named '${server}' in this registry` });
      }
      const room = makeRoom(this.sessions.values(), identity, this.limits);
      if (!Array.isArray(room)) return this.reject(res, room, (parsed.initialize as { id: Id }).id);
      for (const session of room) void this.closeSession(session);
      const session = this.createSession(identity, server);
      const requested = ((parsed.initialize as { params?: JsonObject }).params ?? {}).protocolVersion;
      if (this.opts.onSessionOpened)
        reportWhenInitialized(session, negotiatedSessionVersion(requested), requested, this.opts.onSessionOpened);
      session.transport.deliver(parsed.messages, res, { 'mcp-session-id': session.ctx.sessionId });
      return;
    }
    const session = this.findSession(res, identity, server, sessionId);
    if (!session) return;
    session.transport.deliver(parsed.messages, res, { 'mcp-session-id': session.ctx.sessionId });
  }

  private createSession(identity: Identity, server: string | undefined): McpSession {
    const ctx: SessionContext = { sessionId: crypto.randomUUID(), identity, server };
    const session = createMcpSession(ctx, this.opts.router, this.opts.version);
    session.server.onclose = () => {
      if (this.sessions.get(ctx.sessionId) === session) this.sessions.delete(ctx.sessionId);
      this.opts.router.sessionClosed?.(ctx);
      this.opts.editor?.leave(ctx.sessionId);
    };
    if (this.opts.editor && identity.operator && server === undefined) offerAsEditor(session, this.opts.editor);
    this.sessions.set(ctx.sessionId, session);
    void session.server.connect(session.transport);
    return session;
  }

  /** Audits the session once its client says it is initialized (chained before any other hook). */
}
