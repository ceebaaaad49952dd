// server.json (MCP Registry format) → registry definition: each fixture in test/fixtures/server-json
// converts to a definition the loader accepts, secrets become ${input:NAME} and never a value, and
// `switchboard import` writes it as a real process (from a file and from stdin), naming wrong fields.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDefinition } from '../../src/registry/loader';
import { serverJsonToDefinition } from '../../src/registry/serverJson';
import { toYaml } from '../../src/registry/writer';
import { BROKER_JS, FIXTURES, removeTempDirs, tempDir } from '../helpers/broker';

const read = (name: string): unknown => JSON.parse(fs.readFileSync(path.join(FIXTURES, 'server-json', name), 'utf8'));

/** The definition as the registry loads it (defaults applied), or the loader's problems. */
function loads(def: Record<string, unknown>) {
  const r = parseDefinition('server', `${String(def.name)}.yaml`, toYaml('server', def as never));
  assert.deepEqual(r.problems, [], JSON.stringify(def));
  return r.def!;
}

describe('server.json import', function () {
  this.timeout(60_000);
  after(() => removeTempDirs());

  it('npm: npx -y pkg@version, the network grant, and a required argument given by the caller', () => {
    assert.throws(
      () => serverJsonToDefinition(read('npm-filesystem.json')),
      /required and have no default.*packages\[0\]\.packageArguments\[0\] \(allowed_directory: A directory/,
    );
    const r = serverJsonToDefinition(read('npm-filesystem.json'), { values: { allowed_directory: '/srv/docs' } });
    const def = loads(r.definition);
    assert.equal(def.name, 'filesystem');
    assert.equal(def.trust, 'community');
    assert.equal(def.command, 'npx');
    assert.deepEqual(def.args, ['-y', '@modelcontextprotocol/server-filesystem@2026.8.31', '/srv/docs']);
    assert.deepEqual(def.grants, ['network']);
    assert.ok(r.notes.some((n) => /'npx' downloads '@modelcontextprotocol\/server-filesystem@2026\.8\.31'/.test(n)));
  });

  it('pypi: uvx pkg@version; the secret is ${input:…}, defaults are used, optional unset values left out', () => {
    const r = serverJsonToDefinition(read('pypi-weather.json'));
    const def = loads(r.definition);
    assert.equal(def.command, 'uvx');
    assert.deepEqual(def.args, ['weather-mcp-server@1.4.2', '--log-level', 'warning']);
    assert.deepEqual(def.env, { OPENWEATHER_API_KEY: '${input:OPENWEATHER_API_KEY}', WEATHER_UNITS: 'metric' });
    assert.deepEqual(def.grants, ['network', 'secrets']);
    assert.deepEqual(r.inputs, ['OPENWEATHER_API_KEY']);
  });

  it('oci: docker run -i --rm with -e for each variable, the image tagged with its version', () => {
    const def = loads(serverJsonToDefinition(read('oci-github.json')).definition);
    assert.equal(def.name, 'github-mcp-server');
    assert.equal(def.command, 'docker');
    assert.deepEqual(def.args, [
      'run',
      '-i',
      '--rm',
      '--network',
      'bridge',
      '-e',
      'GITHUB_PERSONAL_ACCESS_TOKEN',
      '-e',
      'GITHUB_TOOLSETS',
      'ghcr.io/github/github-mcp-server:0.13.0',
      'stdio',
    ]);
    assert.equal(def.env.GITHUB_PERSONAL_ACCESS_TOKEN, '${input:GITHUB_PERSONAL_ACCESS_TOKEN}');
    assert.deepEqual(def.grants, ['network', 'secrets']);
  });

  it('remotes: http or sse, URL variables filled, secret headers (and secret parts of a header) as ${input:…}', () => {
    const doc = read('remote-headers.json');
    assert.throws(() => serverJsonToDefinition(doc), /offers 2 ways to run it.*remotes\[0\]: streamable-http/);
    assert.throws(
      () => serverJsonToDefinition(doc, { choice: { kind: 'remote', index: 0 } }),
      /remotes\[0\]\.url\.variables\.tenant \(tenant: Your workspace's subdomain\)/,
    );
    const r = serverJsonToDefinition(doc, { choice: { kind: 'remote', index: 0 }, values: { tenant: 'acme' } });
    const def = loads(r.definition);
    assert.equal(def.transport, 'http');
    assert.equal(def.url, 'https://acme.analytics.example.com/mcp');
    assert.deepEqual(def.headers, {
      Authorization: 'Bearer ${input:api_key}',
      'X-Region': 'eu',
      'X-Api-Secret': '${input:X_Api_Secret}',
    });
    // Entered secrets go to a remote server's headers only with the secrets grant (else withheld).
    assert.deepEqual(def.grants, ['secrets']);
    assert.deepEqual(def.inputs, {
      api_key: { description: 'Workspace API key', password: true },
      X_Api_Secret: { description: 'Signing secret', password: true },
    });
    const sse = loads(serverJsonToDefinition(doc, { choice: { kind: 'remote', index: 1 } }).definition);
    assert.equal(sse.transport, 'sse');
    assert.deepEqual(sse.headers, { 'X-Api-Key': '${input:X_Api_Key}' });
  });

  it('several packages: each one by index; a bundle (mcpb) or a missing index says why', () => {
    const doc = read('several-packages.json');
    assert.throws(() => serverJsonToDefinition(doc), /offers 4 ways.*packages\[3\]: mcpb/);
    const npm = loads(
      serverJsonToDefinition(doc, { choice: { kind: 'package', index: 0 }, values: { docs: './docs' } }).definition,
    );
    assert.deepEqual(npm.args, ['-y', '@example-org/docs-search-mcp@0.9.1', '--docs', './docs', '--max-results', '20']);
    const oci = loads(
      serverJsonToDefinition(doc, { choice: { kind: 'package', index: 2 }, values: { docs_dir: '/home/me/docs' } })
        .definition,
    );
    assert.deepEqual(oci.args, [
      'run',
      '-i',
      '--rm',
      '-v',
      '/home/me/docs:/docs:ro',
      'docker.io/exampleorg/docs-search-mcp:0.9.1',
      '--docs',
      '/docs',
    ]);
    assert.throws(
      () => serverJsonToDefinition(doc, { choice: { kind: 'package', index: 3 } }),
      /packages\[3\]\.registryType is 'mcpb'/,
    );
    assert.throws(
      () => serverJsonToDefinition(doc, { choice: { kind: 'package', index: 7 } }),
      /packages\[7\] does not exist/,
    );
  });

  it('a malformed server.json names each wrong field', () => {
    assert.throws(
      () =>
        serverJsonToDefinition({
          name: 'weather',
          description: 'x',
          version: '1',
          packages: [{ registryType: 'npm', transport: { type: 'pipe' } }],
        }),
      (err: Error) =>
        /name: must be reverse-DNS/.test(err.message) &&
        /packages\[0\]\.identifier:/.test(err.message) &&
        /packages\[0\]\.transport\.type:/.test(err.message),
    );
    assert.throws(
      () => serverJsonToDefinition({ name: 'a.b/c', description: 'x', version: '1' }),
      /neither 'packages' nor 'remotes'/,
    );
  });

  it('switchboard import writes mcp-servers.d/<name>.yaml from a file or stdin, never a secret value', () => {
    const root = tempDir('sb-import-');
    fs.mkdirSync(path.join(root, 'mcp-servers.d'));
    const run = (args: string[], input?: string) =>
      spawnSync(process.execPath, [BROKER_JS, 'import', ...args, '--root', root], { encoding: 'utf8', input });
    const file = path.join(FIXTURES, 'server-json', 'oci-github.json');
    const r = run([file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /github-mcp-server\.yaml/);
    assert.match(r.stdout, /switchboard approve github-mcp-server/);
    const yaml = fs.readFileSync(path.join(root, 'mcp-servers.d', 'github-mcp-server.yaml'), 'utf8');
    assert.match(yaml, /trust: community/);
    assert.match(yaml, /GITHUB_PERSONAL_ACCESS_TOKEN: \$\{input:GITHUB_PERSONAL_ACCESS_TOKEN\}/);
    assert.deepEqual(parseDefinition('server', 'github-mcp-server.yaml', yaml).problems, []);

    const again = run([file]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already exists; import under another name with --name/);

    const several = fs.readFileSync(path.join(FIXTURES, 'server-json', 'several-packages.json'), 'utf8');
    const choose = run(['-'], several);
    assert.equal(choose.status, 1);
    assert.match(choose.stderr, /offers 4 ways to run it[\s\S]*Pick one with --package <n> or --remote <n>/);
    const piped = run(['-', '--package', '1', '--value', 'docs=/srv/docs', '--name', 'docs'], several);
    assert.equal(piped.status, 0, piped.stderr);
    const docs = fs.readFileSync(path.join(root, 'mcp-servers.d', 'docs.yaml'), 'utf8');
    assert.match(docs, /command: uvx/);
    assert.match(docs, /docs-search-mcp@0\.9\.1/);

    const bad = run(['-'], '{"name": "x"');
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /stdin is not JSON/);
  });
});
