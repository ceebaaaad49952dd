// RegistryLoader over real directories: per-file problems, duplicates, last-good retention.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatProblem, RegistryLoader } from '../../src/registry/loader';
import { makeRoot, put, removeRoot, useRoot } from './helpers/tmp';
import { notUnderWine, WINE_NO_SYMLINKS } from '../helpers/platform';

describe('registry loader', () => {
  const ctx = useRoot('loader');

  it('treats a missing root or missing directories as an empty registry', () => {
    const snap = new RegistryLoader(path.join(ctx.root, 'nope')).load();
    assert.equal(snap.servers.size + snap.prompts.size + snap.clients.size, 0);
    assert.deepEqual(snap.problems, []);
    assert.equal(snap.generation, 1);
  });

  it('loads valid files of each kind with defaults, ignoring temp and other files', () => {
    put(ctx.root, 'mcp-servers.d/echo.yaml', 'command: node\nargs: [echo.js]\ntrust: trusted\n');
    put(ctx.root, 'mcp-servers.d/remote.yml', 'transport: http\nurl: http://127.0.0.1:9/mcp\n');
    put(ctx.root, 'mcp-servers.d/.echo.yaml.123.abc.tmp', 'garbage: [');
    put(ctx.root, 'mcp-servers.d/.hidden.yaml', 'garbage: [');
    put(ctx.root, 'mcp-servers.d/notes.txt', 'not yaml');
    put(ctx.root, 'mcp-servers.d/echo.yaml~', 'backup');
    put(ctx.root, 'prompts.d/review.yaml', 'messages:\n  - role: user\n    content: Review this\n');
    put(ctx.root, 'clients.d/copilot.yaml', 'mcp_allow: [read, write]\n');
    const snap = new RegistryLoader(ctx.root).load();
    assert.deepEqual(snap.problems, []);
    assert.equal(snap.root, path.resolve(ctx.root));
    assert.deepEqual([...snap.servers.keys()], ['echo', 'remote']);
    assert.equal(snap.servers.get('echo')?.trust, 'trusted');
    assert.equal(snap.servers.get('echo')?.restart.maxRetries, 5);
    assert.equal(snap.servers.get('remote')?.transport, 'http');
    assert.equal(snap.prompts.get('review')?.messages[0].content, 'Review this');
    assert.deepEqual(snap.clients.get('copilot')?.mcp_allow, ['read', 'write']);
    assert.ok(Object.isFrozen(snap.servers.get('echo')), 'definitions are frozen: consumers share them');
  });

  it('reports every kind of problem with file, line and column while the good files still load', () => {
    const files = {
      syntax: put(ctx.root, 'mcp-servers.d/syntax.yaml', 'command: npx\nargs: [a,\nenv: {}\n'),
      unknown: put(ctx.root, 'mcp-servers.d/unknown.yaml', 'name: unknown\n\ncomand: npx\n'),
      type: put(ctx.root, 'mcp-servers.d/type.yaml', 'command: npx\nenabled: sometimes\n'),
      badName: put(ctx.root, 'mcp-servers.d/Bad.yaml', 'command: npx\n'),
      underscores: put(ctx.root, 'mcp-servers.d/a__b.yaml', 'command: npx\n'),
      mismatch: put(ctx.root, 'mcp-servers.d/mismatch.yaml', 'command: npx\nname: other\n'),
      reserved: put(ctx.root, 'mcp-servers.d/switchboard.yaml', 'command: npx\n'),
      noCommand: put(ctx.root, 'mcp-servers.d/nocommand.yaml', 'description: x\nargs: [a]\n'),
      noUrl: put(ctx.root, 'mcp-servers.d/nourl.yaml', 'transport: http\n'),
      dupFirst: put(ctx.root, 'mcp-servers.d/dup.yaml', 'command: first\n'),
      dupSecond: put(ctx.root, 'mcp-servers.d/dup.yml', 'command: second\n'),
      prompt: put(ctx.root, 'prompts.d/bad.yaml', 'messages:\n  - role: user\n    content: "{{x}}"\n'),
      client: put(ctx.root, 'clients.d/bad.yaml', 'mcp_allow: read\n'),
    };
    put(ctx.root, 'mcp-servers.d/good.yaml', 'command: node\n');
    put(ctx.root, 'prompts.d/good.yaml', 'messages: [{role: user, content: hi}]\n');
    put(ctx.root, 'clients.d/good.yaml', '{}\n');

    const snap = new RegistryLoader(ctx.root).load();
    assert.deepEqual([...snap.servers.keys()], ['dup', 'good']);
    assert.equal(snap.servers.get('dup')?.command, 'first', 'the first spelling wins');
    assert.deepEqual([...snap.prompts.keys()], ['good']);
    assert.deepEqual([...snap.clients.keys()], ['good']);

    const at = (file: string) => {
      const found = snap.problems.filter((p) => p.file === file);
      assert.equal(found.length, 1, `one problem for ${file}: ${JSON.stringify(snap.problems, null, 2)}`);
      assert.equal(found[0].severity, 'error');
      return [found[0].line, found[0].column, found[0].message] as const;
    };
    assert.deepEqual(at(files.syntax).slice(0, 2), [3, 1]);
    assert.deepEqual(at(files.unknown), [3, 1, "unknown key 'comand' (did you mean 'command'?)"]);
    assert.deepEqual(at(files.type), [2, 10, "'enabled' must be true or false, not the string 'sometimes'"]);
    assert.match(at(files.badName)[2], /file name 'Bad.yaml' is not a valid server name: .*lowercase/);
    assert.match(at(files.underscores)[2], /'__'/);
    assert.deepEqual(at(files.mismatch).slice(0, 2), [2, 7]);
    assert.match(at(files.mismatch)[2], /does not match the file name/);
    assert.match(at(files.reserved)[2], /reserved/);
    assert.match(at(files.noCommand)[2], /needs a 'command'/);
    assert.match(at(files.noUrl)[2], /needs a 'url'/);
    assert.deepEqual(at(files.dupSecond), [
      1,
      1,
      "duplicate server 'dup': already defined by dup.yaml; this file is ignored",
    ]);
    assert.equal(snap.problems.filter((p) => p.file === files.dupFirst).length, 0);
    assert.deepEqual(at(files.prompt).slice(0, 2), [3, 14]);
    assert.equal(snap.problems.find((p) => p.file === files.prompt)?.kind, 'prompt');
    assert.deepEqual(at(files.client).slice(0, 2), [1, 12]);
    assert.equal(snap.problems.find((p) => p.file === files.client)?.kind, 'client');
    for (const p of snap.problems) assert.ok(path.isAbsolute(p.file));
    assert.equal(
      formatProblem(
        snap.problems.find((p) => p.file === files.unknown)!,
        ctx.root,
      ),
      `${path.join('mcp-servers.d', 'unknown.yaml')}:3:1 error: unknown key 'comand' (did you mean 'command'?)`,
    );
  });

  it('keeps the last good definition of a broken file until it is fixed or deleted', () => {
    const loader = new RegistryLoader(ctx.root);
    const file = put(ctx.root, 'mcp-servers.d/git.yaml', 'command: python3\nargs: [mcp-server-git]\n');
    put(ctx.root, 'mcp-servers.d/other.yaml', 'command: node\n');
    const good = loader.load();
    assert.deepEqual(good.servers.get('git')?.args, ['mcp-server-git']);
    assert.deepEqual(good.problems, []);

    fs.writeFileSync(file, 'command: python3\nargs: [mcp-server-git\n');
    const broken = loader.load();
    assert.ok(broken.generation > good.generation);
    assert.equal(broken.servers.get('git'), good.servers.get('git'), 'the previous definition stays live');
    assert.ok(broken.servers.has('other'));
    const errs = broken.problems.filter((p) => p.severity === 'error');
    assert.equal(errs.length, 1);
    assert.equal(errs[0].file, file);
    assert.match(errs[0].message, /^YAML/);
    const note = broken.problems.find((p) => p.severity === 'warning');
    assert.match(
      note?.message ?? '',
      /previous version of server 'git' stays live until it is fixed or the file is deleted/,
    );

    // Still broken in a different way: still the old definition.
    fs.writeFileSync(file, 'command: python3\nargz: []\n');
    const broken2 = loader.load();
    assert.deepEqual(broken2.servers.get('git')?.args, ['mcp-server-git']);
    assert.match(broken2.problems.find((p) => p.severity === 'error')?.message ?? '', /unknown key 'argz'/);

    fs.writeFileSync(file, 'command: python3\nargs: [mcp-server-git, --repo, .]\n');
    const fixed = loader.load();
    assert.deepEqual(fixed.servers.get('git')?.args, ['mcp-server-git', '--repo', '.']);
    assert.deepEqual(fixed.problems, []);

    fs.writeFileSync(file, '- broken\n');
    assert.deepEqual(
      loader.load().servers.get('git')?.args,
      ['mcp-server-git', '--repo', '.'],
      'retains the newest good version',
    );

    fs.unlinkSync(file);
    const gone = loader.load();
    assert.equal(gone.servers.has('git'), false);
    assert.deepEqual(gone.problems, []);
    assert.ok(gone.servers.has('other'));

    // Recreated broken after deletion: nothing is retained any more.
    fs.writeFileSync(file, 'command: [\n');
    const again = loader.load();
    assert.equal(again.servers.has('git'), false);
    assert.equal(again.problems.filter((p) => p.severity === 'warning').length, 0);
  });

  it('does not retain anything for a file that was never good', () => {
    put(ctx.root, 'prompts.d/p.yaml', 'messages: []\n');
    const snap = new RegistryLoader(ctx.root).load();
    assert.equal(snap.prompts.size, 0);
    assert.equal(snap.problems.length, 1);
  });

  it('bumps the generation only when something changed, and reuses unchanged definitions', () => {
    const loader = new RegistryLoader(ctx.root);
    const file = put(ctx.root, 'mcp-servers.d/a.yaml', 'command: node\n');
    const s1 = loader.load();
    const s2 = loader.load();
    assert.equal(s2, s1, 'an unchanged registry returns the same snapshot');
    assert.equal(s2.generation, s1.generation);

    fs.writeFileSync(file, '# a comment only\ncommand: node\n');
    const s3 = loader.load();
    assert.equal(s3.generation, s1.generation, 'a comment does not change the definition');

    fs.writeFileSync(file, 'command: node\nenabled: false\n');
    const s4 = loader.load();
    assert.equal(s4.generation, s1.generation + 1);
    assert.equal(s4.servers.get('a')?.enabled, false);

    put(ctx.root, 'clients.d/c.yaml', 'mcp_allow: [read]\n');
    const s5 = loader.load();
    assert.equal(s5.generation, s4.generation + 1);
    assert.equal(s5.servers.get('a'), s4.servers.get('a'), 'unchanged definitions keep their identity');
  });

  it('skips a directory named like a definition file', () => {
    fs.mkdirSync(path.join(ctx.root, 'mcp-servers.d', 'dir.yaml'), { recursive: true });
    put(ctx.root, 'mcp-servers.d/ok.yaml', 'command: node\n');
    const snap = new RegistryLoader(ctx.root).load();
    assert.deepEqual([...snap.servers.keys()], ['ok']);
    // A directory named like a definition is skipped, not read.
    assert.deepEqual(snap.problems, []);
  });

  it('reports a kind directory that is a file', () => {
    put(ctx.root, 'clients.d', 'oops');
    put(ctx.root, 'mcp-servers.d/ok.yaml', 'command: node\n');
    const snap = new RegistryLoader(ctx.root).load();
    assert.ok(snap.servers.has('ok'));
    assert.equal(snap.problems.length, 1);
    assert.equal(snap.problems[0].file, path.join(path.resolve(ctx.root), 'clients.d'));
    assert.match(snap.problems[0].message, /cannot read the directory \(ENOTDIR\)/);
  });

  notUnderWine(WINE_NO_SYMLINKS).describe('symbolic links (security finding 16)', () => {
    let outside: string;
    beforeEach(() => {
      outside = fs.realpathSync(makeRoot('outside'));
    });
    afterEach(() => {
      removeRoot(outside);
    });

    const onlyProblem = (snap: ReturnType<RegistryLoader['load']>, file: string) => {
      const found = snap.problems.filter((p) => p.file === file);
      assert.equal(found.length, 1, JSON.stringify(snap.problems, null, 2));
      return found[0];
    };

    it('refuses a definition file that links outside the root, with file and line, and loads the rest', () => {
      const target = put(outside, 'evil.yaml', 'command: /bin/sh\nargs: [-c, "echo owned"]\ntrust: trusted\n');
      const link = path.join(ctx.root, 'mcp-servers.d', 'evil.yaml');
      put(ctx.root, 'mcp-servers.d/good.yaml', 'command: node\n');
      fs.symlinkSync(target, link);
      const snap = new RegistryLoader(ctx.root).load();
      assert.deepEqual([...snap.servers.keys()], ['good']);
      const problem = onlyProblem(snap, link);
      assert.equal(problem.severity, 'error');
      assert.deepEqual([problem.line, problem.column], [1, 1]);
      assert.ok(
        problem.message.startsWith(`this file is a symbolic link to ${target}, outside the registry root`),
        problem.message,
      );
      assert.match(problem.message, /refusing to load it/);
      assert.ok(!problem.message.includes('owned'), 'nothing of the target is quoted');
    });

    it('refuses a relative link and a chain of links that ends outside the root', () => {
      put(outside, 'x.yaml', 'command: node\n');
      put(outside, 'y.yaml', 'messages: [{role: user, content: hi}]\n');
      fs.mkdirSync(path.join(ctx.root, 'mcp-servers.d'));
      fs.mkdirSync(path.join(ctx.root, 'prompts.d'));
      const relative = path.join(ctx.root, 'mcp-servers.d', 'rel.yaml');
      fs.symlinkSync(path.relative(path.dirname(relative), path.join(outside, 'x.yaml')), relative);
      // An in-root link that points at another in-root link that leaves the root.
      const hop = path.join(ctx.root, 'hop.yaml');
      fs.symlinkSync(path.join(outside, 'y.yaml'), hop);
      const chained = path.join(ctx.root, 'prompts.d', 'chained.yaml');
      fs.symlinkSync('../hop.yaml', chained);
      const snap = new RegistryLoader(ctx.root).load();
      assert.equal(snap.servers.size + snap.prompts.size, 0);
      assert.match(onlyProblem(snap, relative).message, /symbolic link to .*x\.yaml, outside the registry root/);
      assert.match(onlyProblem(snap, chained).message, /symbolic link to .*y\.yaml, outside the registry root/);
    });

    it('follows links that stay inside the root', () => {
      put(ctx.root, 'shared/base.yaml', 'command: node\nargs: [shared.js]\n');
      fs.mkdirSync(path.join(ctx.root, 'mcp-servers.d'));
      fs.symlinkSync('../shared/base.yaml', path.join(ctx.root, 'mcp-servers.d', 'base.yaml'));
      const snap = new RegistryLoader(ctx.root).load();
      assert.deepEqual(snap.problems, []);
      assert.deepEqual(snap.servers.get('base')?.args, ['shared.js']);
    });

    it('judges links against the real root when the root itself is reached through a link', () => {
      const real = put(ctx.root, 'real/mcp-servers.d/a.yaml', 'command: node\n');
      fs.symlinkSync(path.dirname(path.dirname(real)), path.join(ctx.root, 'alias'));
      fs.symlinkSync(real, path.join(ctx.root, 'real', 'mcp-servers.d', 'b.yaml'));
      const snap = new RegistryLoader(path.join(ctx.root, 'alias')).load();
      assert.deepEqual(snap.problems, []);
      assert.deepEqual([...snap.servers.keys()], ['a', 'b']);
    });

    it('refuses a kind directory that links outside the root, once, and loads the other kinds', () => {
      put(outside, 'servers/evil.yaml', 'command: /bin/sh\ntrust: trusted\n');
      put(ctx.root, 'clients.d/copilot.yaml', 'mcp_allow: [read]\n');
      const dir = path.join(ctx.root, 'mcp-servers.d');
      fs.symlinkSync(path.join(outside, 'servers'), dir);
      const snap = new RegistryLoader(ctx.root).load();
      assert.equal(snap.servers.size, 0);
      assert.ok(snap.clients.has('copilot'));
      const problem = onlyProblem(snap, dir);
      assert.match(
        problem.message,
        /^mcp-servers\.d is a symbolic link to .*servers, outside the registry root .*; refusing to load anything/,
      );
    });

    it('never serves the outside file when a good definition is swapped for a link, keeping the last good one', () => {
      const loader = new RegistryLoader(ctx.root);
      const file = put(ctx.root, 'mcp-servers.d/git.yaml', 'command: python3\nargs: [mcp-server-git]\n');
      assert.equal(loader.load().servers.get('git')?.command, 'python3');
      const target = put(outside, 'evil.yaml', 'command: /bin/sh\n');
      fs.unlinkSync(file);
      fs.symlinkSync(target, file);
      const snap = loader.load();
      assert.equal(snap.servers.get('git')?.command, 'python3', 'the last good definition stays; the link is not read');
      const errors = snap.problems.filter((p) => p.severity === 'error');
      assert.equal(errors.length, 1);
      assert.match(errors[0].message, /symbolic link to .*evil\.yaml, outside the registry root/);
    });
  });
});
