// Tasks (2025-11-25) through the broker: task-augmented tools/call, tasks/get|result|list|cancel and
// notifications/tasks/status, on /mcp and /servers/<name>/mcp, over a stdio and a Streamable HTTP
// fixture and server-everything from npm; tasks belong to the session that created them; an
// upstream killed mid-task fails its tasks instead of leaving them hanging.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  facade,
  startHttpFixture,
  everythingServer,
  auditEntries,
  clientToken,
  connectClient,
  waitForRunning,
} from '../../helpers/broker';

type Json = Record<string, any>;

const RELATED = 'io.modelcontextprotocol/related-task';

/** A client that records every task status notification it receives. */
async function taskClient(url: string, token: string, name: string): Promise<{ client: Client; statuses: Json[] }> {
  const statuses: Json[] = [];
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    statuses.push(n.params);
  });
  return { client: await connectClient(client, url, token), statuses };
}

/** A task-augmented tools/call; resolves with the CreateTaskResult's task. */
async function createTask(client: Client, name: string, args: Json = {}, ttl = 60_000): Promise<Json> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl } } },
    CreateTaskResultSchema,
  );
  return created.task;
}

/** Polls tasks/get until the task is in a terminal status. */
function settled(client: Client, taskId: string, timeoutMs = 20_000): Promise<Json> {
  return waitFor(
    async () => {
      const task = await client.experimental.tasks.getTask(taskId);
      return ['completed', 'failed', 'cancelled'].includes(task.status) ? task : undefined;
    },
    `task ${taskId} to end`,
    timeoutMs,
  );
}

async function rejection(run: () => Promise<unknown>): Promise<McpError> {
  try {
    await run();
  } catch (err) {
    return err as McpError;
  }
  assert.fail('expected the request to fail');
}

describe('tasks through the broker', function () {
  this.timeout(90_000);
  let broker: BrokerProcess;
  let remote: { url: string; stop(): Promise<void> };
  let a: { client: Client; statuses: Json[] };
  let terminalToken: string;

  before(async () => {
    remote = await startHttpFixture('tasks.mjs');
    const root = tempDir('sb-tasks-');
    writeRegistry(root, {
      'mcp-servers.d/tasks.yaml': fixtureServer('tasks', 'tasks.mjs'),
      'mcp-servers.d/rtasks.yaml': `name: rtasks\ntrust: trusted\ntransport: http\nurl: ${remote.url}\n`,
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/everything.yaml': everythingServer(),
      'clients.d/terminal.yaml': 'name: terminal\nmcp_allow: [read]\n',
    });
    broker = await startBrokerProcess({ root });
    a = await taskClient(broker.url, broker.token, 'alice');
    await waitForRunning(a.client, 4, 'tasks, rtasks, echo and everything running');
    terminalToken = await clientToken(a.client, 'terminal');
  });

  after(async () => {
    await a?.client.close().catch(() => undefined);
    await broker?.stop();
    await remote?.stop();
    removeTempDirs();
  });

  it('declares tasks for tools/call only, and lists taskSupport as each upstream said', async () => {
    assert.deepEqual(a.client.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await a.client.listTools();
    const support = (name: string) => tools.find((t) => t.name === name)?.execution?.taskSupport;
    assert.equal(support('tasks__slow-task'), 'optional');
    assert.equal(support('rtasks__failing-task'), 'required');
    assert.equal(support('everything__simulate-research-query'), 'required');
    // echo declared no tasks; its SDK lists taskSupport 'forbidden', which offers nothing and is
    // passed on as the server said (what a direct client sees).
    assert.ok(tools.some((t) => t.name === 'echo__echo'));
    assert.equal(support('echo__echo'), 'forbidden');
  });

  for (const server of ['tasks', 'rtasks']) {
    const kind = server === 'tasks' ? 'stdio' : 'Streamable HTTP';

    it(`${kind}: create, poll to completion, status notification, result, under '${server}__' ids`, async () => {
      const task = await createTask(a.client, `${server}__slow-task`, { ms: 300, text: `from ${server}` });
      assert.equal(task.status, 'working');
      assert.match(task.taskId, new RegExp(`^${server}__[0-9a-f]{32}$`));
      // The POST that created it has returned; later requests of the session find it.
      const done = await settled(a.client, task.taskId);
      assert.equal(done.status, 'completed');
      assert.equal(done.taskId, task.taskId);
      const result = await a.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(textOf(result), `done: from ${server}`);
      assert.deepEqual(result.structuredContent, { said: `from ${server}` });
      assert.deepEqual(result._meta?.[RELATED], { taskId: task.taskId });
      const notified = await waitFor(
        () => a.statuses.find((s) => s.taskId === task.taskId && s.status === 'completed'),
        'the completed status notification',
      );
      assert.equal(notified.taskId, task.taskId);
    });

    it(`${kind}: a failing task ends failed and its result is the tool's error result`, async () => {
      const task = await createTask(a.client, `${server}__failing-task`, { ms: 50 });
      const done = await settled(a.client, task.taskId);
      assert.equal(done.status, 'failed');
      const result = await a.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(result.isError, true);
      assert.equal(textOf(result), 'the work failed on purpose');
    });

    it(`${kind}: cancel a running task; cancelling it again is refused (-32602)`, async () => {
      const task = await createTask(a.client, `${server}__hold-task`);
      const cancelled = await a.client.experimental.tasks.cancelTask(task.taskId);
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.taskId, task.taskId);
      assert.equal((await a.client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
      const again = await rejection(() => a.client.experimental.tasks.cancelTask(task.taskId));
      assert.equal(again.code, -32602);
    });
  }

  it("tasks/list merges the session's own tasks across upstreams; another client's session sees none", async () => {
    const own = await taskClient(broker.url, broker.token, 'dave');
    const terminal = await taskClient(broker.url, terminalToken, 'terminal');
    const sameToken = await taskClient(broker.url, broker.token, 'erin');
    try {
      const one = await createTask(own.client, 'tasks__hold-task');
      const two = await createTask(own.client, 'rtasks__slow-task', { ms: 0, text: 'x' });
      const listed = await own.client.experimental.tasks.listTasks();
      assert.deepEqual(listed.tasks.map((t) => t.taskId).sort(), [one.taskId, two.taskId].sort());
      assert.equal(listed.nextCursor, undefined);
      for (const other of [terminal, sameToken]) {
        assert.deepEqual((await other.client.experimental.tasks.listTasks()).tasks, []);
        for (const attempt of [
          () => other.client.experimental.tasks.getTask(one.taskId),
          () => other.client.experimental.tasks.getTaskResult(two.taskId, CallToolResultSchema),
          () => other.client.experimental.tasks.cancelTask(one.taskId),
        ]) {
          const refused = await rejection(attempt);
          assert.equal(refused.code, -32602);
          assert.match(refused.message, /not found in this session/);
        }
      }
      // Still running: the other sessions' attempts did not touch it.
      assert.equal((await own.client.experimental.tasks.getTask(one.taskId)).status, 'working');
      await own.client.experimental.tasks.cancelTask(one.taskId);
      assert.ok(!terminal.statuses.some((s) => s.taskId === one.taskId || s.taskId === two.taskId));
    } finally {
      await Promise.all([own, terminal, sameToken].map((c) => c.client.close()));
    }
  });

  it("/servers/<name>/mcp: the upstream's own task ids, the same flow", async () => {
    const url = broker.url.replace(/\/mcp$/, '/servers/rtasks/mcp');
    const own = await taskClient(url, broker.token, 'frank');
    try {
      assert.deepEqual(own.client.getServerCapabilities()?.tasks?.requests, { tools: { call: {} } });
      const task = await createTask(own.client, 'slow-task', { ms: 100, text: 'per server' });
      assert.match(task.taskId, /^[0-9a-f]{32}$/);
      assert.equal((await settled(own.client, task.taskId)).status, 'completed');
      const result = await own.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(textOf(result), 'done: per server');
      assert.deepEqual(
        (await own.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
        [task.taskId],
      );
    } finally {
      await own.client.close();
    }
  });

  it('a task-augmented call to a server without tasks, or to a facade tool, is refused (-32601)', async () => {
    for (const name of ['echo__echo', 'switchboard__list_servers']) {
      const refused = await rejection(() => createTask(a.client, name, { text: 'x' }));
      assert.equal(refused.code, -32601);
      assert.match(refused.message, new RegExp(`Tool '${name}' cannot run as a task`));
    }
  });

  it("server-everything's simulate-research-query runs as a task through /mcp", async () => {
    const task = await createTask(a.client, 'everything__simulate-research-query', { topic: 'switchboards' });
    assert.match(task.taskId, /^everything__/);
    const done = await settled(a.client, task.taskId, 30_000);
    assert.equal(done.status, 'completed');
    const result = await a.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.match(textOf(result), /# Research Report: switchboards/);
  });

  it('input_required: the elicitation a task needs reaches its caller during tasks/result, under its id', async () => {
    const asked: Json[] = [];
    const client = new Client({ name: 'gina', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { interpretation: 'programming' } };
    });
    await connectClient(client, broker.url, broker.token);
    try {
      const args = { topic: 'python', ambiguous: true };
      const task = await createTask(client, 'everything__simulate-research-query', args);
      await waitFor(
        async () => (await client.experimental.tasks.getTask(task.taskId)).status === 'input_required',
        'the task to ask for input',
        20_000,
      );
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(asked.length, 1);
      assert.deepEqual(asked[0]._meta?.[RELATED], { taskId: task.taskId });
      assert.match(textOf(result), /# Research Report: python \(programming\)/);
    } finally {
      await client.close();
    }
  });

  it('task creation and cancellation are audited: server, tool, client, namespaced task id, outcome', async () => {
    const created = auditEntries(broker.home, (e) => e.event === 'call' && e.task === true && e.server === 'tasks');
    const slow = created.find((e) => e.tool === 'slow-task');
    assert.ok(slow, JSON.stringify(created));
    assert.equal(slow.client, 'operator');
    assert.equal(slow.outcome, 'ok');
    assert.match(slow.taskId, /^tasks__[0-9a-f]{32}$/);
    const cancels = auditEntries(broker.home, (e) => e.event === 'task-cancel' && e.server === 'rtasks');
    assert.ok(cancels.some((e) => e.outcome === 'ok' && /^rtasks__/.test(e.taskId)));
    assert.ok(
      cancels.some((e) => e.outcome === 'error'),
      'the refused second cancel',
    );
  });

  it('an upstream killed mid-task: its task turns failed (notified), its result is a clear error', async () => {
    // The host pid of its (sandbox) process: the one the server reports is of its own PID namespace.
    const pid = (await facade(a.client, 'server_status', { name: 'tasks' })).pid as number;
    const task = await createTask(a.client, 'tasks__hold-task');
    process.kill(pid, 'SIGKILL');
    const notified = await waitFor(
      () => a.statuses.find((s) => s.taskId === task.taskId && s.status === 'failed'),
      'the failed status notification',
    );
    const lost = /Server 'tasks' stopped, and task 'tasks__[0-9a-f]+' and its result are lost/;
    assert.match(notified.statusMessage, lost);
    const state = await a.client.experimental.tasks.getTask(task.taskId);
    assert.equal(state.status, 'failed');
    const result = await rejection(() => a.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
    assert.equal(result.code, -32005);
    assert.match(result.message, /Server 'tasks' stopped/);
    const listed = await a.client.experimental.tasks.listTasks();
    assert.equal(listed.tasks.find((t) => t.taskId === task.taskId)?.status, 'failed');
    // The server comes back and takes new tasks.
    await waitFor(async () => {
      const { servers } = await facade(a.client, 'list_servers');
      return servers.find((s: Json) => s.name === 'tasks')?.state === 'running';
    }, 'tasks restarted');
    const fresh = await createTask(a.client, 'tasks__slow-task', { ms: 0, text: 'again' });
    assert.equal((await settled(a.client, fresh.taskId)).status, 'completed');
  });
});
