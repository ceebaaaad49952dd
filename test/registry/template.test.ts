// Prompt template rendering (src/registry/template.ts): pure, so tested without files or processes.

import assert from 'node:assert/strict';
import { PromptDefSchema, type PromptDef } from '../../src/registry/schema';
import { renderPromptMessages } from '../../src/registry/template';

function prompt(def: unknown): PromptDef {
  return PromptDefSchema.parse(def);
}

describe('registry: prompt templates', () => {
  const review = prompt({
    name: 'review',
    arguments: [{ name: 'file', required: true }, { name: 'focus' }, { name: 'tone_2', required: true }],
    messages: [
      { role: 'user', content: 'Review {{file}} for {{ focus }}.' },
      { role: 'assistant', content: 'Reviewing {{file}} ({{tone_2}}), twice: {{file}}' },
    ],
  });

  it('replaces every placeholder, with or without spaces inside the braces, keeping the roles', () => {
    assert.deepEqual(renderPromptMessages(review, { file: 'a.ts', focus: 'bugs', tone_2: 'dry' }), [
      { role: 'user', content: 'Review a.ts for bugs.' },
      { role: 'assistant', content: 'Reviewing a.ts (dry), twice: a.ts' },
    ]);
  });

  it('renders a missing optional argument as empty text', () => {
    assert.equal(renderPromptMessages(review, { file: 'a.ts', tone_2: 'dry' })[0].content, 'Review a.ts for .');
  });

  it('names every missing required argument, in declaration order', () => {
    assert.throws(() => renderPromptMessages(review, { focus: 'x' }), {
      message: "prompt 'review' needs the arguments 'file', 'tone_2'",
    });
    assert.throws(() => renderPromptMessages(review, { tone_2: 'x' }), {
      message: "prompt 'review' needs the argument 'file'",
    });
  });

  it('treats an empty string as given', () => {
    assert.equal(renderPromptMessages(review, { file: '', tone_2: '' })[1].content, 'Reviewing  (), twice: ');
  });

  it('inserts values verbatim: no re-expansion and no $-patterns of String.replace', () => {
    const out = renderPromptMessages(review, { file: "$& $1 $$ $' {{focus}}", focus: 'F', tone_2: '{{file}}' });
    assert.equal(out[0].content, "Review $& $1 $$ $' {{focus}} for F.");
    assert.equal(out[1].content, "Reviewing $& $1 $$ $' {{focus}} ({{file}}), twice: $& $1 $$ $' {{focus}}");
  });

  it('gives the same result when called again (the global placeholder pattern keeps no state)', () => {
    const args = { file: 'x', focus: 'y', tone_2: 'z' };
    assert.deepEqual(renderPromptMessages(review, args), renderPromptMessages(review, args));
  });

  it('leaves text without placeholders and lone braces alone', () => {
    const plain = prompt({ name: 'plain', messages: [{ role: 'user', content: 'a {b} {{ }c}} }}{{' }] });
    assert.equal(renderPromptMessages(plain, {})[0].content, 'a {b} {{ }c}} }}{{');
  });
});
