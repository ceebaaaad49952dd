// Every request the endpoint serves, in a SERVER span: the router (routing/router.ts) seen through
// a thin layer that names each request by its MCP method. Typed by shape, not by import, so that
// telemetry stays below routing (supervision and connection use it too). While telemetry is off each
// request costs one check of `telemetry()`.
import type { JsonObject } from '../shared/mcpTypes';
import { telemetry, type ServedRequest } from './telemetry';

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
  listTools(ctx: Caller): unknown[];
  listPrompts(ctx: Caller): unknown[];
  listResources(ctx: Caller): unknown[];
  listResourceTemplates(ctx: Caller): unknown[];
}

type Method = keyof TracedMethods;

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

function served(method: Method, args: unknown[]): ServedRequest {
  const ctx = args[0] as Caller;
  const request: ServedRequest = {
    method: MCP_METHODS[method],
    sessionId: ctx.sessionId || undefined,
    client: ctx.identity.client,
    endpointServer: ctx.server,
  };
  if (method === 'callTool' || method === 'getPrompt' || method === 'readResource') request.target = args[1] as string;
  if (method === 'callTool') request.meta = args[3] as JsonObject | undefined;
  return request;
}

/**
 * The router with each MCP method in a SERVER span when telemetry is on. The router stays the
 * prototype: its own calls of these methods (switchboard__call_tool calling a tool) are spans too.
 */
export function tracedRouter<R extends TracedMethods>(router: R): R {
  const traced = Object.create(router) as R;
  for (const method of Object.keys(MCP_METHODS) as Method[]) {
    const inner = router[method] as (...args: unknown[]) => unknown;
    (traced as Record<Method, unknown>)[method] = function (this: R, ...args: unknown[]): unknown {
      const running = telemetry();
      if (!running) return inner.apply(this, args);
      return running.serve(served(method, args), () => inner.apply(this, args));
    };
  }
  return traced;
}
