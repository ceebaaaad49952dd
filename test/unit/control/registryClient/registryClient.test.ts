// The MCP Registry client against the loopback registry fixture (a real process over real HTTP):
// search, cursor paging, version pinning, several registries, and what a hostile registry answers
// (wrong schema, a huge page, no answer, a redirect to another host, names that climb out of the path).
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { RegistryClient, searchRegistries } from '../../../../src/broker/control/registryClient/registryClient';
import { configuredRegistries } from '../../../../src/broker/control/registryClient/registries';
import { OFFICIAL_REGISTRY, parseServerRef } from '../../../../src/registry/registryApi';
import { killStarted, removeTempDirs } from '../../../helpers/broker';
import { startRegistry, type RegistryFixture } from '../../../helpers/registryFixture';

describe('MCP Registry client', function () {
  this.timeout(30_000);
  let reg: RegistryFixture;
  let other: RegistryFixture;

  before(async () => {
    [reg, other] = await Promise.all([startRegistry(['--page-size', '2']), startRegistry()]);
  });
  afterEach(async () => {
    await reg.setMode('normal');
  });
  after(async () => {
    await killStarted();
    removeTempDirs();
  });

  it('pages through every latest server with the cursor the registry gives', async () => {
    const client = new RegistryClient(reg.url);
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.search({ cursor });
      assert.ok(page.servers.length <= 2);
      names.push(...page.servers.map((s) => `${s.server.name}@${s.server.version}`));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    assert.deepEqual(names, [
      'com.example/analytics@3.1.0',
      'com.example/docs-search@2.0.1',
      'io.github.example-org/github-tools@0.9.0',
      'io.github.example-org/time@1.2.0',
      'io.github.example-org/weather@1.4.2',
    ]);
    assert.equal(pages, 3);
    const asked = await reg.requests();
    assert.ok(asked.every((r) => r.includes('version=latest')));
  });

  it('searches by words and summarizes each server as a row', async () => {
    const { servers, problems } = await searchRegistries([new RegistryClient(other.url)], { search: 'weather' });
    assert.deepEqual(problems, []);
    assert.equal(servers.length, 1);
    assert.deepEqual(servers[0], {
      name: 'io.github.example-org/weather',
      description: 'Weather forecasts and current conditions from OpenWeatherMap',
      version: '1.4.2',
      transport: 'stdio',
      runs: 'pypi weather-mcp-server',
      needsSecrets: true,
      registry: other.url,
    });
    const docs = (await searchRegistries([new RegistryClient(other.url)], { search: 'docs' })).servers;
    assert.deepEqual(
      docs.map((d) => [d.name, d.transport, d.runs, d.needsSecrets]),
      [['com.example/docs-search', 'streamable-http', 'https://mcp.docs.example.com/mcp', false]],
    );
  });

  it('pins a version, or takes the latest; the name is URL-encoded into one path segment', async () => {
    const client = new RegistryClient(reg.url);
    const pinned = await client.server('io.github.example-org/time', '1.0.0');
    assert.equal(pinned.server.version, '1.0.0');
    assert.equal(pinned.server.description, 'Current time and timezone conversions');
    const latest = await client.server('io.github.example-org/time', 'latest');
    assert.equal(latest.server.version, '1.2.0');
    const asked = await reg.requests();
    assert.ok(asked.includes('/v0/servers/io.github.example-org%2Ftime/versions/1.0.0'), asked.join('\n'));
    await assert.rejects(
      client.server('io.github.example-org/time', '9.9.9'),
      /has no server io.github.example-org\/time version 9.9.9/,
    );
  });

  it('refuses names and versions that would leave the path, before asking', async () => {
    const client = new RegistryClient(reg.url);
    const before = (await reg.requests()).length;
    for (const [name, version] of [
      ['io.evil/../../admin', 'latest'],
      ['../admin', 'latest'],
      ['io.github.example-org/time', '..'],
      ['io.github.example-org/time', '../../../v0/servers'],
      ['io.evil/a%2Fb', 'latest'],
    ]) {
      await assert.rejects(
        client.server(name, version),
        /is not a (registry server name|version)/,
        `${name}@${version}`,
      );
    }
    assert.equal((await reg.requests()).length, before, 'no request was made');
    assert.throws(() => parseServerRef('io.evil/x@../..'), /is not a version/);
    assert.deepEqual(parseServerRef('io.github.example-org/time@1.0.0'), {
      name: 'io.github.example-org/time',
      version: '1.0.0',
    });
  });

  it('leaves out entries that are not valid server.json, and shows control characters escaped', async () => {
    await other.setMode('path-tricks');
    try {
      const { servers, problems } = await searchRegistries([new RegistryClient(other.url)], { search: 'io.evil' });
      assert.deepEqual(
        servers.map((s) => s.name),
        ['io.evil/ansi'],
      );
      assert.ok(!servers[0].description.includes('\u001b'), servers[0].description);
      assert.match(servers[0].description, /\\u001b\[2J/);
      assert.equal(problems.length, 1);
      assert.match(problems[0], /2 entries were not valid server.json/);
      assert.match(problems[0], /io.evil\/\.\.\/\.\.\/admin/);
    } finally {
      await other.setMode('normal');
    }
  });

  it('refuses an answer of the wrong shape, or for another server', async () => {
    const client = new RegistryClient(reg.url);
    await reg.setMode('wrong-schema');
    await assert.rejects(client.search({}), /the registry's answer is not a server list \(servers:/);
    await assert.rejects(client.server('io.github.example-org/time', 'latest'), /not a valid server.json|not a server/);
    await reg.setMode('wrong-name');
    await assert.rejects(
      client.server('io.github.example-org/time', 'latest'),
      /answered with 'com.example\/analytics' when asked for 'io.github.example-org\/time'/,
    );
  });

  it('stops reading a huge page at the size cap', async () => {
    await reg.setMode('huge-page');
    const client = new RegistryClient(reg.url, { limit: 1024 * 1024 });
    await assert.rejects(client.search({}), /answered with more than 1048576 bytes; at most 1048576 are read/);
  });

  it('gives up on a registry that does not answer, with a message that says so', async () => {
    await reg.setMode('slow');
    const client = new RegistryClient(reg.url, { timeoutMs: 500 });
    await assert.rejects(client.search({}), new RegExp(`${reg.url} did not answer within 0.5 s`));
    const controller = new AbortController();
    const pending = new RegistryClient(reg.url).search({}, controller.signal);
    controller.abort();
    await assert.rejects(pending, (err: Error) => err.name === 'AbortError' || /aborted/i.test(err.message));
  });

  it('does not follow a redirect to another host', async () => {
    const target = other.url.replace('127.0.0.1', 'localhost');
    await reg.setMode('redirect', target);
    const before = (await other.requests()).length;
    await assert.rejects(
      new RegistryClient(reg.url).search({ search: 'time' }),
      new RegExp(`redirected to ${target.replace(/[.]/g, '\\.')}, another host`),
    );
    assert.equal((await other.requests()).length, before, 'the other host was never asked');
    // Positive control: the same request straight to that host is answered.
    assert.equal((await new RegistryClient(target).search({ search: 'time' })).servers.length, 1);
  });

  it('searches several registries at once, with one cursor, and names one that fails', async () => {
    const clients = [new RegistryClient(reg.url), new RegistryClient(other.url)];
    const first = await searchRegistries(clients, { search: 'example' });
    assert.equal(first.servers.filter((s) => s.registry === other.url).length, 5);
    assert.equal(first.servers.filter((s) => s.registry === reg.url).length, 2);
    assert.ok(first.nextCursor);
    const second = await searchRegistries(clients, { search: 'example', cursor: first.nextCursor });
    assert.ok(second.servers.every((s) => s.registry === reg.url));
    assert.equal(second.servers.length, 2);
    await assert.rejects(searchRegistries(clients, { cursor: 'bogus' }), /not one this search gave out/);

    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = new RegistryClient(`http://127.0.0.1:${port}`);
    const partial = await searchRegistries([down, new RegistryClient(other.url)], { search: 'time' });
    assert.equal(partial.servers.length, 1);
    assert.match(
      partial.problems[0],
      new RegExp(`http://127\\.0\\.0\\.1:${port} could not be reached \\(ECONNREFUSED\\)`),
    );
    await assert.rejects(searchRegistries([down], {}), /could not be reached/);
  });

  it('reads the configured registries: flags, then SWITCHBOARD_REGISTRIES, then the official one', () => {
    assert.deepEqual(configuredRegistries([], {}), [OFFICIAL_REGISTRY]);
    assert.deepEqual(configuredRegistries([], { SWITCHBOARD_REGISTRIES: 'https://a.example/, https://b.example/r' }), [
      'https://a.example',
      'https://b.example/r',
    ]);
    assert.deepEqual(configuredRegistries(['http://127.0.0.1:1'], { SWITCHBOARD_REGISTRIES: 'https://a.example' }), [
      'http://127.0.0.1:1',
    ]);
    assert.throws(() => configuredRegistries(['http://registry.example']), /--registry: .*plain http/);
    assert.throws(() => configuredRegistries(['https://r.example/?q=1']), /has a query/);
  });
});
