// The client name 'operator' is the editor's own identity: no clients.d/ file and no write may take it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDefinition } from '../../src/registry/loader';
import { RegistryWriter } from '../../src/registry/writer';

const RESERVED = /the name 'operator' is reserved for the editor's own identity/;

describe('registry: the reserved client name', () => {
  it('refuses clients.d/operator.yaml, with or without a name key, at the name', () => {
    for (const text of ['name: operator\nmcp_allow: [read]\n', 'mcp_allow: [read]\n']) {
      const res = parseDefinition('client', '/ws/clients.d/operator.yaml', text);
      assert.equal(res.def, undefined, text);
      const errors = res.problems.filter((p) => p.severity === 'error');
      assert.equal(errors.length, 1, JSON.stringify(res.problems));
      assert.match(errors[0].message, RESERVED);
    }
  });

  it('still allows the name for a server or a prompt, and similar client names', () => {
    assert.ok(parseDefinition('server', '/ws/mcp-servers.d/operator.yaml', 'command: node\n').def);
    assert.ok(parseDefinition('client', '/ws/clients.d/operator-2.yaml', 'mcp_allow: [read]\n').def);
  });

  it('the writer refuses to create it and writes nothing', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-reserved-'));
    try {
      await assert.rejects(
        new RegistryWriter(root).upsert('client', { name: 'operator', mcp_allow: ['read'] }),
        RESERVED,
      );
      assert.ok(!fs.existsSync(path.join(root, 'clients.d', 'operator.yaml')));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
