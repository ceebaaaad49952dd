// The facade tools' params, defined once with zod (src/broker/control/operationParams.ts): the schema
// a host sees and the check a call goes through agree, and bad arguments read as one sentence.
import * as assert from 'node:assert/strict';
import Ajv from 'ajv';
import { Facade } from '../../../src/broker/control/facade';
import { OPERATION_PARAMS, parseParams, type ParamsOperation } from '../../../src/broker/control/operationParams';
import { ErrorCodes, McpFailure } from '../../../src/broker/shared/mcpTypes';

const listed = new Map(new Facade().tools().map((t) => [t.name.replace(/^switchboard__/, ''), t.inputSchema]));

/** The message of the InvalidParams failure parseParams throws, or undefined when the params pass. */
function problem(operation: ParamsOperation, args: Record<string, unknown>): string | undefined {
  try {
    parseParams(operation, args);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof McpFailure && err.code === ErrorCodes.InvalidParams, String(err));
    return err.message;
  }
}

describe('facade tool params (one zod definition each)', () => {
  it('lists exactly one input schema per defined operation', () => {
    assert.deepEqual([...listed.keys()].sort(), Object.keys(OPERATION_PARAMS).sort());
  });

  it('the listed schema accepts what the check accepts, and refuses what it refuses', () => {
    const samples: [ParamsOperation, Record<string, unknown>][] = [
      ['server_status', { name: 'fs' }],
      ['server_status', { name: '' }],
      ['server_status', {}],
      ['approve_server', { name: 'fs', hash: 'abc' }],
      ['approve_server', { name: 'fs' }],
      ['find_tools', { query: 'read a file', limit: 25 }],
      ['find_tools', { query: 'read a file', limit: 26 }],
      ['find_tools', { query: 'read a file', limit: 2.5 }],
      ['read_audit', {}],
      ['read_audit', { limit: 0 }],
      ['client_connection', { name: 'agent', rotate: true }],
      ['client_connection', { name: 'agent', rotate: 'yes' }],
      ['set_account_token', { name: 'gh', provider: 'github', scopes: ['repo'] }],
      ['set_account_token', { name: 'gh', provider: 'github', scopes: [1] }],
      ['set_editor_roots', { roots: [{ uri: 'file:///w', name: 'w' }] }],
      ['set_editor_roots', { roots: [{ name: 'w' }] }],
      ['upsert_prompt', { definition: [] }],
    ];
    const ajv = new Ajv({ strict: false });
    let refused = 0;
    for (const [operation, args] of samples) {
      const validate = ajv.compile(listed.get(operation) as object);
      const checked = problem(operation, args) === undefined;
      if (!checked) refused++;
      assert.equal(validate(args), checked, `${operation} ${JSON.stringify(args)}: schema and check disagree`);
    }
    // Both sides of the comparison were exercised.
    assert.ok(refused > 0 && refused < samples.length);
  });

  it('says what is wrong in one sentence, naming each field', () => {
    assert.equal(problem('approve_server', { name: 'fs' }), "'hash' must be a non-empty string");
    assert.equal(problem('find_tools', { query: 'x', limit: 26 }), "'limit' must be a whole number from 1 to 25");
    assert.equal(
      problem('set_editor_roots', { roots: [{ uri: 'http://x' }, 3] }),
      "'roots[0].uri' must be a file:// URI; 'roots[1]' must be an object { uri, name }",
    );
    assert.equal(
      problem('upsert_server', { definition: 'x' }),
      "'definition' must be an object (a registry definition)",
    );
    assert.equal(
      problem('set_account_token', { name: 'gh', provider: 'github', scopes: 'repo' }),
      "'scopes' must be an array of strings",
    );
  });

  it('fills in defaults and drops keys it does not know, as the hand-written checks did', () => {
    assert.deepEqual(parseParams('find_tools', { query: 'x', extra: 1 }), { query: 'x', limit: 5 });
    assert.deepEqual(parseParams('read_audit', {}), { limit: 100 });
    assert.deepEqual(parseParams('tail_logs', { name: 'fs', lines: 9999 }), { name: 'fs', lines: 9999 });
    assert.deepEqual(parseParams('client_connection', { name: 'agent' }), { name: 'agent', rotate: false });
  });
});
