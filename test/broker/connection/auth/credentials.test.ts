// Entered secrets (${input:NAME}) and VS Code account tokens, end to end with real processes: the
// broker, a real operator client handing values over, real stdio and HTTP upstreams that check
// them, and the `switchboard secret` CLI. Values must end up only where they belong.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
  connect,
  facade,
  fixture,
  fixtureServer,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  stopProcess,
  tempDir,
  textOf,
  track,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../../helpers/broker';

const SECRET = 'sk-input-7Qd9vXw2LmZr';
const ACCOUNT_TOKEN = 'gho_account_R8t1Kp4Nn0Yb';

/** Every file under `dir` whose bytes contain `value`. */
function filesContaining(dir: string, value: string): string[] {
  const out: string[] = [];
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file).includes(value)) out.push(file);
  }
  return out;
}

async function httpFixture(authFile: string): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = track(
    spawn(process.execPath, [fixture('echo.mjs'), '--http', '0', '--require-auth-file', authFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const m = JSON.parse(line) as { listening?: string };
        if (m.listening) resolve(m.listening);
      } catch {
        /* not the listening line */
      }
    });
    proc.once('exit', (code) => reject(new Error(`echo.mjs exited ${code}`)));
  });
  return { url, stop: () => stopProcess(proc) };
}

const state = (op: Client, name: string): Promise<any> => facade(op, 'server_status', { name });

describe('credentials: entered secrets and VS Code accounts', function () {
  this.timeout(150_000);
  let broker: BrokerProcess | undefined;
  let op: Client | undefined;
  after(async () => {
    await op?.close().catch(() => undefined);
    await killStarted();
    removeTempDirs();
  });

  it('${input:NAME}: waits in needs-input, the operator hands it over, only the granted server gets it', async () => {
    const root = tempDir('sb-cred-');
    const home = tempDir('sb-cred-home-');
    const authFile = path.join(tempDir('sb-cred-auth-'), 'expected');
    fs.writeFileSync(authFile, `Bearer ${SECRET}`);
    const remote = await httpFixture(authFile);
    writeRegistry(root, {
      'mcp-servers.d/granted.yaml': fixtureServer(
        'granted',
        'leaker.mjs',
        ['--print-env', 'API_KEY'],
        // Its job here is showing what it got: results not redacted (guardrails, redactedResults.test).
        'grants: [secrets]\nredactResults: false\n' +
          'env:\n  API_KEY: ${input:demo-key}\ninputs:\n  demo-key:\n    description: The demo API key\n',
      ),
      'mcp-servers.d/plain.yaml': fixtureServer('plain', 'leaker.mjs', [], 'env:\n  API_KEY: ${input:demo-key}\n'),
      'mcp-servers.d/remote.yaml':
        `name: remote\ntrust: trusted\ntransport: http\nurl: ${remote.url}\ngrants: [secrets]\n` +
        'headers:\n  Authorization: Bearer ${input:demo-key}\n',
      'clients.d/agent.yaml': 'mcp_allow: [read, write]\n',
    });
    broker = await startBrokerProcess({ root, home, env: { SWITCHBOARD_TOKEN_STORE: 'file' } });
    op = await connect(broker.url, broker.token, 'operator-test');
    for (const name of ['granted', 'remote']) {
      const s = await waitFor(async () => {
        const st = await state(op!, name);
        return st.state === 'needs-input' && st;
      }, `${name} to wait for its input`);
      assert.match(s.lastError, /needs input demo-key: enter it in VS Code .* or run: switchboard secret set demo-key/);
      assert.deepEqual(s.inputs, [
        { name: 'demo-key', password: true, ...(name === 'granted' ? { description: 'The demo API key' } : {}) },
      ]);
    }
    const plain = await waitFor(async () => {
      const st = await state(op!, 'plain');
      return st.state === 'running' && st;
    }, 'plain to run (its input is withheld)');
    assert.deepEqual(plain.withheldEnv, ['input:demo-key']);

    // An agent (not the operator) cannot hand a value over.
    const conn = await facade(op, 'client_connection', { name: 'agent' });
    const agent = await connect(broker.url, fs.readFileSync(conn.tokenFile, 'utf8').trim(), 'agent');
    await assert.rejects(facade(agent, 'set_input', { name: 'demo-key', value: 'x' }), /operator only/);

    const set = await facade(op, 'set_input', { name: 'demo-key', value: SECRET });
    assert.deepEqual(set, { name: 'demo-key', source: 'editor', servers: ['granted', 'plain', 'remote'] });
    // Every server that uses the input restarts with it, 'plain' too (which still gets no value).
    for (const name of ['granted', 'plain', 'remote'])
      await waitFor(async () => (await state(op!, name)).state === 'running', `${name} to run`, 20_000);
    const got = await op.callTool({ name: 'granted__env', arguments: { name: 'API_KEY' } });
    assert.equal(textOf(got), SECRET);
    const withheld = await op.callTool({ name: 'plain__env', arguments: { name: 'API_KEY' } });
    assert.notEqual(textOf(withheld), SECRET);
    const echoed = await op.callTool({ name: 'remote__echo', arguments: { text: 'hi' } });
    assert.equal(textOf(echoed), 'echo: hi');

    // The leaker printed the value to stderr: the log shows it redacted.
    const logs = await facade(op, 'tail_logs', { name: 'granted', lines: 50 });
    const logText = JSON.stringify(logs);
    assert.ok(!logText.includes(SECRET), 'secret in the logs');
    assert.match(logText, /API_KEY=\[redacted\]/);
    const whole = JSON.stringify(await facade(op, 'list_servers'));
    assert.ok(!whole.includes(SECRET), 'secret in the state');

    await agent.close();
    await op.close();
    op = undefined;
    await broker.stop();
    // Held in memory only: nothing under the home, the workspace or the broker's output has it.
    assert.deepEqual(filesContaining(home, SECRET), []);
    assert.deepEqual(filesContaining(root, SECRET), []);
    assert.ok(!broker.stderr.join('\n').includes(SECRET), 'secret in the broker stderr');
    await remote.stop();
  });

  it('switchboard secret set|list|unset: a real CLI process, stdin not argv; a running broker starts the waiting server', async () => {
    const root = tempDir('sb-cli-');
    const home = tempDir('sb-cli-home-');
    const env = { ...process.env, SWITCHBOARD_HOME: home, SWITCHBOARD_TOKEN_STORE: 'file' };
    writeRegistry(root, {
      'mcp-servers.d/granted.yaml': fixtureServer(
        'granted',
        'leaker.mjs',
        [],
        'grants: [secrets]\nredactResults: false\nenv:\n  API_KEY: ${input:cli-key}\n',
      ),
    });
    broker = await startBrokerProcess({ root, home, env: { SWITCHBOARD_TOKEN_STORE: 'file' } });
    op = await connect(broker.url, broker.token, 'operator-test');
    await waitFor(async () => (await state(op!, 'granted')).state === 'needs-input', 'granted to wait');
    const cli = (args: string[], input?: string) =>
      spawnSync(process.execPath, [BROKER_JS, 'secret', ...args, '--root', root], { env, input, encoding: 'utf8' });
    const set = cli(['set', 'cli-key'], `${SECRET}\n`);
    assert.equal(set.status, 0, set.stderr);
    assert.match(set.stdout, /Stored cli-key \(private file\)/);
    assert.match(set.stdout, /Servers using it: granted/);
    await waitFor(async () => (await state(op!, 'granted')).state === 'running', 'granted to run', 20_000);
    assert.equal(textOf(await op.callTool({ name: 'granted__env', arguments: { name: 'API_KEY' } })), SECRET);
    assert.equal((await state(op, 'granted')).inputs[0].source, 'store');
    const list = cli(['list']);
    assert.equal(list.stdout.trim(), 'cli-key');
    // Only in the store: one 0600 file under <home>/secrets.
    const holders = filesContaining(home, SECRET);
    assert.equal(holders.length, 1);
    assert.equal(path.dirname(holders[0]), path.join(home, 'secrets'));
    assert.equal(fs.statSync(holders[0]).mode & 0o777, 0o600);
    assert.deepEqual(filesContaining(root, SECRET), []);

    // A broker restart reads it from the store.
    await op.close();
    await broker.stop();
    broker = await startBrokerProcess({ root, home, env: { SWITCHBOARD_TOKEN_STORE: 'file' } });
    op = await connect(broker.url, broker.token, 'operator-test');
    await waitFor(
      async () => (await state(op!, 'granted')).state === 'running',
      'granted to run after restart',
      20_000,
    );
    assert.equal(textOf(await op.callTool({ name: 'granted__env', arguments: { name: 'API_KEY' } })), SECRET);

    const unset = cli(['unset', 'cli-key']);
    assert.equal(unset.status, 0, unset.stderr);
    assert.match(unset.stdout, /Removed cli-key/);
    await waitFor(async () => (await state(op!, 'granted')).state === 'needs-input', 'granted to wait again', 20_000);
    assert.deepEqual(filesContaining(home, SECRET), []);
    assert.equal(cli(['set', 'bad name'], 'x').status, 1);
    await op.close();
    op = undefined;
    await broker.stop();
  });

  it('auth: vscode: waits for the editor, the token goes as Bearer to that server only, withdrawn → waits again', async () => {
    const root = tempDir('sb-acct-');
    const home = tempDir('sb-acct-home-');
    const authFile = path.join(tempDir('sb-acct-auth-'), 'expected');
    fs.writeFileSync(authFile, `Bearer ${ACCOUNT_TOKEN}`);
    const remote = await httpFixture(authFile);
    const other = await httpFixture(authFile);
    writeRegistry(root, {
      'mcp-servers.d/gh.yaml':
        `name: gh\ntrust: trusted\ntransport: http\nurl: ${remote.url}\n` +
        'auth:\n  type: vscode\n  provider: switchboard-test\n  scopes: [repo]\n',
      'mcp-servers.d/other.yaml': `name: other\ntrust: trusted\ntransport: http\nurl: ${other.url}\n`,
    });
    broker = await startBrokerProcess({ root, home });
    op = await connect(broker.url, broker.token, 'operator-test');
    const waiting = await waitFor(async () => {
      const st = await state(op!, 'gh');
      return st.state === 'needs-sign-in' && st;
    }, 'gh to wait for a token');
    // No VS Code window is connected to this broker: the message says so.
    assert.match(
      waiting.lastError,
      /a switchboard-test account \(scopes repo\) of VS Code, and no VS Code window is connected/,
    );
    assert.deepEqual(waiting.account, { provider: 'switchboard-test', scopes: ['repo'], supplied: false });
    await assert.rejects(
      facade(op, 'set_account_token', { name: 'gh', provider: 'switchboard-test', scopes: ['admin'], token: 'x' }),
      /asks for a switchboard-test account \(scopes repo\)/,
    );
    const given = { name: 'gh', provider: 'switchboard-test', scopes: ['repo'] };
    await facade(op, 'set_account_token', { ...given, token: ACCOUNT_TOKEN, account: 'octocat' });
    await waitFor(async () => (await state(op!, 'gh')).state === 'running', 'gh to run', 20_000);
    assert.equal(textOf(await op.callTool({ name: 'gh__echo', arguments: { text: 'ok' } })), 'echo: ok');
    const s = await state(op, 'gh');
    assert.deepEqual(s.account, { provider: 'switchboard-test', scopes: ['repo'], supplied: true, account: 'octocat' });
    // The other server never got the token: the fixture refuses it without the header.
    const o = await waitFor(async () => {
      const st = await state(op!, 'other');
      return ['failed', 'backoff'].includes(st.state) && st;
    }, 'other to fail without a token');
    assert.match(o.lastError ?? '', /401|Unauthorized/);
    assert.ok(!JSON.stringify(await facade(op, 'list_servers')).includes(ACCOUNT_TOKEN));

    await facade(op, 'set_account_token', given);
    await waitFor(async () => (await state(op!, 'gh')).state === 'needs-sign-in', 'gh to wait again', 20_000);
    await op.close();
    op = undefined;
    await broker.stop();
    assert.deepEqual(filesContaining(home, ACCOUNT_TOKEN), []);
    assert.deepEqual(filesContaining(root, ACCOUNT_TOKEN), []);
    assert.ok(!broker.stderr.join('\n').includes(ACCOUNT_TOKEN));
    await remote.stop();
    await other.stop();
  });
});
