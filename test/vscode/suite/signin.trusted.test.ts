// Sign in from the Servers view, inside a real VS Code: a remote server with `auth` waits in
// needs-sign-in with Sign In as its inline action; the Sign In command starts the broker's sign-in
// and the test completes the browser step over HTTP against the loopback OAuth fixture.
import * as assert from 'assert';
import { spawn, type ChildProcess } from 'child_process';
import * as path from 'path';
import * as readline from 'readline';
import * as vscode from 'vscode';
import type { ServerStatus } from '../../../src/broker/control/controlApi';
import type { ServerNode } from '../../../src/extension/servers';
import { api, connectedEntry, NODE, REPO, waitFor } from './switchboard.helpers';

const run = <T = unknown>(id: string, ...args: unknown[]): Promise<T> =>
  vscode.commands.executeCommand<T>(`switchboard.${id}`, ...args) as Promise<T>;

/** The browser: authorization URL → consent page (allow) → redirect to the broker's loopback listener. */
async function consent(authorizationUrl: string): Promise<string> {
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  assert.strictEqual(authorize.status, 302);
  const page = new URL(authorize.headers.get('location')!, authorizationUrl);
  page.searchParams.set('decision', 'allow');
  const answered = await fetch(page, { redirect: 'manual' });
  assert.strictEqual(answered.status, 302);
  return (await fetch(answered.headers.get('location')!)).text();
}

describe('sign in to a remote server (OAuth)', function () {
  this.timeout(90_000);
  let fixture: ChildProcess | undefined;

  after(async () => {
    fixture?.kill();
    await run('removeServer', 'signin', { skipConfirmation: true }).catch(() => undefined);
  });

  it('Sign In on a needs-sign-in server completes against the OAuth fixture and its tools appear', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    fixture = spawn(NODE, [path.join(REPO, 'test', 'fixtures', 'oauth-server.mjs'), '--token-ttl', '30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const { url } = await new Promise<{ url: string }>((resolve) =>
      readline.createInterface({ input: fixture!.stdout! }).once('line', (l) => resolve(JSON.parse(l))),
    );
    await run('addServer', {
      definition: {
        name: 'signin',
        trust: 'trusted',
        transport: 'http',
        url,
        auth: { type: 'oauth', scopes: ['mcp'] },
      },
    });
    await waitFor(a, () => entry.server('signin')?.state === 'needs-sign-in', 'signin to need a sign-in');
    const node = (a.servers.getChildren() as ServerNode[]).find(
      (n) => n.kind === 'server' && n.status.name === 'signin',
    )!;
    const item = a.servers.getTreeItem(node);
    assert.match(String(item.contextValue), /\bneedsSignIn\b/, 'the Sign In action is offered on the node');
    assert.match(String(item.description), /needs sign-in/);

    const begun = await run<{ url: string }>('signIn', 'signin', { openBrowser: false });
    assert.ok(begun?.url, 'Sign In returned the authorization URL');
    assert.strictEqual(new URL(begun.url).searchParams.get('code_challenge_method'), 'S256');
    assert.match(await consent(begun.url), /Signed in/);

    // 'running' can reach the view a moment before the server's lists do: wait for both.
    await waitFor(
      a,
      () => entry.server('signin')?.state === 'running' && entry.server('signin')!.tools.length > 0,
      'signin to run with its tools after the sign-in',
    );
    const s = entry.server('signin') as ServerStatus;
    assert.strictEqual(s.auth?.signedIn, true);
    assert.ok(
      s.tools.some((t) => t.name === 'whoami'),
      `tools: ${s.tools.map((t) => t.name).join(', ')}`,
    );

    await run('signOut', 'signin', { skipConfirmation: true });
    await waitFor(a, () => entry.server('signin')?.state === 'needs-sign-in', 'needs-sign-in after Sign Out');
  });
});
