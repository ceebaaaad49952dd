// `auth: { type: vscode }` in a real VS Code (issue 18): the server waits in needs-sign-in; Sign In asks
// VS Code for a session of the account provider (its consent dialog answered by the runner), and the
// token reaches the server; a changed session's token is handed over without a restart, and a removed
// session withdraws it. The provider is test/vscode/fixtures/test-auth-provider, a second development
// extension: VS Code accepts a provider only from the extension whose manifest declares it.
import * as assert from 'assert';
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as readline from 'readline';
import * as vscode from 'vscode';
import { api, connectedEntry, ECHO_FIXTURE, NODE, REPO, waitFor } from './switchboard.helpers';

const run = <T>(name: string, ...args: unknown[]): Thenable<T> =>
  vscode.commands.executeCommand<T>(`switchboard.${name}`, ...args);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function screenshot(name: string): Promise<void> {
  const file = path.join(REPO, 'docs', 'screenshots', name);
  const before = fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0;
  console.log(`[screenshot] docs/screenshots/${name}`);
  const deadline = Date.now() + 20_000;
  while ((fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0) === before) {
    assert.ok(Date.now() < deadline, `the runner did not write ${name}`);
    await sleep(200);
  }
}

function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  if (!fs.existsSync(dir)) return found;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) found.push(...filesContaining(p, needle));
    else if (e.isFile() && fs.readFileSync(p).includes(needle)) found.push(p);
  }
  return found;
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
    this.timeout(60_000);
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
    await screenshot('account-sign-in.png');

    // Sign In: VS Code asks the person to allow the account; the runner clicks Allow.
    const signingIn = run<{ account?: { supplied: boolean; account?: string } }>('signIn', 'acct');
    console.log('[click] Allow');
    const signedIn = await signingIn;
    assert.strictEqual(signedIn?.account?.supplied, true);
    assert.strictEqual(signedIn.account.account, 'tester@example.test');
    await waitFor(a, () => entry.server('acct')?.state === 'running', 'acct to run with the account token');
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
