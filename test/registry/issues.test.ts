// The sentences the registry writes for a person editing YAML: zod issues explained (issues.ts),
// warnings about valid but surprising definitions (lint.ts) and problem formatting (problems.ts).

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { explainIssues, formatPath, knownKeysAt, suggest } from '../../src/registry/issues';
import { lintDefinition } from '../../src/registry/lint';
import { compareProblems, formatProblem, type Problem } from '../../src/registry/problems';
import { ClientDefSchema, PromptDefSchema, ServerDefSchema } from '../../src/registry/schema';
import { RegistryValidationError } from '../../src/registry/writer';

function explain(schema: typeof ServerDefSchema | typeof PromptDefSchema | typeof ClientDefSchema, data: unknown) {
  const result = schema.safeParse(data);
  assert.ok(!result.success, 'expected the data to be invalid');
  return explainIssues(result.error.issues, schema, data).map((i) => i.message);
}

const server = (more: object) => explain(ServerDefSchema, { name: 'a', command: 'node', ...more });

describe('registry: explained issues', () => {
  it('formats data paths as a YAML author reads them', () => {
    assert.equal(formatPath([]), '');
    assert.equal(formatPath(['restart', 'maxRetries']), 'restart.maxRetries');
    assert.equal(formatPath(['args', 0]), 'args[0]');
    assert.equal(formatPath(['messages', 1, 'content']), 'messages[1].content');
  });

  it('suggests near misses only: typos, truncations and case, not unrelated words', () => {
    const keys = ['command', 'args', 'backoffMs', 'maxRetries'];
    assert.equal(suggest('comand', keys), 'command');
    assert.equal(suggest('COMMAND', keys), 'command');
    assert.equal(suggest('backof', keys), 'backoffMs');
    assert.equal(suggest('arg', keys), 'args');
    assert.equal(suggest('xyz', keys), undefined);
    assert.equal(suggest('retries', keys), undefined);
    assert.equal(suggest('a', []), undefined);
  });

  it('knows the keys allowed through defaults and optional wrappers', () => {
    assert.deepEqual(knownKeysAt(ServerDefSchema, ['restart']), [
      'maxRetries',
      'backoffMs',
      'maxBackoffMs',
      'resetAfterMs',
      'maxPerHour',
    ]);
    assert.deepEqual(knownKeysAt(ClientDefSchema, ['tools']), ['allow', 'deny']);
    assert.deepEqual(knownKeysAt(PromptDefSchema, ['arguments', 0]), ['name', 'description', 'required']);
    assert.deepEqual(knownKeysAt(ServerDefSchema, ['command']), []);
  });

  it('explains wrong types, with a quoting hint for numbers and booleans where text is expected', () => {
    assert.deepEqual(server({ env: { PORT: 3000 } }), [
      `'env.PORT' must be a string, not the number 3000 (quote it: "3000")`,
    ]);
    assert.deepEqual(server({ args: [true] }), [`'args[0]' must be a string, not true (quote it: "true")`]);
    assert.deepEqual(server({ restart: { maxRetries: 'x' } }), [
      "'restart.maxRetries' must be a number, not the string 'x'",
    ]);
    assert.deepEqual(server({ grants: 'network' }), ["'grants' must be a list, not the string 'network'"]);
    assert.deepEqual(server({ env: null }), ["'env' must be a mapping (key: value pairs), not empty (null)"]);
    assert.deepEqual(explain(ServerDefSchema, { command: 'node' }), ["'name' is required"]);
  });

  it('explains bounds and enums', () => {
    assert.deepEqual(server({ restart: { maxRetries: -1 } }), ["'restart.maxRetries' must be at least 0, not -1"]);
    assert.deepEqual(server({ restart: { backoffMs: 1.5 } }), [
      "'restart.backoffMs' must be a whole number, not the number 1.5",
    ]);
    assert.deepEqual(server({ trust: 'trustd' }), [
      "'trust' must be one of 'builtin', 'trusted', 'community', not the string 'trustd' (did you mean 'trusted'?)",
    ]);
    assert.deepEqual(explain(PromptDefSchema, { name: 'p', messages: [] }), [
      "a prompt needs at least one entry in 'messages'",
    ]);
  });

  it('explains unknown keys once, with a suggestion or the allowed keys, and not the missing key too', () => {
    assert.deepEqual(explain(ServerDefSchema, { name: 'a', comand: 'node' }), [
      "unknown key 'comand' (did you mean 'command'?)",
    ]);
    assert.deepEqual(explain(ClientDefSchema, { name: 'c', tools: { alow: [] } }), [
      "unknown key 'alow' in 'tools' (did you mean 'allow'?)",
    ]);
    assert.deepEqual(server({ restart: { zzzzzz: 1 } }), [
      "unknown key 'zzzzzz' in 'restart' (allowed: maxRetries, backoffMs, maxBackoffMs, resetAfterMs, maxPerHour)",
    ]);
  });

  it('explains bad record keys and bad names', () => {
    assert.deepEqual(server({ env: { '1A': 'x' } }), [
      "invalid key '1A' in 'env': an environment variable name must be letters, digits and _",
    ]);
    assert.deepEqual(explain(ServerDefSchema, { name: 'A', command: 'node' }), [
      `invalid name "A": the name must be lowercase (try 'a')`,
    ]);
  });

  it('cuts hostile long keys and names short in every message', () => {
    const long = 'k'.repeat(5000);
    for (const message of [
      ...server({ [long]: 1 }),
      ...server({ env: { [`1${long}`]: 'x' } }),
      ...server({ env: { [`A${long}`]: 3 } }),
      ...explain(ServerDefSchema, { name: `n${long}`, command: 'node' }),
      ...explain(PromptDefSchema, { name: 'p', messages: [{ role: 'user', content: `{{${long}}}` }] }),
    ]) {
      // The list of allowed keys grows with the schema; what must stay short is the rest.
      const own = message.replace(/ \(allowed: [^)]*\)$/, '');
      assert.ok(own.length < 400, `${own.length} characters: ${own.slice(0, 120)}`);
      assert.match(message, /characters; only the first 64 shown/);
    }
    const error = new RegistryValidationError('server', ['x'], 'n'.repeat(5000));
    assert.ok(error.message.length < 200, error.message.slice(0, 120));
  });
});

describe('registry: lint warnings', () => {
  const parseServer = (more: object) => ServerDefSchema.parse({ name: 'a', ...more });

  it("warns about envFile without the 'secrets' grant, and not with it", () => {
    assert.deepEqual(lintDefinition('server', parseServer({ command: 'node', envFile: '.env' })), [
      { path: ['envFile'], message: "the values in 'envFile' are withheld because this server has no 'secrets' grant" },
    ]);
    assert.deepEqual(
      lintDefinition('server', parseServer({ command: 'node', envFile: '.env', grants: ['secrets'] })),
      [],
    );
  });

  it('warns about plain http to a host other than loopback', () => {
    const remote = (url: string) => lintDefinition('server', parseServer({ transport: 'http', url }));
    assert.match(remote('http://example.com/mcp')[0]?.message ?? '', /plain http:\/\/ to example\.com .* prefer https/);
    for (const url of [
      'https://example.com/mcp',
      'http://localhost:3000/mcp',
      'http://127.0.0.1/mcp',
      'http://[::1]:9/mcp',
    ]) {
      assert.deepEqual(remote(url), [], url);
    }
  });

  it('warns about a declared argument no message uses', () => {
    const def = PromptDefSchema.parse({
      name: 'p',
      arguments: [{ name: 'used' }, { name: 'unused' }],
      messages: [{ role: 'user', content: '{{ used }}' }],
    });
    assert.deepEqual(lintDefinition('prompt', def), [
      { path: ['arguments', 1, 'name'], message: "argument 'unused' is declared but no message uses {{unused}}" },
    ]);
  });

  it("warns about 'write' without 'read'", () => {
    assert.equal(lintDefinition('client', ClientDefSchema.parse({ name: 'c', mcp_allow: ['write'] })).length, 1);
    assert.deepEqual(lintDefinition('client', ClientDefSchema.parse({ name: 'c', mcp_allow: ['read', 'write'] })), []);
  });
});

describe('registry: problems', () => {
  const root = path.resolve('/reg');
  const problem = (file: string, line: number, column: number, message = 'm'): Problem => ({
    file: path.join(root, file),
    line,
    column,
    message,
    kind: 'server',
    severity: 'error',
  });

  it('formats a problem as file:line:column, relative to the root when given', () => {
    const p = problem('mcp-servers.d/a.yaml', 3, 1, "unknown key 'comand'");
    assert.equal(formatProblem(p, root), `${path.join('mcp-servers.d', 'a.yaml')}:3:1 error: unknown key 'comand'`);
    assert.equal(formatProblem(p), `${p.file}:3:1 error: unknown key 'comand'`);
    assert.equal(formatProblem({ ...p, file: root }, root), `${root}:3:1 error: unknown key 'comand'`);
  });

  it('orders problems by file, line, column and message', () => {
    const sorted = [
      problem('b.yaml', 1, 1),
      problem('a.yaml', 2, 1),
      problem('a.yaml', 1, 5),
      problem('a.yaml', 1, 5, 'a'),
      problem('a.yaml', 1, 2),
    ].sort(compareProblems);
    assert.deepEqual(
      sorted.map((p) => `${path.basename(p.file)}:${p.line}:${p.column}:${p.message}`),
      ['a.yaml:1:2:m', 'a.yaml:1:5:a', 'a.yaml:1:5:m', 'a.yaml:2:1:m', 'b.yaml:1:1:m'],
    );
  });
});
