// Unit tests of OAuth sign-in pieces without a broker: the `auth` schema rules, what an approval
// binds of it (and that approvals recorded before the field existed still hold), the token file
// store, the refresh and step-up bookkeeping, and the one-use loopback redirect listener.
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { z } from 'zod';
import {
  changedFields,
  describeChange,
  fieldDigests,
  hashOfDigests,
  normalizeForApproval,
} from '../../../../src/broker/trust/approvalMaterial';
import { listenForRedirect } from '../../../../src/broker/connection/auth/loopback';
import { ServerOAuth, SignInRequired, signInKey } from '../../../../src/broker/connection/auth/serverOAuth';
import { FileTokenStore, openTokenStore } from '../../../../src/broker/connection/auth/oauthTokenStore';
import { lintDefinition } from '../../../../src/registry/lint';
import { ServerDefSchema, type OAuthSettings, type ServerDef } from '../../../../src/registry/schema';

type Input = z.input<typeof ServerDefSchema>;
const ROOT = path.join(os.tmpdir(), 'sb-unit-auth', 'ws');

const remote = (over: Partial<Input> = {}): ServerDef =>
  ServerDefSchema.parse({ name: 'srv', transport: 'http', url: 'https://mcp.example.com/mcp', ...over });

const made: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-unit-auth-'));
  made.push(dir);
  return dir;
}
after(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('auth: the schema', () => {
  it('accepts oauth on http and sse servers', () => {
    for (const transport of ['http', 'sse'] as const) {
      const d = remote({ transport, auth: { type: 'oauth', scopes: ['a', 'b'], clientId: 'c' } });
      assert.deepEqual(d.auth, { type: 'oauth', scopes: ['a', 'b'], clientId: 'c' });
    }
  });

  it('refuses auth on a stdio server, with what to do instead', () => {
    const r = ServerDefSchema.safeParse({ name: 'srv', command: 'node', auth: { type: 'oauth' } });
    assert.equal(r.success, false);
    const issue = r.error!.issues.find((i) => i.path[0] === 'auth');
    assert.match(issue!.message, /stdio server must not have 'auth'.*env/);
  });

  it('refuses unknown auth types and keys, a secret file without a client id, and non-https metadata URLs', () => {
    const bad: unknown[] = [
      { type: 'basic' },
      { type: 'oauth', scope: ['x'] },
      { type: 'oauth', clientSecretFile: '~/secret' },
      { type: 'oauth', clientMetadataUrl: 'http://example.com/client.json' },
      { type: 'oauth', scopes: ['has space'] },
      { type: 'oauth', scopes: ['a', 'a'] },
    ];
    for (const auth of bad) {
      const r = ServerDefSchema.safeParse({ name: 'srv', transport: 'http', url: 'https://x.example/mcp', auth });
      assert.equal(r.success, false, JSON.stringify(auth));
    }
  });

  it('warns about an Authorization header next to auth and a client secret inside the workspace', () => {
    const d = remote({
      headers: { Authorization: 'Bearer x' },
      auth: { type: 'oauth', clientId: 'c', clientSecretFile: 'secrets/client' },
    });
    const messages = lintDefinition('server', d).map((l) => l.message);
    assert.ok(messages.some((m) => /replaces the token/.test(m)));
    assert.ok(messages.some((m) => /version control/.test(m)));
  });
});

describe('auth: what an approval binds', () => {
  const digests = (d: ServerDef) => fieldDigests(normalizeForApproval(d, ROOT, null));

  it('a definition without auth hashes as it did before the field existed', () => {
    const d = remote();
    const withAuth = digests(d);
    // The fields added after approvals were first recorded (auth, then who answers, the tool-change
    // policy, the secret prompts, the guardrails' switches and strict resource pins) are empty while
    // unset and take no part in the hash.
    const { auth, clientFeatures, onToolChange, inputs, redactResults, holdFlaggedTools, pinResources, ...rest } =
      withAuth;
    assert.deepEqual(
      [auth, clientFeatures, onToolChange, inputs, redactResults, holdFlaggedTools, pinResources],
      ['', '', '', '', '', '', ''],
    );
    const before = crypto
      .createHash('sha256')
      .update(
        Object.entries(rest)
          .map(([f, v]) => `${f}=${v}`)
          .join('\n'),
      )
      .digest('hex');
    assert.equal(hashOfDigests(withAuth), before);
    assert.deepEqual(changedFields(rest, withAuth), [], 'an old entry without the field sees no change');
  });

  it('type, clientId, scopes and clientMetadataUrl change the hash and are named; scope order does not', () => {
    const base = remote({ auth: { type: 'oauth', scopes: ['a', 'b'] } });
    const baseHash = hashOfDigests(digests(base));
    assert.notEqual(baseHash, hashOfDigests(digests(remote())));
    for (const auth of [
      { type: 'oauth' as const, scopes: ['a', 'b', 'admin'] },
      { type: 'oauth' as const, scopes: ['a', 'b'], clientId: 'other' },
      { type: 'oauth' as const, scopes: ['a', 'b'], clientMetadataUrl: 'https://example.com/c.json' },
    ]) {
      const changed = digests(remote({ auth }));
      assert.notEqual(hashOfDigests(changed), baseHash);
      const fields = changedFields(digests(base), changed);
      assert.deepEqual(fields, ['auth']);
      assert.equal(describeChange(fields), 'its sign-in settings changed');
    }
    assert.equal(hashOfDigests(digests(remote({ auth: { type: 'oauth', scopes: ['b', 'a'] } }))), baseHash);
  });
});

describe('auth: the token file store', () => {
  it('without a forced store: the keychain if it answers, else the files, and either keeps a value', () => {
    // Headless Linux (no Secret Service) gets the files; a desktop with a keychain gets the keychain.
    const dir = tempDir();
    const store = openTokenStore(dir, {});
    assert.ok(['keychain', 'file'].includes(store.kind));
    const key = `unit-${crypto.randomBytes(4).toString('hex')}`;
    store.write(key, 'kept');
    try {
      assert.equal(store.read(key), 'kept');
    } finally {
      store.remove(key);
    }
    assert.equal(store.read(key), undefined);
  });

  it('writes one private file per key, reads it back and removes it', () => {
    const dir = tempDir();
    const store = openTokenStore(dir, { SWITCHBOARD_TOKEN_STORE: 'file' });
    assert.equal(store.kind, 'file');
    store.write('srv/abc', 'value');
    const file = (store as FileTokenStore).fileOf('srv/abc');
    assert.ok(file.startsWith(path.join(dir, 'oauth') + path.sep));
    assert.ok(!path.basename(file).includes('srv'), 'the server name never becomes a path');
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(store.read('srv/abc'), 'value');
    store.remove('srv/abc');
    assert.equal(store.read('srv/abc'), undefined);
  });
});

describe('auth: one server sign-in', () => {
  const def = remote({ auth: { type: 'oauth', scopes: ['mcp'] } });
  const make = (dir = tempDir()) =>
    new ServerOAuth('srv', def.url!, def.auth as OAuthSettings, signInKey(def), new FileTokenStore(dir), ROOT);

  it('keys sign-ins by name and by url and settings', () => {
    assert.notEqual(signInKey(def), signInKey(remote({ auth: { type: 'oauth', scopes: ['mcp', 'x'] } })));
    assert.notEqual(signInKey(def), signInKey({ ...def, url: 'https://other.example/mcp' }));
    assert.match(signInKey(def), /^srv\//);
  });

  it('is due for a refresh before the access token expires, only with a refresh token', () => {
    const oauth = make();
    oauth.saveTokens({ access_token: 'a'.repeat(20), token_type: 'bearer', expires_in: 100 });
    assert.equal(oauth.refreshDue(), false, 'nothing to refresh with');
    const refresh_token = 'r'.repeat(20);
    oauth.saveTokens({ access_token: 'b'.repeat(20), token_type: 'bearer', expires_in: 100, refresh_token });
    assert.equal(oauth.refreshDue(), false);
    assert.equal(oauth.refreshDue(Date.now() + 76_000), true, 'a quarter of the lifetime before expiry');
  });

  it('keeps the refresh token when a refresh omits it, and survives a restart through the store', () => {
    const dir = tempDir();
    const oauth = make(dir);
    oauth.saveTokens({ access_token: 'first-access', token_type: 'bearer', refresh_token: 'the-refresh' });
    oauth.saveTokens({ access_token: 'second-access', token_type: 'bearer' });
    const again = make(dir);
    assert.equal(again.accessToken, 'second-access');
    assert.equal(again.tokens()?.refresh_token, 'the-refresh');
    again.signOut();
    assert.equal(make(dir).signedIn, false);
  });

  it('outside a browser step it never redirects: the person is asked to sign in', () => {
    const oauth = make();
    assert.throws(() => oauth.redirectToAuthorization(new URL('https://as.example/authorize')), SignInRequired);
    assert.throws(() => oauth.state(), SignInRequired);
  });

  it('a step-up asks for what was granted and what the server requires', () => {
    const oauth = make();
    oauth.saveTokens({ access_token: 'x'.repeat(20), token_type: 'bearer', scope: 'mcp' });
    oauth.requireScope('mcp admin');
    assert.equal(oauth.scopeToRequest(), 'mcp admin');
    assert.match(oauth.needsSignInMessage(), /more access \(scope: mcp admin\)/);
  });

  it('scrubs its tokens from text', () => {
    const oauth = make();
    const tokens = { access_token: 'secret-access-1234', refresh_token: 'secret-refresh-5678' };
    oauth.saveTokens({ ...tokens, token_type: 'bearer' });
    assert.equal(oauth.scrub('got secret-access-1234 and secret-refresh-5678'), 'got [redacted] and [redacted]');
  });
});

describe('auth: the loopback redirect listener', () => {
  it('accepts one redirect with the right state, refuses others, and closes', async () => {
    const listener = await listenForRedirect('good-state', 'srv', 10_000);
    const url = new URL(listener.redirectUrl);
    assert.equal(url.hostname, '127.0.0.1');
    assert.equal((await fetch(`${url.href}?code=evil&state=bad`)).status, 400);
    assert.equal((await fetch(`${url.origin}/other?code=x&state=good-state`)).status, 404);
    const ok = await fetch(`${url.href}?code=the-code&state=good-state`);
    assert.equal(ok.status, 200);
    assert.equal(await listener.code, 'the-code');
    await assert.rejects(fetch(`${url.href}?code=again&state=good-state`), 'closed after one use');
  });

  it('reports an error the authorization server sent back', async () => {
    const listener = await listenForRedirect('s', 'srv', 10_000);
    const res = await fetch(`${listener.redirectUrl}?error=access_denied&error_description=no+thanks&state=s`);
    assert.equal(res.status, 400);
    await assert.rejects(listener.code, /refused the sign-in: no thanks/);
  });

  it('a cancelled sign-in rejects and frees the port', async () => {
    const listener = await listenForRedirect('s', 'srv', 10_000);
    listener.close();
    await assert.rejects(listener.code, /cancelled/);
    await assert.rejects(fetch(`${listener.redirectUrl}?code=x&state=s`));
  });
});
