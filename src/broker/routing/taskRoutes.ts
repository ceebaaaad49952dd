// Tasks (2025-11-25, experimental) through the broker: which session owns which upstream task, the
// id its caller sees (`<server>__<upstream id>` on /mcp, the upstream's own on /servers/<name>/mcp),
// tasks/get|result|list|cancel routed to the owning upstream, status notifications to the owner only,
// and what a caller is told about a task whose server stopped. The table and id helpers are pure.
import { ErrorCodes, McpFailure, type JsonObject, type Tool } from '../shared/mcpTypes';
import type { ServedCall, ServedServer } from './servedServer';
import { merged } from '../shared/objects';

/** The task methods a client sends; the broker answers them from its own table and the upstreams. */
export const TASK_METHODS = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);

/**
 * What the broker's endpoint declares: task-augmented tools/call (the one kind it routes), listing
 * (the caller's own tasks only) and cancelling. Never sampling or elicitation tasks.
 */
export const BROKER_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** Tasks one session may hold in the broker's table; the oldest is forgotten beyond this. */
export const MAX_TASKS_PER_SESSION = 256;

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Status notifications kept for tasks not recorded yet (see TaskRoutes.early). */
const EARLY_STATUSES = 64;

export function isTerminal(status: unknown): boolean {
  return typeof status === 'string' && TERMINAL.has(status);
}

/** Whether a server's capabilities allow task-augmented tools/call. */
export function declaresToolTasks(capabilities: JsonObject | undefined): boolean {
  const tasks = capabilities?.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  return typeof tasks?.requests?.tools?.call === 'object' && tasks.requests.tools.call !== null;
}

/**
 * A server's tools as the broker lists them. The broker declares tasks for every session, so a tool
 * of a server that did not declare task-augmented calls must not say it supports them: its
 * `execution.taskSupport` is dropped. The same array when nothing changes (lists are cached by it).
 */
export function routableTools(tools: readonly Tool[], toolTasks: boolean): readonly Tool[] {
  if (toolTasks || !tools.some((tool) => hasTaskSupport(tool))) return tools;
  return tools.map((tool) => {
    if (!hasTaskSupport(tool)) return tool;
    const { taskSupport: _drop, ...execution } = tool.execution as JsonObject;
    const { execution: _old, ...rest } = tool;
    return (Object.keys(execution).length ? merged(rest, { execution }) : rest) as Tool;
  });
}

/** Whether a tool offers task-augmented calls ('forbidden' offers nothing: it stays as the server said). */
function hasTaskSupport(tool: Tool): boolean {
  const execution = tool.execution as JsonObject | undefined;
  if (typeof execution !== 'object' || execution === null) return false;
  return execution.taskSupport !== undefined && execution.taskSupport !== 'forbidden';
}

/** The id a caller sees: namespaced by server on the aggregated endpoint, the upstream's own on a per-server one. */
export function exposedTaskId(endpointServer: string | undefined, server: string, upstreamId: string): string {
  return endpointServer === undefined ? `${server}__${upstreamId}` : upstreamId;
}

/** The `task` of a CreateTaskResult, if the result is one. */
export function createdTask(result: JsonObject): JsonObject | undefined {
  const task = result.task as JsonObject | undefined;
  if (!task || typeof task !== 'object' || typeof task.taskId !== 'string' || typeof task.status !== 'string') {
    return undefined;
  }
  return task;
}

/** A Task (or a result carrying its fields) under the caller's id. */
export function underId(task: JsonObject, id: string): JsonObject {
  return merged(task, { taskId: id });
}

/** A tasks/result answer with its related-task metadata under the caller's id. */
export function resultUnderId(result: JsonObject, id: string): JsonObject {
  const meta = result._meta as JsonObject | undefined;
  if (!meta || typeof meta !== 'object' || meta[RELATED_TASK_META] === undefined) return result;
  return merged(result, { _meta: merged(meta, { [RELATED_TASK_META]: { taskId: id } }) });
}

export function taskNotFound(id: string): McpFailure {
  return new McpFailure(
    ErrorCodes.InvalidParams,
    `Failed to retrieve task: task '${id.slice(0, 200)}' not found in this session (tasks belong to the session ` +
      'that created them, and are forgotten when it closes or their ttl ends).',
  );
}

/** One task the broker routes: created on `server` for `session`'s client. */
export interface RoutedTask {
  /** The id the caller sees. */
  id: string;
  session: string;
  client: string;
  server: string;
  upstreamId: string;
  tool: string;
  /** The last state the broker saw, under the caller's id. */
  last: JsonObject;
  /** Set when its server stopped: the task and its result are gone; says so. */
  lost?: string;
  /** When the broker forgets it (its ttl after creation); undefined: when its session closes. */
  expiresAt?: number;
}

/** Every task the broker routes, by owning session and by upstream id. */
export class TaskTable {
  private readonly bySession = new Map<string, Map<string, RoutedTask>>();
  private readonly byUpstream = new Map<string, RoutedTask>();

  add(task: RoutedTask): void {
    let own = this.bySession.get(task.session);
    if (!own) this.bySession.set(task.session, (own = new Map()));
    const earlier = own.get(task.id);
    if (earlier) this.remove(earlier);
    own.set(task.id, task);
    this.byUpstream.set(upstreamKey(task.server, task.upstreamId), task);
    if (own.size > MAX_TASKS_PER_SESSION) this.remove(own.values().next().value!);
  }

  /** The session's task of this id; undefined for another session's, an unknown or an expired one. */
  get(session: string, id: string, now: number): RoutedTask | undefined {
    const task = this.bySession.get(session)?.get(id);
    if (!task) return undefined;
    if (task.expiresAt !== undefined && task.expiresAt <= now) {
      this.remove(task);
      return undefined;
    }
    return task;
  }

  /** The session's own tasks, oldest first. */
  owned(session: string, now: number): RoutedTask[] {
    const own = this.bySession.get(session);
    if (!own) return [];
    return [...own.values()].filter((task) => this.get(session, task.id, now) !== undefined);
  }

  /** The task an upstream's id stands for (whoever owns it). */
  ofUpstream(server: string, upstreamId: string): RoutedTask | undefined {
    return this.byUpstream.get(upstreamKey(server, upstreamId));
  }

  /** The tasks created on a server, every session's. */
  ofServer(server: string): RoutedTask[] {
    return [...this.byUpstream.values()].filter((task) => task.server === server);
  }

  /** Its server no longer knows it: the upstream id stops mapping to it, the session still sees it. */
  detach(task: RoutedTask): void {
    const key = upstreamKey(task.server, task.upstreamId);
    if (this.byUpstream.get(key) === task) this.byUpstream.delete(key);
  }

  remove(task: RoutedTask): void {
    this.detach(task);
    const own = this.bySession.get(task.session);
    if (own?.get(task.id) === task) own.delete(task.id);
    if (own?.size === 0) this.bySession.delete(task.session);
  }

  dropSession(session: string): void {
    for (const task of this.bySession.get(session)?.values() ?? []) this.detach(task);
    this.bySession.delete(session);
  }

  get size(): number {
    return this.byUpstream.size;
  }
}

function upstreamKey(server: string, upstreamId: string): string {
  return `${server}\0${upstreamId}`;
}

/** Why a task is gone: its server stopped (`reason`, as the server's state says it). */
export function lostMessage(task: RoutedTask, reason: string): string {
  return `Server '${task.server}' stopped, and task '${task.id}' and its result are lost with it: ${reason}`;
}

/** The state of an unfinished task once its server stopped: `failed`, saying why. */
export function lostState(task: RoutedTask, message: string, now: number): JsonObject {
  return merged(task.last, { status: 'failed', statusMessage: message, lastUpdatedAt: new Date(now).toISOString() });
}

/** Who asks, on which endpoint: the session owns the tasks it creates. */
export interface TaskCaller {
  session: string;
  client: string;
  /** The server a per-server endpoint serves; undefined on the aggregated one. */
  endpointServer?: string;
}

export interface TaskRouteDeps {
  servedServer(name: string): ServedServer | undefined;
  audit(entry: JsonObject): void;
  now?(): number;
}

type Notify = (method: string, params: JsonObject) => void;

/** Routes task requests to the upstream that owns each task, for the session that created it. */
export class TaskRoutes {
  readonly table = new TaskTable();
  private readonly sinks = new Map<string, Notify>();
  private readonly listening = new WeakSet<ServedServer>();
  /**
   * Status notifications that came before their task was recorded: a quick task's can overtake its
   * CreateTaskResult on the way through the broker. A few are kept, for the task they belong to.
   */
  private readonly early = new Map<string, JsonObject>();

  constructor(private readonly deps: TaskRouteDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** Where the session's notifications go (its GET stream). */
  sessionOpened(session: string, notify: Notify): void {
    this.sinks.set(session, notify);
  }

  /** The session's tasks are forgotten with it (the upstream keeps them until their ttl). */
  sessionClosed(session: string): void {
    this.sinks.delete(session);
    this.table.dropSession(session);
  }

  /**
   * The answer to a task-augmented tools/call: a CreateTaskResult is recorded as the caller's task
   * and returned under the caller's id (set in `audit.taskId`); any other result passes as it is.
   */
  created(caller: TaskCaller, server: ServedServer, tool: string, result: JsonObject, audit: JsonObject): JsonObject {
    const task = createdTask(result);
    if (!task) return result;
    this.listen(server);
    const id = exposedTaskId(caller.endpointServer, server.name, task.taskId as string);
    const ttl = typeof task.ttl === 'number' && task.ttl > 0 ? task.ttl : undefined;
    const last = underId(task, id);
    this.table.add({
      id,
      session: caller.session,
      client: caller.client,
      server: server.name,
      upstreamId: task.taskId as string,
      tool,
      last,
      expiresAt: ttl === undefined ? undefined : this.now() + ttl,
    });
    audit.taskId = id;
    const early = this.early.get(upstreamKey(server.name, task.taskId as string));
    if (early) {
      this.early.delete(upstreamKey(server.name, task.taskId as string));
      // After the CreateTaskResult is on its way: the caller learns of the task before its change.
      setImmediate(() => this.onStatus(server.name, early));
    }
    return merged(result, { task: last });
  }

  /** tasks/get, tasks/result, tasks/list or tasks/cancel from a caller. */
  async request(caller: TaskCaller, method: string, params: JsonObject, call: ServedCall): Promise<JsonObject> {
    if (method === 'tasks/list') return this.list(caller, params, call);
    if (typeof params.taskId !== 'string') {
      throw new McpFailure(ErrorCodes.InvalidParams, `${method} needs a string "taskId"`);
    }
    const task = this.table.get(caller.session, params.taskId, this.now()) ?? throwing(taskNotFound(params.taskId));
    switch (method) {
      case 'tasks/get':
        return this.get(task, call);
      case 'tasks/result':
        return this.result(task, call);
      default:
        return this.cancel(task, call);
    }
  }

  private async get(task: RoutedTask, call: ServedCall): Promise<JsonObject> {
    if (task.lost !== undefined) return task.last;
    const state = await this.forward(task, 'tasks/get', call);
    return (task.last = underId(state, task.id));
  }

  private async result(task: RoutedTask, call: ServedCall): Promise<JsonObject> {
    if (task.lost !== undefined) throw new McpFailure(ErrorCodes.UpstreamUnavailable, task.lost);
    return resultUnderId(await this.forward(task, 'tasks/result', call), task.id);
  }

  private async cancel(task: RoutedTask, call: ServedCall): Promise<JsonObject> {
    const started = performance.now();
    const entry: JsonObject = { event: 'task-cancel', client: task.client, server: task.server, taskId: task.id };
    try {
      if (task.lost !== undefined) {
        const status = String(task.last.status);
        const refusal = `Cannot cancel task: already in terminal status '${status}'. ${task.lost}`;
        throw new McpFailure(ErrorCodes.InvalidParams, refusal);
      }
      const state = underId(await this.forward(task, 'tasks/cancel', call), task.id);
      task.last = state;
      this.record(entry, started);
      return state;
    } catch (err) {
      this.record(entry, started, err);
      throw err;
    }
  }

  /** The caller's own tasks across every server, in one page (the broker hands out no cursors). */
  private async list(caller: TaskCaller, params: JsonObject, call: ServedCall): Promise<JsonObject> {
    if (params.cursor !== undefined) {
      throw new McpFailure(ErrorCodes.InvalidParams, 'Invalid cursor: tasks/list through the broker has one page.');
    }
    const owned = this.table.owned(caller.session, this.now());
    // One the server no longer has is left out; one it cannot answer for now shows its last state.
    const state = (task: RoutedTask): Promise<JsonObject | undefined> =>
      this.get(task, call).catch((err: { code?: unknown }) =>
        err.code === ErrorCodes.InvalidParams ? undefined : task.last,
      );
    const states = await Promise.all(owned.map(state));
    return { tasks: states.filter((state): state is JsonObject => state !== undefined) };
  }

  /** A request about one task, to its server under the server's own id. */
  private async forward(task: RoutedTask, method: string, call: ServedCall): Promise<JsonObject> {
    const server = this.deps.servedServer(task.server);
    if (!server?.taskRequest) {
      throw new McpFailure(ErrorCodes.UpstreamUnavailable, `No server named '${task.server}' is in the registry now.`);
    }
    try {
      return await server.taskRequest(method, { taskId: task.upstreamId }, askingUnderId(call, task));
    } catch (err) {
      // The server no longer knows it (expired, or never heard of it after a restart): neither does the broker.
      if ((err as { code?: unknown }).code === ErrorCodes.InvalidParams && method !== 'tasks/cancel') {
        this.table.remove(task);
        throw new McpFailure(
          ErrorCodes.InvalidParams,
          `Failed to retrieve task: server '${task.server}' no longer has task '${task.id}' (it may have expired).`,
        );
      }
      throw err;
    }
  }

  private listen(server: ServedServer): void {
    if (this.listening.has(server) || !server.onTaskEvents) return;
    this.listening.add(server);
    server.onTaskEvents({
      status: (state) => this.onStatus(server.name, state),
      lost: (reason) => this.onLost(server.name, reason),
    });
  }

  private onStatus(server: string, state: JsonObject): void {
    if (typeof state.taskId !== 'string') return;
    const task = this.table.ofUpstream(server, state.taskId);
    if (!task) {
      // Not recorded yet (or forgotten): kept a while in case its CreateTaskResult is still on the way.
      this.early.set(upstreamKey(server, state.taskId), state);
      if (this.early.size > EARLY_STATUSES) this.early.delete(this.early.keys().next().value!);
      return;
    }
    const { _meta: _drop, ...fields } = state;
    task.last = underId(fields, task.id);
    this.sinks.get(task.session)?.('notifications/tasks/status', task.last);
  }

  /** Its server stopped: its tasks are gone; an unfinished one turns `failed`, and its owner is told. */
  private onLost(server: string, reason: string): void {
    const now = this.now();
    for (const task of this.table.ofServer(server)) {
      this.table.detach(task);
      task.lost = lostMessage(task, reason);
      if (isTerminal(task.last.status)) continue;
      task.last = lostState(task, task.lost, now);
      this.sinks.get(task.session)?.('notifications/tasks/status', task.last);
    }
  }

  private record(entry: JsonObject, started: number, error?: unknown): void {
    this.deps.audit(
      merged(
        entry,
        { ms: Math.round((performance.now() - started) * 100) / 100, outcome: error ? 'error' : 'ok' },
        error ? { error: (error as Error).message } : {},
      ),
    );
  }
}

/**
 * The call, with the requests its server sends the caller about this task (elicitation during
 * tasks/result, for an input_required task) naming the task by the caller's id.
 */
function askingUnderId(call: ServedCall, task: RoutedTask): ServedCall {
  const caller = call.extra.caller;
  if (!caller) return call;
  const ask: typeof caller.ask = (request) => {
    const meta = request.params._meta as JsonObject | undefined;
    const related = meta?.[RELATED_TASK_META] as JsonObject | undefined;
    if (related?.taskId !== task.upstreamId) return caller.ask(request);
    const params = merged(request.params, { _meta: merged(meta, { [RELATED_TASK_META]: { taskId: task.id } }) });
    return caller.ask(merged(request, { params }));
  };
  return merged(call, { extra: merged(call.extra, { caller: merged(caller, { ask }) }) });
}

function throwing(error: McpFailure): never {
  throw error;
}
