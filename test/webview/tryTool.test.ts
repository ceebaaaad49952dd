// The console's Try-a-tool and audit views without the DOM: a tool's input schema as form fields,
// the form's values coerced back to arguments, a call's result as rendered blocks, audit rows.
import * as assert from 'node:assert/strict';
import type { AuditRecord } from '../../src/broker/control/controlApi';
import { auditRows, facets, NO_FILTER, rowOf } from '../../webview/auditRows';
import {
  buildArguments,
  formOfSchema,
  initialValues,
  RAW,
  valuesOfArguments,
  type SchemaField,
} from '../../webview/schemaForm';
import { viewOfFailure, viewOfResult } from '../../webview/toolResult';

const kinds = (fields: SchemaField[]): Record<string, string> =>
  Object.fromEntries(fields.map((f) => [f.path, f.kind]));

const SCHEMA = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'what to say' },
    mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
    count: { type: 'integer', minimum: 1, maximum: 10 },
    ratio: { type: 'number' },
    loud: { type: 'boolean' },
    strict: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    sizes: { type: 'array', items: { type: 'number' }, minItems: 1 },
    target: {
      type: 'object',
      properties: { host: { type: 'string' }, port: { type: 'integer' } },
      required: ['host'],
    },
    either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    rows: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
    bag: { type: 'object', additionalProperties: { type: 'string' } },
    nullable: { type: ['string', 'null'] },
  },
  required: ['text', 'strict'],
};

describe('console: a tool input schema as a form', () => {
  it('maps each JSON Schema type to its control, and what a form cannot express to raw JSON', () => {
    const form = formOfSchema(SCHEMA);
    assert.equal(form.raw, undefined);
    assert.deepEqual(kinds(form.fields), {
      text: 'string',
      mode: 'enum',
      count: 'integer',
      ratio: 'number',
      loud: 'boolean',
      strict: 'boolean',
      tags: 'list',
      sizes: 'list',
      target: 'object',
      either: 'json',
      rows: 'json',
      bag: 'json',
      nullable: 'string',
    });
    const target = form.fields.find((f) => f.key === 'target');
    assert.ok(target?.kind === 'object');
    assert.deepEqual(
      target.fields.map((f) => [f.path, f.kind, f.required]),
      [
        ['target.host', 'string', true],
        ['target.port', 'integer', false],
      ],
    );
    const either = form.fields.find((f) => f.key === 'either');
    assert.ok(either?.kind === 'json' && /anyOf/.test(either.why));
    assert.equal(form.fields.find((f) => f.key === 'text')?.description, 'what to say');
  });

  it('falls back to one raw JSON field when the schema is not an object with properties', () => {
    for (const schema of [
      undefined,
      { type: 'string' },
      { oneOf: [{ type: 'object' }] },
      { type: 'object', $ref: '#/x' },
    ]) {
      const form = formOfSchema(schema);
      assert.ok(form.raw, JSON.stringify(schema));
      assert.deepEqual(initialValues(form), { [RAW]: '{}' });
    }
    const raw = formOfSchema({ type: 'string' });
    assert.deepEqual(buildArguments(raw, { [RAW]: '{"a": [1, 2]}' }).arguments, { a: [1, 2] });
    assert.match(buildArguments(raw, { [RAW]: '[1]' }).errors.get(RAW)![0], /JSON object/);
    assert.match(buildArguments(raw, { [RAW]: '{a:' }).errors.get(RAW)![0], /not valid JSON/);
  });

  it('starts from the defaults; an optional boolean starts unset, a required one unchecked', () => {
    const values = initialValues(formOfSchema(SCHEMA));
    assert.equal(values.mode, '"fast"');
    assert.equal(values.loud, '');
    assert.equal(values.strict, false);
    assert.equal(values.text, '');
    assert.equal(values['target.host'], '');
  });
});

describe('console: form values coerced to tool arguments', () => {
  const form = formOfSchema(SCHEMA);
  const base = { ...initialValues(form), text: 'hi', strict: true };

  it('types every value per the schema and leaves empty optional fields out', () => {
    const built = buildArguments(form, {
      ...base,
      count: ' 3 ',
      ratio: '0.5',
      loud: 'false',
      tags: 'a\n\n b \n',
      sizes: '1\n2.5',
      'target.host': 'example.org',
      either: '42',
      nullable: '',
    });
    assert.deepEqual(built.errors, new Map());
    assert.deepEqual(built.arguments, {
      text: 'hi',
      mode: 'fast',
      count: 3,
      ratio: 0.5,
      loud: false,
      strict: true,
      tags: ['a', ' b '],
      sizes: [1, 2.5],
      target: { host: 'example.org' },
      either: 42,
    });
  });

  it('keeps a string as typed (blanks included) and sends an empty optional object not at all', () => {
    const built = buildArguments(form, { ...base, text: '  two spaces  ' });
    assert.equal(built.arguments.text, '  two spaces  ');
    assert.equal('target' in built.arguments, false);
  });

  it('says what is wrong, under the field it concerns', () => {
    const built = buildArguments(form, {
      ...base,
      text: '',
      count: '2.5',
      ratio: 'abc',
      sizes: '1\nx',
      mode: '"medium"',
      either: '{oops',
      'target.port': '80',
    });
    assert.deepEqual(built.errors.get('text'), ['required']);
    assert.deepEqual(built.errors.get('count'), ['a whole number']);
    assert.deepEqual(built.errors.get('ratio'), ['a number']);
    assert.deepEqual(built.errors.get('sizes'), ['line 2: a number']);
    assert.deepEqual(built.errors.get('mode'), ['choose one of fast, slow']);
    assert.match(built.errors.get('either')![0], /^not valid JSON/);
    assert.deepEqual(built.errors.get('target.host'), ['required']);
    assert.deepEqual(buildArguments(form, { ...base, count: '11' }).errors.get('count'), ['at most 10']);
    assert.deepEqual(buildArguments(form, { ...base, strict: '' }).errors.get('strict'), ['required']);
  });

  it('keeps numbers and strings of an enum apart', () => {
    const f = formOfSchema({ type: 'object', properties: { v: { enum: [1, '1', true] } } });
    assert.deepEqual(buildArguments(f, { v: '1' }).arguments, { v: 1 });
    assert.deepEqual(buildArguments(f, { v: '"1"' }).arguments, { v: '1' });
    assert.deepEqual(buildArguments(f, { v: 'true' }).arguments, { v: true });
  });

  it('shows a set of arguments in the form and builds the same arguments back', () => {
    const args = { text: 'x', mode: 'slow', count: 2, strict: false, tags: ['a', 'b'], target: { host: 'h', port: 1 } };
    const values = valuesOfArguments(form, args);
    assert.deepEqual(buildArguments(form, values).arguments, args);
  });
});

describe('console: a tool result rendered', () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

  it('renders text, images, embedded resources, links and structured content, with the latency', () => {
    const view = viewOfResult(
      {
        content: [
          { type: 'text', text: 'echo: hi' },
          { type: 'image', mimeType: 'image/png', data: PNG },
          { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'inside' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA' } },
          { type: 'resource_link', uri: 'file:///c.md', name: 'c.md', description: 'a file' },
        ],
        structuredContent: { text: 'hi' },
      },
      12.4,
    );
    assert.equal(view.status, 'ok');
    assert.equal(view.headline, 'Answered in 12 ms · 5 content blocks + structured content');
    assert.deepEqual(view.blocks[0], { kind: 'text', text: 'echo: hi' });
    assert.deepEqual(view.blocks[1], {
      kind: 'image',
      src: `data:image/png;base64,${PNG}`,
      mimeType: 'image/png',
      bytes: 70,
    });
    assert.deepEqual(view.blocks[2], {
      kind: 'resource',
      uri: 'file:///a.txt',
      mimeType: 'text/plain',
      text: 'inside',
    });
    assert.deepEqual(view.blocks[3], { kind: 'resource', uri: 'file:///b.bin', mimeType: undefined, bytes: 3 });
    assert.equal(view.blocks[4].kind, 'link');
    assert.equal(view.structured, '{\n  "text": "hi"\n}');
  });

  it('never builds a data: URI from something that is not an image in base64', () => {
    const view = viewOfResult(
      {
        content: [
          { type: 'image', mimeType: 'text/html', data: PNG },
          { type: 'image', mimeType: 'image/png', data: 'not base64 <script>' },
          { type: 'image', mimeType: 'image/png";onerror="x', data: PNG },
          { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
          { type: 'mystery', x: 1 },
        ],
      },
      3,
    );
    assert.ok(
      view.blocks.every((b) => b.kind === 'note'),
      JSON.stringify(view.blocks),
    );
    assert.match(JSON.stringify(view.blocks), /text\/html/);
    assert.equal(view.headline, 'Answered in 3.0 ms · 5 content blocks');
  });

  it('shows isError as an error, and a refused call with its code', () => {
    const tool = viewOfResult({ content: [{ type: 'text', text: 'it went wrong' }], isError: true }, 20);
    assert.equal(tool.status, 'tool-error');
    assert.match(tool.headline, /answered with an error \(isError\) in 20 ms/);
    const refused = viewOfFailure("Tool 'read_notes' of server 'notes' is quarantined", 4, -32003);
    assert.equal(refused.status, 'failed');
    assert.equal(refused.headline, 'Refused by the broker (error -32003) after 4.0 ms');
    assert.deepEqual(refused.blocks, [{ kind: 'text', text: "Tool 'read_notes' of server 'notes' is quarantined" }]);
    assert.equal(viewOfFailure('timed out', 30_000).headline, 'The call failed after 30.0 s');
  });
});

describe('console: audit rows', () => {
  const entries: AuditRecord[] = [
    {
      at: '2026-12-04T10:00:00.000Z',
      event: 'registry',
      server: 'echo',
      trust: 'builtin',
      grants: [],
      approval: 'not-needed',
    },
    {
      at: '2026-12-04T10:00:01.000Z',
      event: 'call',
      client: 'reader',
      operator: false,
      server: 'echo',
      tool: 'echo',
      ms: 5,
      outcome: 'ok',
    },
    {
      at: '2026-12-04T10:00:02.000Z',
      event: 'call',
      client: 'reader',
      operator: false,
      server: 'echo',
      tool: 'add',
      ms: 1,
      outcome: 'error',
      error: "Tool 'echo__add' is not in client 'reader''s tool profile.",
      code: -32003,
    },
    {
      at: '2026-12-04T10:00:03.000Z',
      event: 'call',
      client: 'writer',
      operator: false,
      server: 'echo',
      tool: 'fail',
      isError: true,
      ms: 2,
      outcome: 'ok',
    },
    {
      at: '2026-12-04T10:00:04.000Z',
      event: 'facade',
      client: 'operator',
      operator: true,
      tool: 'switchboard__list_servers',
      ms: 1,
      outcome: 'ok',
    },
    {
      at: '2026-12-04T10:00:05.000Z',
      event: 'call',
      client: 'writer',
      operator: false,
      server: 'files',
      tool: 'read',
      ms: 30000,
      outcome: 'error',
      error: 'timed out',
      code: -32001,
    },
    { at: '2026-12-04T10:00:06.000Z', event: 'rejected', status: 401, reason: 'unknown token' },
  ];

  it('names what was called and how it ended: ok, tool error, refused, error (with the code)', () => {
    const rows = auditRows(entries);
    assert.equal(rows[0].what, 'rejected');
    assert.equal(rows[0].outcome, 'refused');
    assert.equal(rows[0].detail, 'HTTP 401: unknown token');
    const byWhat = new Map(rows.map((r) => [r.what, r]));
    assert.equal(byWhat.get('echo__echo')?.outcome, 'ok');
    assert.equal(byWhat.get('echo__echo')?.ms, 5);
    assert.equal(byWhat.get('echo__add')?.outcome, 'refused');
    assert.match(byWhat.get('echo__add')!.detail!, /^-32003: Tool 'echo__add'/);
    assert.equal(byWhat.get('echo__fail')?.outcome, 'tool error');
    assert.equal(byWhat.get('files__read')?.outcome, 'error');
    assert.equal(byWhat.get('switchboard__list_servers')?.client, 'operator');
    assert.equal(rowOf(entries[0]).what, 'registry: echo');
    assert.equal(rowOf(entries[0]).client, '—');
  });

  it('names the guardrail that decided a call; a spent limit reads as refused', () => {
    const at = '2026-12-04T10:00:07.000Z';
    const base = { at, event: 'call', client: 'agent', operator: false, server: 'files', ms: 1 };
    const denied = rowOf({
      ...base,
      tool: 'write',
      rule: 'files/no-writes',
      ruleAction: 'deny',
      outcome: 'error',
      error: 'Agents write under docs/ only.',
      code: -32003,
    });
    assert.equal(denied.outcome, 'refused');
    assert.equal(denied.detail, 'rule files/no-writes: -32003: Agents write under docs/ only.');
    const asked = rowOf({
      ...base,
      tool: 'delete',
      rule: 'files/confirm',
      ruleAction: 'ask',
      operatorAnswer: 'accept',
      outcome: 'ok',
    });
    assert.equal(asked.outcome, 'ok');
    assert.equal(asked.detail, 'rule files/confirm (operator: accept)');
    const limited = rowOf({
      ...base,
      tool: 'search',
      rateLimited: 'limits/searches',
      outcome: 'error',
      error: 'Too many calls',
      code: -32006,
    });
    assert.equal(limited.outcome, 'refused');
    assert.equal(limited.detail, 'limit limits/searches: -32006: Too many calls');
  });

  it('filters by client, server, outcome and words, newest first', () => {
    const f = (x: Partial<typeof NO_FILTER>) => auditRows(entries, { ...NO_FILTER, ...x }).map((r) => r.what);
    assert.deepEqual(f({ client: 'reader' }), ['echo__add', 'echo__echo']);
    assert.deepEqual(f({ server: 'files' }), ['files__read']);
    assert.deepEqual(f({ outcome: 'refused', callsOnly: true }), ['echo__add']);
    assert.deepEqual(f({ text: 'TOOL profile' }), ['echo__add']);
    assert.deepEqual(f({ callsOnly: true }).length, 5);
    assert.deepEqual(facets(entries), { clients: ['operator', 'reader', 'writer'], servers: ['echo', 'files'] });
  });
});
