// The addresses a sign-in accepts (webAddress.ts) and the fetch its OAuth requests go through
// (oauthFetch.ts), the latter against real HTTP servers on loopback.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { oauthFetch, oauthTargetProblem, zoneOfHost } from '../../../../src/broker/connection/auth/oauthFetch';
import { openerCommand } from '../../../../src/broker/connection/auth/browserOpener';
import { isLoopbackHost, webAddressProblem, zoneOfAddress } from '../../../../src/registry/webAddress';

describe('sign-in addresses', () => {
  it('opens https pages and http on this computer only', () => {
    for (const ok of [
      'https://auth.example.com/authorize?x=1',
      'http://127.0.0.1:8080/authorize',
      'http://localhost/authorize',
      'http://[::1]:9/a',
      'http://2130706433/authorize', // 127.0.0.1 written as a number
    ])
      assert.equal(webAddressProblem(ok), undefined, ok);
    const refused: [string, RegExp][] = [
      ['file:///etc/passwd', /'file:' addresses are not web pages/],
      ['javascript:alert(1)', /'javascript:'/],
      ['vscode://ms-python.python/run', /'vscode:'/],
      ['ms-settings:network', /'ms-settings:'/],
      ['http://auth.example.com/authorize', /plain http: on another computer/],
      ['http://127.0.0.1.example.com/authorize', /plain http: on another computer/],
      ['https://accounts.example.com@evil.test/', /user name or password/],
      ['not a url', /not a web address/],
    ];
    for (const [url, why] of refused) assert.match(webAddressProblem(url) ?? 'accepted', why, url);
  });

  it('knows loopback, the local network and the internet', () => {
    assert.ok(isLoopbackHost('localhost') && isLoopbackHost('api.localhost') && isLoopbackHost('[::1]'));
    assert.ok(isLoopbackHost('127.9.9.9') && !isLoopbackHost('128.0.0.1') && !isLoopbackHost('localhost.example'));
    const zones: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['169.254.169.254', 'local-network'],
      ['::ffff:a9fe:a9fe', 'local-network'],
      ['10.1.2.3', 'local-network'],
      ['172.20.0.1', 'local-network'],
      ['192.168.1.1', 'local-network'],
      ['100.64.0.1', 'local-network'],
      ['fd00::1', 'local-network'],
      ['fe80::1', 'local-network'],
      ['0.0.0.0', 'local-network'],
      ['8.8.8.8', 'public'],
      ['2001:4860:4860::8888', 'public'],
    ];
    for (const [ip, zone] of zones) assert.equal(zoneOfAddress(ip), zone, ip);
    assert.equal(zoneOfAddress('example.com'), undefined, 'a name has no zone until it is resolved');
  });

  it('a server on the internet cannot aim sign-in requests at this computer or the local network', async () => {
    const target = (u: string) => new URL(u);
    assert.match(oauthTargetProblem('public', target('http://127.0.0.1:9/token'), 'loopback') ?? '', /this computer/);
    assert.match(
      oauthTargetProblem('public', target('https://10.0.0.5/token'), 'local-network') ?? '',
      /local network/,
    );
    assert.match(oauthTargetProblem('loopback', target('ftp://127.0.0.1/'), 'loopback') ?? '', /'ftp:'/);
    assert.equal(oauthTargetProblem('public', target('https://as.example.com/token'), 'public'), undefined);
    assert.equal(oauthTargetProblem('loopback', target('http://127.0.0.1:9/token'), 'loopback'), undefined);
    assert.equal(oauthTargetProblem('local-network', target('https://10.0.0.5/token'), 'local-network'), undefined);
    assert.equal(await zoneOfHost('localhost'), 'loopback');
    assert.equal(await zoneOfHost('[::1]'), 'loopback');
  });

  it('the opener gets the address as one argument, with no shell in between', () => {
    const url = 'https://as.example.com/a?x=1&y=|calc&z=%PATH%';
    assert.deepEqual(openerCommand('linux', url), ['xdg-open', [url]]);
    assert.deepEqual(openerCommand('darwin', url), ['open', [url]]);
    assert.deepEqual(openerCommand('win32', url), ['rundll32', ['url.dll,FileProtocolHandler', url]]);
  });
});

describe('the fetch of OAuth requests', () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/json') return void res.end(JSON.stringify({ issuer: base }));
      if (req.url === '/chunked') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const more = (): void => {
          while (sent < 4 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end('{}');
        };
        return more();
      }
      if (req.url === '/drip') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{');
        return; // never ends
      }
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        return void res.end();
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('reads an ordinary answer as it came', async () => {
    const res = await oauthFetch(`${base}/mcp`)(`${base}/json`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { issuer: base });
  });

  it('stops reading an answer past the limit, with or without content-length', async () => {
    const f = oauthFetch(`${base}/mcp`, { limit: 1024 * 1024 });
    await assert.rejects(f(`${base}/chunked`), /more than 1048576 bytes/);
  });

  it('gives up on an answer that never ends', async () => {
    const f = oauthFetch(`${base}/mcp`, { timeoutMs: 300 });
    await assert.rejects(f(`${base}/drip`), /did not answer within 300 ms/);
  });

  it('returns a redirect unfollowed (the SDK follows only within one origin)', async () => {
    const res = await oauthFetch(`${base}/mcp`)(`${base}/redirect`);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), 'http://169.254.169.254/latest/meta-data/');
  });

  it('a server on the internet cannot make the broker request this computer: nothing is sent', async () => {
    const before = seen.length;
    // 8.8.8.8 is an address on the internet: its zone is known without asking DNS.
    await assert.rejects(oauthFetch('https://8.8.8.8/mcp')(`${base}/json`), /on this computer/);
    assert.equal(seen.length, before, 'the request never reached the local server');
    // Positive control: for a server on this computer, the same request is made.
    await oauthFetch(`${base}/mcp`)(`${base}/json`);
    assert.equal(seen.length, before + 1);
  });
});
