#!/usr/bin/env node
// `auth: { type: vscode }` in a real VS Code (code-server + headless Chromium), driven as a person
// would: a remote server that takes a VS Code account waits in needs-sign-in; Sign In on its row in
// the Servers view makes VS Code ask for consent (its own modal, answered with Allow); the account's
// token reaches the broker and the server's tools reach an agent; the account's token changes
// (onDidChangeSessions) and the server goes on with the new one; a broker restart gets the token
// again without asking; the account signs out and the server waits again. The token must never be in
// the broker's files (state, logs, audit), the workspace or VS Code's own logs.
//
// VS Code refuses every dialog while it runs an extension test suite (`extensionTestsPath`: "refused
// to show dialog in tests"), and its consent prompt is a dialog: hence a UI script, not a suite test.
// The account provider is test/vscode/fixtures/test-accounts-provider, installed into the fresh
// extensions dir; the upstream is test/fixtures/echo.mjs over HTTP, which accepts only the Authorization
// values of a file the script rewrites.
//   node test/vscode/ui-accounts.mjs [--out <dir>] [--keep] [--verbose] [--timeout <s>]
// Exit code: 0 all steps passed, 1 a step failed, 124 timeout.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT, ensureTools, launchCodeServer, sleep } from './codeServer.mjs';
import { stopBrokers, uiScript } from './uiScript.mjs';

let cs;
let fixture;
const clients = [];
const { args, say, shot, step, fail, exit } = uiScript('ui-accounts', {
  page: () => cs?.page,
  onTimeout: () => cleanup(),
});

const PROVIDER = 'switchboard-test-accounts';
const PROVIDER_DIR = join(REPO_ROOT, 'test', 'vscode', 'fixtures', 'test-accounts-provider');
const SERVER = 'tracker';
const ACCOUNT = 'tess@example.test';
const TOKEN_1 = `sbacct-${randomBytes(12).toString('hex')}`;
const TOKEN_2 = `sbacct-${randomBytes(12).toString('hex')}`;

ensureTools({ log: null });

// The test's own files (these hold the tokens on purpose): the provider's control file, what the
// fixture accepts. Everything else is searched for the tokens at the end.
const ctl = mkdtempSync(join(tmpdir(), 'switchboard-ui-accounts-ctl-'));
const home = mkdtempSync(join(tmpdir(), 'switchboard-ui-accounts-home-'));
const wsRoot = mkdtempSync(join(tmpdir(), 'switchboard-ui-accounts-ws-'));
const folder = join(wsRoot, 'workspace');
const control = join(ctl, 'account.json');
const accepted = join(ctl, 'accepted-authorization');
const setAccount = (c) => writeFileSync(control, JSON.stringify(c));
const accept = (...tokens) => writeFileSync(accepted, tokens.map((t) => `Bearer ${t}`).join('\n') + '\n');

/** Polls `check` until it returns something truthy (bounded); the last error goes into the message. */
async function until(check, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last: ${last.message})` : ''}`);
}

function brokerRecord() {
  const dir = join(home, 'brokers');
  if (!existsSync(dir)) return undefined;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    try {
      const r = JSON.parse(readFileSync(join(dir, f), 'utf8'));
      process.kill(r.pid, 0);
      return r;
    } catch {
      /* not (yet) a live broker */
    }
  }
  return undefined;
}

async function connect(url, token, name) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  clients.push(client);
  return client;
}

const textOf = (result) => (result.content ?? []).map((c) => c.text ?? '').join('');

async function facade(client, tool, a = {}) {
  const r = await client.callTool({ name: `switchboard__${tool}`, arguments: a });
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent;
}

/** The operator's view of the broker that VS Code started (a new one after a restart). */
async function operator(notPid) {
  const record = await until(
    () => {
      const r = brokerRecord();
      return r && r.pid !== notPid && r;
    },
    'the broker VS Code starts',
    90_000,
  );
  const token = readFileSync(record.operatorTokenFile, 'utf8').trim();
  return { record, op: await connect(record.url, token, 'ui-accounts-operator') };
}

const status = (op) => facade(op, 'server_status', { name: SERVER });

/** The provider's own record of what VS Code asked it (never a token). */
function providerEvents() {
  const file = `${control}.events`;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Every file under `dir` whose bytes contain one of the tokens. */
function filesWithTokens(dir) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const file = join(e.parentPath, e.name);
    try {
      const bytes = readFileSync(file);
      if (bytes.includes(TOKEN_1) || bytes.includes(TOKEN_2)) out.push(file);
    } catch {
      /* a socket, or gone */
    }
  }
  return out;
}

async function cleanup() {
  for (const c of clients) await c.close().catch(() => {});
  await cs?.close();
  stopBrokers(home);
  fixture?.kill('SIGTERM');
  if (!args.keep) for (const d of [ctl, home, wsRoot]) rmSync(d, { recursive: true, force: true });
  else say(`kept ${ctl}, ${home}, ${wsRoot}`);
}

try {
  // ------------------------------------------------------------------ the upstream and the workspace
  accept(TOKEN_1);
  setAccount({ token: TOKEN_1, label: ACCOUNT });
  fixture = spawn(
    process.execPath,
    [join(REPO_ROOT, 'test', 'fixtures', 'echo.mjs'), '--http', '0', '--name', SERVER, '--require-auth-file', accepted],
    { stdio: ['ignore', 'pipe', args.verbose ? 'inherit' : 'ignore'] },
  );
  const url = await new Promise((res, rej) => {
    createInterface({ input: fixture.stdout }).on('line', (l) => {
      try {
        if (JSON.parse(l).listening) res(JSON.parse(l).listening);
      } catch {
        /* not the listening line */
      }
    });
    fixture.once('exit', (code) => rej(new Error(`echo.mjs exited ${code}`)));
  });
  mkdirSync(join(folder, 'mcp-servers.d'), { recursive: true });
  mkdirSync(join(folder, 'clients.d'), { recursive: true });
  writeFileSync(
    join(folder, 'mcp-servers.d', `${SERVER}.yaml`),
    `# A remote server that takes the account VS Code is signed in to (here a test provider).
name: ${SERVER}
description: Issue tracker (remote MCP server); signs in with your VS Code account
trust: trusted
transport: http
url: ${url}
auth:
  type: vscode
  provider: ${PROVIDER}
  scopes: [issues.read, issues.write]
`,
  );
  writeFileSync(join(folder, 'clients.d', 'agent.yaml'), 'name: agent\nmcp_allow: [read]\n');

  cs = await launchCodeServer({
    folder,
    trusted: true,
    extensionDevelopmentPath: REPO_ROOT,
    extensions: [PROVIDER_DIR],
    extensionEnvironment: {
      SWITCHBOARD_HOME: home,
      SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1',
      SWITCHBOARD_TEST_ACCOUNTS: control,
    },
    settings: { 'workbench.colorTheme': 'Default Dark Modern' },
    keepTemp: args.keep,
    killMatching: [home, wsRoot],
    onLog: (level, line) => {
      if (args.verbose || level === 'error') console.log(`[${level}] ${line.split('\n')[0]}`);
    },
  });
  const { page } = cs;
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Servers' }) });
  const row = pane.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: SERVER }) });
  let { record, op } = await operator();

  await step('before consent the server waits in needs-sign-in, in the state and in the Servers view', async () => {
    const s = await until(async () => {
      const st = await status(op);
      return st.state === 'needs-sign-in' && st;
    }, `${SERVER} to wait for a sign-in`);
    if (
      JSON.stringify(s.account) !==
      JSON.stringify({ provider: PROVIDER, scopes: ['issues.read', 'issues.write'], supplied: false })
    )
      throw new Error(`account: ${JSON.stringify(s.account)}`);
    if (!/switchboard-test-accounts account \(scopes issues\.read, issues\.write\) of VS Code/.test(s.lastError ?? ''))
      throw new Error(`lastError: ${s.lastError}`);
    // The extension's silent look-up at connect found no session (and so asked nobody).
    await until(() => providerEvents().some((e) => e.event === 'getSessions' && e.found === 0), 'a silent look-up');
    if (providerEvents().some((e) => e.event === 'createSession'))
      throw new Error('a session was made without Sign In');

    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const tab = page.locator('.activitybar .action-item a[aria-label^="Switchboard"]').first();
    await tab.waitFor({ timeout: 60_000 });
    // The view's badge says why the server wants attention.
    const badge = (await tab.getAttribute('aria-label')) ?? '';
    if (!badge.includes(`${SERVER}: needs sign-in`)) throw new Error(`the view's badge says: ${badge}`);
    await tab.click({ force: true }); // the badge lies over the icon
    await row.filter({ hasText: /needs sign-in/ }).waitFor({ timeout: 60_000 });
    await row.locator('.label-name').hover();
    await row.locator('.action-label[aria-label^="Sign In"]').waitFor({ timeout: 10_000 });
  });

  await step('a notification offers Sign In', async () => {
    const toast = page.locator('.notification-list-item', {
      hasText: `'${SERVER}' needs you to sign in with your ${PROVIDER} account.`,
    });
    if (!(await toast.isVisible())) {
      await page.keyboard.press('F1');
      await page.keyboard.type('Notifications: Show Notifications');
      await page.keyboard.press('Enter');
    }
    await toast.first().waitFor({ timeout: 15_000 });
    await toast.first().locator('.monaco-button', { hasText: 'Sign In' }).waitFor({ timeout: 5000 });
    await row.locator('.label-name').hover();
    await row.locator('.action-label[aria-label^="Sign In"]').waitFor({ timeout: 10_000 });
    await shot('servers-account-sign-in');
    await page.keyboard.press('Escape');
  });

  await step(
    "Sign In on the row: VS Code's consent prompt, Allow, the session's token reaches the broker",
    async () => {
      await row.locator('.action-label[aria-label^="Sign In"]').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      const message = (await dialog.textContent()) ?? '';
      if (!/MCP Switchboard.*wants to sign in using Switchboard Test Accounts/.test(message))
        throw new Error(`the prompt says: ${message}`);
      await shot('account-consent');
      await dialog.locator('.monaco-button', { hasText: 'Allow' }).click();
      const s = await until(async () => {
        const st = await status(op);
        return st.state === 'running' && st;
      }, `${SERVER} to run with the account's token`);
      const want = { provider: PROVIDER, scopes: ['issues.read', 'issues.write'], supplied: true, account: ACCOUNT };
      if (JSON.stringify(s.account) !== JSON.stringify(want)) throw new Error(`account: ${JSON.stringify(s.account)}`);
      const made = providerEvents().filter((e) => e.event === 'createSession');
      if (made.length !== 1 || made[0].scopes.join(' ') !== 'issues.read issues.write')
        throw new Error(`createSession calls: ${JSON.stringify(made)}`);
      await row.filter({ hasText: /running/ }).waitFor({ timeout: 30_000 });
    },
  );

  let agent;
  await step("an agent lists the server's tools and calls one (the fixture accepts only the token)", async () => {
    const conn = await facade(op, 'client_connection', { name: 'agent' });
    agent = await connect(record.url, readFileSync(conn.tokenFile, 'utf8').trim(), 'agent');
    const { tools } = await agent.listTools();
    const names = tools.map((t) => t.name);
    for (const n of [`${SERVER}__echo`, `${SERVER}__credential`])
      if (!names.includes(n)) throw new Error(`${n} is not listed: ${names.join(', ')}`);
    const echo = textOf(await agent.callTool({ name: `${SERVER}__echo`, arguments: { text: 'signed in' } }));
    if (echo !== 'echo: signed in') throw new Error(`echo said: ${echo}`);
    const cred = textOf(await agent.callTool({ name: `${SERVER}__credential`, arguments: {} }));
    if (cred !== 'line 1') throw new Error(`the fixture matched: ${cred}`);
  });

  await step('the account gets a new token (onDidChangeSessions): the broker uses it, no restart', async () => {
    const before = await status(op);
    accept(TOKEN_1, TOKEN_2); // both, until the broker has the new one
    setAccount({ token: TOKEN_2, label: ACCOUNT });
    await until(() => providerEvents().some((e) => e.event === 'tokenChanged'), 'the provider to change the token');
    await until(
      async () => textOf(await agent.callTool({ name: `${SERVER}__credential`, arguments: {} })) === 'line 2',
      'the broker to send the new token',
    );
    accept(TOKEN_2); // the old token is refused from now on
    const echo = textOf(await agent.callTool({ name: `${SERVER}__echo`, arguments: { text: 'rotated' } }));
    if (echo !== 'echo: rotated') throw new Error(`echo said: ${echo}`);
    const after = await status(op);
    if (after.state !== 'running' || (after.restarts ?? 0) !== (before.restarts ?? 0))
      throw new Error(`state ${after.state}, restarts ${before.restarts} → ${after.restarts}`);
  });

  await step('after a broker restart the extension hands the token over again, without asking', async () => {
    const pid = record.pid;
    await page.keyboard.press('F1');
    await page.keyboard.type('Switchboard: Restart Broker');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Restart Broker' }).first().waitFor();
    await page.keyboard.press('Enter');
    ({ record, op } = await operator(pid));
    const s = await until(
      async () => {
        const st = await status(op);
        return st.state === 'running' && st.account?.supplied && st;
      },
      `${SERVER} to run again on the new broker`,
      60_000,
    );
    if (s.account.account !== ACCOUNT) throw new Error(`account: ${JSON.stringify(s.account)}`);
    if (providerEvents().filter((e) => e.event === 'createSession').length !== 1)
      throw new Error('a second sign-in was asked for');
    if (await page.locator('.monaco-dialog-box').isVisible()) throw new Error('a dialog is open');
    const conn = await facade(op, 'client_connection', { name: 'agent' });
    agent = await connect(record.url, readFileSync(conn.tokenFile, 'utf8').trim(), 'agent');
    const cred = textOf(await agent.callTool({ name: `${SERVER}__credential`, arguments: {} }));
    if (cred !== 'line 1') throw new Error(`the fixture matched: ${cred}`); // the file now holds TOKEN_2 alone
  });

  await step('the account signs out: the token is withdrawn and the server waits again', async () => {
    setAccount({ signedOut: true });
    const s = await until(async () => {
      const st = await status(op);
      return st.state === 'needs-sign-in' && st;
    }, `${SERVER} to wait again`);
    if (s.account.supplied !== false) throw new Error(`account: ${JSON.stringify(s.account)}`);
    await row.filter({ hasText: /needs sign-in/ }).waitFor({ timeout: 30_000 });
    const r = await agent.callTool({ name: `${SERVER}__echo`, arguments: { text: 'x' } }).catch((e) => e);
    if (!(r instanceof Error) && !r.isError) throw new Error(`a call still went through: ${textOf(r)}`);
  });

  await step("no token in the broker's files, the workspace, or VS Code's logs and storage", async () => {
    const leaked = [home, wsRoot, cs.tmp].flatMap(filesWithTokens);
    if (leaked.length) throw new Error(`a token is in: ${leaked.join(', ')}`);
    // The search is not vacuous: it finds the tokens where the test put them, and the files it
    // searched include the broker's log and audit log and the extension's output.
    if (!filesWithTokens(ctl).includes(accepted)) throw new Error("the search misses the token in the test's own file");
    const searched = [home, cs.tmp].flatMap((d) => readdirSync(d, { recursive: true }).map(String));
    for (const want of [/broker\.log$/, /audit\.jsonl$/, /Switchboard\.log$/])
      if (!searched.some((f) => want.test(f))) throw new Error(`no file matching ${want} was searched`);
  });
} catch (e) {
  fail(e);
} finally {
  await cleanup();
}
exit();
