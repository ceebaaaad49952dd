// The exact-middle matrix (issue 30): {SDK v1 client (2025-11-25), SDK v2 client (2026-07-28 where
// the other side has it)} × {SDK v1 server, SDK v2 server serving both eras; stdio and Streamable
// HTTP} × {direct, through the broker's /servers/<name>/mcp}. Each scenario runs on both paths and
// asserts that what the client receives is equal: the result or the error, what its handlers were
// asked (elicitation, sampling, roots) and the progress it saw. Set aside, and only these: JSON-RPC
// ids, and in `_meta` the server identity stamp io.modelcontextprotocol/serverInfo (the broker
// names itself there, as the revision asks of whoever answers). An after() hook prints the
// passed/total per cell.
import assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
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
  'v1 server stdio': { name: 'v1s', script: 'exact-v1.mjs', http: false },
  'v1 server http': { name: 'v1h', script: 'exact-v1.mjs', http: true },
  'v2 server (both eras) stdio': { name: 'v2s', script: 'exact-v2.mjs', http: false },
  'v2 server (both eras) http': { name: 'v2h', script: 'exact-v2.mjs', http: true },
} as const;
type ServerKind = keyof typeof SERVERS;

/** What a client is asked and sees during one scenario, on one path. */
interface Seen {
  asked: Json[];
  progress: number[];
}

/** One connected client of either SDK line, driven the same way. */
interface Driver {
  seen: Seen;
  protocol(): string | undefined;
  listTools(): Promise<Json[]>;
  callTool(name: string, args: Json, progress?: boolean): Promise<Json>;
  getPrompt(name: string, args: Record<string, string>): Promise<Json>;
  readResource(uri: string): Promise<Json>;
  close(): Promise<void>;
}

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
  const seen: Seen = { asked: [], progress: [] };
  const client = new Client({ name: 'exact-v1', version: '1' }, { capabilities: CAPABILITIES });
  client.setRequestHandler(ElicitRequestSchema, async (r) => record(seen, r.method, r.params) as never);
  client.setRequestHandler(CreateMessageRequestSchema, async (r) => record(seen, r.method, r.params) as never);
  client.setRequestHandler(ListRootsRequestSchema, async (r) => record(seen, r.method, r.params) as never);
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = target.url
    ? new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers } })
    : new StdioClientTransport({ command: target.command![0], args: target.command!.slice(1), stderr: 'ignore' });
  await client.connect(transport);
  const onprogress = (p: { progress: number }): void => void seen.progress.push(p.progress);
  return {
    seen,
    protocol: () => (transport as { protocolVersion?: string }).protocolVersion,
    listTools: async () => (await client.listTools()).tools as Json[],
    callTool: async (name, args, progress) =>
      (await client.callTool({ name, arguments: args }, undefined, progress ? { onprogress } : {})) as Json,
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })) as Json,
    readResource: async (uri) => (await client.readResource({ uri })) as Json,
    close: () => client.close(),
  };
}

async function v2Driver(target: { url?: string; command?: string[] }, token?: string): Promise<Driver> {
  const seen: Seen = { asked: [], progress: [] };
  // 'auto': 2026-07-28 where the server has it, else 2025-11-25 (a v1 server, direct).
  const client = new ClientV2(
    { name: 'exact-v2', version: '1' },
    { versionNegotiation: { mode: 'auto' }, capabilities: CAPABILITIES },
  );
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
    protocol: () => client.getNegotiatedProtocolVersion(),
    listTools: async () => (await client.listTools()).tools as unknown as Json[],
    callTool: async (name, args, progress) =>
      (await client.callTool({ name, arguments: args }, progress ? { onprogress } : {})) as unknown as Json,
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })) as unknown as Json,
    readResource: async (uri) => (await client.readResource({ uri })) as unknown as Json,
    close: () => client.close(),
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
  { name: 'prompts/get', run: (d) => d.getPrompt('greet', { name: 'Ada' }) },
  { name: 'resources/read', run: (d) => d.readResource('exact://note') },
];

async function outcome(d: Driver, s: Scenario): Promise<Json> {
  d.seen.asked = [];
  d.seen.progress = [];
  let got: unknown;
  try {
    got = await s.run(d);
  } catch (err) {
    got = failure(err);
  }
  return normalize({ got, asked: d.seen.asked, progress: d.seen.progress }) as Json;
}

describe('exact in the middle: /servers/<name>/mcp equals direct, in both eras', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  const http: Partial<Record<ServerKind, { url: string; stop(): Promise<void> }>> = {};
  const drivers = new Map<string, Driver>();
  const tally = new Map<string, { passed: number; total: number }>();

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
        drivers.set(`${client}|${kind}|direct`, await make(direct));
        const via = { url: broker.url.replace(/\/mcp$/, `/servers/${s.name}/mcp`) };
        const through = await make(via, broker.token);
        drivers.set(`${client}|${kind}|broker`, through);
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
    const rows = [...tally].map(([cell, t]) => `    ${cell.padEnd(56)} ${t.passed}/${t.total}`);
    const sum = [...tally.values()].reduce((a, t) => ({ passed: a.passed + t.passed, total: a.total + t.total }), {
      passed: 0,
      total: 0,
    });
    rows.push(`    ${'all'.padEnd(56)} ${sum.passed}/${sum.total}`);
    console.log(`\n  exact-middle matrix (passed/total per cell):\n${rows.join('\n')}\n`);
  });

  for (const client of CLIENTS) {
    for (const kind of Object.keys(SERVERS) as ServerKind[]) {
      const cell = `${client} × ${kind}`;
      describe(cell, () => {
        for (const s of SCENARIOS) {
          it(`${s.name}: the same direct and through /servers/${SERVERS[kind].name}/mcp`, async () => {
            const t = tally.get(cell) ?? { passed: 0, total: 0 };
            tally.set(cell, t);
            t.total++;
            const direct = await outcome(drivers.get(`${client}|${kind}|direct`)!, s);
            const through = await outcome(drivers.get(`${client}|${kind}|broker`)!, s);
            assert.deepEqual(through, direct);
            t.passed++;
          });
        }
      });
    }
  }
});
