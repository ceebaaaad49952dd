// The administrator's policy file, pure: where it lives, its own errors with their lines, and which
// rule refuses which definition (names, commands, packages, remote hosts, grants, registries).
import assert from 'node:assert/strict';
import { honoursWorkspaceTrust, parsePolicy, policyFile, registryBlock, serverBlock } from '../../src/registry/policy';
import { ServerDefSchema, type ServerDef } from '../../src/registry/schema';

const FILE = '/etc/switchboard/policy.yaml';
const def = (d: Record<string, unknown>): ServerDef => ServerDefSchema.parse(d);

const POLICY = `# Example Corp's MCP policy
registries:
  allow:
    - https://mcp-registry.example.com
servers:
  deny:
    - "*-experimental"
commands:
  allow: [npx, uvx, node]
  deny:
    - node
packages:
  allow:
    - "@example-org/*"
remoteHosts:
  allow: ["*.example.com"]
honourWorkspaceTrusted: false
maxGrants: [network, secrets]
`;

describe('administrator policy (pure)', () => {
  const policy = parsePolicy(POLICY, FILE);

  it('lives in one machine-wide place per platform, or where SWITCHBOARD_POLICY says', () => {
    assert.equal(policyFile({}, 'linux'), '/etc/switchboard/policy.yaml');
    assert.equal(policyFile({}, 'darwin'), '/Library/Application Support/Switchboard/policy.yaml');
    assert.equal(policyFile({ ProgramData: 'D:\\PD' }, 'win32'), 'D:\\PD\\Switchboard\\policy.yaml');
    assert.equal(policyFile({ SWITCHBOARD_POLICY: '/tmp/p.yaml' }, 'linux'), '/tmp/p.yaml');
  });

  it('names the rule, the file and its line', () => {
    assert.deepEqual(policy.errors, []);
    const b = serverBlock(policy, def({ name: 'tool-experimental', command: 'npx', args: ['-y', '@example-org/t'] }));
    assert.equal(b?.rule, 'servers.deny');
    assert.equal(b?.line, 7);
    assert.match(
      b!.message,
      /denies server 'tool-experimental' \(\/etc\/switchboard\/policy\.yaml:7, servers\.deny: '\*-experimental'\)/,
    );
    const node = serverBlock(policy, def({ name: 'n', command: '/usr/bin/node', args: ['x.js'] }));
    assert.equal(node?.rule, 'commands.deny');
    assert.equal(node?.line, 11);
    const docker = serverBlock(policy, def({ name: 'd', command: 'docker', args: ['run', 'img'] }));
    assert.equal(docker?.rule, 'commands.allow');
    assert.equal(docker?.line, 9);
  });

  it('checks the package a runner fetches, without its version', () => {
    const ok = def({ name: 't', command: 'npx', args: ['-y', '@example-org/time-mcp@1.0.0'], grants: ['network'] });
    assert.equal(serverBlock(policy, ok), undefined, 'positive control');
    const other = serverBlock(policy, def({ name: 't', command: 'npx', args: ['-y', 'evil-pkg@1.0.0'] }));
    assert.equal(other?.rule, 'packages.allow');
    assert.match(other!.message, /does not allow package 'evil-pkg@1\.0\.0'/);
    const pypi = serverBlock(policy, def({ name: 'w', command: 'uvx', args: ['weather-mcp-server@1.4.2'] }));
    assert.equal(pypi?.rule, 'packages.allow');
  });

  it('checks remote hosts (case-insensitively) and the grants asked for', () => {
    assert.equal(
      serverBlock(policy, def({ name: 'r', transport: 'http', url: 'https://MCP.Example.com/mcp' })),
      undefined,
    );
    const far = serverBlock(policy, def({ name: 'r', transport: 'http', url: 'https://mcp.elsewhere.net/mcp' }));
    assert.equal(far?.rule, 'remoteHosts.allow');
    const sneaky = serverBlock(policy, def({ name: 'r', transport: 'http', url: 'https://example.com.evil.net/mcp' }));
    assert.equal(sneaky?.rule, 'remoteHosts.allow');
    const fs = serverBlock(
      policy,
      def({ name: 'f', command: 'npx', args: ['@example-org/fs'], grants: ['network', 'filesystem'] }),
    );
    assert.equal(fs?.rule, 'maxGrants');
    assert.match(fs!.message, /asks for filesystem/);
  });

  it('says which registries may be asked and whether workspace trust counts', () => {
    assert.equal(registryBlock(policy, 'https://mcp-registry.example.com'), undefined);
    assert.equal(registryBlock(policy, 'https://registry.modelcontextprotocol.io')?.rule, 'registries.allow');
    assert.equal(honoursWorkspaceTrust(policy), false);
    assert.equal(honoursWorkspaceTrust(undefined), true);
    assert.equal(serverBlock(undefined, def({ name: 'x', command: 'anything' })), undefined);
  });

  it('a file with errors refuses everything, naming the line', () => {
    const typo = parsePolicy('commands:\n  alow: [npx]\n', FILE);
    assert.equal(typo.errors.length, 1);
    assert.equal(typo.errors[0].line, 2);
    assert.match(typo.errors[0].message, /alow/);
    const b = serverBlock(typo, def({ name: 'x', command: 'npx', args: ['a'] }));
    assert.match(
      b!.message,
      /policy \/etc\/switchboard\/policy\.yaml has errors \(line 2: .*\); nothing it governs is allowed/,
    );
    assert.ok(registryBlock(typo, 'https://registry.modelcontextprotocol.io'));
    assert.equal(honoursWorkspaceTrust(typo), false);
    const broken = parsePolicy('servers:\n  deny: [a\n', FILE);
    assert.ok(broken.errors.length > 0);
    const wrongType = parsePolicy('maxGrants: [network, root]\n', FILE);
    assert.equal(wrongType.errors[0].line, 1);
    assert.deepEqual(parsePolicy('', FILE).errors, [], 'an empty file is an empty policy');
  });
});
