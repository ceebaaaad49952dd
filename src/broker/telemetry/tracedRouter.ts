// Every request the endpoint serves, in a SERVER span: the router (routing/router.ts) seen through
// a thin layer that names each request by its MCP method. Typed by shape, not by import, so that
// telemetry stays below routing (supervision and connection use it too). While telemetry is off the
// layer is not there at all: its methods are taken off, and each call is the router's own (a CPU
// profile showed the wrapper at ~2% of the broker's time with telemetry off).
import type { JsonObject } from '../shared/mcpTypes';
import { onTelemetryChange, telemetry, type ServedRequest, type TraceParent } from './telemetry';

interface Caller {
  sessionId: string;
  identity: { client: string };
  server?: string;
}

/** The router's methods this layer names (routing/requestContext.ts, Router). */
export interface TracedMethods {
  callTool(
    ctx: Caller,
    name: string,
    args: JsonObject,
    meta: JsonObject | undefined,
    ...rest: never[]
  ): Promise<JsonObject>;
  getPrompt(ctx: Caller, name: string, ...rest: never[]): Promise<JsonObject>;
  readResource(ctx: Caller, uri: string, ...rest: never[]): Promise<JsonObject>;
  complete(ctx: Caller, ...rest: never[]): Promise<JsonObject>;
  listTools(ctx: Caller, meta?: JsonObject): unknown[];
  listPrompts(ctx: Caller, meta?: JsonObject): unknown[];
  listResources(ctx: Caller, meta?: JsonObject): unknown[];
  listResourceTemplates(ctx: Caller, meta?: JsonObject): unknown[];
  sessionOpened?(ctx: Caller, ...rest: never[]): void;
  sessionClosed?(ctx: Caller): void;
}

type Method = Exclude<keyof TracedMethods, 'sessionOpened' | 'sessionClosed'>;

const MCP_METHODS: Record<Method, string> = {
  callTool: 'tools/call',
  getPrompt: 'prompts/get',
  readResource: 'resources/read',
  complete: 'completion/complete',
  listTools: 'tools/list',
  listPrompts: 'prompts/list',
  listResources: 'resources/list',
  listResourceTemplates: 'resources/templates/list',
};

/** A request's RequestExtra (routing/requestContext.ts) as this layer reads and completes it. */
interface Extra {
  signal?: unknown;
  meta?: JsonObject;
  trace?: TraceParent;
}

/** The RequestExtra among a method's arguments: where its span is handed down. */
function extraOf(method: Method, args: unknown[]): Extra | undefined {
  const at = method === 'callTool' ? args[4] : method === 'getPrompt' ? args[3] : args[2];
  if (typeof at === 'object' && at !== null && 'signal' in at) return at as Extra;
  return args.find((a) => (a as Extra | null)?.signal !== undefined) as Extra | undefined;
}

function served(method: Method, args: unknown[], extra: Extra | undefined): ServedRequest {
  const ctx = args[0] as Caller;
  const request: ServedRequest = {
    method: MCP_METHODS[method],
    sessionId: ctx.sessionId || undefined,
    client: ctx.identity.client,
    endpointServer: ctx.server,
  };
  if (method === 'callTool' || method === 'getPrompt' || method === 'readResource') request.target = args[1] as string;
  // tools/call names its _meta, a list has it second; the other methods carry it in their RequestExtra.
  if (method === 'callTool') request.meta = args[3] as JsonObject | undefined;
  else if (method.startsWith('list')) request.meta = args[1] as JsonObject | undefined;
  else request.meta = extra?.meta;
  return request;
}

/**
 * The router with each MCP method in a SERVER span when telemetry is on. The router stays the
 * prototype: its own calls of these methods (switchboard__call_tool calling a tool) are spans too.
 * While telemetry is off the traced methods are taken off, so each call finds the router's own.
 */
export function tracedRouter<R extends TracedMethods>(router: R): R {
  const traced = Object.create(router) as R;
  traceSessions(router, traced);
  const wrappers = new Map<Method, unknown>();
  for (const method of Object.keys(MCP_METHODS) as Method[]) {
    const inner = router[method] as (...args: unknown[]) => unknown;
    const list = method.startsWith('list');
    wrappers.set(method, function (this: R, ...args: unknown[]): unknown {
      const running = telemetry();
      // A list the endpoint serves is given its request's _meta (undefined or not); a lookup of the
      // broker's own (is this tool task-only?) is not, and is no request of anyone's.
      if (!running || (list && args.length < 2)) return inner.apply(this, args);
      const extra = list ? undefined : extraOf(method, args);
      return running.serve(served(method, args, extra), (trace) => {
        // The span goes down with the request (upstream's CLIENT span, the audit entry's trace id):
        // no AsyncLocalStorage on the per-call path.
        if (extra) extra.trace = trace;
        return inner.apply(this, args);
      });
    });
  }
  const put = (layer: Record<Method, unknown>, on: boolean): void => {
    for (const [method, wrapper] of wrappers) {
      if (on) layer[method] = wrapper;
      else delete layer[method];
    }
  };
  put(traced as Record<Method, unknown>, telemetry() !== undefined);
  // Held weakly: a router no one uses any more is not kept alive by telemetry's listeners.
  const holder = new WeakRef(traced);
  const unsubscribe = onTelemetryChange((on) => {
    const layer = holder.deref();
    if (!layer) return void unsubscribe();
    put(layer as Record<Method, unknown>, on);
  });
  return traced;
}

/** mcp.server.session.duration: a 2025 session's life, from its opening to its end. */
function traceSessions<R extends TracedMethods>(router: R, traced: R): void {
  const opened = new WeakMap<Caller, number>();
  const open = router.sessionOpened as ((...args: unknown[]) => void) | undefined;
  const close = router.sessionClosed as ((ctx: Caller) => void) | undefined;
  traced.sessionOpened = function (this: R, ...args: unknown[]): void {
    if (telemetry()) opened.set(args[0] as Caller, performance.now());
    open?.apply(this, args);
  } as R['sessionOpened'];
  traced.sessionClosed = function (this: R, ctx: Caller): void {
    const since = opened.get(ctx);
    const running = telemetry();
    if (since !== undefined && running) {
      running.sessionEnded(
        { client: ctx.identity.client, endpointServer: ctx.server },
        (performance.now() - since) / 1000,
      );
    }
    close?.call(this, ctx);
  } as R['sessionClosed'];
}
