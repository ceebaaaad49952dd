// The console form's model: fields → definition, validated by the registry's own schema, the
// way the webview does it before Save and Probe.
import * as assert from 'node:assert/strict';
import { buildDefinition, extrasOf, formFromDefinition, isBlocking } from '../../webview/form';
import { ServerDefSchema } from '../../src/registry/schema';

const ctx = { extras: {}, mode: 'new' as const, existingNames: ['echo'] };

describe('extension: console form', () => {
  it("shows the registry's warnings under their field without blocking Save", () => {
    const form = { ...formFromDefinition(undefined), name: 'mem', command: 'npx', args: '-y\n@acme/server\n' };
    const built = buildDefinition(form, ctx);
    assert.equal(built.errors.size, 0);
    assert.match((built.warnings.get('command') ?? []).join(), /no 'network' grant/);
    assert.equal(isBlocking(built), false);
    const granted = buildDefinition({ ...form, grants: ['network'] }, ctx);
    assert.equal(granted.warnings.size, 0);
  });

  it('turns the form into the definition the broker writes', () => {
    const form = {
      ...formFromDefinition(undefined),
      name: 'github',
      description: 'GitHub',
      trust: 'community',
      command: 'npx',
      args: '-y\n@modelcontextprotocol/server-github\n',
      env: 'GITHUB_TOKEN=${env:GITHUB_TOKEN}\nLOG = debug',
      grants: ['secrets', 'network'],
      excludeTools: 'delete_*, push_*',
      enabled: false,
    };
    const built = buildDefinition(form, ctx);
    assert.deepEqual([...built.errors], []);
    assert.deepEqual(built.definition, {
      name: 'github',
      trust: 'community',
      transport: 'stdio',
      description: 'GitHub',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-github'],
      env: { GITHUB_TOKEN: '${env:GITHUB_TOKEN}', LOG: 'debug' },
      grants: ['network', 'secrets'],
      excludeTools: ['delete_*', 'push_*'],
      enabled: false,
    });
    assert.ok(ServerDefSchema.safeParse(built.definition).success);
  });

  it("shows the schema's messages under the field they belong to", () => {
    const built = buildDefinition({ ...formFromDefinition(undefined), name: 'Bad Name', command: 'node' }, ctx);
    assert.match(built.errors.get('name')!.join(' '), /lowercase/);
    assert.ok(isBlocking(built));
    const noCommand = buildDefinition({ ...formFromDefinition(undefined), name: 'ok', command: '' }, ctx);
    assert.match(noCommand.errors.get('command')!.join(' '), /needs a 'command'/);
    const remote = buildDefinition(
      { ...formFromDefinition(undefined), name: 'api', transport: 'http', url: 'ftp://x' },
      ctx,
    );
    assert.match(remote.errors.get('url')!.join(' '), /http/);
    const env = buildDefinition({ ...formFromDefinition(undefined), name: 'x', command: 'node', env: 'oops' }, ctx);
    assert.deepEqual(env.errors.get('env'), ['line 1: write KEY=value']);
  });

  it('warns, without blocking, that a new server would replace an existing one', () => {
    const built = buildDefinition({ ...formFromDefinition(undefined), name: 'echo', command: 'node' }, ctx);
    assert.match(built.errors.get('name')![0], /exists already; saving replaces it/);
    assert.equal(isBlocking(built), false);
    assert.equal(
      buildDefinition({ ...formFromDefinition(undefined), name: 'echo', command: 'node' }, { ...ctx, mode: 'edit' })
        .errors.size,
      0,
    );
  });

  it('round-trips a definition and keeps the fields it does not show', () => {
    const def = {
      name: 'files',
      trust: 'trusted',
      transport: 'stdio',
      command: 'npx',
      args: ['--no-install', 'mcp-server-filesystem', '.'],
      grants: ['filesystem'],
      allowedTools: ['read_*'],
      restart: { maxRetries: 2 },
      timeouts: { callMs: 5000 },
    };
    const extras = extrasOf(def);
    assert.deepEqual(extras, { restart: { maxRetries: 2 }, timeouts: { callMs: 5000 } });
    const built = buildDefinition(formFromDefinition(def), { ...ctx, extras, mode: 'edit' });
    assert.deepEqual(built.definition, def);
  });
});
