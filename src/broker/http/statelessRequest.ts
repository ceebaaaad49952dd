// The 2026-07-28 side of the endpoint: each POST is one request served on its own, with the
// caller's version and capabilities from its `_meta`: server/discover, the lists, calls (progress
// on the request's stream, cancellation by closing it, input_required for upstream questions),
// subscriptions/listen. It goes through the same Router as a session: the same scope, tool
// profile, access checks and audit.
import * as crypto from 'node:crypto';
import type * as http from 'node:http';
import type { CallCancel } from '../shared/callCancel';
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import type { Identity, RequestExtra, Router, SessionContext } from '../routing/requestContext';
import { Exchange, NO_CACHE_HINTS, withDefaults, withResultType } from './exchange';
import { InputRequiredCalls } from './inputRequired';
import { ListenStreams } from './listenStreams';
import type { SessionLimits } from './sessionLimits';
import {
  checkStatelessRequest,
  decodeHeaderValue,
  isStatelessFailure,
  StatelessCodes,
  LOG_LEVELS,
  META_LOG_LEVEL,
  META_SERVER_INFO,
  STATELESS_VERSIONS,
  removedMethodMessage,
  type StatelessRequest,
} from './statelessEnvelope';
import { errorBodyWithData, type Id } from './wire';
import { paramHeaders, paramValue } from '../connection/statelessHeaders';
import { merged } from '../shared/objects';

/** What the broker offers a 2026-07-28 caller (server/discover). */
const CAPABILITIES = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  completions: {},
};

const LIST_KEYS = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
} as const;

export class StatelessEndpoint {
  private readonly calls: InputRequiredCalls;
  private readonly listens: ListenStreams;
  /** The versions named in a -32022 error and in server/discover: this era's, then the sessions'. */
  readonly supported: readonly string[];

  constructor(
    private readonly router: Router,
    private readonly version: string,
    legacyVersions: readonly string[],
    listenLimits?: SessionLimits,
    parkTimeoutMs?: number,
  ) {
    this.calls = new InputRequiredCalls(parkTimeoutMs);
    this.listens = new ListenStreams(router, listenLimits);
    this.supported = [...STATELESS_VERSIONS, ...legacyVersions];
  }

  /** Listen streams and parked calls keep the broker in use. */
  get busy(): boolean {
    return this.listens.size > 0 || this.calls.size > 0;
  }

  listChanged(kind: 'tools' | 'prompts' | 'resources', server?: string): void {
    this.listens.listChanged(kind, server);
  }

  resourceUpdated(uri: string): void {
    this.listens.resourceUpdated(uri);
  }

  close(): void {
    this.listens.close();
    this.calls.close();
  }

  /** Serves one POSTed message of the 2026-07-28 era. */
  serve(
    message: unknown,
    headers: http.IncomingHttpHeaders,
    res: http.ServerResponse,
    identity: Identity,
    server: string | undefined,
  ): void {
    // This era defines no client notification over HTTP (closing a stream cancels): accepted, ignored.
    if (message && typeof message === 'object' && 'method' in message && !('id' in message)) {
      res.writeHead(202).end();
      return;
    }
    // A method this era does not have is a 404 whatever else is wrong with the request.
    const m = message as { method?: unknown; id?: unknown } | undefined;
    const early = typeof m?.method === 'string' ? removedMethodMessage(m.method) : undefined;
    if (early && (typeof m?.id === 'string' || typeof m?.id === 'number')) return this.notFound(res, m.id, early);
    const checked = checkStatelessRequest(message, headers, this.supported);
    if (isStatelessFailure(checked)) {
      const body = errorBodyWithData(checked.code, checked.message, checked.id, checked.data);
      res.writeHead(checked.status, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      });
      res.end(body);
      return;
    }
    if (server !== undefined && !this.router.hasServer(server)) {
      return this.notFound(res, checked.id, `Not found: no server named '${server}' in this registry`);
    }
    const ctx: SessionContext = { sessionId: `stateless:${crypto.randomUUID()}`, identity, server };
    const exchange = new Exchange(res, checked.id);
    try {
      this.checkParamHeaders(ctx, checked, headers);
      this.dispatch(ctx, checked, exchange, res);
    } catch (err) {
      exchange.error(err);
    }
  }

  private dispatch(ctx: SessionContext, req: StatelessRequest, exchange: Exchange, res: http.ServerResponse): void {
    const params = req.params;
    switch (req.method) {
      case 'server/discover':
        return exchange.result(this.discover(ctx));
      case 'tools/list':
      case 'prompts/list':
      case 'resources/list':
      case 'resources/templates/list':
        return exchange.result(this.list(ctx, req.method, req.params._meta as JsonObject | undefined));
      case 'subscriptions/listen': {
        const filter = (params.notifications ?? {}) as JsonObject;
        this.listens.open(ctx, exchange, filter).catch((err: unknown) => exchange.error(err));
        return;
      }
      case 'tools/call':
      case 'prompts/get':
      case 'resources/read':
        return this.call(ctx, req, exchange);
      case 'completion/complete':
        this.router
          .complete(
            ctx,
            params,
            this.extra(exchange.cancel, req, () => exchange),
          )
          .then(
            (result) => exchange.result(withResultType(result)),
            (err: unknown) => exchange.error(err),
          );
        return;
      default:
        return this.notFound(res, req.id, `Method not found: ${req.method.slice(0, 100)}`);
    }
  }

  private discover(ctx: SessionContext): JsonObject {
    const instructions = this.router.instructions(ctx.server);
    return {
      resultType: 'complete',
      supportedVersions: [...this.supported],
      capabilities: CAPABILITIES,
      ...(instructions ? { instructions } : {}),
      _meta: { [META_SERVER_INFO]: this.serverInfo(ctx) },
      // Private: what a caller sees depends on its token (scope, tool profile).
      ttlMs: 0,
      cacheScope: 'private',
    };
  }

  /** `meta`: the request's _meta, where telemetry reads the caller's trace context. */
  private list(ctx: SessionContext, method: keyof typeof LIST_KEYS, meta: JsonObject | undefined): JsonObject {
    const key = LIST_KEYS[method];
    const items =
      key === 'tools'
        ? this.router.listTools(ctx, meta)
        : key === 'prompts'
          ? this.router.listPrompts(ctx, meta)
          : key === 'resources'
            ? this.router.listResources(ctx, meta)
            : this.router.listResourceTemplates(ctx, meta);
    // The server's own hints on its per-server endpoint; else stale at once and private (the
    // catalog changes whenever an upstream does, subscriptions/listen says when; /mcp is per token).
    return {
      resultType: 'complete',
      [key]: items,
      ...(this.router.listHints?.(ctx, key) ?? NO_CACHE_HINTS),
      _meta: { [META_SERVER_INFO]: this.serverInfo(ctx) },
    };
  }

  private serverInfo(ctx: SessionContext): JsonObject {
    return { name: ctx.server ? `switchboard/${ctx.server}` : 'mcp-switchboard', version: this.version };
  }

  /** tools/call, prompts/get, resources/read: the methods that may answer input_required. */
  private call(ctx: SessionContext, req: StatelessRequest, exchange: Exchange): void {
    const params = req.params;
    const target = req.method === 'resources/read' ? params.uri : params.name;
    const input = { identity: ctx.identity, method: req.method, target, capabilities: req.capabilities };
    // A requestState the broker did not make is the server's: passed on with the retry, which its
    // name (or URI) routes to the same server on either endpoint.
    if (this.calls.parks(params.requestState)) {
      this.calls.resume(exchange, input, params.requestState, params.inputResponses);
      return;
    }
    const run = this.runner(ctx, req);
    this.calls.start(exchange, input, (cancel, ask, channel) => {
      const extra = this.extra(cancel, req, channel);
      // Between two 2026-07-28 parties the exchange is theirs (a 2025 upstream still asks via `ask`).
      const { inputResponses, requestState } = params;
      extra.passThrough = { capabilities: req.capabilities, inputResponses, requestState };
      extra.caller = {
        session: ctx.sessionId,
        client: ctx.identity.client,
        protocol: STATELESS_VERSIONS[0],
        // Elicitation and sampling are always passed on to `ask`, which answers a caller that did
        // not declare them with the revision's MissingRequiredClientCapability error.
        capabilities: () => ({ sampling: { tools: {} }, elicitation: { form: {}, url: {} }, ...req.capabilities }),
        ask,
      };
      return run(extra);
    });
  }

  private runner(ctx: SessionContext, req: StatelessRequest): (extra: RequestExtra) => Promise<JsonObject> {
    const params = req.params;
    const level = (params._meta as JsonObject)[META_LOG_LEVEL];
    if (level !== undefined && (typeof level !== 'string' || !LOG_LEVELS.includes(level))) {
      throw invalid(`_meta["${META_LOG_LEVEL}"] must be one of ${LOG_LEVELS.join(', ')}`);
    }
    switch (req.method) {
      case 'tools/call': {
        if (typeof params.name !== 'string') throw invalid('tools/call needs a string "name"');
        const args = params.arguments ?? {};
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw invalid('tools/call "arguments" must be an object');
        }
        const meta = forwardedMeta(params._meta as JsonObject);
        this.refuseTaskOnly(ctx, params.name);
        return (extra) => this.router.callTool(ctx, params.name as string, args as JsonObject, meta, extra);
      }
      case 'prompts/get': {
        if (typeof params.name !== 'string') throw invalid('prompts/get needs a string "name"');
        const args = (params.arguments ?? {}) as Record<string, string>;
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw invalid('prompts/get "arguments" must be an object');
        }
        return (extra) => this.router.getPrompt(ctx, params.name as string, args, extra);
      }
      default: {
        if (typeof params.uri !== 'string') throw invalid('resources/read needs a string "uri"');
        // 2026-07-28 requires cache hints here: the upstream's own, else honest ones (exchange.ts).
        return async (extra) => {
          const result = await this.router.readResource(ctx, params.uri as string, extra);
          return result.resultType === 'input_required' ? result : withDefaults(result, NO_CACHE_HINTS);
        };
      }
    }
  }

  /**
   * A tools/call's `Mcp-Param-*` headers, checked against the tool's `x-mcp-header` declarations as
   * its server would (each argument given must be mirrored, and equal): -32020 HeaderMismatch.
   */
  private checkParamHeaders(ctx: SessionContext, req: StatelessRequest, headers: http.IncomingHttpHeaders): void {
    if (req.method !== 'tools/call' || typeof req.params.name !== 'string') return;
    const tool = this.router.listTools(ctx).find((t) => t.name === req.params.name);
    for (const decl of paramHeaders(tool?.inputSchema)) {
      const body = paramValue(req.params.arguments, decl);
      if (body === undefined) continue;
      const name = `Mcp-Param-${decl.header}`;
      const sent = headers[name.toLowerCase()];
      const value = typeof sent === 'string' ? decodeHeaderValue(sent) : undefined;
      if (value === body) continue;
      // In the words the SDK v2 server uses, so that a caller sees the same error through the broker.
      const carries = `${decl.path.join('.')}=${JSON.stringify(rawArgument(req.params.arguments, decl.path))}`;
      const detail =
        value === undefined
          ? `the body carries ${carries} but the ${name} header is absent`
          : `the ${name} header decodes to ${JSON.stringify(value)} but the body carries ${carries}`;
      throw new McpFailure(
        StatelessCodes.HeaderMismatch,
        `Bad Request: the request headers and body disagree: ${detail}`,
        { mismatch: { header: name, body: detail } },
      );
    }
  }

  /** A tool its server runs only as a (2025-11-25) task cannot be called by a 2026-07-28 caller. */
  private refuseTaskOnly(ctx: SessionContext, name: string): void {
    const tool = this.router.listTools(ctx).find((t) => t.name === name);
    const execution = tool?.execution as JsonObject | undefined;
    if (execution?.taskSupport !== 'required') return;
    throw new McpFailure(
      ErrorCodes.MethodNotFound,
      `Tool '${name.slice(0, 100)}' runs only as a task (execution.taskSupport 'required'): in 2026-07-28 tasks are ` +
        'the io.modelcontextprotocol/tasks extension, which the broker does not offer; call it with "task" ' +
        'from a 2025-11-25 session',
    );
  }

  private extra(cancel: CallCancel, req: StatelessRequest, channel: () => Exchange | undefined): RequestExtra {
    const meta = req.params._meta as JsonObject;
    const progressToken = meta.progressToken as string | number | undefined;
    const level = meta[META_LOG_LEVEL];
    const extra = new StatelessExtra(cancel, progressToken, meta, (p) => {
      if (progressToken === undefined || cancel.aborted) return;
      channel()?.notify('notifications/progress', merged(p, { progressToken }));
    });
    if (typeof level === 'string') {
      // The upstream is asked for this level; a message below it (an upstream that ignores the ask) is dropped.
      const floor = LOG_LEVELS.indexOf(level);
      extra.log = {
        level,
        send: (p) => {
          if (cancel.aborted || LOG_LEVELS.indexOf(String(p.level)) < floor) return;
          channel()?.notify('notifications/message', p);
        },
      };
    }
    return extra;
  }

  private notFound(res: http.ServerResponse, id: Id, message: string): void {
    const body = errorBodyWithData(ErrorCodes.MethodNotFound, message, id);
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  }
}

/**
 * A 2026-07-28 request's RequestExtra. A class, so that `signal` is a getter on the prototype (an
 * object literal with a getter takes V8's slow path on every call), made only when read.
 */
class StatelessExtra implements RequestExtra {
  caller?: RequestExtra['caller'];
  trace?: RequestExtra['trace'];
  log?: RequestExtra['log'];
  passThrough?: RequestExtra['passThrough'];
  constructor(
    readonly cancel: CallCancel,
    readonly progressToken: string | number | undefined,
    readonly meta: JsonObject,
    readonly sendProgress: RequestExtra['sendProgress'],
  ) {}

  get signal(): AbortSignal {
    return this.cancel.signal;
  }
}

const invalid = (message: string): McpFailure => new McpFailure(ErrorCodes.InvalidParams, message);

/** The caller's `_meta` minus the envelope keys, which describe the caller, not the upstream call. */
function forwardedMeta(meta: JsonObject): JsonObject | undefined {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(meta)) if (!k.startsWith('io.modelcontextprotocol/')) out[k] = v;
  return Object.keys(out).length ? out : undefined;
}

/** The argument at `path`, as the caller sent it. */
function rawArgument(args: unknown, path: string[]): unknown {
  let node = args;
  for (const key of path) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}
