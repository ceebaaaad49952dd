// OAuth sign-in to a remote server, end to end over real HTTP: the real broker, the loopback
// OAuth fixture (SDK server auth pieces), SDK clients, and the test playing the browser (it GETs
// the authorization URL, consents, and follows the redirect to the broker's loopback listener).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
  connect,
  fixture,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  track,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../../helpers/broker';

interface Fixture {
  proc: ChildProcess;
  url: string;
  base: string;
}

async function startOAuthFixture(): Promise<Fixture> {
  const proc = track(spawn(process.execPath, [fixture('oauth-server.mjs'), '--token-ttl', '2'], { stdio: 'pipe' }));
  const ready = await new Promise<{ url: string; base: string }>((resolve, reject) => {
    readline.createInterface({ input: proc.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
    proc.once('exit', (code) => reject(new Error(`oauth fixture exited with ${code}`)));
  });
  return { proc, ...ready };
}

type Status = {
  state: string;
  lastError?: string;
  tools: { exposedAs: string }[];
  auth?: { signedIn: boolean; tokenStore: string; inProgress?: boolean; stepUpScope?: string; lastError?: string };
  signIn?: { scope?: string };
};

describe('OAuth sign-in to remote servers', function () {
  this.timeout(120_000);
  let oauth: Fixture;
  let broker: BrokerProcess;
  let operator: Client;
  let agent: Client;
  let root: string;
  /** Every text the broker answered with, searched for tokens at the end. */
  const responses: string[] = [];

  async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
    const result = await client.callTool({ name, arguments: args });
    responses.push(JSON.stringify(result));
    return result;
  }

  async function status(): Promise<Status> {
    const result = await call(operator, 'switchboard__server_status', { name: 'remote' });
    return result.structuredContent as unknown as Status;
  }

  /** Plays the browser: the authorization URL, the consent page, then the redirect to the broker. */
  async function consent(authorizationUrl: string, decision = 'allow'): Promise<string> {
    const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
    assert.equal(authorize.status, 302, `the authorization endpoint answered ${authorize.status}`);
    const consentPage = new URL(authorize.headers.get('location')!, authorizationUrl);
    const page = await fetch(consentPage);
    assert.match(await page.text(), /Allow MCP Switchboard/);
    consentPage.searchParams.set('decision', decision);
    const answered = await fetch(consentPage, { redirect: 'manual' });
    assert.equal(answered.status, 302);
    const back = new URL(answered.headers.get('location')!);
    assert.equal(back.hostname, '127.0.0.1', 'the browser returns to the loopback listener');
    const landing = await fetch(back);
    return landing.text();
  }

  async function signIn(): Promise<void> {
    const begun = await call(operator, 'switchboard__begin_sign_in', { name: 'remote' });
    const { url } = begun.structuredContent as { url: string };
    assert.match(await consent(url), /Signed in/);
    await waitFor(async () => (await status()).state === 'running', 'remote running after sign-in', 20_000);
  }

  async function stats(): Promise<Record<string, number>> {
    return (await fetch(`${oauth.base}/test/stats`)).json() as Promise<Record<string, number>>;
  }

  before(async () => {
    oauth = await startOAuthFixture();
    root = tempDir('sb-oauth-');
    writeRegistry(root, {
      'mcp-servers.d/remote.yaml':
        `name: remote\ntrust: trusted\ntransport: http\nurl: ${oauth.url}\n` +
        'auth:\n  type: oauth\n  scopes: [mcp]\n' +
        'restart:\n  maxRetries: 3\n  backoffMs: 50\n  maxBackoffMs: 200\n',
      'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
    });
    broker = await startBrokerProcess({ root, env: { SWITCHBOARD_TOKEN_STORE: 'file' } });
    operator = await connect(broker.url, broker.token, 'operator-test');
    const tokenFile = path.join(broker.home, 'workspaces');
    const agentToken = await waitFor(() => {
      const found = fs
        .readdirSync(tokenFile, { recursive: true })
        .map(String)
        .find((f) => f.endsWith('agent.token'));
      return found ? fs.readFileSync(path.join(tokenFile, found), 'utf8').trim() : undefined;
    }, 'agent token').catch(async () => {
      const conn = await call(operator, 'switchboard__client_connection', { name: 'agent' });
      const file = (conn.structuredContent as { tokenFile: string }).tokenFile;
      return fs.readFileSync(file, 'utf8').trim();
    });
    agent = await connect(broker.url, agentToken, 'agent');
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await agent?.close().catch(() => undefined);
    await broker?.stop();
    await killStarted();
    removeTempDirs();
  });

  it('a server that needs sign-in waits in needs-sign-in, not failed, and does not restart', async () => {
    const s = await waitFor(async () => {
      const now = await status();
      return now.state === 'needs-sign-in' ? now : undefined;
    }, 'needs-sign-in');
    assert.equal(s.auth?.signedIn, false);
    assert.equal(s.auth?.tokenStore, 'file');
    assert.match(s.lastError ?? '', /switchboard login remote/);
    await new Promise((r) => setTimeout(r, 500)); // ten times the backoff: a restart would have come
    const later = (await call(operator, 'switchboard__list_servers')).structuredContent as {
      servers: { state: string; restarts: number }[];
    };
    assert.equal(later.servers[0].state, 'needs-sign-in');
    assert.equal(later.servers[0].restarts, 0, 'no restart while it waits for a sign-in');
  });

  it('an agent cannot start a sign-in or sign the server out', async () => {
    for (const tool of ['switchboard__begin_sign_in', 'switchboard__sign_out']) {
      await assert.rejects(
        agent.callTool({ name: tool, arguments: { name: 'remote' } }),
        /operator only/,
        `${tool} is refused to an agent`,
      );
    }
    assert.equal((await status()).auth?.inProgress, undefined, 'no sign-in was started');
  });

  it('signing in (browser step played over HTTP) makes the tools appear for every client', async () => {
    const begun = await call(operator, 'switchboard__begin_sign_in', { name: 'remote' });
    const { url } = begun.structuredContent as { url: string };
    const authorization = new URL(url);
    assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorization.searchParams.get('resource'), oauth.url);
    assert.equal(authorization.searchParams.get('scope'), 'mcp');
    const redirect = new URL(authorization.searchParams.get('redirect_uri')!);
    assert.equal(redirect.hostname, '127.0.0.1');
    const during = await status();
    assert.equal(during.auth?.inProgress, true, 'the state says a sign-in is in progress');
    const state = authorization.searchParams.get('state')!;
    assert.ok(!JSON.stringify(during).includes(state), "the state never shows the sign-in's URL or state");
    // A redirect with another state is refused and does not end the sign-in.
    const forged = await fetch(`${redirect.href}?code=forged&state=wrong`);
    assert.equal(forged.status, 400);
    assert.match(await consent(url), /Signed in/);
    await waitFor(async () => (await status()).state === 'running', 'running after sign-in', 20_000);
    // One use: the listener is closed after the redirect.
    await assert.rejects(fetch(`${redirect.href}?code=again&state=x`));
    for (const client of [operator, agent]) {
      const { tools } = await client.listTools();
      assert.ok(
        tools.some((t) => t.name === 'remote__whoami'),
        "the signed-in server's tools are listed",
      );
      assert.equal(textOf(await call(client, 'remote__whoami')), 'scopes: mcp');
    }
    assert.equal((await stats()).registrations, 1, 'registered once, dynamically');
  });

  it('guardrails: a server that echoes its OAuth tokens gets them back redacted (the current ones, after refreshes)', async () => {
    const issued = async () => (await (await fetch(`${oauth.base}/test/tokens`)).json()) as Record<string, string[]>;
    // The broker is the only one the fixture issues tokens to, so the last issued are the ones it holds,
    // unless a refresh happens during the call (the tokens live 2 s): then the round is played again.
    for (const kind of ['access', 'refresh']) {
      let judged = false;
      for (let round = 0; round < 10 && !judged; round++) {
        const before = await issued();
        const token = before[kind][before[kind].length - 1];
        const text = textOf(await call(agent, 'remote__echo', { text: `mine: ${token}` }));
        const after = await issued();
        if (after.access.length !== before.access.length) continue;
        assert.equal(text, 'echo: mine: [redacted]', `the ${kind} token came back`);
        judged = true;
      }
      assert.ok(judged, `no round without a refresh for the ${kind} token`);
    }
    // Positive control: other text comes back as it was sent.
    assert.equal(textOf(await call(agent, 'remote__echo', { text: 'plain' })), 'echo: plain');
  });

  it('an access token that expires is refreshed without the user', async () => {
    const before = (await stats()).refreshes;
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 2100)); // longer than the fixture's token lifetime
      assert.equal(textOf(await call(agent, 'remote__echo', { text: `after ${i}` })), `echo: after ${i}`);
    }
    assert.ok((await stats()).refreshes > before, 'the broker used the refresh token');
    assert.equal((await status()).state, 'running');
  });

  it('a revoked refresh token puts the server back in needs-sign-in', async () => {
    await fetch(`${oauth.base}/test/revoke-refresh`, { method: 'POST' });
    await new Promise((r) => setTimeout(r, 2100));
    const result = await agent.callTool({ name: 'remote__echo', arguments: { text: 'x' } }).catch((e: Error) => e);
    responses.push(String(result instanceof Error ? result.message : JSON.stringify(result)));
    const failed = result instanceof Error || (result as { isError?: boolean }).isError === true;
    assert.ok(failed, 'the call fails');
    assert.match(result instanceof Error ? result.message : textOf(result), /sign in/);
    await waitFor(async () => (await status()).state === 'needs-sign-in', 'needs-sign-in after revocation');
    assert.ok((await stats()).refused > 0);
    await signIn();
  });

  it('a tool that needs a wider scope (403 insufficient_scope) steps up through a new sign-in', async () => {
    const denied = await agent.callTool({ name: 'remote__admin-action', arguments: {} }).catch((e: Error) => e);
    responses.push(String(denied instanceof Error ? denied.message : JSON.stringify(denied)));
    assert.match(denied instanceof Error ? denied.message : textOf(denied), /more access \(scope: mcp admin\)/);
    const waiting = await waitFor(async () => {
      const s = await status();
      return s.state === 'needs-sign-in' ? s : undefined;
    }, 'needs-sign-in for the step-up');
    assert.equal(waiting.signIn?.scope, 'mcp admin');
    const begun = await call(operator, 'switchboard__begin_sign_in', { name: 'remote' });
    const { url } = begun.structuredContent as { url: string };
    assert.equal(new URL(url).searchParams.get('scope'), 'mcp admin');
    assert.match(await consent(url), /Signed in/);
    await waitFor(async () => (await status()).state === 'running', 'running after step-up', 20_000);
    assert.equal(textOf(await call(agent, 'remote__admin-action')), 'admin done');
    assert.equal(textOf(await call(agent, 'remote__whoami')), 'scopes: mcp admin');
  });

  it('switchboard login (a real CLI process) signs in and waits for it', async () => {
    await call(operator, 'switchboard__sign_out', { name: 'remote' });
    await waitFor(async () => (await status()).state === 'needs-sign-in', 'needs-sign-in after sign out');
    const cli = track(
      spawn(process.execPath, [BROKER_JS, 'login', 'remote', '--root', root, '--no-browser'], {
        env: { ...process.env, SWITCHBOARD_HOME: broker.home, SWITCHBOARD_TOKEN_STORE: 'file' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    cli.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    cli.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const url = await waitFor(() => /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(out)?.[1], 'the printed URL');
    assert.match(await consent(url), /Signed in/);
    const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
    responses.push(out);
    assert.equal(code, 0, out);
    assert.match(out, /Signed in\. 'remote' is running with 4 tools/);
    assert.equal((await status()).state, 'running');
  });

  it('switchboard logout deletes the tokens and the server waits for sign-in', async () => {
    const store = path.join(broker.home, 'oauth');
    assert.equal(fs.readdirSync(store).length, 1, 'one sign-in is stored');
    assert.equal(fs.statSync(path.join(store, fs.readdirSync(store)[0])).mode & 0o777, 0o600);
    const tokens = (await (await fetch(`${oauth.base}/test/tokens`)).json()) as { access: string[]; refresh: string[] };
    const stored = fs.readFileSync(path.join(store, fs.readdirSync(store)[0]), 'utf8');
    assert.ok(
      tokens.access.some((t) => stored.includes(t)),
      'the store holds the current token',
    );
    searchForTokens([...tokens.access, ...tokens.refresh]);
    const cli = spawn(process.execPath, [BROKER_JS, 'logout', 'remote', '--root', root], {
      env: { ...process.env, SWITCHBOARD_HOME: broker.home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    cli.stdout.on('data', (d: Buffer) => (out += d.toString()));
    assert.equal(await new Promise((resolve) => cli.once('exit', resolve)), 0);
    assert.match(out, /Signed out of 'remote'/);
    assert.deepEqual(fs.readdirSync(store), [], 'the tokens are deleted');
    const s = await waitFor(async () => {
      const now = await status();
      return now.state === 'needs-sign-in' ? now : undefined;
    }, 'needs-sign-in after logout');
    assert.equal(s.auth?.signedIn, false);
  });

  /** Every token the fixture issued appears only in the token store: not in a log, state, audit or response. */
  function searchForTokens(tokens: string[]): void {
    assert.ok(tokens.length > 4, 'the fixture issued tokens');
    const store = path.join(broker.home, 'oauth');
    const files = [broker.home, root].flatMap((dir) =>
      fs
        .readdirSync(dir, { recursive: true })
        .map((f) => path.join(dir, String(f)))
        .filter((f) => fs.statSync(f).isFile()),
    );
    assert.ok(
      files.some((f) => f.endsWith('audit.jsonl')),
      'the audit log is among the files searched',
    );
    const texts: [string, string][] = [
      ...files
        .filter((f) => !f.startsWith(store + path.sep))
        .map((f): [string, string] => [f, fs.readFileSync(f, 'utf8')]),
      ['broker stderr', broker.stderr.join('\n')],
      ['responses', responses.join('\n')],
    ];
    for (const [where, text] of texts) {
      for (const token of tokens) assert.ok(!text.includes(token), `a token appears in ${where}`);
    }
  }

  it('tokens are never in logs, state, audit or responses (after logs and state were read)', async () => {
    await call(operator, 'switchboard__tail_logs', { name: 'remote', lines: 500 });
    const state = await operator.readResource({ uri: 'switchboard://state' });
    responses.push(JSON.stringify(state));
    const tokens = (await (await fetch(`${oauth.base}/test/tokens`)).json()) as { access: string[]; refresh: string[] };
    searchForTokens([...tokens.access, ...tokens.refresh]);
  });

  it("a stdio server with 'auth' is a clear problem", async () => {
    writeRegistry(root, {
      'mcp-servers.d/local.yaml': `name: local\ncommand: node\nauth:\n  type: oauth\n`,
    });
    const problems = await waitFor(async () => {
      const r = await call(operator, 'switchboard__registry_problems');
      const list = (r.structuredContent as { problems: { text: string }[] }).problems;
      return list.find((p) => p.text.includes('local.yaml'));
    }, 'the problem');
    assert.match(problems.text, /a stdio server must not have 'auth'/);
  });
});
