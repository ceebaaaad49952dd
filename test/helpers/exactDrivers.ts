// The two SDK lines' clients as the exact-middle tests drive them (test/broker/exactMiddle.test.ts,
// test/broker/exactRaw.test.ts): one Driver interface over an SDK v1 client (2025-11-25) and an SDK
// v2 client (2026-07-28 where the server has it), what each was asked and saw, the aggregated /mcp
// seen as one server, and the normalisation that sets aside what the comparison may ignore.
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from './broker';

export type Json = Record<string, unknown>;

/** What a client is asked and sees during one scenario, on one path. */
export interface Seen {
  asked: Json[];
  progress: number[];
  /** Every notifications/message received (scenarios pick theirs by tag). */
  logs: Json[];
  /** The URIs of notifications/resources/updated received. */
  updated: string[];
}

/** One connected client of either SDK line, driven the same way. */
export interface Driver {
  seen: Seen;
  /** The URI of the note resource of the server this driver is for (set by the test). */
  note: string;
  protocol(): string | undefined;
  listTools(): Promise<Json[]>;
  callTool(name: string, args: Json, progress?: boolean): Promise<Json>;
  /** Calls a tool and cancels the call at its first progress notification (it is running then). */
  cancelDuring(name: string, args: Json): Promise<unknown>;
  /** Calls a tool at a log level, set the caller's era's way (logging/setLevel, or the request's _meta). */
  logged(name: string, args: Json, level: string): Promise<Json>;
  /**
   * Calls a tool as a 2025-11-25 task where the client has them (the v1 SDK: task-augmented
   * tools/call, tasks/get until it ends, tasks/result), else plainly (2026-07-28 has no such tasks).
   */
  taskCall(name: string, args: Json): Promise<Json>;
  /** A log message's logger as the server named it (/mcp prefixes the server's name). */
  logger(logger: unknown): unknown;
  /** Subscribes to a resource the caller's era's way (resources/subscribe, or a subscriptions/listen stream); returns the unsubscribe. */
  subscribe(uri: string): Promise<() => Promise<unknown>>;
  getPrompt(name: string, args: Record<string, string>): Promise<Json>;
  readResource(uri: string): Promise<Json>;
  close(): Promise<void>;
}

export const V = '2026-07-28';
export const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
export const ROOTS = [{ uri: 'file:///tmp/exact-root', name: 'exact root' }];
export const CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } };

/** The client's answers: the same on every path, so any difference is the path's. */
function answer(method: string, params: Json): Json {
  if (method === 'roots/list') return { roots: ROOTS };
  if (method === 'sampling/createMessage') {
    return { role: 'assistant', content: { type: 'text', text: 'hi there' }, model: 'test-model' };
  }
  if (params.mode === 'url') return { action: 'accept' };
  const message = String(params.message);
  return { action: 'accept', content: message.includes('colour') ? { colour: 'teal' } : { name: 'Ada' } };
}

/** A handler's record of a request: method and params, minus the per-call `_meta` (progress tokens). */
function record(seen: Seen, method: string, params: Json | undefined): Json {
  const { _meta: _drop, ...rest } = params ?? {};
  seen.asked.push({ method, params: rest });
  return answer(method, rest);
}

export async function v1Driver(target: { url?: string; command?: string[] }, token?: string): Promise<Driver> {
  const seen: Seen = { asked: [], progress: [], logs: [], updated: [] };
  const client = new Client({ name: 'exact-v1', version: '1' }, { capabilities: CAPABILITIES });
  client.setRequestHandler(ElicitRequestSchema, async (r) => record(seen, r.method, r.params) as never);
  client.setRequestHandler(CreateMessageRequestSchema, async (r) => record(seen, r.method, r.params) as never);
  client.setRequestHandler(ListRootsRequestSchema, async (r) => record(seen, r.method, r.params) as never);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.logs.push(n.params as Json));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.updated.push(n.params.uri));
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = target.url
    ? new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers } })
    : new StdioClientTransport({ command: target.command![0], args: target.command!.slice(1), stderr: 'ignore' });
  await client.connect(transport);
  const onprogress = (p: { progress: number }): void => void seen.progress.push(p.progress);
  return {
    seen,
    note: '',
    protocol: () => (transport as { protocolVersion?: string }).protocolVersion,
    listTools: async () => (await client.listTools()).tools as Json[],
    callTool: async (name, args, progress) =>
      (await client.callTool({ name, arguments: args }, undefined, progress ? { onprogress } : {})) as Json,
    cancelDuring: async (name, args) => {
      const controller = new AbortController();
      const options = { signal: controller.signal, onprogress: () => controller.abort() };
      return client.callTool({ name, arguments: args }, undefined, options);
    },
    logged: async (name, args, level) => {
      await client.setLoggingLevel(level as 'info');
      return (await client.callTool({ name, arguments: args })) as Json;
    },
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })) as Json,
    readResource: async (uri) => (await client.readResource({ uri })) as Json,
    taskCall: async (name, args) => {
      const created = await client.request(
        { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const id = created.task.taskId;
      let status = '';
      await waitFor(async () => {
        status = (await client.experimental.tasks.getTask(id)).status;
        return ['completed', 'failed', 'cancelled'].includes(status);
      }, `task ${id} to end`);
      const result = (await client.experimental.tasks.getTaskResult(id, CallToolResultSchema)) as Json;
      // Task ids are made per run (and prefixed on /mcp): the result must name the task it was asked for.
      const related = (result._meta as Json | undefined)?.[RELATED_TASK] as Json | undefined;
      if (related?.taskId === id) related.taskId = '<the task>';
      return { created: created.task.status, status, result };
    },
    subscribe: async (uri) => {
      await client.subscribeResource({ uri });
      return () => client.unsubscribeResource({ uri });
    },
    logger: (logger) => logger,
    close: () => client.close(),
  };
}

export async function v2Driver(target: { url?: string; command?: string[] }, token?: string): Promise<Driver> {
  const seen: Seen = { asked: [], progress: [], logs: [], updated: [] };
  // 'auto': 2026-07-28 where the server has it, else 2025-11-25 (a v1 server, direct).
  const client = new ClientV2(
    { name: 'exact-v2', version: '1' },
    { versionNegotiation: { mode: 'auto' }, capabilities: CAPABILITIES },
  );
  client.setNotificationHandler('notifications/message', (n: { params?: unknown }) => {
    seen.logs.push(n.params as Json);
  });
  client.setNotificationHandler('notifications/resources/updated', (n: { params: { uri: string } }) => {
    seen.updated.push(n.params.uri);
  });
  for (const method of ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const) {
    client.setRequestHandler(
      method,
      async (r: { params?: unknown }) => record(seen, method, r.params as Json) as never,
    );
  }
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = target.url
    ? new HttpV2(new URL(target.url), { requestInit: { headers } })
    : new StdioV2({ command: target.command![0], args: target.command!.slice(1), stderr: 'ignore' });
  await client.connect(transport);
  const onprogress = (p: { progress: number }): void => void seen.progress.push(p.progress);
  return {
    seen,
    note: '',
    protocol: () => client.getNegotiatedProtocolVersion(),
    listTools: async () => (await client.listTools()).tools as unknown as Json[],
    callTool: async (name, args, progress) =>
      (await client.callTool({ name, arguments: args }, progress ? { onprogress } : {})) as unknown as Json,
    cancelDuring: async (name, args) => {
      const controller = new AbortController();
      const options = { signal: controller.signal, onprogress: () => controller.abort() };
      return client.callTool({ name, arguments: args }, options);
    },
    logged: async (name, args, level) => {
      // 2026-07-28 has no logging/setLevel: a request asks for its own level in its _meta.
      if (client.getNegotiatedProtocolVersion() !== V) await client.setLoggingLevel(level as 'info');
      const _meta = client.getNegotiatedProtocolVersion() === V ? { [LOG_LEVEL]: level } : undefined;
      return (await client.callTool({ name, arguments: args, ...(_meta ? { _meta } : {}) })) as unknown as Json;
    },
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })) as unknown as Json,
    readResource: async (uri) => (await client.readResource({ uri })) as unknown as Json,
    taskCall: async (name, args) => ({
      result: (await client.callTool({ name, arguments: args })) as unknown as Json,
    }),
    subscribe: async (uri) => {
      if (client.getNegotiatedProtocolVersion() !== V) {
        await client.subscribeResource({ uri });
        return () => client.unsubscribeResource({ uri });
      }
      // 2026-07-28 has no resources/subscribe: a listen stream asks for the URI's updates.
      const listen = await client.listen({ resourceSubscriptions: [uri] });
      return () => listen.close();
    },
    logger: (logger) => logger,
    close: () => client.close(),
  };
}

/**
 * A driver on the aggregated /mcp, seen as if it were `server` alone: its names prefixed on the way
 * in, the prefix taken off its tools on the way out (resource URIs are not renamed). The only
 * difference /mcp may show (README, "What passes through"): the names.
 */
export function aggregated(d: Driver, server: string): Driver {
  const prefix = `${server}__`;
  return {
    ...d,
    listTools: async () =>
      (await d.listTools())
        .filter((t) => String(t.name).startsWith(prefix))
        .map((t) => ({ ...t, name: String(t.name).slice(prefix.length) })),
    callTool: (name, args, progress) => d.callTool(prefix + name, args, progress),
    cancelDuring: (name, args) => d.cancelDuring(prefix + name, args),
    logged: (name, args, level) => d.logged(prefix + name, args, level),
    taskCall: (name, args) => d.taskCall(prefix + name, args),
    logger: (logger) => (String(logger).startsWith(`${server}/`) ? String(logger).slice(server.length + 1) : logger),
    getPrompt: (name, args) => d.getPrompt(prefix + name, args),
  };
}

/** The `_meta` key set aside in results: who answered (the broker, through it). */
export const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

export function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (!value || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    if (k === '_meta' && v && typeof v === 'object') {
      const { [SERVER_INFO]: _drop, ...rest } = v as Json;
      if (Object.keys(rest).length) out[k] = normalize(rest);
      continue;
    }
    out[k] = normalize(v);
  }
  return out;
}

/** An error as the client sees it: code, message and data. */
export function failure(err: unknown): Json {
  const e = err as { code?: unknown; message?: unknown; data?: unknown };
  return { error: { code: e.code, message: String(e.message), data: e.data } };
}

/** The text of a tool result's first content block. */
export const text = (r: Json): string => String(((r.content as Json[] | undefined)?.[0] as Json | undefined)?.text);
