// What the catalog lists and the router calls: a supervised upstream, or the broker's own control
// tools served like one under the reserved namespace. The catalog and router know only this shape.
import {
  ErrorCodes,
  McpFailure,
  type JsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '../shared/mcpTypes';
import type { Identity, RequestExtra } from './requestContext';
import type { CallOptions } from '../connection/connection';
import type { Upstream } from '../supervision/upstream';
import { declaresToolTasks, routableTools, type TaskEvents } from './taskRoutes';

/** Who asked, and the request's cancellation and progress. */
export interface ServedCall {
  identity: Identity;
  extra: RequestExtra;
  /** A tools/call's `task` param (2025-11-25 tasks): run it as a task, answer with a CreateTaskResult. */
  task?: JsonObject;
}

export interface ServedServer {
  readonly name: string;
  /** `control` for the broker's own facade (audited as such), `upstream` for a supervised server. */
  readonly kind: 'upstream' | 'control';
  /**
   * Whether its lists are served (live, or cached while it is idle or starting: a call then waits
   * for ensureStarted); when not, `unavailable()` says why.
   */
  readonly available: boolean;
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
  /** The definition's allowedTools / excludeTools (globs over the server's own tool names). */
  readonly toolFilter?: { allow?: readonly string[]; deny?: readonly string[] };
  readonly instructions?: string;
  unavailable(): McpFailure;
  /** Brings a lazy or starting server up before a request goes on; undefined when it is up (or absent). */
  ensureStarted?(): Promise<void> | undefined;
  callTool(name: string, args: JsonObject, meta: JsonObject | undefined, call: ServedCall): Promise<JsonObject>;
  getPrompt(name: string, args: Record<string, string>, call: ServedCall): Promise<JsonObject>;
  readResource(uri: string, call: ServedCall): Promise<JsonObject>;
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  complete(params: JsonObject, call: ServedCall): Promise<JsonObject>;
  /** Whether it takes task-augmented tools/call (it declared `tasks.requests.tools.call`). */
  readonly toolTasks?: boolean;
  /** The protocol revision the broker speaks with it, when it is an upstream that runs. */
  readonly protocol?: string;
  /** tasks/get, tasks/result or tasks/cancel about one of its tasks, under its own task id. */
  taskRequest?(method: string, params: JsonObject, call: ServedCall): Promise<JsonObject>;
  /** Tells `events` its task status notifications and the end of its connection. */
  onTaskEvents?(events: TaskEvents): void;
}

/** An empty completion result (fresh each time: the endpoint may decorate what it sends). */
export function noCompletions(): JsonObject {
  return { completion: { values: [] } };
}

/** The upstream gets its own progress token from our client; the caller's is mapped back. */
function forwardMeta(meta: JsonObject | undefined): JsonObject | undefined {
  if (!meta) return undefined;
  const { progressToken: _drop, ...rest } = meta;
  return Object.keys(rest).length ? rest : undefined;
}

function progressOptions(extra: RequestExtra): Omit<CallOptions, 'timeoutMs'> {
  const onprogress = extra.progressToken === undefined ? undefined : extra.sendProgress;
  // The caller: requests the upstream sends while handling this may be for it (serverRequestDispatch.ts).
  return { signal: extra.signal, onprogress, caller: extra.caller, log: extra.log };
}

/** A supervised upstream as the router sees it: requests forwarded over its MCP connection. */
export class UpstreamServer implements ServedServer {
  readonly kind = 'upstream';
  /** Sessions subscribed per URI: the upstream hears one subscribe and one unsubscribe. */
  private readonly subscriptions = new Map<string, number>();
  /** The upstream's tool list, and the same as listed (task support only where it takes tasks). */
  private listedFrom?: readonly Tool[];
  private listed: readonly Tool[] = [];

  constructor(private readonly upstream: Upstream) {}

  get name(): string {
    return this.upstream.name;
  }

  get available(): boolean {
    return this.upstream.catalogSource !== 'none';
  }

  get tools(): readonly Tool[] {
    const tools = this.upstream.listed.tools;
    // A new connection brings a new list, so its capabilities are read with it.
    if (tools !== this.listedFrom) {
      this.listedFrom = tools;
      this.listed = routableTools(tools, this.toolTasks);
    }
    return this.listed;
  }

  get toolTasks(): boolean {
    return declaresToolTasks(this.upstream.capabilities);
  }

  get protocol(): string | undefined {
    return this.upstream.protocol;
  }

  get prompts(): readonly Prompt[] {
    return this.upstream.listed.prompts;
  }

  get resources(): readonly Resource[] {
    return this.upstream.listed.resources;
  }

  get resourceTemplates(): readonly ResourceTemplate[] {
    return this.upstream.listed.resourceTemplates;
  }

  get toolFilter(): { allow?: readonly string[]; deny?: readonly string[] } {
    return { allow: this.upstream.def.allowedTools, deny: this.upstream.def.excludeTools };
  }

  get instructions(): string | undefined {
    return this.upstream.instructions;
  }

  unavailable(): McpFailure {
    return this.upstream.unavailable();
  }

  ensureStarted(): Promise<void> | undefined {
    return this.upstream.ensureStarted();
  }

  callTool(name: string, args: JsonObject, meta: JsonObject | undefined, call: ServedCall): Promise<JsonObject> {
    const params: JsonObject = { name, arguments: args };
    const fwd = forwardMeta(meta);
    if (fwd) params._meta = fwd;
    if (call.task) params.task = call.task;
    // A CreateTaskResult is read (its task id is mapped), so it must not come back as raw bytes.
    return this.upstream.request('tools/call', params, { ...progressOptions(call.extra), forward: !call.task });
  }

  taskRequest(method: string, params: JsonObject, call: ServedCall): Promise<JsonObject> {
    return this.upstream.request(method, params, progressOptions(call.extra));
  }

  onTaskEvents(events: TaskEvents): void {
    this.upstream.on('taskStatus', (task) => events.status(task));
    let running = this.upstream.state === 'running';
    this.upstream.on('state', () => {
      const now = this.upstream.state === 'running';
      if (running && !now) events.lost(this.upstream.unavailable().message);
      running = now;
    });
  }

  getPrompt(name: string, args: Record<string, string>, call: ServedCall): Promise<JsonObject> {
    return this.upstream.request('prompts/get', { name, arguments: args }, progressOptions(call.extra));
  }

  readResource(uri: string, call: ServedCall): Promise<JsonObject> {
    return this.upstream.request('resources/read', { uri }, { ...progressOptions(call.extra), forward: true });
  }

  async subscribe(uri: string): Promise<void> {
    const count = this.subscriptions.get(uri) ?? 0;
    this.subscriptions.set(uri, count + 1);
    if (count > 0) return;
    await this.upstream.request('resources/subscribe', { uri }, { signal: undefined }).catch((err: Error) => {
      this.subscriptions.set(uri, count);
      throw err;
    });
  }

  async unsubscribe(uri: string): Promise<void> {
    const count = this.subscriptions.get(uri) ?? 0;
    if (count <= 0) return;
    if (count > 1) {
      this.subscriptions.set(uri, count - 1);
      return;
    }
    this.subscriptions.delete(uri);
    if (this.available) await this.upstream.request('resources/unsubscribe', { uri }, {}).catch(() => undefined);
  }

  async complete(params: JsonObject, call: ServedCall): Promise<JsonObject> {
    if (!this.available) return noCompletions();
    // Completion is a convenience: an upstream that fails it offers nothing rather than an error.
    return this.upstream
      .request('completion/complete', params, progressOptions(call.extra))
      .catch(() => noCompletions());
  }
}

/** The error for a server name nothing serves (a per-server session whose server was removed). */
export function noSuchServer(name: string): McpFailure {
  return new McpFailure(ErrorCodes.InvalidParams, `No server named '${name}' in this registry.`);
}
