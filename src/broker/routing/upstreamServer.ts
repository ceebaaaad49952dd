// A supervised upstream as the router sees it (a ServedServer): requests forwarded over its MCP
// connection, with the caller's progress, cancellation and task events mapped through.
import {
  type McpFailure,
  type JsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '../shared/mcpTypes';
import type { CallOptions } from '../connection/connection';
import type { Upstream } from '../supervision/upstream';
import type { RequestExtra } from './requestContext';
import { noCompletions, type ServedCall, type ServedServer, type TaskEvents } from './servedServer';
import { declaresToolTasks, routableTools } from './taskRoutes';

/** The upstream gets its own progress token from our client; the caller's is mapped back. */
function forwardMeta(meta: JsonObject | undefined): JsonObject | undefined {
  if (!meta) return undefined;
  const { progressToken: _drop, ...rest } = meta;
  return Object.keys(rest).length ? rest : undefined;
}

function progressOptions(extra: RequestExtra, forward?: boolean): Omit<CallOptions, 'timeoutMs'> {
  const onprogress = extra.progressToken === undefined ? undefined : extra.sendProgress;
  // The caller: requests the upstream sends while handling this may be for it (serverRequestDispatch.ts).
  const { signal, caller, log, passThrough } = extra;
  return { signal, onprogress, caller, log, passThrough, forward };
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
    return this.upstream.request('tools/call', params, progressOptions(call.extra, !call.task));
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
    return this.upstream.request('resources/read', { uri }, progressOptions(call.extra, true));
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
