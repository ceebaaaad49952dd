// MCP Apps through the broker, end to end: a real broker, two upstreams written with ext-apps' server
// helpers whose ui:// URIs collide, real SDK clients on the aggregated and the per-server endpoint.
// Metadata and URIs, visibility, the app's own calls (bound to its server, profiled, audited as
// origin: app), and a page swapped after approval held like a changed tool.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  facade,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../../helpers/broker';
import { cli } from '../../../helpers/registryFixture';

type Json = Record<string, any>;

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const UI_CAPABILITIES = { extensions: { [UI]: { mimeTypes: [MIME] } } };

describe('MCP Apps through the broker', function () {
  this.timeout(120_000);
  let root: string;
  let broker: BrokerProcess;
  let variantFile: string;
  const clients: Client[] = [];

  /** A client of `url`; `ui`: it declares the MCP Apps extension, as a host that renders apps does. */
  async function open(url: string, token: string, ui = true, name = 'host'): Promise<Client> {
    const client = new Client({ name, version: '1.0.0' }, { capabilities: ui ? UI_CAPABILITIES : {} });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  const perServer = (server: string): string => broker.url.replace(/\/mcp$/, `/servers/${server}/mcp`);
  const operator = (ui = true): Promise<Client> => open(broker.url, broker.token, ui);

  async function clientToken(name: string): Promise<string> {
    const conn = await facade(await operator(false), 'client_connection', { name });
    return fs.readFileSync(conn.tokenFile, 'utf8').trim();
  }

  /** The JSON-RPC error of a call or read that must be refused. */
  async function refusal(run: () => Promise<unknown>): Promise<{ code: number; message: string }> {
    try {
      const result = await run();
      assert.fail(`not refused: ${JSON.stringify(result).slice(0, 300)}`);
    } catch (err) {
      if (err instanceof assert.AssertionError) throw err;
      return err as { code: number; message: string };
    }
  }

  before(async () => {
    root = tempDir('sb-apps-');
    variantFile = path.join(root, 'alpha-variant');
    writeRegistry(root, {
      'mcp-servers.d/alpha.yaml': fixtureServer('alpha', 'apps.mjs', [
        '--label',
        'alpha',
        '--variant-file',
        variantFile,
      ]),
      'mcp-servers.d/beta.yaml': fixtureServer('beta', 'apps.mjs', ['--label', 'beta']),
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'clients.d/limited.yaml': 'name: limited\nmcp_allow: [read, write]\ntools:\n  deny: ["alpha__increment"]\n',
    });
    broker = await startBrokerProcess({ root });
    const op = await operator(false);
    await waitFor(
      async () => {
        const servers: Json[] = (await facade(op, 'list_servers')).servers;
        return servers.filter((s) => s.state === 'running').length === 3;
      },
      'alpha, beta and echo running',
      60_000,
    );
    await waitFor(async () => (await facade(op, 'server_status', { name: 'alpha' })).pins.status === 'pinned', 'pins');
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('aggregated: tools keep their _meta with the page URI namespaced; app-only tools are not listed', async () => {
    for (const ui of [true, false]) {
      const tools = (await (await operator(ui)).listTools()).tools;
      const byName = new Map(tools.map((t) => [t.name, t as Json]));
      const counter = byName.get('alpha__show_counter')!;
      assert.equal(counter._meta.ui.resourceUri, 'ui://alpha/counter/view.html');
      assert.equal(counter._meta['ui/resourceUri'], 'ui://alpha/counter/view.html');
      assert.equal(byName.get('beta__show_counter')!._meta.ui.resourceUri, 'ui://beta/counter/view.html');
      // The older key alone on the server: both keys rewritten.
      assert.equal(byName.get('alpha__show_clock')!._meta['ui/resourceUri'], 'ui://alpha/clock/view.html');
      assert.equal(byName.get('alpha__plain_echo')!._meta, undefined);
      assert.ok(!byName.has('alpha__increment') && !byName.has('beta__increment'), [...byName.keys()].join(', '));
    }
  });

  it('aggregated: two servers’ colliding ui:// pages are listed and read apart, MIME and _meta.ui intact', async () => {
    const client = await operator();
    const resources = (await client.listResources()).resources;
    const pages = resources.filter((r) => r.uri.startsWith('ui://')).map((r) => r.uri);
    assert.deepEqual(pages.sort(), [
      'ui://alpha/clock/view.html',
      'ui://alpha/counter/view.html',
      'ui://beta/clock/view.html',
      'ui://beta/counter/view.html',
    ]);
    const listed = resources.find((r) => r.uri === 'ui://beta/counter/view.html')!;
    assert.equal(listed.mimeType, MIME);
    assert.deepEqual(listed._meta, { ui: { csp: { connectDomains: [] } } });
    for (const label of ['alpha', 'beta']) {
      const read = await client.readResource({ uri: `ui://${label}/counter/view.html` });
      const [content] = read.contents as Json[];
      assert.equal(content.uri, `ui://${label}/counter/view.html`);
      assert.equal(content.mimeType, MIME);
      assert.deepEqual(content._meta, { ui: { csp: { connectDomains: [], resourceDomains: [] } } });
      assert.match(content.text, new RegExp(`App of server <b>${label}</b>`));
    }
    // The server's own URI means nothing here.
    assert.equal((await refusal(() => client.readResource({ uri: 'ui://counter/view.html' }))).code, -32002);
  });

  it('server_status lists each app: its page, the tools that open it, what it declares', async () => {
    const status = await facade(await operator(false), 'server_status', { name: 'alpha' });
    assert.deepEqual(
      status.apps.map((a: Json) => [a.uri, a.aggregatedUri, a.tools, a.appOnlyTools, a.held]),
      [
        ['ui://clock/view.html', 'ui://alpha/clock/view.html', ['show_clock'], [], false],
        ['ui://counter/view.html', 'ui://alpha/counter/view.html', ['show_counter', 'increment'], ['increment'], false],
      ],
    );
    assert.deepEqual(status.apps[1].ui, { csp: { connectDomains: [] } });
    assert.equal((await facade(await operator(false), 'server_status', { name: 'echo' })).apps, undefined);
  });

  it('per-server endpoint: everything as the server wrote it, app-only tool included', async () => {
    const client = await open(perServer('alpha'), broker.token);
    const tools = (await client.listTools()).tools as Json[];
    const increment = tools.find((t) => t.name === 'increment')!;
    assert.deepEqual(increment._meta.ui, { resourceUri: 'ui://counter/view.html', visibility: ['app'] });
    assert.equal(tools.find((t) => t.name === 'show_counter')!._meta.ui.resourceUri, 'ui://counter/view.html');
    const uris = (await client.listResources()).resources.map((r) => r.uri).sort();
    assert.deepEqual(uris, ['ui://clock/view.html', 'ui://counter/view.html']);
    const [content] = (await client.readResource({ uri: 'ui://counter/view.html' })).contents as Json[];
    assert.equal(content.uri, 'ui://counter/view.html');
    assert.equal(content.mimeType, MIME);
    // The page calls its tool by its own name; audited as the app's.
    const result = await client.callTool({ name: 'increment', arguments: { by: 1 } });
    assert.match(textOf(result), /^alpha: the counter is at \d+$/);
  });

  it('a model never gets an app-only tool: not found by find_tools, refused by its namespaced name', async () => {
    const client = await operator();
    const found = await facade(client, 'find_tools', { query: 'increment the counter', limit: 20 });
    const names = (found.tools as Json[]).map((t) => t.name);
    assert.ok(names.includes('alpha__show_counter'), `positive control: ${names.join(', ')}`);
    assert.ok(!names.some((n) => n.endsWith('__increment')), names.join(', '));
    const err = await refusal(() => client.callTool({ name: 'alpha__increment', arguments: { by: 1 } }));
    assert.equal(err.code, -32003);
    assert.match(err.message, /is for the app of server 'alpha' only/);
  });

  it('aggregated: a page’s unprefixed calls go to the server whose page the session read, and to no other', async () => {
    const client = await operator();
    // Before any page: an unprefixed name is nobody's.
    assert.match(
      (await refusal(() => client.callTool({ name: 'increment', arguments: { by: 1 } }))).message,
      /Unknown tool/,
    );
    await client.readResource({ uri: 'ui://alpha/counter/view.html' });
    const result = await client.callTool({ name: 'increment', arguments: { by: 2 } });
    assert.match(textOf(result), /^alpha: the counter is at \d+$/);
    assert.equal(textOf(await client.callTool({ name: 'plain_echo', arguments: { text: 'x' } })), 'alpha echo: x');
    // echo is another server's tool: alpha's page cannot reach it (the namespaced name, the positive control, can).
    assert.match(
      (await refusal(() => client.callTool({ name: 'echo', arguments: { text: 'x' } }))).message,
      /Unknown tool/,
    );
    assert.equal(textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'x' } })), 'echo: x');
    // Pages of two servers that both have the name: the broker cannot tell whose page called.
    await client.readResource({ uri: 'ui://beta/counter/view.html' });
    const err = await refusal(() => client.callTool({ name: 'increment', arguments: { by: 1 } }));
    assert.equal(err.code, -32003);
    assert.match(err.message, /opened apps of 2 servers that have it \(alpha, beta\)/);
    // A session with only beta's page reaches beta's.
    const other = await operator();
    await other.readResource({ uri: 'ui://beta/counter/view.html' });
    assert.match(
      textOf(await other.callTool({ name: 'increment', arguments: { by: 5 } })),
      /^beta: the counter is at 5$/,
    );
  });

  it('tool profiles apply to the app’s calls on both endpoints; the audit says origin: app', async () => {
    const token = await clientToken('limited');
    const aggregated = await open(broker.url, token, true, 'limited');
    await aggregated.readResource({ uri: 'ui://alpha/counter/view.html' });
    const denied = await refusal(() => aggregated.callTool({ name: 'increment', arguments: { by: 1 } }));
    assert.equal(denied.code, -32003);
    assert.match(denied.message, /not in client 'limited''s tool profile/);
    const direct = await open(perServer('alpha'), token, true, 'limited');
    assert.match(
      (await refusal(() => direct.callTool({ name: 'increment', arguments: { by: 1 } }))).message,
      /tool profile/,
    );
    // Positive control: the same client reaches the tools its profile allows.
    assert.equal(textOf(await aggregated.callTool({ name: 'plain_echo', arguments: { text: 'y' } })), 'alpha echo: y');

    const entries: Json[] = (await facade(await operator(false), 'read_audit', { limit: 200 })).entries;
    const apps = entries.filter((e) => e.origin === 'app');
    assert.ok(
      apps.some((e) => e.server === 'alpha' && e.tool === 'increment' && e.outcome === 'ok' && e.client === 'operator'),
      JSON.stringify(apps),
    );
    assert.ok(
      apps.some((e) => e.client === 'limited' && e.tool === 'increment' && e.code === -32003),
      JSON.stringify(apps),
    );
    assert.ok(apps.some((e) => e.server === 'alpha' && e.tool === 'plain_echo' && e.client === 'limited'));
    // A model's call is not marked.
    const model = entries.find((e) => e.server === 'echo' && e.tool === 'echo');
    assert.ok(model && model.origin === undefined, JSON.stringify(model));
  });

  for (const variant of ['swapped', 'csp'] as const) {
    it(`a page ${variant === 'swapped' ? 'swapped' : 'whose CSP widened'} after approval is held until reviewed`, async () => {
      const op = await operator(false);
      const client = await operator();
      const before = (await client.readResource({ uri: 'ui://alpha/counter/view.html' })).contents[0] as Json;
      fs.writeFileSync(variantFile, variant);
      // The next read brings other bytes than were judged: refused, and the page is read again.
      const err = await refusal(() => client.readResource({ uri: 'ui://alpha/counter/view.html' }));
      assert.equal(err.code, -32003);
      assert.match(err.message, /App page 'ui:\/\/counter\/view.html' of server 'alpha' is held back/);
      const status = await waitFor(async () => {
        const s = await facade(op, 'server_status', { name: 'alpha' });
        return s.pins.quarantined.includes('ui://counter/view.html') ? s : undefined;
      }, 'the changed page held');
      assert.equal(status.pins.status, 'changed');
      // Held on the per-server endpoint too; the other page and the tools still work.
      const direct = await open(perServer('alpha'), broker.token);
      assert.match((await refusal(() => direct.readResource({ uri: 'ui://counter/view.html' }))).message, /held back/);
      assert.ok((await direct.readResource({ uri: 'ui://clock/view.html' })).contents.length === 1);
      const diff = await facade(op, 'tool_changes', { name: 'alpha' });
      assert.deepEqual(
        diff.changes.map((c: Json) => [c.tool, c.change]),
        [['ui://counter/view.html', 'changed']],
      );
      const [change] = diff.changes;
      const was = change.before._meta['switchboard/appPage'];
      const now = change.after._meta['switchboard/appPage'];
      if (variant === 'swapped') assert.notEqual(was.content, now.content);
      else {
        assert.equal(now.content, was.content, 'the page’s bytes are the same');
        assert.deepEqual(now.ui.csp.connectDomains, ['https://collector.example']);
        assert.deepEqual(was.ui.csp.connectDomains, []);
      }
      await facade(op, 'accept_tool_changes', { name: 'alpha', hash: diff.toolsHash });
      const after = await waitFor(
        async () => (await client.readResource({ uri: 'ui://alpha/counter/view.html' })).contents[0] as Json,
        'the accepted page served',
      );
      if (variant === 'swapped') {
        assert.match(after.text, /Counter \(new and improved\)/);
        assert.notEqual(after.text, before.text);
      } else assert.deepEqual(after._meta.ui.csp.connectDomains, ['https://collector.example']);
      fs.writeFileSync(variantFile, 'original');
      // Back to the original: a change again, held again until accepted.
      await refusal(() => client.readResource({ uri: 'ui://alpha/counter/view.html' }));
      const back = await waitFor(async () => {
        const d = await facade(op, 'tool_changes', { name: 'alpha' });
        return d.changes.length ? d : undefined;
      }, 'the original page held');
      await facade(op, 'accept_tool_changes', { name: 'alpha', hash: back.toolsHash });
    });
  }

  it('switchboard lock pins the pages with the tools, and verify holds them to it', async () => {
    const ws = tempDir('sb-apps-lock-');
    writeRegistry(ws, { 'mcp-servers.d/beta.yaml': fixtureServer('beta', 'apps.mjs', ['--label', 'beta']) });
    const home = tempDir('sb-apps-lock-home-');
    const locked = await cli(['lock', '--root', ws], { home });
    assert.equal(locked.code, 0, locked.err);
    const lock = JSON.parse(fs.readFileSync(path.join(ws, 'mcp-servers.lock'), 'utf8'));
    const pinned = Object.keys(lock.servers.beta.toolDigests);
    assert.deepEqual(pinned.filter((n) => n.startsWith('ui://')).sort(), [
      'ui://clock/view.html',
      'ui://counter/view.html',
    ]);
    assert.ok(pinned.includes('increment'), pinned.join(', '));
    const verified = await cli(['verify', '--root', ws], { home });
    assert.equal(verified.code, 0, verified.out + verified.err);
  });

  it('guardrail rules judge an app’s own calls as they judge the model’s (issue 33 on app-initiated calls)', async () => {
    // Its own client, so the rule touches no other test: a page may increment by at most 3 at a time.
    writeRegistry(root, {
      'clients.d/guarded.yaml': 'name: guarded\nmcp_allow: [read, write]\n',
      'policies.d/apps-guard.yaml': [
        'rules:',
        '  - name: small-steps',
        '    clients: [guarded]',
        '    servers: [alpha]',
        '    tools: [increment]',
        '    when: args.by > 3',
        '    action: deny',
        '    message: Apps count in small steps.',
        '',
      ].join('\n'),
    });
    const op = await operator(false);
    const listed = await waitFor(
      async () => ((await facade(op, 'list_policies')).policies as Json[]).find((p) => p.name === 'apps-guard'),
      'the policy listed',
    );
    await facade(op, 'approve_policy', { name: 'apps-guard', hash: listed.hash });
    const token = await waitFor(() => clientToken('guarded').catch(() => undefined), 'the guarded client');
    const page = await open(broker.url, token, true, 'guarded');
    await page.readResource({ uri: 'ui://alpha/counter/view.html' });
    const refused = await refusal(() => page.callTool({ name: 'increment', arguments: { by: 4 } }));
    assert.equal(refused.code, -32003);
    assert.match(
      refused.message,
      /Apps count in small steps\. \(refused by rule 'small-steps' of policy 'apps-guard'\)/,
    );
    // Positive control: a call the rule's condition does not match runs, from the same page.
    assert.match(
      textOf(await page.callTool({ name: 'increment', arguments: { by: 1 } })),
      /^alpha: the counter is at \d+$/,
    );
    const entries: Json[] = (await facade(op, 'read_audit', { client: 'guarded', limit: 50 })).entries;
    assert.ok(
      entries.some(
        (e) => e.origin === 'app' && e.rule === 'apps-guard/small-steps' && e.code === -32003 && e.tool === 'increment',
      ),
      JSON.stringify(entries),
    );
  });
});
