// parseDefinition: one file's text to a definition with defaults, or to positioned problems.

import assert from 'node:assert/strict';
import { parseDefinition, type Problem } from '../../src/registry/loader';
import { ClientDefSchema, PromptDefSchema, ServerDefSchema } from '../../src/registry/schema';
import { renderPromptMessages } from '../../src/registry/template';

const FILE = '/ws/mcp-servers.d/foo.yaml';

function errors(problems: readonly Problem[]): Problem[] {
  return problems.filter((p) => p.severity === 'error');
}

function onlyError(kind: 'server' | 'prompt' | 'client', file: string, text: string): Problem {
  const res = parseDefinition(kind, file, text);
  assert.equal(res.def, undefined, 'a file with errors yields no definition');
  const errs = errors(res.problems);
  assert.equal(errs.length, 1, `expected exactly one error, got: ${JSON.stringify(res.problems, null, 2)}`);
  assert.equal(errs[0].file, file);
  assert.equal(errs[0].kind, kind);
  return errs[0];
}

describe('registry parseDefinition', () => {
  it('applies every server default', () => {
    const res = parseDefinition('server', FILE, 'command: npx\n');
    assert.deepEqual(res.problems, []);
    assert.deepEqual(res.def, {
      name: 'foo',
      trust: 'community',
      transport: 'stdio',
      command: 'npx',
      args: [],
      env: {},
      headers: {},
      grants: [],
      enabled: true,
      idleStopMs: 600000,
      restart: { maxRetries: 5, backoffMs: 500, maxBackoffMs: 30000, resetAfterMs: 60000, maxPerHour: 30 },
      timeouts: { startupMs: 30000, callMs: 60000 },
      clientFeatures: { elicitation: 'caller', sampling: 'caller' },
    });
  });

  it('keeps the given values and fills in only the missing restart fields', () => {
    const res = parseDefinition(
      'server',
      FILE,
      'name: foo\ncommand: node\nrestart:\n  maxRetries: 0\ntimeouts: {callMs: 5}\n',
    );
    assert.equal(res.def?.restart.maxRetries, 0);
    assert.equal(res.def?.restart.backoffMs, 500);
    assert.deepEqual(res.def?.timeouts, { startupMs: 30000, callMs: 5 });
  });

  it('accepts remote servers with a url', () => {
    const res = parseDefinition('server', FILE, 'transport: http\nurl: https://example.com/mcp\nheaders: {X-Api: k}\n');
    assert.deepEqual(errors(res.problems), []);
    assert.equal(res.def?.url, 'https://example.com/mcp');
    assert.deepEqual(res.def?.headers, { 'X-Api': 'k' });
  });

  it('applies prompt and client defaults', () => {
    const p = parseDefinition(
      'prompt',
      '/ws/prompts.d/review.yaml',
      'arguments:\n  - name: file\nmessages:\n  - role: user\n    content: Review {{ file }}\n',
    );
    assert.deepEqual(p.problems, []);
    assert.deepEqual(p.def, {
      name: 'review',
      arguments: [{ name: 'file', required: false }],
      messages: [{ role: 'user', content: 'Review {{ file }}' }],
    });
    const c = parseDefinition('client', '/ws/clients.d/copilot.yaml', 'description: VS Code\n');
    assert.deepEqual(c.problems, []);
    assert.deepEqual(c.def, { name: 'copilot', description: 'VS Code', mcp_allow: ['read'] });
  });

  it('reports a YAML syntax error at its line and column', () => {
    const p = onlyError('server', FILE, 'command: npx\nargs: [a, b\nenv: {}\n');
    assert.match(p.message, /^YAML: /);
    assert.equal(p.line, 3);
    assert.equal(p.column, 1);
  });

  it('reports a duplicate YAML key', () => {
    const p = onlyError('server', FILE, 'command: npx\ncommand: node\n');
    assert.match(p.message, /unique/);
    assert.deepEqual([p.line, p.column], [2, 1]);
  });

  it('points an unknown key at the key, with a suggestion, and does not repeat it as a missing field', () => {
    const p = onlyError('server', FILE, 'name: foo\n# the runner\ncomand: npx\n');
    assert.equal(p.message, "unknown key 'comand' (did you mean 'command'?)");
    assert.deepEqual([p.line, p.column], [3, 1]);
  });

  it('points a nested unknown key at that key', () => {
    const p = onlyError('server', FILE, 'command: npx\nrestart:\n  maxRetries: 1\n  backof: 3\n');
    assert.match(p.message, /unknown key 'backof' in 'restart' \(did you mean 'backoffMs'\?\)/);
    assert.deepEqual([p.line, p.column], [4, 3]);
  });

  it('points a wrong type at the value', () => {
    const p = onlyError('server', FILE, 'command: npx\nargs: --verbose\n');
    assert.equal(p.message, "'args' must be a list, not the string '--verbose'");
    assert.deepEqual([p.line, p.column], [2, 7]);
    const q = onlyError('server', FILE, 'command: npx\nenv:\n  PORT: 3000\n');
    assert.match(q.message, /'env.PORT' must be a string, not the number 3000 \(quote it: "3000"\)/);
    assert.deepEqual([q.line, q.column], [3, 9]);
    const r = onlyError('server', FILE, 'command: npx\nrestart:\n  maxRetries: 1.5\n');
    assert.match(r.message, /'restart.maxRetries' must be a whole number/);
    assert.deepEqual([r.line, r.column], [3, 15]);
  });

  it('explains a bad enum value with a suggestion', () => {
    const p = onlyError('server', FILE, 'command: npx\ntrust: trustd\n');
    assert.match(
      p.message,
      /'trust' must be one of 'builtin', 'trusted', 'community', not the string 'trustd' \(did you mean 'trusted'\?\)/,
    );
    assert.deepEqual([p.line, p.column], [2, 8]);
  });

  it('rejects a bad name in the file', () => {
    const p = onlyError('server', '/ws/mcp-servers.d/Foo.yaml', 'name: Foo\ncommand: npx\n');
    assert.match(p.message, /invalid name "Foo": the name must be lowercase/);
    assert.deepEqual([p.line, p.column], [1, 7]);
  });

  it("rejects '__' in a name, in the file name and in the key", () => {
    const a = onlyError('server', '/ws/mcp-servers.d/a__b.yaml', 'command: npx\n');
    assert.match(a.message, /file name 'a__b.yaml' is not a valid server name: .*'__'/);
    assert.deepEqual([a.line, a.column], [1, 1]);
    const b = onlyError('server', '/ws/mcp-servers.d/a__b.yaml', 'name: a__b\ncommand: npx\n');
    assert.match(b.message, /invalid name "a__b": .*'__'/);
  });

  it("reserves 'switchboard' for every kind", () => {
    assert.match(onlyError('server', '/ws/mcp-servers.d/switchboard.yaml', 'command: x\n').message, /reserved/);
    assert.match(
      onlyError('prompt', '/ws/prompts.d/switchboard.yaml', 'messages: [{role: user, content: hi}]\n').message,
      /reserved/,
    );
    assert.match(onlyError('client', '/ws/clients.d/x.yaml', 'name: switchboard\n').message, /reserved/);
  });

  it('requires the name key to equal the file name', () => {
    const p = onlyError('server', FILE, 'command: npx\nname: bar\n');
    assert.match(p.message, /name 'bar' does not match the file name 'foo.yaml'/);
    assert.deepEqual([p.line, p.column], [2, 7]);
  });

  it('requires a command for stdio and a url for remote servers', () => {
    assert.equal(
      onlyError('server', FILE, 'description: nothing to run\n').message,
      "a stdio server needs a 'command' (the program to run)",
    );
    assert.equal(onlyError('server', FILE, 'transport: sse\n').message, "a remote (sse) server needs a 'url'");
    const wrong = onlyError('server', FILE, 'command: npx\nurl: https://x.test/\n');
    assert.match(wrong.message, /stdio server must not have a 'url'/);
    assert.deepEqual([wrong.line, wrong.column], [2, 6]);
    const res = parseDefinition('server', FILE, 'transport: http\nurl: https://x.test/\ncommand: npx\nenvFile: .env\n');
    assert.deepEqual(
      errors(res.problems).map((p) => p.line),
      [3, 4],
    );
    assert.match(onlyError('server', FILE, 'transport: http\nurl: ftp://x.test/\n').message, /http:\/\/ or https:\/\//);
  });

  it('rejects duplicate grants and inverted backoff', () => {
    assert.match(
      onlyError('server', FILE, 'command: x\ngrants: [network, network]\n').message,
      /'network' is listed twice/,
    );
    assert.match(
      onlyError('server', FILE, 'command: x\nrestart: {backoffMs: 1000, maxBackoffMs: 100}\n').message,
      /maxBackoffMs/,
    );
    assert.match(
      onlyError('server', FILE, 'command: x\nrestart: {backoffMs: 5}\n').message,
      /'restart.backoffMs' must be at least 10/,
    );
  });

  it('rejects empty files, lists and scalars at the top level', () => {
    assert.match(onlyError('server', FILE, '').message, /empty/);
    assert.match(onlyError('server', FILE, '# just a comment\n').message, /empty/);
    assert.match(onlyError('server', FILE, '- a\n- b\n').message, /must be a mapping.*not a list/);
    assert.match(onlyError('server', FILE, 'hello\n').message, /must be a mapping.*not a single value/);
  });

  it('refuses alias bombs', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill('*' + String.fromCharCode(96 + i))
          .join(', ')}]`,
      );
    assert.match(onlyError('server', FILE, bomb.join('\n') + '\n').message, /alias/i);
  });

  it('warns (without failing) about envFile without the secrets grant', () => {
    const res = parseDefinition('server', FILE, 'command: x\nenvFile: .env\n');
    assert.ok(res.def);
    assert.equal(res.problems.length, 1);
    assert.equal(res.problems[0].severity, 'warning');
    assert.match(res.problems[0].message, /'secrets' grant/);
  });

  it('warns (without failing) about a package runner without the network grant, at the command', () => {
    const res = parseDefinition('server', FILE, 'trust: community\ncommand: npx\nargs: [-y, "@acme/server"]\n');
    assert.ok(res.def);
    assert.equal(res.problems.length, 1);
    assert.equal(res.problems[0].severity, 'warning');
    assert.equal(res.problems[0].line, 2);
    assert.match(res.problems[0].message, /'npx' downloads '@acme\/server'.*no 'network' grant/);
    const granted = parseDefinition('server', FILE, 'command: npx\nargs: [-y, x]\ngrants: [network]\n');
    assert.equal(granted.problems.length, 0);
  });

  it('checks prompt placeholders against declared arguments', () => {
    const p = onlyError(
      'prompt',
      '/ws/prompts.d/p.yaml',
      'arguments: [{name: topic}]\nmessages:\n  - role: user\n    content: "{{topic}} and {{ other }}"\n',
    );
    assert.match(p.message, /placeholder '\{\{other\}\}' names no declared argument \(declared: topic\)/);
    assert.equal(p.line, 4);
    assert.match(
      onlyError('prompt', '/ws/prompts.d/p.yaml', 'messages: []\n').message,
      /at least one entry in 'messages'/,
    );
    assert.match(
      onlyError(
        'prompt',
        '/ws/prompts.d/p.yaml',
        'arguments: [{name: a}, {name: a}]\nmessages: [{role: user, content: "{{a}}"}]\n',
      ).message,
      /declared twice/,
    );
    assert.match(
      onlyError('prompt', '/ws/prompts.d/p.yaml', 'messages: [{role: system, content: x}]\n').message,
      /'messages\[0\].role' must be one of 'user', 'assistant'/,
    );
  });

  it('renders prompt templates', () => {
    const def = PromptDefSchema.parse({
      name: 'p',
      arguments: [{ name: 'topic', required: true }, { name: 'tone' }],
      messages: [{ role: 'user', content: 'Write about {{topic}} in a {{ tone }} tone. {{topic}}!' }],
    });
    assert.deepEqual(renderPromptMessages(def, { topic: '{{tone}}', tone: 'dry' }), [
      { role: 'user', content: 'Write about {{tone}} in a dry tone. {{tone}}!' },
    ]);
    assert.deepEqual(renderPromptMessages(def, { topic: 'x' })[0].content, 'Write about x in a  tone. x!');
    assert.throws(() => renderPromptMessages(def, {}), /needs the argument 'topic'/);
  });

  it('validates clients', () => {
    assert.match(onlyError('client', '/ws/clients.d/c.yaml', 'mcp_allow: [admin]\n').message, /one of 'read', 'write'/);
    assert.match(
      onlyError('client', '/ws/clients.d/c.yaml', 'tools: {allow: [x], block: [y]}\n').message,
      /unknown key 'block' in 'tools'/,
    );
    const ok = parseDefinition(
      'client',
      '/ws/clients.d/c.yaml',
      'mcp_allow: [read, write]\ntools: {deny: ["*__delete_*"]}\n',
    );
    assert.deepEqual(ok.problems, []);
    assert.deepEqual(ok.def?.tools, { deny: ['*__delete_*'] });
  });

  it('exposes strict zod schemas', () => {
    assert.equal(ServerDefSchema.safeParse({ name: 'a', command: 'x', extra: 1 }).success, false);
    assert.equal(ClientDefSchema.safeParse({ name: 'a' }).success, true);
  });
});
