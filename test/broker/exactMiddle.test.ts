// The exact-middle matrix (issue 30): {SDK v1 client (2025-11-25), SDK v2 client (2026-07-28 where
// the other side has it)} × {SDK v1 server, SDK v2 server serving both eras; stdio and Streamable
// HTTP} × {direct, through the broker's /servers/<name>/mcp}. Each scenario runs on both paths and
// asserts that what the client receives is equal: the result or the error, what its handlers were
// asked (elicitation, sampling, roots) and the progress it saw. Set aside, and only these: JSON-RPC
// ids, and in `_meta` the server identity stamp io.modelcontextprotocol/serverInfo (the broker
// names itself there, as the revision asks of whoever answers). An after() hook prints the
// passed/total per cell.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  CallToolResultSchema,
  CreateTaskResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  BROKER_JS,
  connect,
  fixture,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  startHttpFixture,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';

type Json = Record<string, unknown>;
type ClientKind = 'v1 client 2025-11-25' | 'v2 client 2026-07-28';
const CLIENTS: ClientKind[] = ['v1 client 2025-11-25', 'v2 client 2026-07-28'];
const SERVERS = {
  'v1 server stdio': { name: 'v1s', script: 'exact-v1.mjs', http: false, note: 'exact://v1/stdio/note' },
  'v1 server http': { name: 'v1h', script: 'exact-v1.mjs', http: true, note: 'exact://v1/http/note' },
  'v2 server (both eras) stdio': { name: 'v2s', script: 'exact-v2.mjs', http: false, note: 'exact://v2/stdio/note' },
  'v2 server (both eras) http': { name: 'v2h', script: 'exact-v2.mjs', http: true, note: 'exact://v2/http/note' },
} as const;
type ServerKind = keyof typeof SERVERS;
/** The broker's two endpoints, each compared with direct. */
type PathKind = '/servers/<n>/mcp' | '/mcp';
const PATHS: PathKind[] = ['/servers/<n>/mcp', '/mcp'];

/** What a client is asked and sees during one scenario, on one path. */
interface Seen {
  asked: Json[];
  progress: number[];
  /** Every notifications/message received (scenarios pick theirs by tag). */
  logs: Json[];
  /** The URIs of notifications/resources/updated received. */
  updated: string[];
}

/** One connected client of either SDK line, driven the same way. */
interface Driver {
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

const V = '2026-07-28';
const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const ROOTS = [{ uri: 'file:///tmp/exact-root', name: 'exact root' }];
const CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } };

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

async function v1Driver(target: { url?: string; command?: string[] }, token?: string): Promise<Driver> {
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

async function v2Driver(target: { url?: string; command?: string[] }, token?: string): Promise<Driver> {
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
function aggregated(d: Driver, server: string): Driver {
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
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

function normalize(value: unknown): unknown {
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
function failure(err: unknown): Json {
  const e = err as { code?: unknown; message?: unknown; data?: unknown };
  return { error: { code: e.code, message: String(e.message), data: e.data } };
}

interface Scenario {
  name: string;
  /** Only on these servers (a scenario whose tool the others do not have). */
  only?: (server: ServerKind) => boolean;
  run(d: Driver): Promise<unknown>;
}

const call =
  (name: string, args: Json = {}, progress = false) =>
  (d: Driver): Promise<unknown> =>
    d.callTool(name, args, progress);

const SCENARIOS: Scenario[] = [
  {
    name: 'tools/list',
    run: async (d) => (await d.listTools()).sort((a, b) => String(a.name).localeCompare(String(b.name))),
  },
  { name: 'call echo', run: call('echo', { text: 'same' }) },
  { name: 'JSON-RPC error', run: call('fail') },
  { name: 'isError result', run: call('broken') },
  { name: 'unknown tool', run: call('nope') },
  { name: 'progress', run: call('steps', { steps: 3 }, true) },
  { name: 'form elicitation', run: call('ask') },
  { name: 'elicitation during the call (2025 style)', run: call('push-ask') },
  { name: 'two questions', run: call('multi') },
  { name: 'two rounds', run: call('rounds') },
  { name: 'sampling', run: call('sample') },
  { name: 'roots', run: call('roots') },
  { name: 'URL elicitation', run: call('url') },
  {
    // Cancelled once running; then asked of the server whether the call saw it (it may take a moment).
    name: 'cancellation',
    run: async (d) => {
      const key = crypto.randomUUID();
      const cancelled = await d.cancelDuring('hang', { key }).then(
        (result) => ({ result }),
        (err: unknown) => ({ error: (err as Error).name }),
      );
      let seen = '';
      await waitFor(
        async () => (seen = text(await d.callTool('cancelled', { key }))) === 'yes',
        'the server saw the cancellation',
        10_000,
      ).catch(() => undefined);
      return { cancelled, serverSaw: seen };
    },
  },
  {
    // Level info: what a caller is sent of four messages (debug, info, warning, error) and how.
    name: 'log messages',
    run: async (d) => {
      const tag = crypto.randomUUID();
      const result = await d.logged('logs', { tag }, 'info');
      const mine = (): Json[] => d.seen.logs.filter((l) => String(l.data).endsWith(tag));
      // A session's log messages may come on its own stream, after the result: the last one is awaited.
      if (d.protocol() !== V) {
        await waitFor(() => mine().some((l) => l.level === 'error'), 'the error-level message', 5_000).catch(
          () => undefined,
        );
      }
      const logs = mine().map((l) => ({
        ...l,
        logger: d.logger(l.logger),
        data: String(l.data).replace(tag, '<tag>'),
      }));
      return { result, logs };
    },
  },
  {
    // Subscribed the caller's era's way, a tool changes the resource: the update reaches the caller.
    name: 'subscriptions',
    run: async (d) => {
      const unsubscribe = await d.subscribe(d.note);
      try {
        const touched = await d.callTool('touch', {});
        await waitFor(() => d.seen.updated.length > 0, 'resources/updated', 5_000).catch(() => undefined);
        return { touched, updated: [...d.seen.updated] };
      } finally {
        await unsubscribe();
      }
    },
  },
  {
    // 2025-11-25 tasks: only the SDK v1 has them (the v2 server's tasks are the 2026-07-28 extension).
    name: 'tasks',
    only: (server) => server.startsWith('v1'),
    run: (d) => d.taskCall('job', { text: 'later' }),
  },
  { name: 'prompts/get', run: (d) => d.getPrompt('greet', { name: 'Ada' }) },
  { name: 'resources/read', run: (d) => d.readResource(d.note) },
];

/** A difference from direct that the README explains, and the check that it is that one alone. */
interface Explained {
  applies(client: ClientKind, server: ServerKind, scenario: string, path: PathKind): boolean;
  check(through: Json, direct: Json): void;
}

const got = (o: Json): Json => o.got as Json;
/** The text of a tool result's first content block. */
const text = (r: Json): string => String(((r.content as Json[] | undefined)?.[0] as Json | undefined)?.text);

const EXPLAINED: Explained[] = [
  {
    // The broker answers a tool name it has not listed with the JSON-RPC error the spec gives
    // (-32602, its own words) and never forwards it: a tool the server added since its last listing
    // is not approved yet (tool pins). A v2 server answers the same code; a v1 server an isError result.
    applies: (_c, _s, scenario) => scenario === 'unknown tool',
    check: (through, direct) => {
      const t = got(through).error as Json;
      assert.equal(t.code, -32602);
      assert.match(String(t.message), /Unknown tool '(v[12][sh]__)?nope'/);
      const d = got(direct);
      if (d.error) assert.equal((d.error as Json).code, -32602);
      else assert.equal(d.isError, true, JSON.stringify(d));
    },
  },
  {
    // Direct, the v2 client falls back to 2025-11-25 (a v1 server has no 2026-07-28); through the
    // broker it speaks 2026-07-28, and there it drops execution.taskSupport (tasks are an extension).
    applies: (c, s, scenario) => c.startsWith('v2') && s.startsWith('v1') && scenario === 'tools/list',
    check: (through, direct) => {
      const tools = (direct.got as Json[]).map(({ execution: _drop, ...tool }) => tool);
      assert.deepEqual(through, { ...direct, got: tools });
    },
  },
  {
    // 2026-07-28 requires cache hints on resources/read; a server spoken to in 2025-11-25 (a v1
    // server; the dual-era stdio child, one pipe in one era) gives none, so the broker sets honest
    // ones (stale at once, private to the caller).
    applies: (c, s, scenario) =>
      c.startsWith('v2') &&
      (s.startsWith('v1') || s === 'v2 server (both eras) stdio') &&
      scenario === 'resources/read',
    check: (through, direct) => {
      assert.deepEqual(through, { ...direct, got: { ...got(direct), ttlMs: 0, cacheScope: 'private' } });
    },
  },
  {
    // One pipe speaks one era: the broker keeps a 2025-11-25 session to a dual-era stdio child, so a
    // tool that asks during the call works for a 2026-07-28 caller, which direct it cannot.
    applies: (c, s, scenario) =>
      c.startsWith('v2') && s === 'v2 server (both eras) stdio' && scenario.includes('during'),
    check: (through, direct) => {
      assert.equal(got(direct).isError, true);
      assert.deepEqual(got(through).content, [{ type: 'text', text: 'hello Ada' }]);
      assert.equal((through.asked as Json[]).length, 1);
    },
  },
  {
    // A 2025-11-25 upstream's log messages belong to the broker's session with it, not to a call (on
    // stdio nothing says which call one came from): a 2026-07-28 caller, which has no stream but its
    // request's, is given none of them. Direct, the v2 client speaks 2025-11-25 to a v1 server and
    // 2026-07-28 to the dual-era stdio server (which answers a request's level itself).
    applies: (c, s, scenario) =>
      c.startsWith('v2') && (s.startsWith('v1') || s === 'v2 server (both eras) stdio') && scenario === 'log messages',
    check: (through, direct) => {
      assert.deepEqual(
        (got(direct).logs as Json[]).map((l) => l.level),
        ['info', 'warning', 'error'],
      );
      assert.deepEqual(through, { ...direct, got: { ...got(direct), logs: [] } });
    },
  },
];

async function outcome(d: Driver, s: Scenario): Promise<Json> {
  d.seen.asked = [];
  d.seen.progress = [];
  d.seen.logs = [];
  d.seen.updated = [];
  let got: unknown;
  try {
    got = await s.run(d);
  } catch (err) {
    got = failure(err);
  }
  return normalize({ got, asked: d.seen.asked, progress: d.seen.progress }) as Json;
}

describe('exact in the middle: /servers/<name>/mcp and /mcp equal direct (names aside), in both eras', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  const http: Partial<Record<ServerKind, { url: string; stop(): Promise<void> }>> = {};
  const drivers = new Map<string, Driver>();
  const tally = new Map<string, { passed: number; explained: number; total: number }>();

  before(async () => {
    const files: Record<string, string> = {};
    for (const [kind, s] of Object.entries(SERVERS) as [ServerKind, (typeof SERVERS)[ServerKind]][]) {
      if (s.http) {
        http[kind] = await startHttpFixture(s.script);
        files[`mcp-servers.d/${s.name}.yaml`] =
          `name: ${s.name}\ntrust: trusted\ntransport: http\nurl: ${http[kind]!.url}\n`;
      } else files[`mcp-servers.d/${s.name}.yaml`] = fixtureServer(s.name, s.script);
    }
    const root = tempDir('sb-exact-');
    writeRegistry(root, files);
    broker = await startBrokerProcess({ root });
    for (const client of CLIENTS) {
      const make = client.startsWith('v1') ? v1Driver : v2Driver;
      for (const [kind, s] of Object.entries(SERVERS) as [ServerKind, (typeof SERVERS)[ServerKind]][]) {
        const direct = s.http ? { url: http[kind]!.url } : { command: [process.execPath, fixture(s.script)] };
        const via = { url: broker.url.replace(/\/mcp$/, `/servers/${s.name}/mcp`) };
        const through = await make(via, broker.token);
        const all = aggregated(await make({ url: broker.url }, broker.token), s.name);
        for (const [path, d] of [
          ['direct', await make(direct)],
          ['/servers/<n>/mcp', through],
          ['/mcp', all],
        ] as const) {
          d.note = s.note;
          drivers.set(`${client}|${kind}|${path}`, d);
        }
        await waitFor(
          async () => (await through.listTools()).length > 0,
          `${s.name} listed through the broker`,
          20_000,
        );
      }
    }
  });

  after(async () => {
    await Promise.all([...drivers.values()].map((d) => d.close().catch(() => undefined)));
    await broker?.stop();
    await Promise.all(Object.values(http).map((h) => h.stop()));
    removeTempDirs();
    const line = (cell: string, t: { passed: number; explained: number; total: number }): string =>
      `    ${cell.padEnd(76)} ${String(t.passed + t.explained).padStart(3)}/${t.total}` +
      (t.explained ? `  (${t.explained} of them a documented difference)` : '');
    const rows = [...tally].map(([cell, t]) => line(cell, t));
    const sum = { passed: 0, explained: 0, total: 0 };
    for (const t of tally.values()) {
      sum.passed += t.passed;
      sum.explained += t.explained;
      sum.total += t.total;
    }
    rows.push(line('all', sum));
    console.log(
      `\n  exact-middle matrix (passed/total per cell; equal, or the documented difference):\n${rows.join('\n')}\n`,
    );
  });

  for (const client of CLIENTS) {
    for (const kind of Object.keys(SERVERS) as ServerKind[]) {
      for (const path of PATHS) {
        const cell = `${client} × ${kind} × ${path}`;
        const endpoint = path.replace('<n>', SERVERS[kind].name);
        describe(cell, () => {
          for (const s of SCENARIOS.filter((x) => !x.only || x.only(kind))) {
            it(`${s.name}: the same direct and through ${endpoint}`, async () => {
              const t = tally.get(cell) ?? { passed: 0, explained: 0, total: 0 };
              tally.set(cell, t);
              t.total++;
              const direct = await outcome(drivers.get(`${client}|${kind}|direct`)!, s);
              const through = await outcome(drivers.get(`${client}|${kind}|${path}`)!, s);
              const explained = EXPLAINED.find((e) => e.applies(client, kind, s.name, path));
              if (!explained) {
                assert.deepEqual(through, direct);
                t.passed++;
                return;
              }
              // A documented difference (README, "What passes through"): exactly that one, nothing else.
              explained.check(through, direct);
              t.explained++;
            });
          }
        });
      }
    }
  }
});

/** One raw 2026-07-28 POST (headers as the revision mirrors them); its JSON-RPC answer, id aside. */
async function post2026(
  url: string,
  token: string | undefined,
  method: string,
  params: Json,
  more: Record<string, string> = {},
): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': method,
      'mcp-name': String(params.name ?? params.uri),
      ...more,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Json)
    : [JSON.parse(text) as Json];
  const { id: _id, ...answer } = messages[messages.length - 1];
  return normalize({ status: res.status, ...answer });
}

describe('exact in the middle: input_required between two 2026-07-28 parties, raw (both endpoints)', function () {
  this.timeout(60_000);
  let broker: BrokerProcess;
  let upstream: { url: string; stop(): Promise<void> };
  let through: string;

  before(async () => {
    upstream = await startHttpFixture('exact-v2.mjs');
    const root = tempDir('sb-exact-raw-');
    writeRegistry(root, {
      'mcp-servers.d/v2h.yaml': `name: v2h\ntrust: trusted\ntransport: http\nurl: ${upstream.url}\n`,
      // A client whose tool profile narrows the list: what it is listed is its own.
      'clients.d/narrow.yaml': 'name: narrow\ntools:\n  deny: ["v2h__echo"]\n',
    });
    broker = await startBrokerProcess({ root });
    through = broker.url.replace(/\/mcp$/, '/servers/v2h/mcp');
    const v2 = await v2Driver({ url: through }, broker.token);
    await waitFor(async () => (await v2.listTools()).length > 0, 'v2h listed through the broker', 20_000);
    await v2.close();
  });

  after(async () => {
    await broker?.stop();
    await upstream?.stop();
    removeTempDirs();
  });

  const envelope = (capabilities: Json): Json => ({
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  });
  /**
   * The same request direct, through /servers/v2h/mcp and through /mcp (the tool's name prefixed
   * there, nothing else): all three answers, asserted equal.
   */
  const both = async (params: Json, more: Record<string, string> = {}): Promise<Json> => {
    const direct = await post2026(upstream.url, undefined, 'tools/call', params, more);
    const via = await post2026(through, broker.token, 'tools/call', params, more);
    assert.deepEqual(via, direct, '/servers/v2h/mcp');
    const named = { ...params, name: `v2h__${String(params.name)}` };
    const all = await post2026(broker.url, broker.token, 'tools/call', named, more);
    assert.deepEqual(all, direct, '/mcp');
    return direct as Json;
  };

  it('passes inputRequests (the server keys, every question at once) and requestState through verbatim', async () => {
    const caps = envelope({ elicitation: { form: {} } });
    const multi = await both({ name: 'multi', arguments: {}, _meta: caps });
    const asked = (multi.result as Json).inputRequests as Json;
    assert.deepEqual(Object.keys(asked).sort(), ['colour', 'user_name']);
    const first = await both({ name: 'rounds', arguments: {}, _meta: caps });
    assert.equal((first.result as Json).requestState, 'round-1');
    const inputResponses = { user_name: { action: 'accept', content: { name: 'Ada' } } };
    const second = await both({ name: 'rounds', arguments: {}, _meta: caps, inputResponses, requestState: 'round-1' });
    assert.equal((second.result as Json).requestState, 'round-2:Ada');
    const colour = { colour: { action: 'accept', content: { colour: 'teal' } } };
    const done = await both({
      name: 'rounds',
      arguments: {},
      _meta: caps,
      inputResponses: colour,
      requestState: 'round-2:Ada',
    });
    assert.deepEqual((done.result as Json).content, [{ type: 'text', text: 'Ada likes teal' }]);
  });

  it("sends the caller's own clientCapabilities upstream (a caller without elicitation is refused by the server)", async () => {
    const refused = await both({ name: 'ask', arguments: {}, _meta: envelope({}) });
    assert.ok(refused.error, JSON.stringify(refused));
    const control = await both({ name: 'ask', arguments: {}, _meta: envelope({ elicitation: { form: {} } }) });
    assert.equal((control.result as Json).resultType, 'input_required');
  });

  it("passes the server's cache hints through on /servers/<name>/mcp (lists and reads); /mcp's lists are its own", async () => {
    const raw = (url: string, token: string | undefined, method: string, params: Json) =>
      post2026(url, token, method, { ...params, _meta: envelope({}) }) as Promise<Json>;
    const hints = (r: Json): Json => {
      const { ttlMs, cacheScope } = r.result as Json;
      return { ttlMs, cacheScope };
    };
    for (const method of ['tools/list', 'prompts/list', 'resources/list']) {
      const direct = hints(await raw(upstream.url, undefined, method, {}));
      assert.deepEqual(direct, { ttlMs: 60_000, cacheScope: 'public' }, method);
      assert.deepEqual(hints(await raw(through, broker.token, method, {})), direct, method);
      // /mcp merges every server and the broker's own tools: stale at once, for this caller.
      assert.deepEqual(hints(await raw(broker.url, broker.token, method, {})), { ttlMs: 0, cacheScope: 'private' });
    }
    const uri = 'exact://v2/http/note';
    const read = hints(await raw(upstream.url, undefined, 'resources/read', { uri }));
    assert.deepEqual(read, { ttlMs: 30_000, cacheScope: 'public' });
    assert.deepEqual(hints(await raw(through, broker.token, 'resources/read', { uri })), read);
    assert.deepEqual(hints(await raw(broker.url, broker.token, 'resources/read', { uri })), read);
    // The broker's own state changes at any moment and depends on the token: stale at once, private.
    const state = await raw(broker.url, broker.token, 'resources/read', { uri: 'switchboard://state' });
    assert.ok(((state.result as Json).contents as Json[]).length > 0, JSON.stringify(state));
    assert.deepEqual(hints(state), { ttlMs: 0, cacheScope: 'private' });
    // A caller whose tool profile narrows the tool list may not share its cache with anyone.
    const operator = await connect(broker.url, broker.token, 'operator');
    const made = await operator.callTool({ name: 'switchboard__client_connection', arguments: { name: 'narrow' } });
    await operator.close();
    const narrow = fs.readFileSync((made.structuredContent as Json).tokenFile as string, 'utf8').trim();
    const listed = await raw(through, narrow, 'tools/list', {});
    assert.ok(!((listed.result as Json).tools as Json[]).some((t) => t.name === 'echo'), 'the profile narrows it');
    assert.deepEqual(hints(listed), { ttlMs: 60_000, cacheScope: 'private' });
  });

  it('checks and forwards Mcp-Param-* headers as the server does (x-mcp-header)', async () => {
    const params = { name: 'region', arguments: { region: 'eu-west' }, _meta: envelope({}) };
    // Without the header the server refuses (400, -32020); through the broker the same.
    const missing = await both(params);
    assert.equal(missing.status, 400);
    assert.equal((missing.error as Json).code, -32020);
    // Positive control: with it, the broker forwards it (else the server would refuse the broker).
    const ok = await both(params, { 'mcp-param-region': 'eu-west' });
    assert.deepEqual((ok.result as Json).content, [{ type: 'text', text: 'region: eu-west' }]);
  });

  it("`switchboard connect` sends a tool's Mcp-Param-* headers as an HTTP client would", async () => {
    const transport = new StdioV2({
      command: process.execPath,
      args: [BROKER_JS, 'connect', '--root', broker.root, '--client', 'narrow', '--no-start'],
      env: { ...process.env, SWITCHBOARD_HOME: broker.home } as Record<string, string>,
      stderr: 'ignore',
    });
    const client = new ClientV2({ name: 'stdio-v2', version: '1' }, { versionNegotiation: { mode: { pin: V } } });
    await client.connect(transport);
    try {
      const call = async (): Promise<string> =>
        text((await client.callTool({ name: 'v2h__region', arguments: { region: 'eu-west' } })) as unknown as Json);
      // Without a listing first (the bridge lists the tools itself to learn the declaration), then after one.
      assert.equal(await call(), 'region: eu-west');
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'v2h__region'));
      assert.equal(await call(), 'region: eu-west');
      // Positive control: a tool without x-mcp-header arguments goes as before.
      assert.equal(
        text((await client.callTool({ name: 'v2h__broken', arguments: {} })) as unknown as Json),
        'it broke',
      );
    } finally {
      await client.close();
    }
  });
});
