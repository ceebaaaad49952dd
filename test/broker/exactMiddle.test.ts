// The exact-middle matrix (issue 30): {SDK v1 client (2025-11-25), SDK v2 client (2026-07-28 where
// the other side has it)} × {SDK v1 server, SDK v2 server serving both eras; stdio and Streamable
// HTTP} × {the broker's /servers/<name>/mcp, its aggregated /mcp}, each compared with direct. Each
// scenario asserts that what the client receives is equal: the result or the error, what its
// handlers were asked (elicitation, sampling, roots), the progress, log messages and resource
// updates it saw. Set aside, and only these: JSON-RPC ids, task ids, and in `_meta` the server
// identity stamp io.modelcontextprotocol/serverInfo (the broker names itself there, as the revision
// asks of whoever answers); on /mcp the names, mapped back (helpers/exactDrivers.ts). An after()
// hook prints the passed/total per cell. What the SDK clients hide is checked raw: exactRaw.test.ts.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
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
import {
  aggregated,
  failure,
  normalize,
  text,
  v1Driver,
  v2Driver,
  V,
  type Driver,
  type Json,
} from '../helpers/exactDrivers';

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
