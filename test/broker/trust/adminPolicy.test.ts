// The administrator's policy on every path, with a real broker, real SDK clients and real CLI
// processes: start, reload (the policy file edited while running), the operator's approval, an
// agent's upsert_server, a probe, import/add and the registries asked, a workspace `trusted` server
// when the policy does not honour it, the policy file's own errors, and status showing file and line.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  connect,
  facade,
  fixture,
  fixtureServer,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { cli, startRegistry, type RegistryFixture } from '../../helpers/registryFixture';

type Json = Record<string, any>;

const POLICY = `# the administrator's policy for this test
servers:
  deny:
    - "blocked-*"
commands:
  allow: [node]
registries:
  deny:
    - "http://127.0.0.1:*"
maxGrants: [network]
`;

const community = (name: string): string =>
  fixtureServer(name, 'echo.mjs').replace('trust: trusted', 'trust: community');

describe('administrator policy (real broker, SDK clients, CLI processes)', function () {
  this.timeout(90_000);
  let root: string;
  let policyPath: string;
  let broker: BrokerProcess;
  let operator: Client;
  let reg: RegistryFixture;
  const open: Client[] = [];

  const status = async (name: string): Promise<Json> => facade(operator, 'server_status', { name });
  const refusal = async (c: Client, tool: string, args: Json): Promise<string> => {
    const r = await c.callTool({ name: `switchboard__${tool}`, arguments: args }).catch((e: Error) => e);
    if (r instanceof Error) return r.message;
    assert.ok(r.isError, `${tool} was expected to be refused: ${JSON.stringify(r)}`);
    return (r.content as { text: string }[]).map((x) => x.text).join('');
  };

  before(async () => {
    root = tempDir('sb-policy-');
    policyPath = path.join(tempDir('sb-etc-'), 'policy.yaml');
    fs.writeFileSync(policyPath, POLICY);
    writeRegistry(root, {
      'mcp-servers.d/allowed.yaml': fixtureServer('allowed', 'echo.mjs'),
      'mcp-servers.d/blocked-one.yaml': fixtureServer('blocked-one', 'echo.mjs'),
      'mcp-servers.d/approvable.yaml': community('approvable'),
      'mcp-servers.d/blocked-community.yaml': community('blocked-community'),
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
    });
    reg = await startRegistry();
    broker = await startBrokerProcess({ root, env: { SWITCHBOARD_POLICY: policyPath } });
    operator = await connect(broker.url, broker.token, 'operator');
    await waitFor(async () => (await status('allowed')).state === 'running', 'allowed to run');
  });
  after(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    await killStarted();
    removeTempDirs();
  });

  it('on start: a server the policy denies is blocked, naming the file, line and rule', async () => {
    const blocked = await status('blocked-one');
    assert.equal(blocked.state, 'blocked');
    assert.equal(blocked.pid, undefined);
    assert.match(
      blocked.lastError,
      new RegExp(`denies server 'blocked-one' \\(${policyPath}:4, servers\\.deny: 'blocked-\\*'\\)`),
    );
    assert.equal((await status('allowed')).state, 'running', 'positive control');
    const state = JSON.parse(
      ((await operator.readResource({ uri: 'switchboard://state' })).contents[0] as { text: string }).text,
    );
    assert.equal(state.broker.policy, policyPath);
    assert.ok(state.problems.some((p: Json) => p.file === policyPath && p.line === 4 && /blocked-one/.test(p.message)));
  });

  it('switchboard status shows the block with the policy file and line', async () => {
    const r = await cli(['status', '--root', root], { home: broker.home, env: { SWITCHBOARD_POLICY: policyPath } });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /blocked-one\s+blocked/);
    assert.ok(r.out.includes(`${policyPath}:4:1 warning: server 'blocked-one' is blocked`), r.out);
  });

  it('the operator cannot approve past it', async () => {
    const s = await status('blocked-community');
    assert.equal(s.state, 'blocked');
    const text = await refusal(operator, 'approve_server', { name: 'blocked-community', hash: s.approvalHash });
    assert.match(text, /Not approved: the administrator's policy denies server 'blocked-community'/);
    const approvals = path.join(broker.home, 'approvals.json');
    assert.ok(!fs.existsSync(approvals) || !fs.readFileSync(approvals, 'utf8').includes('blocked-community'));
    // Positive control: a community server the policy allows is approved and runs.
    const ok = await status('approvable');
    const approved = await facade(operator, 'approve_server', { name: 'approvable', hash: ok.approvalHash });
    assert.equal(approved.state, 'running');
  });

  it("refuses an agent's upsert_server (and the operator's) that the policy blocks; nothing is written", async () => {
    const { tokenFile } = await facade(operator, 'client_connection', { name: 'writer' });
    const writer = await connect(broker.url, fs.readFileSync(tokenFile, 'utf8').trim(), 'writer');
    open.push(writer);
    const echo = { command: process.execPath, args: [fixture('echo.mjs')] };
    const named = await refusal(writer, 'upsert_server', { definition: { name: 'blocked-agent', ...echo } });
    assert.match(named, /Not written: the administrator's policy denies server 'blocked-agent'/);
    const granted = await refusal(writer, 'upsert_server', {
      definition: { name: 'agent-fs', ...echo, grants: ['filesystem'] },
    });
    assert.match(granted, /allows at most the grants \[network\]; 'agent-fs' asks for filesystem/);
    const docker = await refusal(operator, 'upsert_server', {
      definition: { name: 'dockerized', command: 'docker', args: ['run', '-i', 'img'] },
    });
    assert.match(docker, /does not allow command 'docker'.*commands\.allow: 'node'/);
    for (const n of ['blocked-agent', 'agent-fs', 'dockerized'])
      assert.ok(!fs.existsSync(path.join(root, 'mcp-servers.d', `${n}.yaml`)), n);
    // Positive control: an allowed one is written, as community.
    const added = await facade(writer, 'upsert_server', { definition: { name: 'agent-ok', ...echo } });
    assert.equal(added.status.trust, 'community');
  });

  it('refuses to probe what the policy blocks', async () => {
    const text = await refusal(operator, 'probe_server', {
      definition: { name: 'blocked-probe', command: process.execPath, args: [fixture('echo.mjs')] },
    });
    assert.match(text, /Not probed: the administrator's policy denies server 'blocked-probe'/);
    const ok = await facade(operator, 'probe_server', {
      definition: { name: 'probe-ok', command: process.execPath, args: [fixture('echo.mjs')] },
    });
    assert.equal(ok.ok, true, 'positive control');
  });

  it('import and add refuse what it blocks, and it decides which registries are asked', async () => {
    const env = { SWITCHBOARD_POLICY: policyPath };
    const doc = JSON.parse(fs.readFileSync(fixture('registry/time-1.2.0.json'), 'utf8'));
    const imported = await cli(['import', '-', '--root', root], { home: broker.home, env, input: JSON.stringify(doc) });
    assert.equal(imported.code, 1);
    assert.match(imported.err, /not added: the administrator's policy does not allow command 'npx'/);
    assert.ok(!fs.existsSync(path.join(root, 'mcp-servers.d', 'time.yaml')));
    const search = await cli(['search', 'time', '--registry', reg.url], { home: broker.home, env });
    assert.equal(search.code, 1);
    assert.match(search.err, /denies registry 'http:\/\/127\.0\.0\.1:\d+' \(.*policy\.yaml:9, registries\.deny/);
    assert.deepEqual(await reg.requests(), [], 'the denied registry was never asked');
    const add = await cli(['add', 'io.github.example-org/time', '--registry', reg.url, '--root', root], {
      home: broker.home,
      env,
    });
    assert.equal(add.code, 1);
    assert.match(add.err, /denies registry/);
    // Positive control: without the policy the same search is answered.
    const free = await cli(['search', 'time', '--registry', reg.url], { home: broker.home });
    assert.equal(free.code, 0, free.err);
  });

  it('on reload: an edited policy applies at once; its own errors block everything, at their line', async () => {
    fs.writeFileSync(policyPath, POLICY.replace('    - "blocked-*"', '    - "blocked-*"\n    - allowed'));
    await waitFor(async () => (await status('allowed')).state === 'blocked', 'allowed to be blocked', 20_000);
    assert.match((await status('allowed')).lastError, /servers\.deny: 'allowed'/);
    fs.writeFileSync(policyPath, 'servers:\n  deni: ["x"]\n');
    await waitFor(
      async () => /has errors/.test((await status('approvable')).lastError ?? ''),
      'errors to block all',
      20_000,
    );
    assert.match((await status('approvable')).lastError, /policy .*policy\.yaml has errors \(line 2: .*deni/);
    const { problems } = await facade(operator, 'registry_problems');
    assert.ok(problems.some((p: Json) => p.file === policyPath && p.line === 2 && p.severity === 'error'));
    fs.writeFileSync(policyPath, POLICY);
    await waitFor(async () => (await status('allowed')).state === 'running', 'allowed to run again', 20_000);
  });
});

describe('administrator policy: a workspace trusted server when trust is not honoured', function () {
  this.timeout(60_000);
  after(async () => {
    await killStarted();
    removeTempDirs();
  });

  it('needs the operator even with --accept-workspace-trust; the same broker without the policy runs it', async () => {
    const root = tempDir('sb-policy-ws-');
    writeRegistry(root, { 'mcp-servers.d/ws.yaml': fixtureServer('ws', 'echo.mjs') });
    const policyPath = path.join(tempDir('sb-etc-'), 'policy.yaml');
    fs.writeFileSync(policyPath, 'honourWorkspaceTrusted: false\n');
    const strict = await startBrokerProcess({ root, env: { SWITCHBOARD_POLICY: policyPath } });
    const op = await connect(strict.url, strict.token, 'operator');
    try {
      const s = await waitFor(async () => {
        const st = await facade(op, 'server_status', { name: 'ws' });
        return st.state === 'awaiting-approval' ? st : undefined;
      }, 'ws to wait for the operator');
      assert.equal(s.trust, 'trusted');
      assert.equal(s.approval, 'required');
      const approved = await facade(op, 'approve_server', { name: 'ws', hash: s.approvalHash });
      assert.equal(approved.state, 'running');
    } finally {
      await op.close();
      await strict.stop();
    }
    // Positive control: a fresh user without the policy, --accept-workspace-trust runs it at once.
    const relaxed = await startBrokerProcess({ root, env: { SWITCHBOARD_POLICY: '' } });
    const op2 = await connect(relaxed.url, relaxed.token, 'operator');
    try {
      await waitFor(async () => (await facade(op2, 'server_status', { name: 'ws' })).state === 'running', 'ws to run');
      assert.equal((await facade(op2, 'server_status', { name: 'ws' })).approval, 'not-needed');
    } finally {
      await op2.close();
      await relaxed.stop();
    }
  });
});
