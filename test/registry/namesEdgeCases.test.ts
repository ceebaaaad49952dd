// Names, globs and quoting (src/registry/names.ts, quote.ts): the edge cases test/registry/names.test.ts
// does not cover.

import assert from 'node:assert/strict';
import {
  assertSafeName,
  filterByGlobs,
  matchesGlob,
  MAX_NAME_LENGTH,
  NAME_PATTERN,
  NAMESPACE_SEPARATOR,
  RESERVED_NAME,
  suggestName,
  validateName,
} from '../../src/registry/names';
import { jsonQuoted, MAX_QUOTED_LENGTH, quoted } from '../../src/registry/quote';

describe('registry: names', () => {
  it('suggests only names that pass every rule', () => {
    assert.equal(validateName('Sequential Thinking'), "the name must be lowercase (try 'sequential-thinking')");
    assert.equal(suggestName('@acme/Server-Memory'), 'acme-server-memory');
    assert.equal(suggestName('x'.repeat(40))?.length, MAX_NAME_LENGTH);
    assert.equal(suggestName('Café Ünïcode'), 'cafe-unicode');
    assert.equal(suggestName('2FA Helper'), 'fa-helper');
    assert.equal(suggestName('Switchboard'), 'switchboard-server');
    assert.equal(suggestName('!!!'), undefined);
    for (const raw of ['A__B', 'X'.repeat(80), 'Mixed.Case_Name', ' Leading Space', 'Ab-']) {
      const s = suggestName(raw);
      assert.ok(s !== undefined && validateName(s) === undefined, `${raw} → ${s}`);
    }
  });

  it('agrees with NAME_PATTERN on the length limit', () => {
    assert.ok(NAME_PATTERN.test('a'.repeat(MAX_NAME_LENGTH)));
    assert.ok(!NAME_PATTERN.test('a'.repeat(MAX_NAME_LENGTH + 1)));
    assert.equal(validateName('a'.repeat(MAX_NAME_LENGTH)), undefined);
  });

  it('agrees with NAME_PATTERN on every printable ASCII character', () => {
    for (let cp = 0x20; cp < 0x7f; cp++) {
      const name = `a${String.fromCharCode(cp)}b`;
      const valid = validateName(name) === undefined && !name.includes(NAMESPACE_SEPARATOR);
      assert.equal(valid, NAME_PATTERN.test(name), JSON.stringify(name));
    }
  });

  it('names the most alarming problem first', () => {
    assert.match(validateName('../X'.repeat(20)) ?? '', /path separator/, 'traversal before length or case');
    assert.match(validateName('A\0') ?? '', /NUL/, 'NUL before case');
    assert.match(validateName('É') ?? '', /non-ASCII/, 'look-alikes before case');
    assert.match(validateName('X'.repeat(40)) ?? '', /40 characters long/, 'length before case');
  });

  it('shows control characters as code points only', () => {
    // DEL is past '~', so it is refused with the non-ASCII characters; still printed as a code point only.
    assert.match(validateName('a\u007fb') ?? '', /character U\+007F;/);
    assert.equal(validateName('a\tb'), "the name may contain only a-z, 0-9 and '-', not U+0009");
    assert.equal(validateName('ab:c'), "the name may contain only a-z, 0-9 and '-', not ':' (U+003A)");
  });

  it('reserves the facade namespace and refuses non-strings', () => {
    assert.match(validateName(RESERVED_NAME) ?? '', /reserved/);
    assert.equal(validateName('switchboard-x'), undefined, 'only the exact name is reserved');
    assert.equal(validateName(42 as unknown as string), 'a name must be a string');
  });

  it('quotes a hostile long name cut short, with its length', () => {
    const name = 'x'.repeat(10_000);
    assert.throws(
      () => assertSafeName(name),
      (err: Error) =>
        err.message.length < 250 &&
        err.message.startsWith(
          `invalid name "${'x'.repeat(MAX_QUOTED_LENGTH)}…" (10000 characters; only the first 64 shown)`,
        ),
    );
    assert.throws(() => assertSafeName('a\nb'), { message: /^invalid name "a\\nb": / });
  });
});

describe('registry: quoting in messages', () => {
  it('quotes short text whole and cuts long text with a note', () => {
    assert.equal(quoted('comand'), "'comand'");
    assert.equal(jsonQuoted('a"b'), '"a\\"b"');
    assert.equal(quoted('abcdef', 3), "'abc…' (6 characters; only the first 3 shown)");
    assert.equal(quoted('x'.repeat(MAX_QUOTED_LENGTH)), `'${'x'.repeat(MAX_QUOTED_LENGTH)}'`);
  });

  it('never splits a surrogate pair', () => {
    assert.equal(quoted('ab😀cd', 3), "'ab…' (6 characters; only the first 2 shown)");
    assert.equal(jsonQuoted('a😀', 3), '"a😀"');
  });
});

describe('registry: globs', () => {
  it('treats every regex metacharacter literally', () => {
    for (const ch of '.+^${}()|[]\\/-') {
      assert.ok(matchesGlob(`a${ch}b`, `a${ch}b`), ch);
      assert.ok(!matchesGlob('axb', `a${ch}b`), ch);
    }
  });

  it("lets '*' span the namespace separator and '?' match any single character, newline included", () => {
    assert.ok(matchesGlob('git__push', 'git*push'));
    assert.ok(matchesGlob('a\nb', 'a?b'));
    assert.ok(matchesGlob('a\nb\nc', 'a*c'));
    assert.ok(!matchesGlob('ab', 'a?b'));
    assert.ok(matchesGlob('x', '**'));
  });

  it('stays correct past the compiled-pattern cache limit', () => {
    for (let i = 0; i < 2500; i++)
      assert.ok(matchesGlob(`tool${i}`, `tool${i}`) && !matchesGlob(`tool${i}x`, `tool${i}`));
    assert.ok(matchesGlob('tool7', 'tool?'));
  });

  it('filters deny-only, allow-only and an empty deny list', () => {
    assert.ok(filterByGlobs('a__x', undefined, []));
    assert.ok(!filterByGlobs('a__x', undefined, ['*']));
    assert.ok(!filterByGlobs('a__x', ['a__*'], ['a__x']));
    assert.ok(filterByGlobs('a__x', ['b__*', 'a__?']));
  });
});
