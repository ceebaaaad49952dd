// Guardrail rules through the real broker: a policy file (policies.d/) is a proposal until the
// operator approves it; then its rules decide every tool call path (/mcp and /servers/<name>/mcp,
// 2025-11-25 sessions and 2026-07-28 requests, switchboard__call_tool, task-augmented calls), `ask`
// goes to the editor session, decisions are audited with the rule's name; an agent with write scope
// can propose, edit or delete a policy but loosens nothing; a malformed file is reported with its
// file and line while the policy in force keeps working.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { OperatorClient } from '../../../../src/broker/daemon/operatorClient';
import type { BrokerRecord } from '../../../../src/broker/daemon/runtime';
import {
  connect,
  facade,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  clientToken,
  waitForRunning,
} from '../../../helpers/broker';

type Json = Record<string, any>;

const GUARD = `description: what agents may do with echo
rules:
  - name: docs-echo
    servers: [echo]
    tools: [echo]
    when: 'args.text.startsWith("docs/")'
    action: allow
  - name: no-other-echo
    servers: [echo]
    tools: [echo]
    action: deny
    message: Echo only docs/ paths.
  - name: confirm-big-add
    servers: [echo]
    tools: [add]
    when: args.a > 100
    action: ask
  - name: no-plain-tasks
    servers: [tasks]
    tools: [plain]
    clients: [agent]
    action: deny
`;

/** What a refused call came back as: its JSON-RPC error (or a tool error result), or undefined if it ran. */
async function refusal(run: () => Promise<unknown>): Promise<{ code?: number; message: string } | undefined> {
  try {
    const result = (await run()) as Json;
    if (result?.isError) return { message: JSON.stringify(result.content) };
    return undefined;
  } catch (err) {
    return { code: (err as { code?: number }).code, message: (err as Error).message };
  }
}

async function editorAnswering(broker: BrokerProcess, action: 'accept' | 'decline') {
  const asked: Json[] = [];
  const record = { url: broker.url, operatorTokenFile: broker.tokenFile, pid: broker.proc.pid } as BrokerRecord;
  const client = await OperatorClient.connect(record, {
    answerAsEditor: async (request) => {
      asked.push(request.params);
      return { action };
    },
  });
  await waitFor(async () => {
    const res = (await client.request('resources/read', { uri: 'switchboard://state' })) as Json;
    return JSON.parse(res.contents[0].text).broker.editorConnected === true;
  }, 'the editor to be reachable');
  return { client, asked };
}

describe('guardrail rules', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  let root: string;
  let operator: Client;
  let agent: Client;
  let agentToken: string;

  const policy = async (name: string): Promise<Json | undefined> =>
    (await facade(operator, 'list_policies')).policies.find((p: Json) => p.name === name);
  const approve = async (name: string) =>
    facade(operator, 'approve_policy', { name, hash: (await policy(name))!.hash });
  const echo = (client: Client, text: string) => client.callTool({ name: 'echo__echo', arguments: { text } });

  before(async () => {
    root = tempDir('sb-guard-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/tasks.yaml': fixtureServer('tasks', 'tasks.mjs'),
      'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
      // As a `git pull` brings it: written, not yet approved.
      'policies.d/guard.yaml': GUARD,
    });
    broker = await startBrokerProcess({ root });
    operator = await connect(broker.url, broker.token, 'operator-test');
    await waitForRunning(operator, 'every', 'echo and tasks running');
    agentToken = await clientToken(operator, 'agent');
    agent = await connect(broker.url, agentToken, 'agent');
  });

  after(async () => {
    await agent?.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('a policy file nobody approved is not in force, and an agent cannot approve it', async () => {
    assert.equal((await policy('guard'))!.status, 'awaiting-approval');
    assert.equal(await refusal(() => echo(agent, 'src/main.ts')), undefined, 'nothing in force yet');
    const tried = await refusal(() =>
      agent.callTool({ name: 'switchboard__approve_policy', arguments: { name: 'guard', hash: 'x' } }),
    );
    assert.ok(tried, 'an agent cannot call approve_policy');
    assert.equal((await policy('guard'))!.status, 'awaiting-approval');
  });

  it('approved: the first matching rule decides on /mcp, with the message the agent sees and -32003', async () => {
    const approved = await approve('guard');
    assert.equal(approved.status, 'in-force');
    const ok = (await echo(agent, 'docs/guide.md')) as Json;
    assert.equal(ok.isError, undefined);
    const denied = await refusal(() => echo(agent, 'src/main.ts'));
    assert.equal(denied?.code, -32003);
    assert.match(denied!.message, /Echo only docs\/ paths\. \(refused by rule 'no-other-echo' of policy 'guard'\)/);
    // Positive control: the other tool of the server is not touched by those rules.
    const added = (await agent.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })) as Json;
    assert.equal(added.structuredContent.sum, 3);
  });

  it('the same on /servers/echo/mcp, through switchboard__call_tool, and for a 2026-07-28 caller', async () => {
    const perServer = await connect(broker.url.replace(/\/mcp$/, '/servers/echo/mcp'), agentToken, 'agent-one');
    try {
      assert.equal((await refusal(() => perServer.callTool({ name: 'echo', arguments: { text: 'x' } })))?.code, -32003);
      assert.equal(await refusal(() => perServer.callTool({ name: 'echo', arguments: { text: 'docs/x' } })), undefined);
    } finally {
      await perServer.close();
    }
    const through = await refusal(() =>
      agent.callTool({ name: 'switchboard__call_tool', arguments: { name: 'echo__echo', arguments: { text: 'x' } } }),
    );
    assert.match(through!.message, /no-other-echo/);
    const v2 = new ClientV2({ name: 'v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await v2.connect(
      new TransportV2(new URL(broker.url), { requestInit: { headers: { Authorization: `Bearer ${agentToken}` } } }),
    );
    try {
      const refused = await refusal(() => v2.callTool({ name: 'echo__echo', arguments: { text: 'etc/passwd' } }));
      assert.match(refused!.message, /Echo only docs\/ paths/);
      const fine = (await v2.callTool({ name: 'echo__echo', arguments: { text: 'docs/a' } })) as Json;
      assert.equal(fine.structuredContent.text, 'docs/a');
    } finally {
      await v2.close();
    }
  });

  it('a task-augmented call is judged like any other; a client the rule does not name is not', async () => {
    const asTask = () =>
      agent.request(
        { method: 'tools/call', params: { name: 'tasks__plain', arguments: {}, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
    const refused = await refusal(asTask);
    assert.equal(refused?.code, -32003);
    assert.match(refused!.message, /no-plain-tasks/);
    const plain = (await operator.callTool({ name: 'tasks__plain', arguments: {} })) as Json;
    assert.equal(plain.isError, undefined, 'the rule names client agent only');
  });

  it('ask: refused without an editor; the editor accepts or declines, and the audit says which rule', async () => {
    const big = () => agent.callTool({ name: 'echo__add', arguments: { a: 500, b: 1 } });
    const alone = await refusal(big);
    assert.match(alone!.message, /needs the operator to confirm this call, and no VS Code window is connected/);
    const yes = await editorAnswering(broker, 'accept');
    try {
      assert.equal(((await big()) as Json).structuredContent.sum, 501);
      assert.equal(yes.asked.length, 1);
      assert.match(
        yes.asked[0].message,
        /Client 'agent' calls echo__add with \{"a":500,"b":1\}\. Rule 'confirm-big-add'/,
      );
    } finally {
      await yes.client.close();
    }
    const no = await editorAnswering(broker, 'decline');
    try {
      assert.match((await refusal(big))!.message, /the operator declined this call \(rule 'confirm-big-add'/);
    } finally {
      await no.client.close();
    }
    const audit: Json[] = (await facade(operator, 'read_audit', { client: 'agent', limit: 200 })).entries;
    const asks = audit.filter((e) => e.rule === 'guard/confirm-big-add');
    assert.deepEqual(
      asks.map((e) => [e.operatorAnswer, e.outcome]),
      [
        ['no-editor', 'error'],
        ['accept', 'ok'],
        ['decline', 'error'],
      ],
    );
    assert.ok(audit.some((e) => e.rule === 'guard/no-other-echo' && e.outcome === 'error' && e.code === -32003));
    assert.ok(audit.some((e) => e.rule === 'guard/docs-echo' && e.outcome === 'ok'));
  });

  it('an agent that edits, adds or deletes policies loosens nothing until the operator approves', async () => {
    // Edit: drop the deny rule.
    const loosened = {
      name: 'guard',
      rules: [{ name: 'everything', action: 'allow' }],
    };
    const edited = await facade(agent, 'upsert_policy', { definition: loosened });
    assert.match(edited.note, /nothing of it is in force until the operator approves it/);
    assert.equal(edited.status.status, 'changed');
    assert.equal((await refusal(() => echo(agent, 'src/x')))?.code, -32003, 'the approved version stays in force');
    // Add: a policy sorted first that would allow everything.
    await facade(agent, 'upsert_policy', {
      definition: { name: 'aaa-open', rules: [{ name: 'all', action: 'allow' }] },
    });
    assert.equal((await policy('aaa-open'))!.status, 'awaiting-approval');
    assert.equal((await refusal(() => echo(agent, 'src/x')))?.code, -32003);
    // Delete: the approved version stays until the operator revokes it.
    const removed = await facade(agent, 'remove_policy', { name: 'guard' });
    assert.match(removed.note, /stays in force until the operator revokes it/);
    assert.equal((await policy('guard'))!.status, 'removed');
    assert.equal((await refusal(() => echo(agent, 'src/x')))?.code, -32003);
    assert.ok(
      await refusal(() => agent.callTool({ name: 'switchboard__revoke_policy', arguments: { name: 'guard' } })),
    );
    // The operator decides: revoking takes it out of force (positive control of the whole chain).
    await facade(operator, 'revoke_policy', { name: 'guard' });
    assert.equal(await refusal(() => echo(agent, 'src/x')), undefined);
    await facade(operator, 'remove_policy', { name: 'aaa-open' });
  });

  it('a rule file written on disk is reloaded; a malformed one is reported with file and line, the rest keeps working', async () => {
    writeRegistry(root, { 'policies.d/guard.yaml': GUARD });
    await waitFor(async () => (await policy('guard'))?.status === 'awaiting-approval', 'the file to be read again');
    await approve('guard');
    assert.equal((await refusal(() => echo(agent, 'src/x')))?.code, -32003);
    writeRegistry(root, {
      'policies.d/broken.yaml': 'rules:\n  - name: typo\n    when: args.path.startsWith("a") &&\n    action: deny\n',
    });
    const problem = await waitFor(async () => {
      const problems: Json[] = (await facade(operator, 'registry_problems')).problems;
      return problems.find((p) => p.file.endsWith(path.join('policies.d', 'broken.yaml')));
    }, 'the broken policy reported');
    assert.equal(problem.line, 3);
    assert.match(problem.message, /rule 'typo': its condition is not valid CEL/);
    assert.equal(await policy('broken'), undefined, 'a file with errors proposes nothing');
    assert.equal((await refusal(() => echo(agent, 'src/x')))?.code, -32003, 'the policy in force still decides');
    assert.equal(await refusal(() => echo(agent, 'docs/x')), undefined);
    // Edited on disk to loosen: changed, and in force only once approved.
    writeRegistry(root, {
      'policies.d/guard.yaml': GUARD.replace('action: deny\n    message', 'action: allow\n    message'),
    });
    await waitFor(async () => (await policy('guard'))?.status === 'changed', 'the edit to be seen');
    assert.equal((await refusal(() => echo(agent, 'src/x')))?.code, -32003);
    await approve('guard');
    assert.equal(await refusal(() => echo(agent, 'src/x')), undefined);
    const status = await facade(operator, 'server_status', { name: 'echo' });
    assert.deepEqual(
      status.guardrails.map((g: Json) => `${g.policy}/${g.name}:${g.action}`),
      ['guard/docs-echo:allow', 'guard/no-other-echo:allow', 'guard/confirm-big-add:ask'],
    );
  });
});
