// `switchboard policies` and `switchboard policies approve` as real CLI processes against a real
// broker: a policy an agent writes is listed as proposed and decides nothing until the operator
// approves it from the command line; approve prints the rules in words and asks; a file edited
// between showing and confirming is refused (the hash shown no longer matches) and stays out of force.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
  connect,
  facade,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { cli } from '../../helpers/registryFixture';

type Json = Record<string, any>;

const DOCS_ONLY = {
  name: 'docs-only',
  description: 'echo only what is under docs/',
  rules: [
    { name: 'docs-echo', servers: ['echo'], tools: ['echo'], when: 'args.text.startsWith("docs/")', action: 'allow' },
    { name: 'no-other-echo', servers: ['echo'], tools: ['echo'], action: 'deny', message: 'Echo only docs/ paths.' },
  ],
  limits: [{ name: 'echo-rate', servers: ['echo'], per: 'client', callsPerMinute: 600 }],
};

describe('switchboard policies (CLI processes, real broker)', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  let root: string;
  let operator: Client;
  let agent: Client;

  const policies = (...args: string[]) => cli(['policies', ...args, '--root', root], { home: broker.home });
  const policy = async (name: string): Promise<Json | undefined> =>
    (await facade(operator, 'list_policies')).policies.find((p: Json) => p.name === name);
  /** Whether the agent's echo of `text` is refused by a rule (JSON-RPC -32003). */
  const refused = async (text: string): Promise<boolean> => {
    try {
      await agent.callTool({ name: 'echo__echo', arguments: { text } });
      return false;
    } catch (err) {
      assert.equal((err as { code?: number }).code, -32003, String(err));
      return true;
    }
  };

  before(async () => {
    root = tempDir('sb-policies-cli-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
    });
    broker = await startBrokerProcess({ root });
    operator = await connect(broker.url, broker.token, 'operator-test');
    await waitFor(async () => (await facade(operator, 'list_servers')).servers[0]?.state === 'running', 'echo running');
    const connection = await facade(operator, 'client_connection', { name: 'agent' });
    agent = await connect(broker.url, fs.readFileSync(connection.tokenFile, 'utf8').trim(), 'agent');
  });

  after(async () => {
    await agent?.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('lists nothing, then an agent-written policy as proposed, out of force until approved', async () => {
    const empty = await policies();
    assert.equal(empty.code, 0, empty.err);
    assert.match(empty.out, /No guardrail policies/);

    await facade(agent, 'upsert_policy', { definition: DOCS_ONLY });
    const listed = await policies();
    assert.equal(listed.code, 0, listed.err);
    const hash = (await policy('docs-only'))!.hash as string;
    assert.match(listed.out, /^POLICY\s+STATE\s+HASH\s+FILE$/m);
    assert.match(
      listed.out,
      new RegExp(`^docs-only\\s+proposed, not in force\\s+${hash}\\s+policies\\.d/docs-only\\.yaml$`, 'm'),
    );
    assert.match(listed.out, /switchboard policies approve <name> \(docs-only\)/);
    assert.equal(await refused('src/x'), false, 'a proposal decides nothing');

    // An agent cannot approve it for itself.
    await assert.rejects(facade(agent, 'approve_policy', { name: 'docs-only', hash }), /operator/i);
    assert.equal(await refused('src/x'), false);
  });

  it('approve without an answer approves nothing; --yes prints the rules in words and puts them in force', async () => {
    const declined = await policies('approve', 'docs-only');
    assert.equal(declined.code, 1, declined.out + declined.err);
    assert.match(declined.out, /Put policy 'docs-only' in force as shown\? \[y\/N\] Not approved; nothing changed\./);
    assert.equal((await policy('docs-only'))!.status, 'awaiting-approval');

    const r = await policies('approve', 'docs-only', '--yes');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /Approving policy 'docs-only' \(policies\.d\/docs-only\.yaml, hash [0-9a-f]{32}\):/);
    assert.match(r.out, /echo only what is under docs\//);
    assert.match(
      r.out,
      /- rule 'docs-echo' allows calls to tool 'echo' of server 'echo' from any client when args\.text\.startsWith\("docs\/"\)/,
    );
    assert.match(
      r.out,
      /- rule 'no-other-echo' refuses calls to tool 'echo' of server 'echo' from any client; the agent is told "Echo only docs\/ paths\."/,
    );
    assert.match(
      r.out,
      /- limit 'echo-rate' allows 600 calls per minute for each client, counting calls to any tool of server 'echo'/,
    );
    assert.match(r.out, /Approved: policy 'docs-only' is in force\./);
    assert.equal(await refused('src/x'), true, 'the deny rule is in force');
    assert.equal(await refused('docs/x'), false, 'the allow rule is in force');
    assert.match((await policies()).out, /^docs-only\s+in force\s/m);
  });

  it('a file edited between showing and confirming is refused, and the approved version stays in force', async () => {
    // The agent loosens the policy: listed as changed, the approved version still decides.
    await facade(agent, 'upsert_policy', {
      definition: { ...DOCS_ONLY, rules: [{ name: 'docs-echo', servers: ['echo'], action: 'allow' }] },
    });
    assert.match((await policies()).out, /^docs-only\s+changed since approval/m);
    assert.equal(await refused('src/x'), true);

    const proc = spawn(process.execPath, [BROKER_JS, 'policies', 'approve', 'docs-only', '--root', root], {
      env: { ...process.env, SWITCHBOARD_HOME: broker.home },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
    await waitFor(async () => out.includes('[y/N]'), 'the approval question', 30_000);
    const shown = /hash ([0-9a-f]{32})/.exec(out)![1];
    assert.match(out, /Against the version in force now: changed rule 'docs-echo', removed rule 'no-other-echo'\./);

    // While the operator reads: the file changes again (an agent, a git pull).
    const file = path.join(root, 'policies.d', 'docs-only.yaml');
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace('description: echo only what is under docs/', 'description: sneaky'),
    );
    await waitFor(async () => (await policy('docs-only'))!.hash !== shown, 'the broker to see the edit');
    proc.stdin.end('y\n');
    assert.equal(await exited, 1, out + err);
    assert.match(err, /Not approved: policy 'docs-only' changed after it was shown to you/);
    assert.equal((await policy('docs-only'))!.status, 'changed');
    assert.equal(await refused('src/x'), true, 'the version approved before still decides');

    // Positive control: the same dialogue with no edit in between approves.
    const again = await cli(['policies', 'approve', 'docs-only', '--root', root], { home: broker.home, input: 'y\n' });
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /^ {2}sneaky$/m);
    assert.equal(await refused('src/x'), false, 'the loosened version is now in force');
  });

  it('revoke takes a policy out of force; unknown names and actions are plain errors', async () => {
    const r = await policies('revoke', 'docs-only');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /Policy 'docs-only' is no longer in force\./);
    assert.match((await policies()).out, /^docs-only\s+proposed, not in force/m);
    const missing = await policies('approve', 'nope');
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^switchboard: no policy named 'nope' in /);
    const bad = await policies('frobnicate');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /unknown action 'frobnicate'/);
  });
});
