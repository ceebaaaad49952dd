// The editor as fallback client, its pure part: a form elicitation's schema as input steps with
// validation and the result content; the origin the broker attaches; URL origins; sampling turns.
import assert from 'node:assert/strict';
import {
  formContent,
  formSteps,
  originOf,
  samplingMessages,
  samplingResult,
  stepPrompt,
  stepTitle,
  UnsupportedForm,
  urlOrigin,
} from '../../src/extension/editorClientForm';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 2, maxLength: 10 },
    email: { type: 'string', format: 'email', description: 'Where to write' },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    ratio: { type: 'number', default: 0.5 },
    subscribe: { type: 'boolean', default: true },
    color: { type: 'string', enum: ['red', 'green'], enumNames: ['Red', 'Green'] },
    size: {
      type: 'string',
      oneOf: [
        { const: 's', title: 'Small' },
        { const: 'l', title: 'Large' },
      ],
    },
    tags: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'a', title: 'A' },
          { const: 'b', title: 'B' },
        ],
      },
    },
  },
  required: ['name', 'age', 'color'],
};

describe('editor client: form elicitation as input steps', () => {
  const steps = formSteps(SCHEMA);
  const byKey = new Map(steps.map((s) => [s.key, s]));

  it('one step per field, in order, with the right kind of input', () => {
    assert.deepEqual(
      steps.map((s) => [s.key, s.kind, s.required]),
      [
        ['name', 'text', true],
        ['email', 'text', false],
        ['age', 'number', true],
        ['ratio', 'number', false],
        ['subscribe', 'boolean', false],
        ['color', 'enum', true],
        ['size', 'enum', false],
        ['tags', 'multi', false],
      ],
    );
    assert.deepEqual(byKey.get('color')!.options, [
      { value: 'red', label: 'Red' },
      { value: 'green', label: 'Green' },
    ]);
    assert.deepEqual(
      byKey.get('size')!.options.map((o) => o.label),
      ['Small', 'Large'],
    );
    assert.equal(byKey.get('ratio')!.initial, '0.5');
    assert.equal(byKey.get('subscribe')!.initial, 'true');
  });

  it('validates what is typed, with a message a person can act on', () => {
    const name = byKey.get('name')!;
    assert.equal(name.validate(''), 'This field is required.');
    assert.equal(name.validate('A'), 'At least 2 characters.');
    assert.equal(name.validate('A much too long name'), 'At most 10 characters.');
    assert.equal(name.validate('Ada'), undefined);
    const email = byKey.get('email')!;
    assert.equal(email.validate(''), undefined, 'optional: empty skips it');
    assert.equal(email.validate('nope'), 'Enter an email address.');
    assert.equal(email.validate('ada@example.com'), undefined);
    const age = byKey.get('age')!;
    assert.equal(age.validate('x'), 'Enter a whole number.');
    assert.equal(age.validate('3.5'), 'Enter a whole number.');
    assert.equal(age.validate('-1'), 'At least 0.');
    assert.equal(age.validate('151'), 'At most 150.');
    assert.equal(age.validate('36'), undefined);
    assert.equal(byKey.get('ratio')!.validate('0.25'), undefined);
  });

  it('builds the content with typed values, leaving out optional fields left empty', () => {
    const answers = new Map<string, string | string[]>([
      ['name', 'Ada'],
      ['email', ''],
      ['age', '36'],
      ['ratio', '0.25'],
      ['subscribe', 'false'],
      ['color', 'green'],
      ['size', ''],
      ['tags', ['a', 'b']],
    ]);
    assert.deepEqual(formContent(steps, answers), {
      name: 'Ada',
      age: 36,
      ratio: 0.25,
      subscribe: false,
      color: 'green',
      tags: ['a', 'b'],
    });
  });

  it('refuses a schema a form cannot ask for, saying which field', () => {
    assert.throws(
      () => formSteps({ type: 'object', properties: { deep: { type: 'object' } } }),
      (err) => err instanceof UnsupportedForm && /field 'deep' has type 'object'/.test(err.message),
    );
    const freeList = { properties: { list: { type: 'array', items: { type: 'string' } } } };
    assert.throws(() => formSteps(freeList), UnsupportedForm);
    assert.deepEqual(formSteps({ type: 'object' }), []);
  });

  it('titles name the server and its trust tier; the prompt the message and for whom', () => {
    const origin = originOf({
      message: 'm',
      _meta: { 'switchboard/origin': { server: 'github', trust: 'community', client: 'terminal' } },
    });
    assert.deepEqual(origin, { server: 'github', trust: 'community', client: 'terminal' });
    assert.equal(stepTitle(origin, byKey.get('email')!), 'github (⚠ community) asks: email (optional)');
    assert.equal(stepTitle(origin, byKey.get('name')!), 'github (⚠ community) asks: Your name');
    assert.equal(
      stepPrompt('Sign up', origin, byKey.get('email')!),
      "Sign up — Where to write — (for client 'terminal')",
    );
    assert.deepEqual(originOf({}), { server: 'an MCP server', trust: 'community' });
  });
});

describe('editor client: URL elicitation and sampling', () => {
  it('shows the origin of an http(s) URL, and refuses anything else', () => {
    assert.equal(urlOrigin('https://login.example.com/oauth?state=1'), 'https://login.example.com');
    assert.equal(urlOrigin('http://127.0.0.1:8080/x'), 'http://127.0.0.1:8080');
    assert.equal(urlOrigin('javascript:alert(1)'), undefined);
    assert.equal(urlOrigin('file:///etc/passwd'), undefined);
    assert.equal(urlOrigin('not a url'), undefined);
    assert.equal(urlOrigin(42), undefined);
  });

  it('turns a sampling request into text turns and the answer into a CreateMessageResult', () => {
    const turns = samplingMessages({
      systemPrompt: 'Be brief.',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Hello' } },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'image', data: 'x', mimeType: 'image/png' },
          ],
        },
      ],
    });
    assert.deepEqual(turns, [
      { role: 'user', text: 'Be brief.' },
      { role: 'user', text: 'Hello' },
      { role: 'assistant', text: 'Hi\n[image]' },
    ]);
    assert.deepEqual(samplingResult('Sure.', 'gpt-x'), {
      role: 'assistant',
      content: { type: 'text', text: 'Sure.' },
      model: 'gpt-x',
      stopReason: 'endTurn',
    });
  });
});
