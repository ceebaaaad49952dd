// Routes every MCP request of a session: where its names resolve (the session's scope), what the
// caller may see and call (the access policy), which served server answers, and what is audited.
// Prompts, resources and completions go on to contentRoutes.ts; the tool call stays here, where each
// feature on its path (guardrails, result limits, app calls, telemetry, tasks) is a single call into
// its own module, so the order of checks on a call stays readable in one place.
import { FACADE_NAMESPACE, type Catalog, type Route } from '../catalog/catalog';
import type { AccessPolicy, ToolProfile, ToolScope } from './accessPolicy';
import {
  ErrorCodes,
  McpFailure,
  type JsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '../shared/mcpTypes';
import type { CacheHints, ListKey } from '../connection/connection';
import type { RequestExtra, Router, SessionContext } from './requestContext';
import { appOnlyTool, type CallOrigin } from '../catalog/apps/appCalls';
import { toolQuarantined } from '../trust/pins';
import { noSuchServer, servedCall, type ServedServer } from './servedServer';
import { ContentRoutes } from './contentRoutes';
import { AggregatedScope, ServerScope, type SessionScope } from './sessionScope';
import { TaskRoutes, type TaskCaller } from './taskRoutes';
import { OversizedResults } from './oversizedResults';
import { traceIdOf } from '../telemetry/telemetry';
import { noteCallFailed, noteResultCut } from './callNotes';
import { merged } from '../shared/objects';

const AGGREGATED_INSTRUCTIONS =
  'MCP Switchboard: tools, prompts and resources of every server in this workspace, named <server>__<name>. ' +
  `Tools under ${FACADE_NAMESPACE}__ control the broker itself.`;

export interface RouterDeps {
  catalog: Catalog;
  access: AccessPolicy;
  /** The served server of a name: a supervised upstream or the facade. */
  servedServer(name: string): ServedServer | undefined;
  /** Whether a supervised upstream of this name exists (the per-server endpoint serves only those). */
  isUpstream(name: string): boolean;
  /** Applies a catalog rebuild that is pending (an upstream just came back), before a name misses. */
  settleCatalog(): void;
  audit(entry: JsonObject): void;
  /** Sends notifications/tools/list_changed to one session (its found tools grew). */
  toolsChanged(sessionId: string): void;
  /** A tools/list is being answered (the broker lets held upstream starts go after the first). */
  toolsListed?(): void;
  /** The scope a facade tool (`switchboard__…`) needs; undefined for any other name. */
  facadeToolScope(name: string): ToolScope | undefined;
  /**
   * The guardrails (src/broker/trust/guardrails/): throws the refusal the agent sees when a rule or limit of
   * policies.d/ refuses the call, notes the deciding rule in the audit entry; else what ends the
   * call's slot (undefined: nothing in force, nothing to end; a promise only while the operator is asked).
   */
  guard?(
    call: GuardedCall,
    audit: JsonObject,
    signal: () => AbortSignal,
  ): GuardRelease | Promise<GuardRelease> | undefined;
}

/** A tool call as the guardrails judge it: who calls which tool of which server, with what. */
export interface GuardedCall {
  client: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  args: JsonObject;
}

/** Ends an admitted call's slot in the guardrail limits (calls at once); calling it again does nothing. */
export type GuardRelease = () => void;

/** The facade tools the router answers or follows up itself, by their own names. */
const FIND_TOOLS = 'find_tools';
const CALL_TOOL = 'call_tool';

/** Whose cut results a request may read: its session's; a stateless request has none, so its client's. */
const resultsKey = (ctx: SessionContext): string =>
  ctx.sessionId.startsWith('stateless:') ? `client:${ctx.identity.client}` : ctx.sessionId;

export class BrokerRouter implements Router {
  private readonly scopes = new WeakMap<SessionContext, SessionScope>();
  /** Tool lists narrowed by a profile, per listed array and profile object (both replaced on change). */
  private readonly profiled = new WeakMap<Tool[], WeakMap<ToolProfile, Tool[]>>();
  private readonly tasks: TaskRoutes;
  private readonly oversized = new OversizedResults();
  private readonly content: ContentRoutes;

  constructor(private readonly deps: RouterDeps) {
    this.content = new ContentRoutes(deps, (ctx) => this.scopeOf(ctx));
    this.tasks = new TaskRoutes({
      servedServer: (name) => deps.servedServer(name),
      audit: (entry) => deps.audit(entry),
    });
  }

  hasServer(name: string): boolean {
    return this.deps.access.servesServerEndpoint(name, this.deps.isUpstream(name));
  }

  instructions(server?: string): string | undefined {
    if (!server) return AGGREGATED_INSTRUCTIONS;
    const served = this.deps.servedServer(server);
    // An upstream's instructions changed since they were pinned are not served (pins.ts).
    return served && this.deps.catalog.instructionsOf(served);
  }

  listTools(ctx: SessionContext): Tool[] {
    // A list asked right after an upstream came up must already show it (status says `running`).
    this.deps.settleCatalog();
    this.deps.toolsListed?.();
    const scope = this.scopeOf(ctx);
    const listed = this.profiledTools(ctx, scope);
    // toolMode search: the facade tools it may call, the pinned ones and what this session found.
    const pinned = scope instanceof AggregatedScope ? this.deps.access.pinnedTools(ctx.identity) : undefined;
    if (!pinned || !(scope instanceof AggregatedScope)) return listed;
    const scopes = this.deps.access.scopes(ctx.identity);
    return scope.found.narrow(listed, pinned, scopes, (name) => {
      const needs = this.deps.facadeToolScope(name);
      return needs !== undefined && needs !== 'operator' && scopes.includes(needs);
    });
  }

  /**
   * A per-server endpoint's list carries its server's cache hints, private when the caller's tool
   * profile narrows it (the list is then this token's own); /mcp merges every server and the
   * broker's own tools, so it has none to give.
   */
  listHints(ctx: SessionContext, key: ListKey): CacheHints | undefined {
    if (ctx.server === undefined) return undefined;
    const hints = this.deps.servedServer(ctx.server)?.listHints?.(key);
    if (!hints || key !== 'tools' || !this.deps.access.profileOf(ctx.identity)) return hints;
    return merged(hints, { cacheScope: 'private' });
  }

  private profiledTools(ctx: SessionContext, scope: SessionScope): Tool[] {
    const all = scope.tools();
    const profile = this.deps.access.profileOf(ctx.identity);
    if (!profile) return all;
    let byProfile = this.profiled.get(all);
    if (!byProfile) this.profiled.set(all, (byProfile = new WeakMap()));
    let list = byProfile.get(profile);
    if (!list) {
      list = all.filter((tool) => {
        const route = scope.resolveTool(tool.name);
        return route !== undefined && this.deps.access.allowsTool(ctx.identity, route.server, route.exposed, profile);
      });
      byProfile.set(profile, list);
    }
    return list;
  }

  async callTool(
    ctx: SessionContext,
    name: string,
    args: JsonObject,
    meta: JsonObject | undefined,
    extra: RequestExtra,
    task?: JsonObject,
  ): Promise<JsonObject> {
    const scope = this.scopeOf(ctx);
    // An app's page calls its own server's tools by their own names (MCP Apps): bound to that server only.
    const fromApp = this.appRoute(scope, name);
    const route =
      fromApp ??
      this.resolveTool(scope, name) ??
      (await this.resolveAfterFirstStart(ctx, scope, name)) ??
      this.refuseUnlisted(ctx, scope, name);
    const appOnly = route.appOnly ?? this.deps.catalog.resolveTool(route.exposed)?.appOnly;
    if (appOnly && !fromApp && scope instanceof AggregatedScope) {
      throw appOnlyTool(route.exposed, route.server, route.name);
    }
    // Only an app may call an app-only tool (its host enforces that on the per-server endpoint).
    const origin: CallOrigin | undefined = fromApp || appOnly ? 'app' : undefined;
    const server = this.target(route.server);
    if (server.kind === 'control' && route.name === CALL_TOOL) return this.callThrough(ctx, args, meta, extra);
    // The audit entry, who first (record() completes it in place: no copy per call).
    const { client, operator } = ctx.identity;
    const entry: JsonObject =
      server.kind === 'control'
        ? { client, operator, event: 'facade', tool: route.exposed }
        : { client, operator, event: 'call', server: route.server, tool: route.name };
    if (origin) entry.origin = origin;
    if (task) entry.task = true;
    // The per-call path: every agent pays it on every call, so it is kept to plain checks and one
    // await of the upstream (docs/performance.md). A per-call hook (telemetry, guardrails) is one
    // call into its own folder here, around `server.callTool`, next to the audit record.
    const started = performance.now();
    let release: GuardRelease | undefined;
    try {
      if (!this.deps.access.allowsTool(ctx.identity, route.server, route.exposed)) {
        const who = ctx.identity.client;
        throw new McpFailure(ErrorCodes.Forbidden, `Tool '${name}' is not in client '${who}''s tool profile.`);
      }
      // The guardrails (policies.d/): the deciding rule, then the limits; before a lazy server starts.
      const guard = this.deps.guard?.(
        { client: ctx.identity.client, server: route.server, tool: route.name, args },
        entry,
        // Read only if the operator is asked: a call's AbortSignal is made on demand (callCancel.ts).
        () => extra.signal,
      );
      release = guard instanceof Promise ? await guard : guard;
      const starting = server.ensureStarted?.(extra.trace);
      if (starting) await starting;
      // The name was resolved against the last catalog build; a lazy start (or a list_changed) may
      // have brought a list since whose tool is held back: judged again now, before the call goes on.
      if (server.kind === 'upstream') {
        this.deps.settleCatalog();
        if (this.deps.catalog.holds(server, route.name)) throw toolQuarantined(route.server, route.name);
      }
      let result: JsonObject;
      if (!task) {
        result = await server.callTool(route.name, args, meta, servedCall(ctx, extra, origin));
        if (server.kind === 'control' && route.name === FIND_TOOLS) this.addFound(ctx, scope, result);
      } else {
        result = await this.callAsTask(ctx, server, route, name, args, meta, extra, task, entry);
      }
      release?.();
      // A tool that answered with an error result ran, but did not do what was asked: say so.
      if (result.isError === true) entry.isError = true;
      this.record(entry, started, undefined, extra);
      // Guardrails: a result over the client's limit becomes its head, a note and a link to the rest.
      if (task || server.kind !== 'upstream') return result;
      const fitted = this.oversized.fit(resultsKey(ctx), this.deps.access.resultLimit(ctx.identity), result);
      if (fitted !== result) noteResultCut(server, route.name, ctx.identity.client, extra);
      return fitted;
    } catch (err) {
      release?.();
      this.record(entry, started, err, extra);
      if (server.kind === 'upstream') noteCallFailed(server, route.name, err, extra);
      throw err;
    }
  }

  /** A task-augmented tools/call (2025-11-25 tasks): answered with a CreateTaskResult. */
  private async callAsTask(
    ctx: SessionContext,
    server: ServedServer,
    route: Route,
    name: string,
    args: JsonObject,
    meta: JsonObject | undefined,
    extra: RequestExtra,
    task: JsonObject,
    entry: JsonObject,
  ): Promise<JsonObject> {
    if (!server.toolTasks) {
      // A 2026-07-28 server's tasks are the io.modelcontextprotocol/tasks extension, another shape.
      const why =
        server.protocol === '2026-07-28'
          ? 'speaks 2026-07-28, where tasks are the io.modelcontextprotocol/tasks extension, which the broker ' +
            'does not translate into 2025-11-25 tasks'
          : 'does not support task-augmented tool calls';
      throw new McpFailure(
        ErrorCodes.MethodNotFound,
        `Tool '${name}' cannot run as a task: server '${route.server}' ${why}. Call it without "task".`,
      );
    }
    const origin = entry.origin as CallOrigin | undefined;
    const result = await server.callTool(route.name, args, meta, merged(servedCall(ctx, extra), { origin, task }));
    return this.tasks.created(this.taskCaller(ctx), server, route.name, result, entry);
  }

  taskRequest(ctx: SessionContext, method: string, params: JsonObject, extra: RequestExtra): Promise<JsonObject> {
    return this.tasks.request(this.taskCaller(ctx), method, params, servedCall(ctx, extra));
  }

  sessionOpened(ctx: SessionContext, notify: (method: string, params: JsonObject) => void): void {
    this.tasks.sessionOpened(ctx.sessionId, notify);
  }

  sessionClosed(ctx: SessionContext): void {
    this.tasks.sessionClosed(ctx.sessionId);
    this.oversized.sessionClosed(ctx.sessionId);
  }

  /**
   * switchboard__call_tool: the named tool called exactly as a direct tools/call would call it
   * (resolution, tool profile, audit), so it can never reach a tool the caller could not call itself.
   */
  private callThrough(ctx: SessionContext, args: JsonObject, meta: JsonObject | undefined, extra: RequestExtra) {
    const { name, arguments: inner = {} } = args;
    if (typeof name !== 'string' || !name) {
      throw new McpFailure(ErrorCodes.InvalidParams, `${FACADE_NAMESPACE}__${CALL_TOOL} needs a string 'name'.`);
    }
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
      throw new McpFailure(ErrorCodes.InvalidParams, `'arguments' must be an object (the tool's arguments).`);
    }
    if (name === `${FACADE_NAMESPACE}__${CALL_TOOL}`) {
      throw new McpFailure(ErrorCodes.InvalidParams, `${name} cannot call itself; name the tool to call.`);
    }
    return this.callTool(ctx, name, inner as JsonObject, meta, extra);
  }

  /** In toolMode search, what find_tools found joins the session's list; only that session hears of it. */
  private addFound(ctx: SessionContext, scope: SessionScope, result: JsonObject): void {
    if (!(scope instanceof AggregatedScope) || result.isError || !this.deps.access.pinnedTools(ctx.identity)) return;
    const found = (result.structuredContent as { tools?: { name: string }[] } | undefined)?.tools ?? [];
    if (scope.found.add(found.map((t) => t.name))) this.deps.toolsChanged(ctx.sessionId);
  }

  listPrompts(ctx: SessionContext): Prompt[] {
    return this.content.listPrompts(ctx);
  }

  getPrompt(ctx: SessionContext, name: string, args: Record<string, string>, extra: RequestExtra): Promise<JsonObject> {
    return this.content.getPrompt(ctx, name, args, extra);
  }

  listResources(ctx: SessionContext): Resource[] {
    return this.content.listResources(ctx);
  }

  listResourceTemplates(ctx: SessionContext): ResourceTemplate[] {
    return this.content.listResourceTemplates(ctx);
  }

  async readResource(ctx: SessionContext, uri: string, extra: RequestExtra): Promise<JsonObject> {
    if (this.oversized.owns(uri)) return this.oversized.read(resultsKey(ctx), uri);
    return this.content.readResource(ctx, uri, extra);
  }

  subscribe(ctx: SessionContext, uri: string): Promise<void> {
    return this.content.subscribe(ctx, uri);
  }

  unsubscribe(ctx: SessionContext, uri: string): Promise<void> {
    return this.content.unsubscribe(ctx, uri);
  }

  /** The route of an app's unprefixed call on the aggregated endpoint, when the session opened its server's page. */
  private appRoute(scope: SessionScope, name: string): Route | undefined {
    if (!(scope instanceof AggregatedScope)) return undefined;
    const server = scope.apps.owner(name, (s, n) => this.deps.catalog.server(s).exposedTool(n) !== undefined);
    const exposed = server === undefined ? undefined : this.deps.catalog.server(server).exposedTool(name);
    if (server === undefined || exposed === undefined) return undefined;
    return { server, name, exposed, appOnly: this.deps.catalog.resolveTool(exposed)?.appOnly };
  }

  complete(ctx: SessionContext, params: JsonObject, extra: RequestExtra): Promise<JsonObject> {
    return this.content.complete(ctx, params, extra);
  }

  /** The session's scope, resolved on its first request and kept for its lifetime. */
  private scopeOf(ctx: SessionContext): SessionScope {
    let scope = this.scopes.get(ctx);
    if (!scope) {
      scope =
        ctx.server === undefined
          ? new AggregatedScope(this.deps.catalog, this.deps.servedServer)
          : new ServerScope(this.deps.catalog, ctx.server);
      this.scopes.set(ctx, scope);
    }
    return scope;
  }

  /** Resolves a tool name, once more after a pending catalog rebuild if it misses. */
  private resolveTool(scope: SessionScope, name: string): Route | undefined {
    const route = scope.resolveTool(name);
    if (route) return route;
    this.deps.settleCatalog();
    return scope.resolveTool(name);
  }

  /**
   * A name that misses because its server has never listed its tools and is starting now (a first
   * start; a lazy server learning its catalog) resolves once the start settles, as a call to a
   * listed tool of a starting server waits for it: a client that knows the name (from a previous
   * broker run, or a config) is not told "is starting" for a start that takes a moment.
   */
  private async resolveAfterFirstStart(
    ctx: SessionContext,
    scope: SessionScope,
    name: string,
  ): Promise<Route | undefined> {
    const owner = scope.toolOwner(name);
    const server = owner && this.deps.servedServer(owner.server);
    if (!server || server.kind !== 'upstream' || server.available) return undefined;
    // Waiting keeps a lazy server up past its learning run: only for a client that may call it.
    if (!this.deps.access.allowsTool(ctx.identity, owner.server, owner.exposed)) return undefined;
    const starting = server.ensureStarted?.();
    if (!starting) return undefined;
    await starting;
    return this.resolveTool(scope, name);
  }

  /** Refuses a call of a name that does not resolve; a quarantined tool's refusal is audited (a typo's is not). */
  private refuseUnlisted(ctx: SessionContext, scope: SessionScope, name: string): never {
    const failure = this.notListed(ctx, scope, name);
    const held = this.deps.catalog.heldTool(name, scope.server);
    if (held && failure.code === ErrorCodes.Forbidden) {
      this.record(
        {
          client: ctx.identity.client,
          operator: ctx.identity.operator,
          event: 'call',
          server: held.server,
          tool: held.name,
          quarantined: true,
        },
        performance.now(),
        failure,
      );
    }
    throw failure;
  }

  /** Why a tool name does not resolve: held back after its definition changed (pins.ts), or unknown. */
  private notListed(ctx: SessionContext, scope: SessionScope, name: string): McpFailure {
    const held = this.deps.catalog.heldTool(name, scope.server);
    if (held && this.deps.access.allowsTool(ctx.identity, held.server, held.exposed)) {
      return toolQuarantined(held.server, held.name);
    }
    return scope.unknownTool(name);
  }

  private target(name: string): ServedServer {
    const server = this.deps.servedServer(name);
    if (!server) throw noSuchServer(name);
    return server;
  }

  private taskCaller(ctx: SessionContext): TaskCaller {
    return { session: ctx.sessionId, client: ctx.identity.client, endpointServer: ctx.server };
  }

  /**
   * Audits a call: `entry` is that call's own, made with its client and operator first, and is
   * completed in place (the per-call path: a copy with spreads took V8's slow path on every call).
   */
  private record(entry: JsonObject, started: number, error?: unknown, extra?: RequestExtra): void {
    entry.ms = Math.round((performance.now() - started) * 100) / 100;
    entry.outcome = error ? 'error' : 'ok';
    if (error) {
      entry.error = (error as Error).message;
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'number') entry.code = code;
    }
    const trace = traceIdOf(extra?.trace);
    if (trace) entry.traceId = trace;
    this.deps.audit(entry);
  }
}
