// `auth: { type: vscode }` in a real VS Code (issue 18): the server waits in needs-sign-in; signing in
// to the account provider through VS Code's Accounts menu hands the token to the broker, and Sign In on
// the row gets the same session; a changed session's token is handed over without a restart, and a removed
// session withdraws it. The provider is test/vscode/fixtures/test-auth-provider, a second extension
// the runner installs: VS Code accepts a provider only from the extension whose manifest declares it.
import * as assert from 'assert';
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as readline from 'readline';
import * as vscode from 'vscode';
import {
  api,
  connectedEntry,
  ECHO_FIXTURE,
  filesContaining,
  NODE,
  run,
  screenshot,
  sleep,
  useAbsoluteEcho,
  waitFor,
} from './switchboard.helpers';

/** The id of a workbench command that appears once VS Code has registered it (polled: no event says so). */
async function waitForCommand(prefix: string, contains: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = (await vscode.commands.getCommands(false)).find((c) => c.startsWith(prefix) && c.includes(contains));
    if (found) return found;
    if (Date.now() > deadline) {
      const near = (await vscode.commands.getCommands(false)).filter((c) => /switchboard-test|signin|access/i.test(c));
      assert.fail(`no command ${prefix}…${contains} (VS Code's sign-in request) appeared; near: ${near.join(', ')}`);
    }
    await sleep(250);
  }
}

const textOf = (r: unknown): string =>
  ((r as { content?: { type: string; text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('');

describe('a VS Code account for a remote server (issue 18)', function () {
  this.timeout(120_000);
  let fixture: ChildProcess;
  let url: string;
  let authFile: string;
  let tmp: string;
  const TOKEN_1 = `sb-account-one-${process.pid}`;
  const TOKEN_2 = `sb-account-two-${process.pid}`;

  before(async function () {
    this.timeout(90_000);
    await useAbsoluteEcho(await api()); // the sample's echo, as a user sees it in the screenshot
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-account-'));
    authFile = path.join(tmp, 'accepted');
    fs.writeFileSync(authFile, `Bearer ${TOKEN_1}`);
    // The remote server: the echo fixture over Streamable HTTP, accepting exactly the header in authFile.
    fixture = spawn(NODE, [ECHO_FIXTURE, '--http', '0', '--require-auth-file', authFile, '--name', 'acct'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: fixture.stdout! }).on('line', (line) => {
        try {
          const m = JSON.parse(line) as { listening?: string };
          if (m.listening) resolve(m.listening);
        } catch {
          /* not the listening line */
        }
      });
      fixture.once('exit', (code) => reject(new Error(`echo.mjs exited ${code}`)));
    });
  });

  after(() => {
    fixture?.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('has the test account provider installed', () => {
    const ids = vscode.extensions.all.map((e) => e.id).filter((id) => !id.startsWith('vscode.'));
    assert.ok(
      vscode.extensions.getExtension('switchboard-tests.test-auth-provider'),
      `test/vscode/fixtures/test-auth-provider is not installed; extensions: ${ids.join(', ')}`,
    );
  });

  it('Sign In gets the session; a changed token is handed over; a removed session withdraws it', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const file = path.join(entry.root, 'mcp-servers.d', 'acct.yaml');
    fs.writeFileSync(
      file,
      `name: acct\ntrust: trusted\ntransport: http\nurl: ${url}\n` +
        `auth:\n  type: vscode\n  provider: switchboard-test\n  scopes: [repo]\n`,
    );
    const waiting = await waitFor(
      a,
      () => entry.server('acct')?.state === 'needs-sign-in' && entry.server('acct'),
      'acct to wait for its account',
    );
    assert.deepStrictEqual(waiting.account, { provider: 'switchboard-test', scopes: ['repo'], supplied: false });
    await vscode.commands.executeCommand('switchboard.servers.focus');
    await sleep(1500); // the tree renders the new row after the state change
    await screenshot('account-sign-in.png');

    // The extension asked silently when the server appeared; VS Code, having no session to give it, put a
    // sign-in request in its Accounts menu. Choosing it there (what the person does) signs in without a
    // dialog, grants the extension the account, and fires onDidChangeSessions: the token is handed over.
    // (VS Code's own consent dialog, which Sign In meets first otherwise, is refused under extension tests.)
    const request = await waitForCommand('switchboard-test:', ':signIn');
    await vscode.commands.executeCommand('switchboardTest.setAccount', TOKEN_1); // what the next sign-in issues
    await vscode.commands.executeCommand(request);
    await waitFor(a, () => entry.server('acct')?.state === 'running', 'acct to run with the account token');
    assert.deepStrictEqual(entry.server('acct')?.account, {
      provider: 'switchboard-test',
      scopes: ['repo'],
      supplied: true,
      account: 'tester@example.test',
    });
    // Sign In on the row now gets the same session from VS Code and hands it over again.
    const signedIn = await run<{ account?: { supplied: boolean; account?: string } }>('signIn', 'acct');
    assert.strictEqual(signedIn?.account?.supplied, true);
    const first = await entry.conn.request('tools/call', { name: 'acct__echo', arguments: { text: 'one' } });
    assert.strictEqual(textOf(first), 'echo: one');

    // The provider refreshes the session's token: the extension hands the new one over (no restart).
    const pid = entry.state!.broker.pid;
    await vscode.commands.executeCommand('switchboardTest.setAccount', TOKEN_2);
    fs.writeFileSync(authFile, `Bearer ${TOKEN_2}`);
    const deadline = Date.now() + 30_000;
    let second = '';
    while (second !== 'echo: two') {
      assert.ok(Date.now() < deadline, `acct never answered with the new token (last: ${second})`);
      second = await entry.conn
        .request('tools/call', { name: 'acct__echo', arguments: { text: 'two' } })
        .then(textOf, (e: Error) => e.message);
      if (second !== 'echo: two') await sleep(300);
    }
    assert.strictEqual(entry.state!.broker.pid, pid, 'the same broker, no restart');

    // The session is removed: the token is withdrawn and the server waits for a sign-in again.
    await vscode.commands.executeCommand('switchboardTest.setAccount', null);
    await waitFor(
      a,
      () => entry.server('acct')?.state === 'needs-sign-in' && entry.server('acct')?.account?.supplied === false,
      'acct to wait for its account again',
    );

    for (const token of [TOKEN_1, TOKEN_2]) {
      assert.deepStrictEqual(filesContaining(entry.root, token), [], `${token} is nowhere in the workspace`);
      const home = process.env.SWITCHBOARD_HOME;
      if (home) assert.deepStrictEqual(filesContaining(home, token), [], `${token} is nowhere in SWITCHBOARD_HOME`);
    }
    fs.rmSync(file);
    await waitFor(a, () => !entry.server('acct'), 'acct to leave the registry');
  });
});
