// Creating one MCP session: the SDK `Server` (initialize, ping, lists, subscriptions, logging) over
// a SessionTransport, and the direct per-call path that takes tools/call, prompts/get,
// resources/read and completion/complete straight to the Router.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
// Errors thrown as McpFailure (an Error with a numeric `code`) reach the client with that code and
// message as they are; the SDK's McpError would prefix the message with "MCP error N:".
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import type { Router, SessionContext } from '../routing/requestContext';
import { sharedSchemaValidator } from '../shared/schemaValidator';
import { BROKER_TASKS_CAPABILITY, TASK_METHODS } from '../routing/taskRoutes';
import { SessionTransport, type DirectHandler } from './sessionTransport';
import { cachedListResult } from './wire';

export interface McpSession {
  ctx: SessionContext;
  server: Server;
  transport: SessionTransport;
  /** When the client last sent a request on it (idle eviction, oldest-first). */
  lastSeen: number;
  /** Resource URIs this session subscribed to. */
  subscriptions: Set<string>;
}

const CAPABILITIES = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  logging: {},
  completions: {},
  tasks: BROKER_TASKS_CAPABILITY,
};

/**
 * The per-call path: it skips the SDK's per-method schema parse of request and result. Params are
 * checked here for what the broker needs; results pass as they came.
 */
function directHandler(router: Router, ctx: SessionContext): DirectHandler {
  // Not async: the router's promise is handed on as it is (an async wrapper costs the call extra
  // microtask turns); what throws here is turned into a rejection by the transport (runDirect).
  return (request, extra) => {
    const params = (request.params ?? {}) as JsonObject;
    switch (request.method) {
      case 'tools/call': {
        if (typeof params.name !== 'string') {
          throw new McpFailure(ErrorCodes.InvalidParams, 'tools/call needs a string "name"');
        }
        const args = params.arguments ?? {};
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new McpFailure(ErrorCodes.InvalidParams, 'tools/call "arguments" must be an object');
        }
        const task = params.task;
        if (task !== undefined && (typeof task !== 'object' || task === null || Array.isArray(task))) {
          throw new McpFailure(ErrorCodes.InvalidParams, 'tools/call "task" must be an object');
        }
        const meta = params._meta as JsonObject | undefined;
        return router.callTool(ctx, params.name, args as JsonObject, meta, extra, task as JsonObject | undefined);
      }
      case 'prompts/get': {
        if (typeof params.name !== 'string') {
          throw new McpFailure(ErrorCodes.InvalidParams, 'prompts/get needs a string "name"');
        }
        const args = (params.arguments ?? {}) as Record<string, string>;
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new McpFailure(ErrorCodes.InvalidParams, 'prompts/get "arguments" must be an object');
        }
        return router.getPrompt(ctx, params.name, args, extra);
      }
      case 'resources/read': {
        if (typeof params.uri !== 'string') {
          throw new McpFailure(ErrorCodes.InvalidParams, 'resources/read needs a string "uri"');
        }
        return router.readResource(ctx, params.uri, extra);
      }
      case 'completion/complete':
        return router.complete(ctx, params, extra);
      default:
        // tasks/*: on the direct path too, so that requests a server sends during tasks/result reach this caller.
        if (TASK_METHODS.has(request.method) && router.taskRequest) {
          return router.taskRequest(ctx, request.method, params, extra);
        }
        throw new McpFailure(ErrorCodes.MethodNotFound, `Method not found: ${request.method.slice(0, 100)}`);
    }
  };
}

/** A new session, not yet connected: the caller registers it, then calls `connect`. */
export function createMcpSession(ctx: SessionContext, router: Router, version: string): McpSession {
  const server = new Server(
    { name: ctx.server ? `switchboard/${ctx.server}` : 'mcp-switchboard', version },
    {
      capabilities: CAPABILITIES,
      instructions: router.instructions(ctx.server),
      jsonSchemaValidator: sharedSchemaValidator,
    },
  );
  const direct = directHandler(router, ctx);
  const transport = new SessionTransport(ctx.sessionId, direct, {
    name: ctx.identity.client,
    capabilities: () => server.getClientCapabilities() as JsonObject | undefined,
  });
  const session: McpSession = { ctx, server, transport, lastSeen: Date.now(), subscriptions: new Set() };
  // Notifications for this session alone (its tasks' status) go on its GET stream.
  router.sessionOpened?.(ctx, (method, params) => void transport.send({ jsonrpc: '2.0', method, params }));

  // Lists are served whole from the catalog's cache: one page, no upstream round trip.
  // A list's _meta carries the caller's trace context (traceparent), for telemetry's span.
  const metaOf = (request: { params?: { _meta?: object } }) => request.params?._meta as JsonObject | undefined;
  server.setRequestHandler(
    ListToolsRequestSchema,
    (request) => cachedListResult('tools', router.listTools(ctx, metaOf(request))) as never,
  );
  server.setRequestHandler(
    ListPromptsRequestSchema,
    (request) => cachedListResult('prompts', router.listPrompts(ctx, metaOf(request))) as never,
  );
  server.setRequestHandler(
    ListResourcesRequestSchema,
    (request) => cachedListResult('resources', router.listResources(ctx, metaOf(request))) as never,
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    (request) => cachedListResult('resourceTemplates', router.listResourceTemplates(ctx, metaOf(request))) as never,
  );
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
  server.fallbackRequestHandler = async (request) =>
    (await direct(request as { method: string; params?: JsonObject }, {
      signal: new AbortController().signal,
      sendProgress: () => undefined,
    })) as never;
  return session;
}
