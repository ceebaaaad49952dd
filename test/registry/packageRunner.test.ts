// Package runners (src/registry/packageRunner.ts): which commands may download what they run, what
// they would fetch, and the warning a stdio server without the network grant gets.
import * as assert from 'node:assert/strict';
import { packageRunnerOf, packageRunnerWarning } from '../../src/registry/packageRunner';

describe('registry: package runners', () => {
  it('recognises the runners server READMEs use, and what they fetch', () => {
    const cases: [string, string[], string, string][] = [
      ['npx', ['-y', '@modelcontextprotocol/server-memory'], 'npx', '@modelcontextprotocol/server-memory'],
      ['C:\\Program Files\\nodejs\\npx.cmd', ['--yes', 'pkg'], 'npx', 'pkg'],
      ['/usr/local/bin/npx', ['-p', 'helper', 'tool', '--flag'], 'npx', 'tool'],
      ['npm', ['exec', '--', 'mcp-server-x'], 'npm exec', 'mcp-server-x'],
      ['uvx', ['--from', 'git+https://x', 'mcp-server-fetch'], 'uvx', 'mcp-server-fetch'],
      ['uv', ['tool', 'run', 'mcp-server-time'], 'uv tool run', 'mcp-server-time'],
      ['pipx', ['run', 'mcp-server-git'], 'pipx run', 'mcp-server-git'],
      ['docker', ['run', '-i', '--rm', '-e', 'TOKEN', 'ghcr.io/acme/mcp'], 'docker run', 'ghcr.io/acme/mcp'],
      ['bunx', ['some-server'], 'bunx', 'some-server'],
      ['bun', ['x', 'some-server'], 'bunx', 'some-server'],
      ['pnpm', ['dlx', 'srv'], 'pnpm dlx', 'srv'],
    ];
    for (const [command, args, runner, target] of cases) {
      assert.deepEqual(packageRunnerOf(command, args), { runner, target }, `${command} ${args.join(' ')}`);
    }
  });

  it('leaves alone commands that only run what is installed', () => {
    assert.equal(packageRunnerOf('node', ['server.js']), undefined);
    assert.equal(packageRunnerOf('npx', ['--no-install', 'pkg']), undefined);
    assert.equal(packageRunnerOf('npx', ['--offline', 'pkg']), undefined);
    assert.equal(packageRunnerOf('npm', ['run', 'serve']), undefined);
    assert.equal(packageRunnerOf('docker', ['run', '--pull', 'never', 'img']), undefined);
    assert.equal(packageRunnerOf('docker', ['exec', 'box', 'srv']), undefined);
    assert.equal(packageRunnerOf('uv', ['run', 'server.py']), undefined);
    assert.equal(packageRunnerOf(undefined, ['x']), undefined);
    assert.equal(packageRunnerOf('npx', []), undefined, 'npx alone fetches nothing');
  });

  it('warns a stdio server without the network grant, naming the package and the fixes', () => {
    const warning = packageRunnerWarning({ command: 'npx', args: ['-y', '@acme/server'], grants: [] });
    assert.ok(warning);
    assert.match(warning, /'npx' downloads '@acme\/server'/);
    assert.match(warning, /no 'network' grant/);
    assert.match(warning, /Add 'network' to grants/);
    assert.match(warning, /--no-install/);
    assert.equal(packageRunnerWarning({ command: 'npx', args: ['-y', 'x'], grants: ['network'] }), undefined);
    assert.equal(packageRunnerWarning({ transport: 'http', command: 'npx', args: ['x'] }), undefined);
    assert.doesNotMatch(packageRunnerWarning({ command: 'uvx', args: ['srv'] }) ?? '', /--no-install/);
  });
});
