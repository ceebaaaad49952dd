// What import accepts as a package (packageNames.ts), what the approval summary flags in a
// command (commandRisks.ts), and that the summary shows control characters escaped.
import assert from 'node:assert/strict';
import { approvalLines } from '../../../src/broker/trust/approvalSummary';
import { commandWarnings } from '../../../src/registry/commandRisks';
import {
  packageNameProblem,
  packageVersionProblem,
  registryBaseUrlProblem,
  runtimeHintProblem,
} from '../../../src/registry/packageNames';
import { ServerDefSchema } from '../../../src/registry/schema';

describe('import: package identifiers per registry type', () => {
  it('accepts package names and refuses options, paths, URLs and git sources', () => {
    const cases: [string, string, boolean][] = [
      ['npm', 'mcp-server-everything', true],
      ['npm', '@modelcontextprotocol/server-filesystem', true],
      ['npm', 'JSONStream', true],
      ['npm', 'a.b-c_d~e', true],
      ['npm', '--call=sh -c x', false],
      ['npm', '-y', false],
      ['npm', 'github:evil/repo', false],
      ['npm', 'npm:other@1', false],
      ['npm', '../evil', false],
      ['npm', 'https://evil.example/x.tgz', false],
      ['npm', '@scope', false],
      ['npm', 'a b', false],
      ['npm', '.hidden', false],
      ['pypi', 'mcp-server-fetch', true],
      ['pypi', 'Weather.MCP_server', true],
      ['pypi', '-r', false],
      ['pypi', 'git+https://evil/x', false],
      ['pypi', 'x==1', false],
      ['oci', 'ghcr.io/github/github-mcp-server', true],
      ['oci', 'docker.io/exampleorg/docs-search-mcp:0.9.1', true],
      ['oci', `localhost:5000/a/b@sha256:${'a'.repeat(64)}`, true],
      ['oci', 'alpine', true],
      ['oci', '--privileged', false],
      ['oci', 'Upper/Case', false],
      ['nuget', 'Microsoft.Extensions.AI', true],
      ['nuget', '-x', false],
    ];
    for (const [type, name, ok] of cases)
      assert.equal(packageNameProblem(type, name) === undefined, ok, `${type} ${name}`);
  });

  it('one specific version, and only runners whose argument order is known', () => {
    for (const v of ['1.2.3', '2026.8.31', '1.0.0-beta.1+build.5', '0.9.1'])
      assert.equal(packageVersionProblem(v), undefined, v);
    for (const v of ['latest', '^1.2.3', '>=1', '1.x', '1.*', '-c', '1.0 || 2.0', ''])
      assert.ok(packageVersionProblem(v), `${v} is refused`);
    assert.equal(runtimeHintProblem('npm', 'npx'), undefined);
    assert.equal(runtimeHintProblem('oci', 'podman'), undefined);
    assert.match(
      runtimeHintProblem('npm', 'sh') ?? '',
      /not a runner this import calls for npm packages \(npx, bunx\)/,
    );
    assert.match(runtimeHintProblem('pypi', 'pipx') ?? '', /\(uvx\)/);
    assert.equal(registryBaseUrlProblem('npm', 'https://registry.npmjs.org/'), undefined);
    assert.equal(registryBaseUrlProblem('oci', 'https://ghcr.io'), undefined, 'an image names its registry itself');
    assert.match(
      registryBaseUrlProblem('pypi', 'https://pypi.corp.example') ?? '',
      /downloads from https:\/\/pypi\.org/,
    );
  });
});

describe('approval summary: what stands out in a command', () => {
  it('flags shells, inline code, non-package targets and runner options that change what runs', () => {
    const flagged: [string, string[], RegExp][] = [
      ['npx', ['-y', '--call=curl x | sh'], /npx --call curl x \| sh: runs a shell command/],
      ['npx', ['-y', '--', '--call=x'], /'--call=x' is not a registry package name/],
      ['npx', ['-y', 'github:evil/x'], /'github:evil\/x' is not a registry package name/],
      [
        'npx',
        ['--registry', 'https://evil.example', 'pkg'],
        /npx --registry https:\/\/evil\.example: downloads from another registry/,
      ],
      ['/bin/bash', ['-c', 'curl x | sh'], /runs a shell \(bash\)/],
      ['node', ['-e', 'require("child_process")'], /runs code written in its arguments \(node -e\)/],
      ['python3.12', ['-c', 'import os'], /runs code written in its arguments \(python3\.12 -c\)/],
      [
        'uvx',
        ['--from', 'git+https://evil/x', 'mcp-server-fetch'],
        /uvx --from git\+https:\/\/evil\/x: takes the package/,
      ],
      ['docker', ['run', '--privileged', 'alpine'], /every capability/],
      ['docker', ['run', '--network', 'host', 'alpine'], /shares a namespace of this computer/],
      ['docker', ['run', '-v', '/:/host', 'alpine'], /mounts a path of this computer/],
      ['npx', ['-y', '--weird', 'pkg'], /npx --weird: an option before the package this summary does not know/],
      ['node', ['server.js', 'a\nb'], /a line break or another control character/],
    ];
    for (const [command, args, why] of flagged)
      assert.match(commandWarnings(command, args).join('; '), why, `${command} ${args.join(' ')}`);
  });

  it('says nothing about ordinary commands', () => {
    const quiet: [string, string[]][] = [
      ['npx', ['-y', '@modelcontextprotocol/server-memory@2026.8.31']],
      ['npx', ['--no-install', 'mcp-server-everything', 'stdio']],
      ['uvx', ['mcp-server-fetch@1.2.0', '--log-level', 'debug']],
      ['docker', ['run', '-i', '--rm', '-e', 'TOKEN', '--network', 'bridge', 'ghcr.io/github/github-mcp-server:1']],
      ['node', ['server.js', '--port', '0']],
      ['dnx', ['Some.Package@1.0.0', '--yes']],
    ];
    for (const [command, args] of quiet) assert.deepEqual(commandWarnings(command, args), [], command);
  });

  it('shows control and bidirectional characters escaped, so a value cannot draw a line of its own', () => {
    const def = ServerDefSchema.parse({
      name: 'x',
      command: 'node',
      args: ['server.js', '\u001b[2K'],
      env: { MODE: 'fast\nGrants: none', NOTE: 'abc\u202edcba' },
    });
    const lines = approvalLines(def, '/w');
    const text = JSON.stringify(lines);
    const shown = lines.map((l) => `${l.value}${l.warning ?? ''}`).join('');
    for (const c of ['\n', '\u001b', '\u202e']) assert.ok(!shown.includes(c), text);
    assert.match(lines.find((l) => l.label === 'Env MODE')!.value, /fast\\u000aGrants: none/);
    assert.match(lines.find((l) => l.label === 'Runs')!.warning ?? '', /control character/);
  });
});
