// `switchboard search` and `switchboard add` as real CLI processes against the loopback registry
// fixture: the table, paging, version pinning, the import path (community, secrets asked, approval
// shown), then a real broker that sees the added server waiting for approval.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { killStarted, removeTempDirs, startBrokerProcess, tempDir } from '../../helpers/broker';
import { cli, startRegistry, type CliRun as Run, type RegistryFixture } from '../../helpers/registryFixture';

describe('switchboard search and add (CLI processes, loopback registry)', function () {
  this.timeout(60_000);
  let reg: RegistryFixture;
  let home: string;

  before(async () => {
    reg = await startRegistry(['--page-size', '2']);
    home = tempDir('sb-home-');
  });
  after(async () => {
    await killStarted();
    removeTempDirs();
  });

  function registryRoot(): string {
    const root = tempDir('sb-root-');
    fs.mkdirSync(path.join(root, 'mcp-servers.d'));
    return root;
  }

  it('search prints a table: name, description, version, transport, package or remote, secrets', async () => {
    const r = await cli(['search', 'example-org', '--registry', reg.url, '--limit', '5'], { home });
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split('\n');
    assert.match(lines[0], /^NAME\s+DESCRIPTION\s+VERSION\s+TRANSPORT\s+PACKAGE OR REMOTE\s+SECRETS$/);
    assert.match(
      r.out,
      /io\.github\.example-org\/github-tools\s+Issues, pull requests.*0\.9\.0\s+stdio\s+oci docker\.io\/example-org\/github-tools\s+yes/,
    );
    assert.match(
      r.out,
      /io\.github\.example-org\/time\s+Current time, timezone.*1\.2\.0\s+stdio\s+npm @example-org\/time-mcp\s+no/,
    );
  });

  it('search pages with the cursor it prints', async () => {
    const first = await cli(['search', '--registry', reg.url, '--limit', '2'], { home });
    assert.equal(first.code, 0, first.err);
    const more = /More: switchboard search --cursor (\S+)/.exec(first.out);
    assert.ok(more, first.out);
    assert.match(first.out, /com\.example\/analytics/);
    const second = await cli(['search', '--registry', reg.url, '--limit', '2', '--cursor', more[1]], { home });
    assert.equal(second.code, 0, second.err);
    assert.match(second.out, /io\.github\.example-org\/github-tools/);
    assert.doesNotMatch(second.out, /com\.example\/analytics/);
    const json = JSON.parse((await cli(['search', 'docs', '--registry', reg.url, '--json'], { home })).out);
    assert.equal(json.servers[0].runs, 'https://mcp.docs.example.com/mcp');
  });

  it('search of a registry that cannot be reached says so and fails', async () => {
    const r = await cli(['search', 'x', '--registry', 'http://127.0.0.1:1'], { home });
    assert.equal(r.code, 1);
    assert.match(r.err, /^switchboard: http:\/\/127\.0\.0\.1:1 could not be reached/);
    const bad = await cli(['search', 'x', '--registry', 'http://registry.example.com'], { home });
    assert.equal(bad.code, 1);
    assert.match(bad.err, /--registry: registry address .*plain http/);
  });

  it('add name@version writes a community server pinned to that version and shows what approval covers', async () => {
    const root = registryRoot();
    const r = await cli(['add', 'io.github.example-org/time@1.0.0', '--registry', reg.url, '--root', root], { home });
    assert.equal(r.code, 0, r.err);
    const def = parse(fs.readFileSync(path.join(root, 'mcp-servers.d', 'time.yaml'), 'utf8'));
    assert.equal(def.trust, 'community');
    assert.deepEqual(def.args, ['-y', '@example-org/time-mcp@1.0.0']);
    assert.match(r.out, /from io\.github\.example-org\/time@1\.0\.0 \(http:\/\/127\.0\.0\.1:\d+\)/);
    assert.match(
      r.out,
      /Approving 'time' would cover:\n\s+Trust:\s+community\n\s+Runs:\s+npx -y @example-org\/time-mcp@1\.0\.0/,
    );
    assert.match(r.out, /Approve it to run it: switchboard approve time/);
    const asked = await reg.requests();
    assert.ok(asked.includes('/v0/servers/io.github.example-org%2Ftime/versions/1.0.0'));

    // Without a version: the latest. The name exists now, so --name gives another.
    const again = await cli(['add', 'io.github.example-org/time', '--registry', reg.url, '--root', root], { home });
    assert.equal(again.code, 1);
    assert.match(again.err, /mcp-servers\.d\/time\.yaml already exists; import under another name with --name/);
    const latest = await cli(
      ['add', 'io.github.example-org/time', '--name', 'time-latest', '--registry', reg.url, '--root', root],
      { home },
    );
    assert.equal(latest.code, 0, latest.err);
    const def2 = parse(fs.readFileSync(path.join(root, 'mcp-servers.d', 'time-latest.yaml'), 'utf8'));
    assert.deepEqual(def2.args, ['-y', '@example-org/time-mcp@1.2.0']);
  });

  it('add asks for the secrets it needs (stdin when not a terminal) and stores them per user', async () => {
    const root = registryRoot();
    const ownHome = tempDir('sb-home-');
    const r = await cli(['add', 'io.github.example-org/weather', '--registry', reg.url, '--root', root], {
      home: ownHome,
      input: 'owm-test-key\n',
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /Stored OPENWEATHER_API_KEY/);
    const yaml = fs.readFileSync(path.join(root, 'mcp-servers.d', 'weather.yaml'), 'utf8');
    assert.ok(!yaml.includes('owm-test-key'), 'the secret is not in the YAML');
    assert.match(yaml, /\$\{input:OPENWEATHER_API_KEY\}/);
    const list = await cli(['secret', 'list'], { home: ownHome });
    assert.match(list.out, /^OPENWEATHER_API_KEY$/m);
    assert.ok(!r.out.includes('owm-test-key'), 'the secret is not printed');

    // Without input: nothing stored, and it says how to do it later.
    const other = registryRoot();
    const skipped = await cli(['add', 'com.example/analytics', '--registry', reg.url, '--root', other], {
      home: ownHome,
    });
    assert.equal(skipped.code, 0, skipped.err);
    assert.match(skipped.out, /Not stored yet: api_key; set each with 'switchboard secret set NAME'/);
  });

  it('add refuses a name that climbs out of the path, and names a server no registry has', async () => {
    const root = registryRoot();
    const before = (await reg.requests()).length;
    const tricky = await cli(['add', 'io.evil/../../admin', '--registry', reg.url, '--root', root], { home });
    assert.equal(tricky.code, 1);
    assert.match(tricky.err, /is not a registry server name/);
    assert.equal((await reg.requests()).length, before);
    const missing = await cli(['add', 'io.github.nobody/none', '--registry', reg.url, '--root', root], { home });
    assert.equal(missing.code, 1);
    assert.match(missing.err, /has no server io\.github\.nobody\/none version latest/);
    assert.deepEqual(fs.readdirSync(path.join(root, 'mcp-servers.d')), []);
  });

  it('a running broker sees the added server as community, waiting for approval', async () => {
    const root = registryRoot();
    const broker = await startBrokerProcess({ root, home });
    try {
      const r = await cli(['add', 'com.example/docs-search', '--registry', reg.url, '--root', root], { home });
      assert.equal(r.code, 0, r.err);
      let status: Run | undefined;
      for (let i = 0; i < 50; i++) {
        status = await cli(['status', '--root', root, '--json'], { home });
        if (status.out.includes('"docs-search"')) break;
        await new Promise((res) => setTimeout(res, 200));
      }
      const servers = JSON.parse(status!.out).servers as { name: string; trust: string; state: string }[];
      const docs = servers.find((s) => s.name === 'docs-search');
      assert.ok(docs, status!.out);
      assert.equal(docs.trust, 'community');
      assert.equal(docs.state, 'awaiting-approval');
    } finally {
      await broker.stop();
    }
  });
});
