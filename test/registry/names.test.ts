import assert from 'node:assert/strict';
import { assertSafeName, filterByGlobs, matchesGlob, NAME_PATTERN, validateName } from '../../src/registry/names';

describe('registry names', () => {
  it('accepts ordinary names', () => {
    for (const name of ['a', 'github', 'fs-2', 'my-server-01', 'a'.repeat(31)]) {
      assert.equal(validateName(name), undefined, name);
      assert.ok(NAME_PATTERN.test(name));
      assert.doesNotThrow(() => assertSafeName(name));
    }
  });

  const rejected: Array<[string, RegExp]> = [
    ['', /empty/],
    ['../x', /path separator/],
    ['..', /'\.\.'/],
    ['/etc/x', /path separator/],
    ['a/b', /path separator/],
    ['a\\b', /path separator/],
    ['a\0b', /NUL/],
    ['a'.repeat(32), /32 characters long/],
    ['\u0455erver', /non-ASCII.*U\+0455.*look-alike/], // Cyrillic ѕ
    ['caf\u00e9', /non-ASCII/],
    ['Upper', /lowercase \(try 'upper'\)/],
    ['a__b', /'__'/],
    ['switchboard', /reserved/],
    ['1abc', /start with a lowercase letter/],
    ['-abc', /start with a lowercase letter/],
    ['a_b', /only a-z, 0-9 and '-'/],
    ['a.b', /only a-z, 0-9 and '-'/],
    ['a b', /only a-z/],
    ['C:x', /drive/],
  ];
  for (const [name, reason] of rejected) {
    it(`rejects ${JSON.stringify(name)}`, () => {
      const why = validateName(name);
      assert.ok(why !== undefined, 'expected a reason');
      assert.match(why, reason);
      assert.throws(
        () => assertSafeName(name),
        (err: Error) => reason.test(err.message),
      );
    });
  }

  it('matches globs with * and ? over whole names', () => {
    assert.ok(matchesGlob('github__create_issue', 'github__*'));
    assert.ok(matchesGlob('github__create_issue', '*__create_*'));
    assert.ok(matchesGlob('abc', 'a?c'));
    assert.ok(!matchesGlob('abbc', 'a?c'));
    assert.ok(!matchesGlob('xgithub__a', 'github__*'));
    assert.ok(matchesGlob('a.b', 'a.b'));
    assert.ok(!matchesGlob('axb', 'a.b'), 'dot is literal');
    assert.ok(matchesGlob('(x)+[y]', '(x)+[y]'), 'regex characters are literal');
    assert.ok(!matchesGlob('Read', 'read'), 'case-sensitive');
    assert.ok(matchesGlob('', '*'));
  });

  it('filters with allow and deny, deny winning', () => {
    assert.ok(filterByGlobs('x', undefined, undefined));
    assert.ok(!filterByGlobs('x', [], undefined), 'an explicit empty allow list allows nothing');
    assert.ok(filterByGlobs('git__status', ['git__*']));
    assert.ok(!filterByGlobs('git__push', ['git__*'], ['*push']));
    assert.ok(!filterByGlobs('fs__read', ['git__*']));
    assert.ok(filterByGlobs('fs__read', undefined, ['git__*']));
  });
});
