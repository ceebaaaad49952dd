// The endpoint's HTTP guards, as pure functions: loopback Host and Origin (DNS rebinding), the
// path, the bearer token, content type and Accept, the declared size, the protocol version, and
// which identity a session belongs to.
import assert from 'node:assert/strict';
import {
  bearerToken,
  bodyTimedOut,
  checkDeclaredLength,
  checkGetAccept,
  checkHost,
  checkOrigin,
  checkPostHeaders,
  checkProtocolVersion,
  checkSessionOwner,
  routeOf,
  unauthorized,
} from '../../../src/broker/http/guards';

const PORT = 41234;

describe('http guards', () => {
  it('accepts only a loopback Host header with this port', () => {
    for (const host of [`127.0.0.1:${PORT}`, `localhost:${PORT}`, `LOCALHOST:${PORT}`, `[::1]:${PORT}`]) {
      assert.equal(checkHost(host, PORT), undefined, host);
    }
    const foreign = [
      undefined,
      '',
      '127.0.0.1',
      'localhost',
      `127.0.0.1:${PORT + 1}`,
      `evil.example:${PORT}`,
      `0.0.0.0:${PORT}`,
      `127.0.0.2:${PORT}`,
      `127.0.0.1.evil.example:${PORT}`,
      `[::2]:${PORT}`,
      `LOCALHOST.:${PORT}`,
      `localhost:${PORT}x`,
    ];
    for (const host of foreign) assert.equal(checkHost(host, PORT)?.status, 403, String(host));
  });

  it('accepts no Origin or a loopback http(s) Origin, and refuses every other', () => {
    const loopback = [undefined, 'http://localhost:3000', 'https://127.0.0.1', 'http://[::1]:8080', 'http://LOCALHOST'];
    for (const origin of loopback) {
      assert.equal(checkOrigin(origin), undefined, String(origin));
    }
    for (const origin of [
      'null',
      'http://evil.example',
      'https://127.0.0.1.evil.example',
      'file://',
      'ftp://127.0.0.1',
      'chrome-extension://abc',
      'javascript:alert(1)',
      'http://[::2]',
      '',
    ]) {
      const r = checkOrigin(origin);
      assert.equal(r?.status, 403, origin);
      assert.match(r!.message, /Origin/);
    }
  });

  it('routes /mcp, /servers/<name>/mcp and GET /health, and nothing else', () => {
    assert.deepEqual(routeOf('/mcp', 'POST'), { kind: 'mcp' });
    assert.deepEqual(routeOf('/mcp?x=1', 'GET'), { kind: 'mcp' });
    assert.deepEqual(routeOf('/servers/echo/mcp', 'POST'), { kind: 'mcp', server: 'echo' });
    assert.deepEqual(routeOf('/health', 'GET'), { kind: 'health' });
    const elsewhere = [
      ['/health', 'POST'],
      ['/', 'GET'],
      ['/servers/Echo/mcp', 'POST'],
      ['/servers/../mcp', 'POST'],
      ['/servers/a__b/mcp/x', 'POST'],
      [undefined, 'GET'],
      ['/mcp/', 'POST'],
    ] as const;
    for (const [url, method] of elsewhere) {
      const r = routeOf(url, method);
      assert.ok('status' in r && r.status === 404, `${method} ${url}`);
    }
  });

  it('takes the token from "Authorization: Bearer" only, and says whether one was sent', () => {
    assert.equal(bearerToken('Bearer abc'), 'abc');
    assert.equal(bearerToken('Bearer  abc  '), 'abc');
    for (const h of [undefined, '', 'Bearer', 'Bearer ', 'Bearer    ', 'bearer abc', 'Basic abc', 'Token abc']) {
      assert.equal(bearerToken(h), undefined, String(h));
    }
    const none = unauthorized(undefined);
    const bad = unauthorized('nope');
    assert.equal(none.status, 401);
    assert.equal(bad.status, 401);
    assert.match(none.message, /Authorization: Bearer <token>/);
    assert.match(bad.message, /not valid/);
    assert.match(String(none.headers?.['www-authenticate']), /^Bearer /);
    assert.match(String(bad.headers?.['www-authenticate']), /^Bearer /);
  });

  it("checks a POST's Content-Type and Accept, and a GET's Accept", () => {
    assert.equal(checkPostHeaders('application/json', 'application/json, text/event-stream'), undefined);
    assert.equal(checkPostHeaders('application/json; charset=utf-8', undefined), undefined);
    assert.equal(checkPostHeaders('Application/JSON', '*/*'), undefined);
    for (const type of [undefined, '', 'text/plain', 'application/jsonl', 'text/json', 'APPLICATION/JSONX']) {
      assert.equal(checkPostHeaders(type, '*/*')?.status, 415, String(type));
    }
    for (const accept of ['text/html', 'application/json', 'text/event-stream', '']) {
      assert.equal(checkPostHeaders('application/json', accept)?.status, 406, accept);
    }
    assert.equal(checkGetAccept('text/event-stream'), undefined);
    for (const accept of [undefined, '', 'application/json', '*/*']) assert.equal(checkGetAccept(accept)?.status, 406);
  });

  it('refuses a declared body over the limit, and says the limit', () => {
    assert.equal(checkDeclaredLength(undefined, 100), undefined);
    assert.equal(checkDeclaredLength('100', 100), undefined);
    const r = checkDeclaredLength('101', 100);
    assert.equal(r?.status, 413);
    assert.match(r!.message, /100 bytes/);
  });

  it('refuses an unsupported Mcp-Protocol-Version and names the supported ones', () => {
    assert.equal(checkProtocolVersion(undefined), undefined);
    assert.equal(checkProtocolVersion('2025-06-18'), undefined);
    const r = checkProtocolVersion('1999-01-01');
    assert.equal(r?.status, 400);
    assert.match(r!.message, /1999-01-01.*supported: .*2025-06-18/);
    assert.ok(checkProtocolVersion('x'.repeat(10_000))!.message.length < 400, 'the echoed header is cut short');
  });

  it('lets only the identity that opened a session use it', () => {
    const reader = { client: 'reader', operator: false };
    assert.equal(checkSessionOwner(reader, { client: 'reader', operator: false }), undefined);
    assert.equal(checkSessionOwner(reader, { client: 'writer', operator: false })?.status, 403);
    // Bound to the identity, not the name: a declared client called `operator` is not the operator.
    const operator = { client: 'operator', operator: true };
    assert.equal(checkSessionOwner(operator, { client: 'operator', operator: false })?.status, 403);
    assert.equal(checkSessionOwner({ client: 'operator', operator: false }, operator)?.status, 403);
    assert.equal(checkSessionOwner(operator, { client: 'operator', operator: true }), undefined);
  });

  it('answers a late body with 408, the deadline, and a closed connection', () => {
    const r = bodyTimedOut(30_000);
    assert.equal(r.status, 408);
    assert.match(r.message, /within 30 s/);
    assert.equal(r.headers?.connection, 'close');
    assert.match(bodyTimedOut(1500).message, /within 1500 ms/);
  });
});
