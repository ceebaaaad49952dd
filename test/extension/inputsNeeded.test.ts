// Which `${input:NAME}` secrets the registry uses and which the broker misses: what Enter Secret
// offers and what the editor hands a restarted broker from its secret storage.
import * as assert from 'node:assert/strict';
import type { InputStatus, ServerStatus } from '../../src/broker/control/controlApi';
import { inputsToRestore, inputTitle, missingInputs, referencedInputs } from '../../src/extension/inputsNeeded';

function server(name: string, inputs?: InputStatus[]): ServerStatus {
  return {
    name,
    trust: 'trusted',
    transport: 'stdio',
    enabled: true,
    state: 'needs-input',
    restarts: 0,
    tools: [],
    promptCount: 0,
    resourceCount: 0,
    grants: ['secrets'],
    enforcement: { network: 'enforced', filesystem: 'not-enforced', secrets: 'enforced', notes: [] },
    approval: 'approved',
    approvalHash: 'h',
    approvalItems: [],
    approvalSummary: '',
    withheldEnv: [],
    target: 'node x.mjs',
    file: `/r/mcp-servers.d/${name}.yaml`,
    ...(inputs ? { inputs } : {}),
  };
}

describe('inputsNeeded', () => {
  const servers = [
    server('github', [
      { name: 'GH_TOKEN', description: 'GitHub token', password: true },
      { name: 'ORG', password: false, source: 'editor' },
    ]),
    server('issues', [{ name: 'GH_TOKEN', password: false }]),
    server('stored', [{ name: 'API_KEY', password: true, source: 'store' }]),
    server('plain'),
  ];

  it('lists each referenced input once, with every server that uses it, sorted by name', () => {
    const all = referencedInputs(servers);
    assert.deepEqual(
      all.map((i) => [i.name, i.servers, i.source]),
      [
        ['API_KEY', ['stored'], 'store'],
        ['GH_TOKEN', ['github', 'issues'], undefined],
        ['ORG', ['github'], 'editor'],
      ],
    );
    const gh = all.find((i) => i.name === 'GH_TOKEN')!;
    assert.equal(gh.description, 'GitHub token');
    assert.equal(gh.password, true, 'hidden while typed when any server asks for it');
  });

  it('missing: only the inputs the broker has no value for', () => {
    assert.deepEqual(
      missingInputs(servers).map((i) => i.name),
      ['GH_TOKEN'],
    );
    assert.deepEqual(missingInputs([server('plain')]), []);
  });

  it('to restore: missing in the broker and stored in the editor; a store value is left alone', () => {
    assert.deepEqual(inputsToRestore(servers, new Set(['GH_TOKEN', 'API_KEY', 'ORG'])), ['GH_TOKEN']);
    assert.deepEqual(inputsToRestore(servers, new Set(['OTHER'])), []);
  });

  it('titles the password box with the server and what to enter', () => {
    assert.equal(inputTitle('github', { name: 'GH_TOKEN', description: 'GitHub token' }), 'github: GitHub token');
    assert.equal(inputTitle('github', { name: 'GH_TOKEN' }), 'github: GH_TOKEN');
  });
});
