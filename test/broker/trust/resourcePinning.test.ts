// Resource template and resource pinning end to end (the rug pull in what resources/list and
// resources/templates/list tell the model): a real broker, the rugpull fixture changing its
// templates and resources after approval, real SDK clients over HTTP on both endpoints, and the
// real `switchboard review` / `lock` / `verify` processes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  facade,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  type BrokerProcess,
  stopBroker,
} from '../../helpers/broker';
import {
  assertReviewIsOperatorOnly,
  cli,
  lockWorkspace,
  pinsWhen,
  pinWorkspace,
  refusalOf,
  rugPull,
  rugpullServer,
  storedPinRecord,
} from './pinHelpers';

type Json = Record<string, any>;

const uris = async (client: Client): Promise<string[]> => (await client.listResources()).resources.map((r) => r.uri);
const templates = async (client: Client): Promise<string[]> =>
  (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);

async function read(client: Client, uri: string): Promise<string> {
  const result = await client.readResource({ uri });
  return (result.contents[0] as { text?: string }).text ?? '';
}

/** The JSON-RPC error of a resources/read that must be refused. */
const refusal = (client: Client, uri: string) => refusalOf(`${uri} was read`, () => read(client, uri));

async function completions(client: Client, uriTemplate: string): Promise<string[]> {
  const result = await client.complete({
    ref: { type: 'ref/resource', uri: uriTemplate },
    argument: { name: 'date', value: '2026' },
  });
  return result.completion.values;
}

describe('resource template and resource pins', function () {
  this.timeout(120_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  let writer: Client;
  let writerToken: string;

  before(async () => {
    ({ root, broker, operator, writer, writerToken } = await pinWorkspace(
      'sb-resource-pins-',
      {
        notes: rugpullServer('notes', 'trust: community\n', ['--resources']),
        fixed: rugpullServer('fixed', 'trust: trusted\npins:\n  resources: strict\n', [
          '--resources',
          '--scheme',
          'fixed',
        ]),
      },
      ['notes'],
    ));
  });

  after(() => stopBroker(broker, [writer, operator]));

  it('pins templates and resource metadata at approval: unchanged ones are listed and readable', async () => {
    await waitFor(async () => (await uris(writer)).includes('notes://notes/today'), 'notes resources listed');
    assert.ok((await templates(writer)).includes('notes://day/{date}'));
    assert.equal(await read(writer, 'notes://notes/today'), 'read notes://notes/today');
    assert.equal(await read(writer, 'notes://day/2026-12-06'), 'read notes://day/2026-12-06');
    const record = await storedPinRecord(broker.home, 'notes', (found) => found.resources);
    assert.deepEqual(Object.keys(record.resourceTemplates.definitions).sort(), [
      'notes://day/{date}',
      'notes://file/{name}',
    ]);
    assert.deepEqual(Object.keys(record.resources.definitions).sort(), [
      'notes://notes/archive',
      'notes://notes/today',
    ]);
    assert.equal(record.resources.definitions['notes://notes/archive'].definition.size, undefined, 'size not pinned');
  });

  it('holds back a changed template and changed resource metadata; a new file is listed', async () => {
    await rugPull(operator, 'notes', 'resources-pull');
    const pins = await pinsWhen(
      operator,
      'notes',
      (p) => p.quarantinedResourceTemplates?.length,
      'notes templates held',
    );
    assert.deepEqual(pins.quarantinedResourceTemplates, ['notes://day/{date}', 'notes://tag/{tag}']);
    assert.deepEqual(pins.quarantinedResources, ['notes://notes/big', 'notes://notes/today']);
    assert.deepEqual(pins.quarantined, []);
    const listed = await templates(writer);
    assert.ok(!listed.includes('notes://day/{date}') && !listed.includes('notes://tag/{tag}'), listed.join(', '));
    const resources = await uris(writer);
    assert.ok(!resources.includes('notes://notes/today') && !resources.includes('notes://notes/big'));
    // The positive controls: an unchanged template, a resource whose size alone changed, a new file.
    assert.ok(listed.includes('notes://file/{name}'));
    assert.ok(resources.includes('notes://notes/archive') && resources.includes('notes://notes/tomorrow'));
    assert.equal(await read(writer, 'notes://file/a.txt'), 'read notes://file/a.txt');
    assert.equal(await read(writer, 'notes://notes/archive'), 'read notes://notes/archive');
    assert.equal(await read(writer, 'notes://notes/tomorrow'), 'read notes://notes/tomorrow');
    for (const uri of ['notes://notes/today', 'notes://day/2026-12-06', 'notes://tag/work', 'notes://notes/big']) {
      const err = await refusal(writer, uri);
      assert.equal(err.code, -32003, uri);
      assert.match(err.message, /quarantined/, uri);
      assert.match(err.message, /switchboard review notes/, uri);
    }
    assert.match((await refusal(writer, 'notes://day/2026-12-06')).message, /template 'notes:\/\/day\/\{date\}'/);
  });

  it('holds them back on the per-server endpoint too, and forwards no completions for a held template', async () => {
    const perServer = await connect(broker.url.replace(/\/mcp$/, '/servers/notes/mcp'), broker.token);
    try {
      assert.deepEqual(await templates(perServer), ['notes://file/{name}']);
      assert.deepEqual((await uris(perServer)).sort(), ['notes://notes/archive', 'notes://notes/tomorrow']);
      assert.equal((await refusal(perServer, 'notes://notes/today')).code, -32003);
      assert.equal((await refusal(perServer, 'notes://day/2026-12-06')).code, -32003);
      assert.equal(await read(perServer, 'notes://file/b.txt'), 'read notes://file/b.txt');
      assert.deepEqual(await completions(perServer, 'notes://day/{date}'), []);
      assert.deepEqual(await completions(perServer, 'notes://file/{name}'), ['2026-12-06']);
    } finally {
      await perServer.close();
    }
  });

  it('refuses a subscription to a held resource on both endpoints; the server never hears of it', async () => {
    const perServer = await connect(broker.url.replace(/\/mcp$/, '/servers/notes/mcp'), broker.token);
    const subscribed = async (): Promise<string[]> => {
      const logs = await facade(operator, 'tail_logs', { name: 'notes', lines: 500 });
      return (logs.lines as { text: string }[]).flatMap((l) => /subscribed (\S+)/.exec(l.text)?.[1] ?? []);
    };
    try {
      for (const client of [writer, perServer]) {
        for (const uri of ['notes://notes/today', 'notes://notes/big']) {
          const err = await client.subscribeResource({ uri }).then(
            () => assert.fail(`the subscription to ${uri} was taken`),
            (e: { code: number; message: string }) => e,
          );
          assert.equal(err.code, -32003, uri);
          assert.match(err.message, /switchboard review notes/, uri);
        }
      }
      // 2026-07-28 has no resources/subscribe: a listen stream asks, and the held URIs are left out of
      // what the broker acknowledges (the size-only change, archive, is honoured).
      const v2 = new ClientV2(
        { name: 'v2-writer', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await v2.connect(
        new TransportV2(new URL(broker.url), { requestInit: { headers: { Authorization: `Bearer ${writerToken}` } } }),
      );
      try {
        const listen = await v2.listen({
          resourceSubscriptions: ['notes://notes/today', 'notes://notes/big', 'notes://notes/archive'],
        });
        assert.deepEqual(listen.honoredFilter.resourceSubscriptions, ['notes://notes/archive']);
        await listen.close();
      } finally {
        await v2.close();
      }
      // The positive control: a resource whose size alone changed is subscribed, and that reaches the server.
      await perServer.subscribeResource({ uri: 'notes://notes/archive' });
      await waitFor(
        async () => (await subscribed()).includes('notes://notes/archive'),
        'the archive subscription arrived',
      );
      await perServer.unsubscribeResource({ uri: 'notes://notes/archive' });
      assert.ok((await subscribed()).every((uri) => uri === 'notes://notes/archive'));
    } finally {
      await perServer.close();
    }
  });

  it('pins.resources: strict holds back a new resource URI too', async () => {
    await rugPull(operator, 'fixed', 'resources-pull');
    const pins = await pinsWhen(operator, 'fixed', (p) => p.quarantinedResources?.length, 'fixed resources held');
    assert.deepEqual(pins.quarantinedResources, ['fixed://notes/big', 'fixed://notes/today', 'fixed://notes/tomorrow']);
    const resources = await uris(writer);
    assert.ok(!resources.includes('fixed://notes/tomorrow'), resources.join(', '));
    assert.ok(resources.includes('fixed://notes/archive'), 'the size alone changed: still listed');
    assert.equal((await refusal(writer, 'fixed://notes/tomorrow')).code, -32003);
    assert.equal(await read(writer, 'fixed://notes/archive'), 'read fixed://notes/archive');
  });

  it('tool_changes shows templates and resources; only the operator sees and accepts them', async () => {
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.deepEqual(
      diff.resourceTemplates.map((c: Json) => [c.uri, c.change]),
      [
        ['notes://day/{date}', 'changed'],
        ['notes://tag/{tag}', 'added'],
      ],
    );
    const day = diff.resourceTemplates[0];
    assert.equal(day.before.description, 'The notes of a day.');
    assert.match(day.after.description, /~\/\.ssh\/id_rsa/);
    assert.deepEqual(
      diff.resources.map((c: Json) => [c.uri, c.change]),
      [
        ['notes://notes/big', 'oversized'],
        ['notes://notes/today', 'changed'],
      ],
    );
    assert.ok(JSON.stringify(diff.resources[0]).length < 2000, 'the review does not carry the huge text');
    await assertReviewIsOperatorOnly(writer, 'notes', diff.toolsHash);
  });

  it('switchboard review shows the diff; accepting lists them again, an oversized resource stays held', async () => {
    const shown = await cli(['review', 'notes', '--root', root], broker.home);
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    assert.match(shown.stdout, /resource template notes:\/\/day\/\{date\}: changed, differs from your pin/);
    assert.match(shown.stdout, /resource notes:\/\/notes\/today: changed, differs from your pin/);
    assert.match(shown.stdout, /resource notes:\/\/notes\/big: too large to pin/);
    const accepted = await cli(['review', 'notes', '--root', root, '--yes'], broker.home);
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
    assert.match(accepted.stdout, /Still held back, too large to pin or listed twice: resource notes:\/\/notes\/big/);
    await waitFor(async () => (await templates(writer)).includes('notes://day/{date}'), 'template listed again');
    assert.ok((await templates(writer)).includes('notes://tag/{tag}'));
    assert.ok((await uris(writer)).includes('notes://notes/today'));
    assert.equal(await read(writer, 'notes://day/2026-12-06'), 'read notes://day/2026-12-06');
    assert.equal((await refusal(writer, 'notes://notes/big')).code, -32003);
  });

  it('the accept hash covers the templates: one that changed after the review is not accepted', async () => {
    await rugPull(operator, 'notes', 'original');
    const first = await pinsWhen(
      operator,
      'notes',
      (p) => p.quarantinedResourceTemplates?.length,
      'back to the original',
    );
    const reviewed = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.equal(reviewed.toolsHash, first.toolsHash);
    await rugPull(operator, 'notes', 'resources-pull');
    await pinsWhen(operator, 'notes', (p) => p.toolsHash !== reviewed.toolsHash, 'the change noticed');
    const stale = await operator.callTool({
      name: 'switchboard__accept_tool_changes',
      arguments: { name: 'notes', hash: reviewed.toolsHash },
    });
    assert.equal(stale.isError, true);
    assert.match(JSON.stringify(stale.content), /changed again after they were shown/);
  });
});

describe('resource templates in the lockfile', function () {
  this.timeout(120_000);
  let root: string;
  let home: string;
  let variantFile: string;
  let lockFile: string;
  let broker: BrokerProcess | undefined;

  before(() => {
    ({ root, home, variantFile, lockFile } = lockWorkspace('sb-resource-lock', 'trusted', ['--resources']));
  });

  after(async () => {
    await broker?.stop();
    removeTempDirs();
  });

  it('switchboard lock writes the templates; verify fails on a changed one; a fresh user is held to them', async () => {
    fs.writeFileSync(variantFile, 'original');
    const lock = await cli(['lock', '--root', root], home);
    assert.equal(lock.code, 0, lock.stdout + lock.stderr);
    const entry = JSON.parse(fs.readFileSync(lockFile, 'utf8')).servers.notes;
    assert.deepEqual(Object.keys(entry.templateDigests), ['notes://day/{date}', 'notes://file/{name}']);
    const ok = await cli(['verify', '--root', root], home);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /3 tools, 2 resource templates and 2 prompts match/);
    fs.writeFileSync(variantFile, 'resources-pull');
    const bad = await cli(['verify', '--root', root], home);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /resource template 'notes:\/\/day\/\{date\}' changed/);
    assert.match(bad.stdout, /resource template 'notes:\/\/tag\/\{tag\}' is new/);

    broker = await startBrokerProcess({ root, home: tempDir('sb-resource-fresh-') });
    const client = await connect(broker.url, broker.token);
    try {
      const pins = await waitFor(async () => {
        const s = await facade(client, 'server_status', { name: 'notes' });
        return s.state === 'running' && s.pins.quarantinedResourceTemplates ? s.pins : undefined;
      }, 'templates judged against the lockfile');
      assert.deepEqual(pins.quarantinedResourceTemplates, ['notes://day/{date}', 'notes://tag/{tag}']);
      const diff = await facade(client, 'tool_changes', { name: 'notes' });
      assert.deepEqual(diff.resourceTemplates[0].differsFrom, ['lockfile']);
      assert.deepEqual(await templates(client), ['notes://file/{name}']);
    } finally {
      await client.close();
    }
  });
});
