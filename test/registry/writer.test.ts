// RegistryWriter: validation first, no path escapes, atomic writes, YAML that reads back the same.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { parseDefinition, RegistryLoader } from '../../src/registry/loader';
import { RegistryValidationError, RegistryWriter, toYaml } from '../../src/registry/writer';
import { put, useRoot } from './helpers/tmp';
import { notUnderWine, WINE_NO_SYMLINKS } from '../helpers/platform';

function listAll(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out.sort();
}

describe('registry writer', () => {
  const ctx = useRoot('writer');

  it('round-trips each kind through the loader, creating directories as needed', async () => {
    const w = new RegistryWriter(ctx.root);
    const s = await w.upsert('server', {
      name: 'git',
      description: 'Git tools: status, diff & log',
      command: 'python3',
      args: ['mcp-server-git', '--repository', '.'],
      env: { GIT_PAGER: 'cat' },
      grants: ['filesystem'],
      restart: { maxRetries: 2 },
      excludeTools: ['git_push*'],
    });
    assert.equal(s.path, path.join(path.resolve(ctx.root), 'mcp-servers.d', 'git.yaml'));
    assert.equal(s.def.restart.backoffMs, 500, 'the returned def has defaults applied');
    const p = await w.upsert('prompt', {
      name: 'review',
      arguments: [{ name: 'file', required: true }],
      messages: [{ role: 'user', content: 'Review {{file}}.\nBe brief: "no fluff".\n' }],
    });
    const c = await w.upsert('client', {
      name: 'copilot',
      mcp_allow: ['read', 'write'],
      tools: { deny: ['*__delete*'] },
    });

    const snap = new RegistryLoader(ctx.root).load();
    assert.deepEqual(snap.problems, []);
    assert.deepEqual(snap.servers.get('git'), s.def);
    assert.deepEqual(snap.prompts.get('review'), p.def);
    assert.deepEqual(snap.clients.get('copilot'), c.def);
    assert.deepEqual(
      listAll(ctx.root),
      ['clients.d/copilot.yaml', 'mcp-servers.d/git.yaml', 'prompts.d/review.yaml'].map((f) =>
        f.split('/').join(path.sep),
      ),
    );
  });

  it('writes readable YAML: schema order, defaults omitted, trust and transport explicit', () => {
    const text = toYaml('server', {
      command: 'npx',
      name: 'fs',
      args: ['-y', '@modelcontextprotocol/server-filesystem'],
      enabled: true,
      restart: { maxRetries: 5, backoffMs: 1000 },
    });
    assert.equal(
      text,
      [
        'name: fs',
        'trust: community',
        'transport: stdio',
        'command: npx',
        'args:',
        '  - -y',
        '  - "@modelcontextprotocol/server-filesystem"',
        'restart:',
        '  backoffMs: 1000',
        '',
      ].join('\n'),
    );
    assert.equal(toYaml('client', { name: 'c' }), 'name: c\n');
    assert.throws(() => toYaml('client', { name: 'c', bogus: 1 }));
  });

  it('keeps comments and explicit defaults of an existing file it updates', async () => {
    const file = put(
      ctx.root,
      'mcp-servers.d/fs.yaml',
      '# Filesystem access for the docs folder.\ncommand: npx # via npm\nenabled: true\nargs: [-y, server-filesystem, docs]\n',
    );
    const w = new RegistryWriter(ctx.root);
    await w.upsert('server', {
      name: 'fs',
      command: 'npx',
      args: ['-y', 'server-filesystem', 'docs', 'src'],
      enabled: true,
      grants: ['filesystem'],
    });
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /# Filesystem access for the docs folder\./);
    assert.match(text, /command: npx # via npm/);
    assert.match(text, /enabled: true/);
    assert.doesNotMatch(text, /^name:/m, 'the name stays implied by the file name');
    const res = parseDefinition('server', file, text);
    assert.deepEqual(res.def?.args, ['-y', 'server-filesystem', 'docs', 'src']);
    assert.deepEqual(res.def?.grants, ['filesystem']);
  });

  it('updates an existing .yml file instead of creating a duplicate .yaml', async () => {
    put(ctx.root, 'clients.d/cli.yml', 'mcp_allow: [read]\n');
    const w = new RegistryWriter(ctx.root);
    const r = await w.upsert('client', { name: 'cli', mcp_allow: ['read', 'write'] });
    assert.equal(path.basename(r.path), 'cli.yml');
    assert.deepEqual(listAll(path.join(ctx.root, 'clients.d')), ['cli.yml']);
    assert.deepEqual(new RegistryLoader(ctx.root).load().clients.get('cli')?.mcp_allow, ['read', 'write']);
  });

  it('rewrites a broken existing file from scratch', async () => {
    const file = put(ctx.root, 'mcp-servers.d/x.yaml', 'command: [oops\n');
    await new RegistryWriter(ctx.root).upsert('server', { name: 'x', command: 'node' });
    assert.ok(parseDefinition('server', file, fs.readFileSync(file, 'utf8')).def);
  });

  it('rejects invalid definitions with readable issues and writes nothing', async () => {
    const w = new RegistryWriter(ctx.root);
    await assert.rejects(w.upsert('server', { name: 'x', comand: 'npx', trust: 'maybe' }), (err: unknown) => {
      assert.ok(err instanceof RegistryValidationError);
      assert.match(err.message, /^invalid server definition 'x':/);
      assert.ok(err.issues.includes("unknown key 'comand' (did you mean 'command'?)"), err.message);
      assert.ok(
        err.issues.some((i) => /'trust' must be one of/.test(i)),
        err.message,
      );
      return true;
    });
    await assert.rejects(w.upsert('server', { name: 'x', transport: 'http' }), /needs a 'url'/);
    await assert.rejects(w.upsert('prompt', { messages: [{ role: 'user', content: 'x' }] }), /'name' is required/);
    await assert.rejects(w.upsert('client', null), /must be an object/);
    assert.deepEqual(listAll(ctx.root), []);
  });

  const traversal = [
    '../x',
    '../../etc/passwd',
    '/etc/x',
    'a/b',
    'a\\b',
    '..',
    'a\0b',
    'x'.repeat(200),
    '\u0455erver',
    'Upper',
    '',
    'switchboard',
    'a__b',
    '.hidden',
    'nul', // Windows devices: a file of that name cannot exist there, whatever the extension
    'con',
    'com1',
  ];
  for (const name of traversal) {
    it(`refuses the name ${JSON.stringify(name.length > 20 ? name.slice(0, 20) + '...' : name)} for upsert and remove`, async () => {
      const w = new RegistryWriter(path.join(ctx.root, 'ws'));
      fs.mkdirSync(path.join(ctx.root, 'ws'));
      await assert.rejects(w.upsert('server', { name, command: 'node' }), RegistryValidationError);
      await assert.rejects(w.remove('server', name), /invalid name/);
      assert.deepEqual(listAll(ctx.root), [], 'nothing was written anywhere');
    });
  }

  notUnderWine(WINE_NO_SYMLINKS).it(
    'refuses to write through a kind directory that is a symlink out of the root',
    async function () {
      const outside = path.join(ctx.root, 'outside');
      const ws = path.join(ctx.root, 'ws');
      fs.mkdirSync(outside);
      fs.mkdirSync(ws);
      try {
        fs.symlinkSync(outside, path.join(ws, 'mcp-servers.d'), 'dir');
      } catch {
        this.skip(); // no symlink permission (Windows without developer mode)
      }
      await assert.rejects(
        new RegistryWriter(ws).upsert('server', { name: 'evil', command: 'node' }),
        /outside the registry root/,
      );
      assert.deepEqual(fs.readdirSync(outside), []);
    },
  );

  it('removes both spellings and reports whether anything was removed', async () => {
    const w = new RegistryWriter(ctx.root);
    assert.equal(await w.remove('server', 'none'), false, 'no directory yet');
    put(ctx.root, 'mcp-servers.d/a.yaml', 'command: x\n');
    put(ctx.root, 'mcp-servers.d/a.yml', 'command: y\n');
    put(ctx.root, 'mcp-servers.d/b.yaml', 'command: z\n');
    assert.equal(await w.remove('server', 'a'), true);
    assert.equal(await w.remove('server', 'a'), false);
    assert.deepEqual(fs.readdirSync(path.join(ctx.root, 'mcp-servers.d')), ['b.yaml']);
  });

  it('leaves no temp files behind and keeps an existing file mode', async function () {
    const w = new RegistryWriter(ctx.root);
    const first = await w.upsert('server', { name: 'a', command: 'x' });
    if (process.platform !== 'win32') fs.chmodSync(first.path, 0o600);
    await w.upsert('server', { name: 'a', command: 'y' });
    assert.deepEqual(fs.readdirSync(path.dirname(first.path)), ['a.yaml']);
    if (process.platform !== 'win32') assert.equal(fs.statSync(first.path).mode & 0o777, 0o600);
  });

  it('round-trips arbitrary strings (quotes, colons, #, newlines, unicode) exactly', () => {
    const str = fc.string({ unit: 'grapheme', maxLength: 40 });
    const serverArb = fc.record({
      name: fc.constantFrom('a', 'srv', 'x-1'),
      description: fc.option(str, { nil: undefined }),
      command: str.filter((s) => s.length > 0),
      args: fc.array(str, { maxLength: 5 }),
      env: fc.dictionary(fc.constantFrom('A', 'B_1', '_X', 'PATH'), str, { maxKeys: 3 }),
      enabled: fc.boolean(),
      trust: fc.constantFrom('builtin', 'trusted', 'community'),
    });
    fc.assert(
      fc.property(serverArb, (input) => {
        const def = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
        const text = toYaml('server', def);
        const res = parseDefinition('server', `/ws/mcp-servers.d/${input.name}.yaml`, text);
        assert.deepEqual(
          res.problems.filter((p) => p.severity === 'error'),
          [],
          text,
        );
        assert.deepEqual(
          res.def,
          parseDefinition('server', `/ws/mcp-servers.d/${input.name}.yaml`, toYaml('server', res.def)).def,
        );
        assert.equal(res.def?.command, input.command);
        assert.deepEqual(res.def?.args, input.args);
        assert.deepEqual(res.def?.env, { ...input.env });
        assert.equal(res.def?.description, input.description);
      }),
      { numRuns: 300 },
    );
  });
});
