// Redaction of a server's secret values from text the broker shows or writes.
import assert from 'node:assert/strict';
import { REDACTED, Redactor } from '../../src/broker/redact';

describe('redaction', () => {
  it('replaces every occurrence of every value', () => {
    const r = new Redactor(['s3cret-value', 'another-one']);
    assert.equal(r.redact('a s3cret-value b s3cret-value c another-one'), `a ${REDACTED} b ${REDACTED} c ${REDACTED}`);
  });

  it('leaves text without secrets as it is, and ignores values too short to be told from ordinary text', () => {
    const r = new Redactor(['abc', '']);
    assert.equal(r.redact('abc is not redacted'), 'abc is not redacted');
    assert.deepEqual(r.forms, []);
  });

  it('redacts a longer value before a shorter one inside it', () => {
    const r = new Redactor(['token', 'token-with-suffix']);
    assert.equal(r.redact('x token-with-suffix y'), `x ${REDACTED} y`);
  });
});
