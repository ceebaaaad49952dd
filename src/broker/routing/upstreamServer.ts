// A supervised upstream as the router sees it (a ServedServer): requests forwarded over its MCP
// connection, with the caller's progress, cancellation and task events mapped through.
import {
  ErrorCodes,
  McpFailure,
  type JsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '../shared/mcpTypes';
import type { CacheHints, CallLog, CallOptions, ListKey } from '../connection/connection';
import type { Redactor } from '../trust/redact';
import { redactParams, redactResult } from '../trust/resultRedaction';
import type { Upstream } from '../supervision/upstream';
import { withTraceId, type TraceParent } from '../telemetry/telemetry';
import type { RequestExtra } from './requestContext';
import { noCompletions, type ServedCall, type ServedServer, type TaskEvents } from './servedServer';
import { declaresToolTasks, routableTools } from './taskRoutes';

/** The upstream gets its own progress token from our client; the caller's is mapped back. */
function forwardMeta(meta: JsonObject | undefined): JsonObject | undefined {
  if (!meta) return undefined;
  const { progressToken: _drop, ...rest } = meta;
  return Object.keys(rest).length ? rest : undefined;
}

function progressOptions(extra: RequestExtra, upstream: Upstream, forward?: boolean): Omit<CallOptions, 'timeoutMs'> {
  // Progress and log messages pass the same redaction as the result (guardrails: resultRedaction.ts).
  const secrets = upstream.resultRedactor;
  const send = extra.sendProgress;
  const onprogress =
    extra.progressToken === undefined
      ? undefined
      : secrets
        ? (p: Parameters<typeof send>[0]) => send(redactParams(p, secrets))
        : send;
  // The caller: requests the upstream sends while handling this may be for it (serverRequestDispatch.ts).
  const { caller, passThrough, cancel, trace } = extra;
  const log = extra.log && secrets ? redactedLog(extra.log, secrets) : extra.log;
  // The cancellation as it came: a CallCancel is passed without making its AbortSignal (callCancel.ts).
  if (cancel) return { cancel, onprogress, caller, log, passThrough, forward, trace };
  return { signal: extra.signal, onprogress, caller, log, passThrough, forward, trace };
}

function redactedLog(log: CallLog, secrets: Redactor): CallLog {
  return { level: log.level, send: (params) => log.send(redactParams(params, secrets)) };
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

  listHints(key: ListKey): CacheHints | undefined {
    return this.upstream.listHints(key);
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

  get appPages(): readonly Tool[] | undefined {
    return this.upstream.listed.appPages;
  }

  refreshAppPages(): void {
    this.upstream.refreshAppPages();
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

  note(line: string): void {
    this.upstream.logs.push(line);
  }

  ensureStarted(trace?: TraceParent): Promise<void> | undefined {
    return this.upstream.ensureStarted(trace);
  }

  callTool(name: string, args: JsonObject, meta: JsonObject | undefined, call: ServedCall): Promise<JsonObject> {
    const params: JsonObject = { name, arguments: args };
    const fwd = forwardMeta(meta);
    if (fwd) params._meta = fwd;
    if (call.task) params.task = call.task;
    this.refuseStaleState(call.extra);
    // A CreateTaskResult is read (its task id is mapped), so it must not come back as raw bytes.
    const answer = this.upstream.request('tools/call', params, progressOptions(call.extra, this.upstream, !call.task));
    return this.redacted(answer, call.extra.trace);
  }

  /**
   * What the upstream answers, its secret values replaced (guardrails: resultRedaction.ts); as it is
   * without any. The line saying so is written after the answer came: it is given the request's trace.
   */
  private redacted(answer: Promise<JsonObject>, trace: TraceParent | undefined): Promise<JsonObject> {
    const secrets = this.upstream.resultRedactor;
    if (!secrets) return answer;
    const note = (n: number) =>
      this.upstream.logs.push(withTraceId(`redacted its secret values from ${n} string(s) of a result`, trace));
    return answer.then((result) => redactResult(result, secrets, note));
  }

  taskRequest(method: string, params: JsonObject, call: ServedCall): Promise<JsonObject> {
    return this.redacted(
      this.upstream.request(method, params, progressOptions(call.extra, this.upstream)),
      call.extra.trace,
    );
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
    this.refuseStaleState(call.extra);
    const options = progressOptions(call.extra, this.upstream);
    return this.redacted(this.upstream.request('prompts/get', { name, arguments: args }, options), call.extra.trace);
  }

  readResource(uri: string, call: ServedCall): Promise<JsonObject> {
    this.refuseStaleState(call.extra);
    return this.redacted(
      this.upstream.request('resources/read', { uri }, progressOptions(call.extra, this.upstream, true)),
      call.extra.trace,
    );
  }

  /**
   * A retry's requestState that the broker no longer parks goes to the server, whose own it may be;
   * a server spoken to in 2025-11-25 never makes one, so it was the broker's and has expired.
   */
  private refuseStaleState(extra: RequestExtra): void {
    if (extra.passThrough?.requestState === undefined || this.protocol === '2026-07-28') return;
    throw new McpFailure(
      ErrorCodes.InvalidParams,
      'Invalid params: this requestState is unknown or expired (a parked call is cancelled when its caller ' +
        "does not retry within the broker's park timeout, 5 minutes unless `serve --park-timeout` says otherwise); " +
        'call again without requestState',
    );
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
      .request('completion/complete', params, progressOptions(call.extra, this.upstream))
      .catch(() => noCompletions());
  }
}
