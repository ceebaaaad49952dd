// Security round 2, approvals that bind what runs: each finding's attack reproduced against a real
// broker and refused. A write client edits an approved server's cwd / env values, the env file's
// contents change under it, an approval arrives with a stale hash, an agent-proposed server reads
// an env file outside the registry root, and a cloned workspace declares its own servers trusted.
// Every attack's payload writes a marker file when it runs: no marker, no code ran.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { parse as parseYaml } from 'yaml';
import {
  BROKER_JS,
  connect,
  REPO,
  removeTempDirs,
  stopProcess,
  tempDir,
  track,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import {
  FAULT_FIXTURES,
  descendants,
  facade,
  faultServer,
  noteUpstreams,
  notePid,
  report,
  running,
  startBroker,
  status,
  type Json,
} from './lib';

const BARE = path.join(FAULT_FIXTURES, 'bare.mjs');
/**
 * good/server.mjs imports bare.mjs from this repository: where the repository is a clone under /tmp or
 * HOME (which the sandbox hides), the server needs a read grant on it, as a real one would.
 */
const SEES_FIXTURES = `grants: [filesystem]\nfilesystem: { read: [${JSON.stringify(REPO)}] }\n`;

/** A community server running `node <args>` (the tier every agent-written server gets). */
function communityServer(name: string, args: string[], more = ''): string {
  return (
    `name: ${name}\ntrust: community\ncommand: ${JSON.stringify(process.execPath)}\n` +
    `args: [${args.map((a) => JSON.stringify(a)).join(', ')}]\n${more}`
  );
}

/** A script that leaves `marker` behind when it runs, then serves MCP like bare.mjs. */
function payload(file: string, marker: string): void {
  fs.writeFileSync(file, `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`);
}

/** Every command line the broker's process tree runs now. */
function commandLines(broker: BrokerProcess): string[] {
  return descendants(broker.proc.pid!).map((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      return '';
    }
  });
}

async function approve(operator: Client, name: string): Promise<Json> {
  const shown = await status(operator, name);
  return facade(operator, 'approve_server', { name, hash: shown.approvalHash });
}

describe('faults: security — approvals bind what runs', function () {
  this.timeout(180_000);
  let root: string;
  let outside: string;
  let markers: string;
  let broker: BrokerProcess;
  let operator: Client;
  let writer: Client;

  before(async () => {
    const base = tempDir('sb-fault-trust-');
    root = path.join(base, 'ws');
    outside = path.join(base, 'other-project');
    markers = path.join(base, 'markers');
    for (const dir of [root, outside, markers, path.join(root, 'good'), path.join(root, 'evil')])
      fs.mkdirSync(dir, { recursive: true });
    // Same relative script in two directories: which one runs is decided by cwd alone.
    fs.writeFileSync(path.join(root, 'good', 'server.mjs'), `await import(${JSON.stringify(BARE)});\n`);
    fs.writeFileSync(
      path.join(root, 'evil', 'server.mjs'),
      `import * as fs from 'node:fs';\nfs.writeFileSync(${JSON.stringify(path.join(markers, 'cwd'))}, 'ran');\n` +
        `await import(${JSON.stringify(BARE)});\n`,
    );
    payload(path.join(root, 'evil-env.cjs'), path.join(markers, 'env-value'));
    payload(path.join(root, 'evil-envfile.cjs'), path.join(markers, 'env-file'));
    fs.writeFileSync(path.join(root, 'settings.env'), 'MODE=quiet\n');
    fs.writeFileSync(path.join(outside, 'creds'), 'aws_secret_access_key=canary-other-project\n');
    writeRegistry(root, {
      'mcp-servers.d/bycwd.yaml': communityServer('bycwd', ['server.mjs'], `cwd: good\n${SEES_FIXTURES}`),
      'mcp-servers.d/byenv.yaml': communityServer('byenv', [BARE], 'env:\n  NODE_OPTIONS: --max-old-space-size=64\n'),
      'mcp-servers.d/byenvfile.yaml': communityServer(
        'byenvfile',
        [BARE],
        'envFile: settings.env\ngrants: [secrets]\n',
      ),
      'mcp-servers.d/stale.yaml': communityServer('stale', ['server.mjs'], `cwd: good\n${SEES_FIXTURES}`),
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
    });
    broker = await startBroker({ root });
    operator = await connect(broker.url, broker.token, 'operator');
    const writerToken = fs
      .readFileSync((await facade(operator, 'client_connection', { name: 'writer' })).tokenFile, 'utf8')
      .trim();
    writer = await connect(broker.url, writerToken, 'writer');
    for (const name of ['bycwd', 'byenv', 'byenvfile']) {
      const approved = await approve(operator, name);
      assert.equal(approved.state, 'running', `${name} runs once approved`);
    }
    noteUpstreams(broker);
  });

  after(async () => {
    await writer?.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  /** The writer re-upserts an approved server with one field changed, as the finding did. */
  async function edit(name: string, change: (def: Json) => Json): Promise<Json> {
    const file = path.join(root, 'mcp-servers.d', `${name}.yaml`);
    const current = parseYaml(fs.readFileSync(file, 'utf8')) as Json;
    return facade(writer, 'upsert_server', { definition: change(current) });
  }

  it("a write client changing an approved server's cwd makes it unapproved, and the other directory's code never runs", async () => {
    const written = await edit('bycwd', (d) => ({ ...d, cwd: 'evil' }));
    assert.equal(written.status.state, 'awaiting-approval');
    assert.equal(written.status.approval, 'changed');
    assert.match(written.status.lastError, /working directory changed since it was approved/);
    assert.ok(!fs.existsSync(path.join(markers, 'cwd')), 'the code in evil/ did not run');
    assert.ok(!commandLines(broker).some((c) => c.includes('server.mjs')), 'no server.mjs process runs');
    // A restart by the agent does not run it either.
    const restart = await writer.callTool({ name: 'switchboard__restart_server', arguments: { name: 'bycwd' } });
    assert.ok(restart.isError);
    assert.ok(!fs.existsSync(path.join(markers, 'cwd')));
    report('trust-cwd', { faultsInjected: 2, ran: 0, state: written.status.state });
  });

  it('a write client changing an env VALUE (NODE_OPTIONS: --require …) makes it unapproved; nothing is required', async () => {
    const evil = path.join(root, 'evil-env.cjs');
    const written = await edit('byenv', (d) => ({ ...d, env: { NODE_OPTIONS: `--require ${evil}` } }));
    assert.equal(written.status.state, 'awaiting-approval');
    assert.match(written.status.lastError, /environment variables changed since it was approved/);
    assert.ok(!fs.existsSync(path.join(markers, 'env-value')), 'the --require payload did not run');
    // What the operator would now be shown names the option and warns about it.
    const line = (written.status.approvalItems as Json[]).find((l) => l.label === 'Env NODE_OPTIONS')!;
    assert.equal(line.value, `--require ${evil}`);
    assert.match(line.warning, /changes what code the program loads/);
    report('trust-env-value', { faultsInjected: 1, ran: 0 });
  });

  it("the env file's contents changing stops an approved server from starting again, even on a crash restart", async () => {
    const before = await status(operator, 'byenvfile');
    assert.equal(before.approval, 'approved');
    const evil = path.join(root, 'evil-envfile.cjs');
    fs.writeFileSync(path.join(root, 'settings.env'), `MODE=quiet\nNODE_OPTIONS=--require ${evil}\n`);
    const changed = await status(operator, 'byenvfile');
    assert.equal(changed.approval, 'changed', 'the state says it changed at once');
    assert.notEqual(changed.approvalHash, before.approvalHash);
    // Crash it: its restart policy would start it again with the new env file.
    await writer.callTool({ name: 'byenvfile__crash', arguments: {} }).catch(() => undefined);
    const held = await waitFor(
      async () => {
        const s = await status(operator, 'byenvfile');
        return s.state === 'awaiting-approval' ? s : undefined;
      },
      'the crashed server to wait for approval instead of restarting',
      20_000,
    );
    assert.match(held.lastError, /the env file changed since it was approved/);
    assert.ok(!fs.existsSync(path.join(markers, 'env-file')), 'the env file payload did not run');
    // The operator restarting it is refused the same way until it is approved again.
    const restart = await operator.callTool({ name: 'switchboard__restart_server', arguments: { name: 'byenvfile' } });
    assert.ok(restart.isError);
    assert.ok(!fs.existsSync(path.join(markers, 'env-file')));
    report('trust-env-file', { faultsInjected: 2, ran: 0, state: held.state });
  });

  it('an approval with a stale hash is refused, naming what changed, and the swapped definition does not run', async () => {
    const shown = await status(operator, 'stale');
    assert.equal(shown.state, 'awaiting-approval');
    // Between the operator reading the state and approving, an agent swaps the definition.
    await edit('stale', (d) => ({ ...d, cwd: 'evil' }));
    const refused = await operator.callTool({
      name: 'switchboard__approve_server',
      arguments: { name: 'stale', hash: shown.approvalHash },
    });
    assert.ok(refused.isError, 'refused');
    const text = (refused.content as { text: string }[])[0].text;
    assert.match(text, /changed after it was shown to you \(its working directory changed\)/);
    assert.match(text, /Review it again/);
    const after = await status(operator, 'stale');
    assert.equal(after.state, 'awaiting-approval');
    assert.equal(after.approval, 'required');
    assert.ok(!fs.existsSync(path.join(markers, 'cwd')));
    // A name alone is no approval at all.
    const nameOnly = await operator.callTool({ name: 'switchboard__approve_server', arguments: { name: 'stale' } });
    assert.ok(nameOnly.isError);
    assert.match((nameOnly.content as { text: string }[])[0].text, /'hash' must be a non-empty string/);
    report('trust-stale-hash', { faultsInjected: 2, accepted: 0 });
  });

  it('the summary of an agent-proposed server lists its env file outside the root with a warning (state and CLI)', async () => {
    const written = await facade(writer, 'upsert_server', {
      definition: {
        name: 'proposed',
        command: process.execPath,
        args: [BARE],
        envFile: '../other-project/creds',
        grants: ['secrets'],
      },
    });
    const items = written.status.approvalItems as Json[];
    const envFile = items.find((l) => l.label === 'Env file')!;
    assert.match(envFile.value, /^\.\.\/other-project\/creds; its values are passed/);
    assert.equal(envFile.warning, '⚠ outside the registry root: ../other-project/creds');
    assert.ok(items.some((l) => l.label === 'Grants' && l.value === 'secrets'));
    assert.match(written.status.approvalSummary, /outside the registry root: \.\.\/other-project\/creds/);
    assert.ok(!JSON.stringify(written).includes('canary-other-project'), "the file's values are never shown");
    // The CLI shows the same lines, warning included, before it approves exactly that.
    const cli = spawnSync(process.execPath, [BROKER_JS, 'approve', 'proposed', '--root', root], {
      env: { ...process.env, SWITCHBOARD_HOME: broker.home },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(
      cli.stdout,
      /Env file: +\.\.\/other-project\/creds; its values are passed\n +⚠ outside the registry root: \.\.\/other-project\/creds/,
    );
    assert.match(cli.stdout, /Approved\. 'proposed' is now running/);
    noteUpstreams(broker);
    report('trust-summary', { warnings: items.filter((l) => l.warning).length });
  });
});

describe('faults: security — a workspace cannot grant itself trust', function () {
  this.timeout(180_000);
  afterEach(() => removeTempDirs());

  function clone(): string {
    const root = tempDir('sb-fault-wstrust-');
    writeRegistry(root, {
      'mcp-servers.d/declared.yaml': faultServer('declared', 'bare.mjs'),
      'mcp-servers.d/builtin.yaml': faultServer('builtin', 'bare.mjs').replace('trust: trusted', 'trust: builtin'),
    });
    return root;
  }

  it(
    'trusted and builtin servers from the workspace wait for the operator until accepted; ' +
      'the acceptance is remembered per definition',
    async () => {
      const root = clone();
      const home = tempDir('sb-home-');
      let b = await startBroker({ root, home, acceptWorkspaceTrust: false });
      let c = await connect(b.url, b.token, 'operator');
      for (const name of ['declared', 'builtin']) {
        const s = await status(c, name);
        assert.equal(s.state, 'awaiting-approval', `${name}: the workspace's word is not enough`);
        assert.equal(s.approval, 'required');
        assert.match(
          s.lastError,
          /this workspace marks it (trusted|builtin); accept the workspace's (trusted|builtin) servers once/,
        );
      }
      assert.deepEqual(descendants(b.proc.pid!), [], 'nothing from the workspace runs');
      const accepted = await approve(c, 'declared');
      assert.equal(accepted.state, 'running');
      noteUpstreams(b);
      await c.close();
      await b.stop();

      // Remembered for this user: the next broker starts it at once; the one not accepted still waits.
      b = await startBroker({ root, home, acceptWorkspaceTrust: false });
      c = await connect(b.url, b.token, 'operator');
      await waitFor(async () => (await status(c, 'declared')).state === 'running', 'the accepted server to start');
      assert.equal((await status(c, 'builtin')).state, 'awaiting-approval');
      noteUpstreams(b);
      // A changed definition is a new request.
      const file = path.join(root, 'mcp-servers.d', 'declared.yaml');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(']', ', "--print-env", "HOME"]'));
      const changed = await waitFor(async () => {
        const s = await status(c, 'declared');
        return s.state === 'awaiting-approval' ? s : undefined;
      }, 'the changed workspace server to wait again');
      assert.match(changed.lastError, /its arguments changed since you accepted this workspace's trusted servers/);
      await c.close();
      await b.stop();
      report('workspace-trust', { faultsInjected: 3, startedWithoutAcceptance: 0 });
    },
  );

  it('--accept-workspace-trust starts them at once, without recording anything', async () => {
    const root = clone();
    const b = await startBroker({ root, acceptWorkspaceTrust: true });
    const c = await connect(b.url, b.token, 'operator');
    await waitFor(
      async () => (await status(c, 'declared')).state === 'running' && (await status(c, 'builtin')).state === 'running',
      'both to run',
    );
    assert.equal((await status(c, 'declared')).approval, 'not-needed');
    noteUpstreams(b);
    await c.close();
    await b.stop();
    assert.ok(!fs.existsSync(path.join(b.home, 'approvals.json')), 'the flag is for this run only');
  });

  it('serve on a terminal lists them and asks; "y" starts them', async () => {
    const root = clone();
    const home = tempDir('sb-home-');
    // `script` gives serve a real terminal (stdin is a TTY), as a person at a shell has.
    const cmd = [process.execPath, BROKER_JS, 'serve', '--root', root, '--port', '0'].map((a) => `'${a}'`).join(' ');
    const proc = track(
      spawn('script', ['-qfec', cmd, '/dev/null'], {
        env: { ...process.env, SWITCHBOARD_HOME: home },
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    notePid(proc.pid, 'script (pty for serve)');
    let out = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    proc.stderr!.resume();
    try {
      await waitFor(() => out.includes('[y/N]'), 'the question', 30_000);
      assert.match(out, /This workspace marks 2 servers trusted/);
      assert.match(out, /declared\r?\n +Trust: +trusted \(as the workspace's file requests\)/);
      assert.match(out, /Start these 2 servers this workspace trusts\? \[y\/N\]/);
      const url = /endpoint +(http:\/\/\S+)/.exec(out)![1];
      const token = fs.readFileSync(/token file +(\S+)/.exec(out)![1], 'utf8').trim();
      const c = await connect(url, token, 'operator');
      assert.equal((await status(c, 'declared')).state, 'awaiting-approval', 'nothing starts before the answer');
      proc.stdin!.write('y\n');
      await waitFor(
        async () =>
          (await status(c, 'declared')).state === 'running' && (await status(c, 'builtin')).state === 'running',
        'both to run after y',
      );
      assert.equal((await status(c, 'declared')).approval, 'approved', 'the answer is remembered');
      const audit = path.join(home, 'workspaces', fs.readdirSync(path.join(home, 'workspaces'))[0], 'audit.jsonl');
      await waitFor(
        () =>
          fs.existsSync(audit) &&
          /"event":"accept-workspace-trust","server":"declared"/.test(fs.readFileSync(audit, 'utf8')),
        'the acceptance in the audit log',
      );
      const state = JSON.parse(
        ((await c.readResource({ uri: 'switchboard://state' })).contents[0] as { text: string }).text,
      ) as Json;
      const brokerPid = state.broker.pid as number;
      notePid(brokerPid, 'broker on a pty');
      for (const pid of descendants(brokerPid)) notePid(pid, 'upstream');
      await c.close();
      process.kill(brokerPid, 'SIGTERM');
      await waitFor(() => !running(brokerPid), 'the broker to stop');
    } finally {
      await stopProcess(proc);
    }
  });
});
