// Task routing without processes: ids the caller sees, tool lists as routable, the table's ownership,
// expiry and cap, and TaskRoutes over an in-memory served server (ownership, status, a lost server).
import * as assert from 'node:assert/strict';
import { McpFailure, type JsonObject, type Tool } from '../../../src/broker/shared/mcpTypes';
import type { RequestExtra } from '../../../src/broker/routing/requestContext';
import type { ServedCall, ServedServer } from '../../../src/broker/routing/servedServer';
import {
  MAX_TASKS_PER_SESSION,
  TaskRoutes,
  TaskTable,
  createdTask,
  declaresToolTasks,
  exposedTaskId,
  resultUnderId,
  routableTools,
  type RoutedTask,
} from '../../../src/broker/routing/taskRoutes';
import type { TaskEvents } from '../../../src/broker/routing/servedServer';

const extra: RequestExtra = { signal: new AbortController().signal, sendProgress: () => undefined };
const call: ServedCall = { identity: { client: 'alice', operator: false }, extra };

function routed(session: string, id: string, more: Partial<RoutedTask> = {}): RoutedTask {
  return { id, session, client: 'c', server: 's', upstreamId: id, tool: 't', last: { taskId: id }, ...more };
}

describe('task routes: ids and tool lists', () => {
  it('namespaces ids on the aggregated endpoint only', () => {
    assert.equal(exposedTaskId(undefined, 'slow', 'abc'), 'slow__abc');
    assert.equal(exposedTaskId('slow', 'slow', 'abc'), 'abc');
  });

  it('reads tools/call task support from capabilities, and nothing else', () => {
    assert.equal(declaresToolTasks({ tasks: { requests: { tools: { call: {} } } } }), true);
    assert.equal(declaresToolTasks({ tasks: { list: {}, cancel: {} } }), false);
    assert.equal(declaresToolTasks({ tasks: { requests: { tools: { call: true } } } }), false);
    assert.equal(declaresToolTasks(undefined), false);
  });

  it('drops taskSupport from the tools of a server without tasks, keeping other execution fields', () => {
    const tools = [
      { name: 'a', inputSchema: {}, execution: { taskSupport: 'optional' } },
      { name: 'b', inputSchema: {}, execution: { taskSupport: 'required', other: 1 } },
      { name: 'c', inputSchema: {} },
    ] as Tool[];
    assert.equal(routableTools(tools, true), tools, 'the same array when the server takes tasks');
    const listed = routableTools(tools, false);
    assert.deepEqual(listed, [
      { name: 'a', inputSchema: {} },
      { name: 'b', inputSchema: {}, execution: { other: 1 } },
      { name: 'c', inputSchema: {} },
    ]);
    assert.equal(listed[2], tools[2]);
    const plain = [{ name: 'p', inputSchema: {} }] as Tool[];
    assert.equal(routableTools(plain, false), plain);
  });

  it('recognises a CreateTaskResult and renames related-task metadata of a result', () => {
    assert.equal(createdTask({ content: [] }), undefined);
    assert.deepEqual(createdTask({ task: { taskId: 'x', status: 'working' } }), { taskId: 'x', status: 'working' });
    const result = { content: [], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' }, keep: 1 } };
    assert.deepEqual(resultUnderId(result, 's__x')._meta, {
      'io.modelcontextprotocol/related-task': { taskId: 's__x' },
      keep: 1,
    });
    const bare = { content: [] };
    assert.equal(resultUnderId(bare, 's__x'), bare);
  });
});

describe('task routes: the table', () => {
  it("gives a session its own tasks only, and finds a task by its server's id", () => {
    const table = new TaskTable();
    table.add(routed('s1', 'a'));
    table.add(routed('s2', 'b'));
    assert.equal(table.get('s1', 'a', 0)?.id, 'a');
    assert.equal(table.get('s2', 'a', 0), undefined);
    assert.deepEqual(
      table.owned('s1', 0).map((t) => t.id),
      ['a'],
    );
    assert.equal(table.ofUpstream('s', 'b')?.session, 's2');
  });

  it('forgets a task at its expiry, a closed session with all its tasks, and the oldest beyond the cap', () => {
    const table = new TaskTable();
    table.add(routed('s1', 'old', { expiresAt: 100 }));
    assert.ok(table.get('s1', 'old', 99));
    assert.equal(table.get('s1', 'old', 100), undefined);
    assert.equal(table.ofUpstream('s', 'old'), undefined);
    table.add(routed('s1', 'x'));
    table.dropSession('s1');
    assert.equal(table.ofUpstream('s', 'x'), undefined);
    assert.equal(table.size, 0);
    for (let i = 0; i <= MAX_TASKS_PER_SESSION; i++) table.add(routed('s1', `t${i}`));
    assert.equal(table.owned('s1', 0).length, MAX_TASKS_PER_SESSION);
    assert.equal(table.get('s1', 't0', 0), undefined);
  });
});

/** A served server that keeps tasks in memory and answers tasks/* about them by its own ids. */
function taskServer(name: string) {
  const states = new Map<string, JsonObject>();
  let events: TaskEvents | undefined;
  let next = 0;
  const served = {
    name,
    kind: 'upstream',
    available: true,
    tools: [],
    prompts: [],
    resources: [],
    resourceTemplates: [],
    toolTasks: true,
    unavailable: () => new McpFailure(-32005, `Server '${name}' crashed`),
    callTool: async () => {
      const taskId = `u${++next}`;
      states.set(taskId, { taskId, status: 'working', ttl: 1000 });
      return { task: states.get(taskId)! };
    },
    taskRequest: async (method: string, params: JsonObject) => {
      const state = states.get(params.taskId as string);
      if (!state) throw new McpFailure(-32602, 'Task not found');
      if (method === 'tasks/cancel') state.status = 'cancelled';
      if (method === 'tasks/result') return { content: [], _meta: { 'io.modelcontextprotocol/related-task': params } };
      return { ...state };
    },
    onTaskEvents: (listener: TaskEvents) => {
      events = listener;
    },
    getPrompt: async () => ({}),
    readResource: async () => ({}),
    subscribe: async () => undefined,
    unsubscribe: async () => undefined,
    complete: async () => ({}),
  } as unknown as ServedServer;
  return { served, states, events: () => events! };
}

describe('task routes: routing over a served server', () => {
  function setup() {
    const upstream = taskServer('slow');
    const audit: JsonObject[] = [];
    let now = 0;
    const routes = new TaskRoutes({
      servedServer: (name) => (name === 'slow' ? upstream.served : undefined),
      audit: (entry) => audit.push(entry),
      now: () => now,
    });
    const notified: Record<string, JsonObject[]> = { s1: [], s2: [] };
    routes.sessionOpened('s1', (_m, params) => notified.s1.push(params));
    routes.sessionOpened('s2', (_m, params) => notified.s2.push(params));
    const create = async (session: string) => {
      const result = await upstream.served.callTool('t', {}, undefined, call);
      const entry: JsonObject = {};
      const answer = routes.created({ session, client: 'alice' }, upstream.served, 't', result, entry);
      return { answer, entry };
    };
    return { upstream, routes, notified, audit, create, advance: (ms: number) => (now += ms) };
  }

  it('maps ids both ways, for the owning session only; status goes to the owner alone', async () => {
    const { upstream, routes, notified, create } = setup();
    const { answer, entry } = await create('s1');
    assert.equal((answer.task as JsonObject).taskId, 'slow__u1');
    assert.equal(entry.taskId, 'slow__u1');
    const got = await routes.request({ session: 's1', client: 'alice' }, 'tasks/get', { taskId: 'slow__u1' }, call);
    assert.equal(got.taskId, 'slow__u1');
    const result = await routes.request({ session: 's1', client: 'a' }, 'tasks/result', { taskId: 'slow__u1' }, call);
    assert.deepEqual((result._meta as JsonObject)['io.modelcontextprotocol/related-task'], { taskId: 'slow__u1' });
    await assert.rejects(
      routes.request({ session: 's2', client: 'bob' }, 'tasks/get', { taskId: 'slow__u1' }, call),
      /not found in this session/,
    );
    assert.deepEqual(await routes.request({ session: 's2', client: 'bob' }, 'tasks/list', {}, call), { tasks: [] });
    upstream.events().status({ taskId: 'u1', status: 'completed', _meta: { x: 1 } });
    assert.deepEqual(notified.s1, [{ taskId: 'slow__u1', status: 'completed' }]);
    assert.deepEqual(notified.s2, []);
  });

  it("a status that overtook its task's CreateTaskResult reaches the owner after the task is recorded", async () => {
    const { upstream, notified, create } = setup();
    await create('s1');
    upstream.events().status({ taskId: 'u2', status: 'completed' });
    await create('s1');
    assert.deepEqual(notified.s1, []);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(notified.s1, [{ taskId: 'slow__u2', status: 'completed' }]);
  });

  it('a stopped server fails its unfinished tasks, tells their owners, and answers for them itself', async () => {
    const { upstream, routes, notified, create } = setup();
    await create('s1');
    await create('s1');
    upstream.states.get('u2')!.status = 'completed';
    await routes.request({ session: 's1', client: 'a' }, 'tasks/get', { taskId: 'slow__u2' }, call);
    upstream.events().lost("Server 'slow' crashed");
    assert.deepEqual(
      notified.s1.map((s) => [s.taskId, s.status]),
      [['slow__u1', 'failed']],
    );
    const owner = { session: 's1', client: 'a' };
    const state = await routes.request(owner, 'tasks/get', { taskId: 'slow__u1' }, call);
    assert.match(state.statusMessage as string, /Server 'slow' stopped, and task 'slow__u1' .* lost .*crashed/);
    await assert.rejects(routes.request(owner, 'tasks/result', { taskId: 'slow__u2' }, call), { code: -32005 });
    await assert.rejects(routes.request(owner, 'tasks/cancel', { taskId: 'slow__u1' }, call), { code: -32602 });
    const listed = (await routes.request(owner, 'tasks/list', {}, call)).tasks as JsonObject[];
    assert.deepEqual(
      listed.map((t) => t.status),
      ['failed', 'completed'],
    );
    // A later connection's task of the same upstream id is not mistaken for the lost one.
    upstream.events().status({ taskId: 'u1', status: 'working' });
    assert.equal(notified.s1.length, 1);
  });

  it('forgets a task its server no longer has, and every task of a closed session', async () => {
    const { upstream, routes, create, advance } = setup();
    await create('s1');
    upstream.states.delete('u1');
    const owner = { session: 's1', client: 'a' };
    await assert.rejects(routes.request(owner, 'tasks/get', { taskId: 'slow__u1' }, call), /no longer has task/);
    await assert.rejects(routes.request(owner, 'tasks/get', { taskId: 'slow__u1' }, call), /not found in this session/);
    await create('s1');
    advance(1000); // the task's ttl
    assert.deepEqual(await routes.request(owner, 'tasks/list', {}, call), { tasks: [] });
    await create('s1');
    routes.sessionClosed('s1');
    assert.equal(routes.table.size, 0);
    await assert.rejects(routes.request(owner, 'tasks/list', { cursor: 'x' }, call), { code: -32602 });
  });
});
