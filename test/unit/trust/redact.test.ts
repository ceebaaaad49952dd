// Redaction of a server's secret values from text the broker shows or writes.
import assert from 'node:assert/strict';
import { REDACTED, Redactor, redactUrl, urlSecretValues } from '../../../src/broker/trust/redact';

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

describe('redaction of encoded values and URLs', () => {
  const secret = 'canary-7f3a9c1e-secret';
  const r = new Redactor([secret]);

  it('redacts a value in base64 at any alignment, URL-safe base64, hex and URL-encoded', () => {
    for (const prefix of ['', 'X=', 'KEY=', 'ab ']) {
      const encoded = [
        Buffer.from(`${prefix}${secret}\n`).toString('base64'),
        Buffer.from(`${prefix}${secret}`).toString('base64url'),
        Buffer.from(`${prefix}${secret}`).toString('hex'),
        Buffer.from(`${prefix}${secret}`).toString('hex').toUpperCase(),
        encodeURIComponent(`${prefix}${secret}`),
      ];
      for (const text of encoded) {
        const out = r.redact(text);
        assert.ok(out.includes(REDACTED), `${prefix}: ${text} -> ${out}`);
        assert.ok(out.split(REDACTED).join('').length <= 16, `at most the prefix and a partial group stay: ${out}`);
      }
    }
  });

  it('does not redact short encoded fragments that would match ordinary text', () => {
    const short = new Redactor(['abcd']);
    // 'YWJj' (the base64 of 'abc' alone) would match four letters of any base64 text.
    assert.deepEqual(short.forms, ['YWJjZA==', '61626364', 'abcd']);
  });

  it('shows a URL without user info and query values, keeping the rest', () => {
    assert.equal(
      redactUrl('https://user:pa%20ss@h.example:8443/mcp?api_key=K1&x=2#frag'),
      'https://[redacted]:[redacted]@h.example:8443/mcp?api_key=[redacted]&x=[redacted]#frag',
    );
    assert.equal(redactUrl('http://127.0.0.1:9/mcp'), 'http://127.0.0.1:9/mcp');
    assert.equal(redactUrl('https://h.example/cb#access_token=t0k3n&x=1'), 'https://h.example/cb#[redacted]');
    assert.equal(redactUrl('not a url?token=abc'), 'not a url?token=[redacted]');
  });

  it('lists the credentials a URL carries, raw and decoded', () => {
    assert.deepEqual(
      new Set(urlSecretValues('https://user:pa%20ss@h.example/mcp?api_key=K1')),
      new Set(['user', 'pa%20ss', 'pa ss', 'user:pa ss', 'K1']),
    );
    assert.deepEqual(urlSecretValues('https://h.example/mcp'), []);
    assert.deepEqual(urlSecretValues('https://h.example/cb#access_token=t0k3n'), ['t0k3n']);
  });
});
