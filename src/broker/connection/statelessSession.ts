// What every 2026-07-28 upstream connection does, whatever carries it (a stdio pipe or HTTP POSTs):
// the broker's `_meta` envelope on every request, change notifications on subscriptions/listen, and
// an input_required result answered by asking the caller (elicitation/sampling/roots as the
// caller's era has them) and retrying with the answers.
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';
import { copied, copyWith, copyWithout, merged } from '../shared/objects';
import { rememberedJson } from '../shared/rawJson';
import {
  signalOf,
  type CacheHints,
  type CallOptions,
  type ConnectedInfo,
  type ConnectionEvents,
  type InputPassThrough,
  type ListKey,
  type UpstreamConnection,
} from './connection';
import { ConnectionError } from './connectionError';
import { BROKER_CLIENT_CAPABILITIES } from './serverRequests';
import { listAllPages } from './listPages';
import { paramHeaders, type ParamHeader } from './statelessHeaders';

export const STATELESS_PROTOCOL = '2026-07-28';

/** Retries of one call with the caller's answers before the broker gives up on the upstream. */
const MAX_INPUT_ROUNDS = 8;

const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** The methods that may answer input_required. */
const INPUT_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** The broker's per-request envelope: who it is and what it can answer on a caller's behalf. */
export function brokerEnvelope(answersServerRequests: boolean): JsonObject {
  return {
    'io.modelcontextprotocol/protocolVersion': STATELESS_PROTOCOL,
    'io.modelcontextprotocol/clientCapabilities': answersServerRequests ? BROKER_CLIENT_CAPABILITIES : {},
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-switchboard', version: '0.1.0' },
  };
}

/** What a server/discover result says, as the connection's info; undefined if it is not one. */
export function infoFromDiscover(result: JsonObject): ConnectedInfo | undefined {
  const versions = result.supportedVersions;
  if (!Array.isArray(versions) || !versions.includes(STATELESS_PROTOCOL)) return undefined;
  const meta = (result._meta ?? {}) as JsonObject;
  const server = (meta['io.modelcontextprotocol/serverInfo'] ?? {}) as { name?: unknown; version?: unknown };
  return {
    serverName: typeof server.name === 'string' ? server.name : undefined,
    serverVersion: typeof server.version === 'string' ? server.version : undefined,
    instructions: typeof result.instructions === 'string' ? result.instructions : undefined,
    capabilities: (result.capabilities ?? {}) as JsonObject,
    protocol: STATELESS_PROTOCOL,
  };
}

/** An input_required result, also when it came as the upstream's unread bytes. */
function inputRequired(result: JsonObject): JsonObject | undefined {
  if (result.resultType === 'input_required') return result;
  const raw = rememberedJson(result);
  if (raw === undefined || !raw.includes('"input_required"')) return undefined;
  const parsed = JSON.parse(raw.toString()) as JsonObject;
  return parsed.resultType === 'input_required' ? parsed : undefined;
}

/** The result fields only 2026-07-28 defines, which a 2025-11-25 caller is not sent. */
const MODERN_ONLY_FIELDS = ['resultType', 'ttlMs', 'cacheScope'];
const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** A 2026-07-28 result as a 2025-11-25 caller may receive it: without the fields only 2026 defines. */
function forLegacyCaller(result: JsonObject): JsonObject {
  const raw = rememberedJson(result);
  if (
    raw !== undefined &&
    !MODERN_ONLY_FIELDS.some((k) => raw.includes(`"${k}":`)) &&
    !raw.includes(META_SERVER_INFO)
  ) {
    return result;
  }
  const source = raw === undefined ? result : (JSON.parse(raw.toString()) as JsonObject);
  // Key by key, without `delete` (shared/objects.ts says why).
  const out: JsonObject = copyWithout(source, ...MODERN_ONLY_FIELDS, '_meta');
  const meta = source._meta as JsonObject | undefined;
  if (meta && typeof meta === 'object' && META_SERVER_INFO in meta) {
    const rest = copyWithout(meta, META_SERVER_INFO);
    if (Object.keys(rest).length) out._meta = rest;
  } else if ('_meta' in source) out._meta = meta as JsonObject;
  return out;
}

export abstract class StatelessSession implements UpstreamConnection {
  protected closing = false;
  protected readonly envelope: JsonObject;
  /** Each listed tool's `x-mcp-header` declarations (statelessHeaders.ts), from the last tools/list. */
  protected toolHeaders = new Map<string, ParamHeader[]>();
  /** The open listen requests: one for list changes, one per subscribed resource URI. */
  private readonly listens = new Map<string, AbortController>();
  /** The cache hints of each list, from its last listing (undefined: a page came without them). */
  private readonly hints = new Map<ListKey, CacheHints | undefined>();
  /**
   * The level a 2025-11-25 session's call asks for: the one set with logging/setLevel, else
   * everything, as a 2025 server sends to a client that never set a level (sessions filter by their
   * own level). A 2026-07-28 caller that set none is given none upstream: its era sends no log
   * messages unless asked.
   */
  private sessionLogLevel = 'debug';
  /**
   * Whether a log message the server sends during a call comes on that call's own stream (HTTP),
   * so that it can go to that call's caller alone; on a pipe it says nothing of its call.
   */
  protected abstract readonly logsPerCall: boolean;

  protected constructor(
    readonly info: ConnectedInfo,
    protected readonly events: ConnectionEvents,
  ) {
    this.envelope = brokerEnvelope(events.serverRequest !== undefined);
  }

  abstract readonly pid: number | undefined;

  /** Sends one request (its `_meta` already carries the envelope) and resolves with its result. */
  protected abstract post(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject>;

  /**
   * Keeps one subscriptions/listen request open until `signal` aborts; its notifications go to
   * `onNotification`.
   */
  protected abstract openListen(params: JsonObject, signal: AbortSignal): void;

  protected abstract closeTransport(): Promise<void>;

  /** Opens the listen request for the list changes the server declared it announces. */
  protected listenForListChanges(): void {
    const caps = this.info.capabilities;
    const filter: JsonObject = {};
    if ((caps.tools as JsonObject | undefined)?.listChanged) filter.toolsListChanged = true;
    if ((caps.prompts as JsonObject | undefined)?.listChanged) filter.promptsListChanged = true;
    if ((caps.resources as JsonObject | undefined)?.listChanged) filter.resourcesListChanged = true;
    if (Object.keys(filter).length) this.listen('lists', filter);
  }

  async request(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    // This era's requests need the caller's cancellation as an AbortSignal (fetches, embedded requests).
    if (opts.cancel && !opts.signal) opts = copyWith(opts, 'signal', signalOf(opts));
    switch (method) {
      case 'ping':
        return this.send('server/discover', {}, opts);
      case 'logging/setLevel':
        // 2026-07-28 has no session log level: each call asks for this one (io.modelcontextprotocol/logLevel).
        if (typeof params.level === 'string') this.sessionLogLevel = params.level;
        return {};
      case 'resources/subscribe':
        if (typeof params.uri === 'string') this.listen(`uri:${params.uri}`, { resourceSubscriptions: [params.uri] });
        return {};
      case 'resources/unsubscribe':
        this.listens.get(`uri:${String(params.uri)}`)?.abort();
        this.listens.delete(`uri:${String(params.uri)}`);
        return {};
    }
    if (method.startsWith('tasks/')) {
      throw new ConnectionError(
        'upstream-error',
        `${method.slice(0, 60)} cannot be forwarded: this upstream speaks 2026-07-28, where tasks are the ` +
          'io.modelcontextprotocol/tasks extension, which the broker does not translate',
        -32601,
      );
    }
    // A call's log messages: for its 2026-07-28 caller alone when it asked (and they can be told apart), else for the sessions.
    const own = this.logsPerCall ? opts.log : undefined;
    const modernCaller = opts.caller?.protocol === STATELESS_PROTOCOL;
    const level = opts.log?.level ?? (modernCaller ? undefined : this.sessionLogLevel);
    const logged: JsonObject =
      level === undefined
        ? params
        : copyWith(params, '_meta', copyWith(params._meta as JsonObject | undefined, META_LOG_LEVEL, level));
    opts = copyWith(opts, 'log', own);
    if (opts.passThrough && INPUT_METHODS.has(method)) return this.passOn(method, logged, opts, opts.passThrough);
    let sent = logged;
    for (let round = 0; round < MAX_INPUT_ROUNDS; round++) {
      const result = await this.send(method, sent, opts);
      const interim = inputRequired(result);
      if (!interim) return modernCaller ? result : forLegacyCaller(result);
      const inputResponses = await this.answer((interim.inputRequests ?? {}) as JsonObject, opts);
      sent = copyWith(logged, 'inputResponses', inputResponses);
      if (typeof interim.requestState === 'string') sent.requestState = interim.requestState;
    }
    throw new ConnectionError(
      'upstream-error',
      `The server still asked for input after ${MAX_INPUT_ROUNDS} rounds of answers; the call was given up`,
      -32603,
    );
  }

  /**
   * One request between two 2026-07-28 parties: the caller's capabilities, inputResponses and
   * requestState go up as it sent them, and the answer (input_required too) comes back as it is.
   */
  private passOn(method: string, params: JsonObject, opts: CallOptions, from: InputPassThrough): Promise<JsonObject> {
    const sent: JsonObject = copied(params);
    if (from.inputResponses !== undefined) sent.inputResponses = from.inputResponses as JsonObject;
    if (from.requestState !== undefined) sent.requestState = from.requestState as string;
    const meta = copyWith(
      merged(params._meta as JsonObject | undefined, this.envelope),
      META_CAPABILITIES,
      from.capabilities,
    );
    sent._meta = meta;
    return this.post(method, sent, opts);
  }

  /** Puts each embedded request to the caller (as a server→client request of the caller's era). */
  private async answer(inputRequests: JsonObject, opts: CallOptions): Promise<JsonObject> {
    const handler = this.events.serverRequest;
    const signal = opts.signal ?? new AbortController().signal;
    const answers = await Promise.all(
      Object.entries(inputRequests).map(async ([key, value]) => {
        const asked = (value ?? {}) as { method?: unknown; params?: unknown };
        if (!handler || typeof asked.method !== 'string') {
          throw new ConnectionError(
            'upstream-error',
            `The server asked for input (${String(asked.method)}) that no caller can give here`,
            -32601,
          );
        }
        const params = (asked.params ?? {}) as JsonObject;
        const result = await handler({ method: asked.method, params, signal }, opts.caller ? [opts.caller] : []);
        return [key, result] as const;
      }),
    );
    return Object.fromEntries(answers);
  }

  protected send(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    const meta = merged(params._meta as JsonObject | undefined, this.envelope);
    return this.post(method, copyWith(params, '_meta', meta), opts);
  }

  private listen(key: string, notifications: JsonObject): void {
    const controller = new AbortController();
    this.listens.set(key, controller);
    this.openListen({ notifications, _meta: this.envelope }, controller.signal);
  }

  /** A notification the server sent (on a listen stream, a call's stream, or the pipe). */
  protected onNotification(message: JsonObject): void {
    const params = (message.params ?? {}) as JsonObject;
    switch (message.method) {
      case 'notifications/tools/list_changed':
        return this.events.toolsChanged();
      case 'notifications/prompts/list_changed':
        return this.events.promptsChanged();
      case 'notifications/resources/list_changed':
        return this.events.resourcesChanged();
      case 'notifications/resources/updated':
        if (typeof params.uri === 'string') this.events.resourceUpdated(params.uri);
        return;
      case 'notifications/message':
        return this.events.log(params);
    }
  }

  private async listAll<T>(method: string, key: ListKey, timeoutMs: number): Promise<T[]> {
    // The hints of the whole list: the shortest of its pages' lives, private if any page is.
    let hints: CacheHints | undefined = { ttlMs: Infinity, cacheScope: 'public' };
    const items = await listAllPages<T>(async (params) => {
      const page = await this.send(method, params, { timeoutMs });
      hints = hints && combineHints(hints, page);
      return page;
    }, key);
    this.hints.set(key, hints);
    return items;
  }

  listHints(key: ListKey): CacheHints | undefined {
    return this.hints.get(key);
  }

  async listTools(timeoutMs: number): Promise<Tool[]> {
    if (!this.info.capabilities.tools) return [];
    const tools = await this.listAll<Tool>('tools/list', 'tools', timeoutMs);
    // The arguments each tool wants mirrored as Mcp-Param-* headers on its calls (HTTP).
    this.toolHeaders = new Map(tools.map((t) => [t.name, paramHeaders(t.inputSchema)] as const));
    return tools;
  }
  listPrompts(timeoutMs: number): Promise<Prompt[]> {
    return this.info.capabilities.prompts ? this.listAll('prompts/list', 'prompts', timeoutMs) : Promise.resolve([]);
  }
  listResources(timeoutMs: number): Promise<Resource[]> {
    if (!this.info.capabilities.resources) return Promise.resolve([]);
    return this.listAll('resources/list', 'resources', timeoutMs);
  }
  listResourceTemplates(timeoutMs: number): Promise<ResourceTemplate[]> {
    if (!this.info.capabilities.resources) return Promise.resolve([]);
    return this.listAll<ResourceTemplate>('resources/templates/list', 'resourceTemplates', timeoutMs).catch(() => []);
  }

  /** 2026-07-28 deprecates roots and has no roots/list_changed: a request carries what it needs. */
  notifyRootsChanged(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const controller of this.listens.values()) controller.abort();
    this.listens.clear();
    await this.closeTransport().catch(() => undefined);
  }
}

/** `hints` narrowed by one page's: undefined when the page has none (a server that gives no hints). */
function combineHints(hints: CacheHints, page: JsonObject): CacheHints | undefined {
  const { ttlMs, cacheScope } = page;
  if (typeof ttlMs !== 'number' || ttlMs < 0 || (cacheScope !== 'public' && cacheScope !== 'private')) return undefined;
  return {
    ttlMs: Math.min(hints.ttlMs, ttlMs),
    cacheScope: hints.cacheScope === 'private' || cacheScope === 'private' ? 'private' : 'public',
  };
}
