// One supervised upstream server: its lifecycle (eager or lazy), restart policy and cached lists.
// Over 450 lines, as one concern: every state transition of one upstream stays in one place.
import { EventEmitter } from 'node:events';
import { lifecycleOf, type ServerDef } from '../../registry/schema';
import { packageRunnerWarning } from '../../registry/packageRunner';
import type { ServerOAuth } from '../connection/auth/serverOAuth';
import type { CatalogLists } from '../catalog/catalogCache';
import { connectUpstream } from '../connection/connect';
import type { CacheHints, CallOptions, ListKey, UpstreamConnection } from '../connection/connection';
import { ConnectionError } from '../connection/connectionError';
import { IdleClock } from './idleClock';
import type { StartGate } from './startGate';
import type { EditorLink } from './editorLink';
import { planLaunch, WaitingForCredentials } from './launchUpstream';
import { tracedLaunch, type SandboxNote } from './launchSpan';
import type { Credentials } from '../connection/auth/credentials';
import { LogRing } from '../shared/logRing';
import {
  ErrorCodes,
  McpFailure,
  type JsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '../shared/mcpTypes';
import { Redactor } from '../trust/redact';
import { redactParams } from '../trust/resultRedaction';
import { describeEnforcement, type Enforcement } from '../trust/sandbox';
import { ServerRequestDispatch } from './serverRequestDispatch';
import { readAppPages } from '../catalog/apps/appPages';
import { telemetry, type TraceParent } from '../telemetry/telemetry';
import { mayMove, type HeldState, type UpstreamState, type WaitingState } from './upstreamStates';
import { merged } from '../shared/objects';

export type { UpstreamState };

export interface UpstreamSnapshot {
  name: string;
  state: UpstreamState;
  pid?: number;
  startedAt?: number;
  restarts: number;
  lastError?: string;
  nextRestartAt?: number;
  serverInfo?: { name?: string; version?: string };
  toolCount: number;
  /** Where its listed tools come from: the live upstream, the catalog cache until it confirms, or nowhere. */
  catalog: CatalogSource;
}

export type CatalogSource = 'live' | 'cached' | 'none';

type ListKind = 'tools' | 'prompts' | 'resources';

/** Why an upstream must not start now. */
export interface Held {
  state: HeldState;
  reason: string;
}

/** What the upstream emits: `state` on every lifecycle change, `lists` when its catalog changed. */
export interface UpstreamEventMap {
  state: [];
  lists: [];
  log: [JsonObject];
  resourceUpdated: [string];
  /** An audit entry (a server→client request was answered or refused). */
  audit: [JsonObject];
  /** A notifications/tasks/status from the server: its Task, under its own id. */
  taskStatus: [JsonObject];
}

const HOUR_MS = 3_600_000;

/**
 * A call's options with its time limit. Written out, not spread: a spread and one more key took V8's
 * slow path on every call. `satisfies` makes a new CallOptions field a compile error here until copied.
 */
function withTimeout(opts: Omit<CallOptions, 'timeoutMs'>, timeoutMs: number): CallOptions {
  const { signal, cancel, onprogress, forward, caller, log, passThrough, trace } = opts;
  return { signal, cancel, onprogress, forward, caller, log, passThrough, trace, timeoutMs } satisfies Record<
    keyof CallOptions,
    unknown
  >;
}

export class Upstream extends EventEmitter<UpstreamEventMap> {
  state: UpstreamState = 'stopped';
  restarts = 0;
  lastError?: string;
  startedAt?: number;
  nextRestartAt?: number;
  tools: Tool[] = [];
  prompts: Prompt[] = [];
  resources: Resource[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  /** Its MCP App pages as pin entries, read with its lists (catalog/apps/appPages.ts). */
  appPages: Tool[] = [];
  readonly logs = new LogRing();
  readonly enforcement: Enforcement;
  withheldEnv: string[] = [];
  /** Where the requests this server sends its client go (serverRequestDispatch.ts). */
  readonly serverRequests: ServerRequestDispatch;
  /** Scrubs this server's secrets from text; replaced at each launch (the definition's values). */
  private redactor = new Redactor([]);
  private accountRedaction?: { token?: string; redactor: Redactor };
  private resultRedaction?: { launch: Redactor; account: Redactor; redactor: Redactor | undefined };

  private client?: UpstreamConnection;
  private consecutiveFailures = 0;
  /** When each automatic restart of the last hour began (restart.maxPerHour: not reset by uptime). */
  private readonly recentRestarts: number[] = [];
  private restartTimer?: NodeJS.Timeout;
  private generation = 0;
  private wanted = false;
  /** Per list kind: a refresh is running, and whether another list_changed came in meanwhile. */
  private readonly refreshes = new Map<ListKind, { generation: number; pending: boolean }>();
  /** Lazy: started on first use, stopped after `idleStopMs` without any. */
  readonly lazy: boolean;
  /** The last good lists (the catalog cache, then each live list): served while idle or starting. */
  private lastGood?: CatalogLists;
  /** Live lists have arrived since this definition was adopted (an eager restart then lists nothing stale). */
  private confirmed = false;
  /** A lazy server's use: requests in flight and subscriptions keep it up, `idleStopMs` unused stops it. */
  private readonly idleClock = new IdleClock((why) => void this.goIdle(why));
  /** Started only to learn its lists (no cached catalog): stops as soon as they are known. */
  private learning = false;
  /** A request is waiting for this start: it does not queue at the start gate. */
  private demanded = false;
  /** While telemetry is on: the request that woke this lazy server, the parent of its launch span. */
  private launchCause?: TraceParent;

  /**
   * `mayStart` is asked before every launch, crash restarts included: what was approved can stop
   * being so without a registry change (the env file's contents changed), and a restart must not
   * run what the operator did not see.
   */
  constructor(
    readonly def: ServerDef,
    private readonly root: string,
    private readonly mayStart?: () => Held | undefined,
    /** The server's sign-in, for a remote server with `auth`. */
    readonly signIn?: ServerOAuth,
    private readonly gate?: StartGate,
    private readonly editor?: EditorLink,
    /** Entered secrets and VS Code account tokens. */
    private readonly credentials?: Credentials,
  ) {
    super();
    // Every request that finds the server (re)starting waits on one 'state' listener and removes it
    // when settled: as many as there are calls in flight (bounded by the session caps), not a leak.
    this.setMaxListeners(0);
    this.lazy = lifecycleOf(def) === 'lazy';
    this.enforcement = describeEnforcement(def);
    this.serverRequests = new ServerRequestDispatch(def, root, (entry) => this.emit('audit', entry), editor);
  }

  get name(): string {
    return this.def.name;
  }

  get pid(): number | undefined {
    return this.client?.pid;
  }

  get instructions(): string | undefined {
    return this.client?.info.instructions;
  }

  /** What the connected server declared at initialize (undefined while not connected). */
  get capabilities(): JsonObject | undefined {
    return this.client?.info.capabilities;
  }

  /** The protocol revision the running server speaks (eraDetection.ts decides it at connect). */
  get protocol(): string | undefined {
    return this.client?.info.protocol;
  }

  snapshot(): UpstreamSnapshot {
    return {
      name: this.name,
      state: this.state,
      pid: this.state === 'running' ? this.pid : undefined,
      startedAt: this.state === 'running' ? this.startedAt : undefined,
      restarts: this.restarts,
      lastError: this.lastError,
      nextRestartAt: this.state === 'backoff' ? this.nextRestartAt : undefined,
      serverInfo: this.client
        ? { name: this.client.info.serverName, version: this.client.info.serverVersion }
        : undefined,
      toolCount: this.listed.tools.length,
      catalog: this.catalogSource,
    };
  }

  /**
   * What clients see of it: the live lists while it runs; the last good ones while a lazy server
   * is idle or any server is starting for the first time (a call to them waits for the start).
   */
  get catalogSource(): CatalogSource {
    if (this.state === 'running' && this.client) return 'live';
    if (!this.lastGood) return 'none';
    if (this.state === 'idle' || (this.state === 'starting' && (this.lazy || !this.confirmed))) return 'cached';
    return 'none';
  }

  get listed(): CatalogLists {
    const source = this.catalogSource;
    if (source === 'cached') return this.lastGood!;
    return {
      tools: this.tools,
      prompts: this.prompts,
      resources: this.resources,
      resourceTemplates: this.resourceTemplates,
      appPages: this.appPages,
    };
  }

  /** Reads its app pages again (a read found one that changed since): the pins then judge the new page. */
  refreshAppPages(): void {
    this.refresh(this.generation, 'resources');
  }

  /** The cache hints the running server gave with a list (none for cached lists, or a 2025 server). */
  listHints(key: ListKey): CacheHints | undefined {
    return this.catalogSource === 'live' ? this.client?.listHints?.(key) : undefined;
  }

  /** Seeds the lists from the catalog cache (the supervisor checked they are this definition's). */
  useCached(lists: CatalogLists): void {
    this.lastGood = lists;
  }

  get hasCatalog(): boolean {
    return this.lastGood !== undefined;
  }

  /** A lazy server with a known catalog, allowed to run: it waits, idle, for a call. */
  rest(): void {
    this.wanted = false;
    this.lastError = undefined;
    this.setState('idle');
  }

  /** A lazy server with no catalog yet: started once to learn it, then stopped. */
  learn(): void {
    this.learning = true;
    this.start();
  }

  /**
   * Brings the server up for a request: an idle lazy server is started, and a start in progress
   * is waited for (bounded by its startup timeout). Anything else is left for request() to explain.
   */
  ensureStarted(trace?: TraceParent): Promise<void> | undefined {
    const traced = telemetry();
    if (this.state === 'idle') {
      this.demanded = true;
      // The server outlives the request that woke it: its process is not part of that request's
      // trace; only its launch is (a span, child of the request).
      this.launchCause = trace ?? traced?.currentTrace();
      if (traced) traced.untraced(() => this.start());
      else this.start();
    }
    if (this.state !== 'starting') return undefined;
    this.learning = false;
    // Someone waits now: a start held back behind the broker's first list goes ahead.
    this.gate?.open();
    const started = this.whenSettled(this.def.timeouts.startupMs).catch((err: Error) => {
      throw new McpFailure(
        ErrorCodes.UpstreamUnavailable,
        `Server '${this.name}' could not be started for this request (${this.redactText(err.message)}).`,
      );
    });
    return traced ? traced.waitedForStart(this.name, started, trace) : started;
  }

  /** Puts the upstream in a state where it must not run (disabled, awaiting approval, blocked). */
  async hold(state: HeldState, reason?: string): Promise<void> {
    await this.stop();
    this.lastError = reason;
    this.setState(state);
  }

  start(): void {
    this.wanted = true;
    this.consecutiveFailures = 0;
    this.clearRestartTimer();
    if (this.state === 'starting' || this.state === 'running') return;
    // Why it was held or failed before no longer holds once it is started again ("Approved, now
    // starting (needs the operator's approval)" said both at once); the log keeps the history.
    this.lastError = undefined;
    void this.launch();
  }

  async stop(): Promise<void> {
    this.wanted = false;
    this.generation++;
    this.clearRestartTimer();
    this.idleClock.reset();
    this.learning = false;
    const client = this.client;
    this.client = undefined;
    this.clearLists();
    if (client) await client.close();
    if (this.state !== 'stopped') this.setState('stopped');
  }

  async restart(): Promise<void> {
    await this.stop();
    this.lastError = undefined;
    this.start();
  }

  /** Resolves once the upstream is running, or rejects with why it is not. */
  whenSettled(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        if (this.state === 'running') {
          done();
          resolve();
          return true;
        }
        if (this.state !== 'starting' && this.state !== 'backoff') {
          done();
          reject(new Error(`${this.name} is ${this.state}${this.lastError ? `: ${this.lastError}` : ''}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name} did not start within ${timeoutMs} ms`));
      }, timeoutMs);
      const onState = (): void => {
        check();
      };
      const done = (): void => {
        clearTimeout(timer);
        this.off('state', onState);
      };
      if (!check()) this.on('state', onState);
    });
  }

  private async launch(): Promise<void> {
    const held = this.mayStart?.();
    if (held) {
      this.wanted = false;
      this.clearRestartTimer();
      this.lastError = held.reason;
      this.setState(held.state);
      return;
    }
    const generation = ++this.generation;
    this.setState('starting');
    // Only a start whose lists are already served from the cache queues: nobody waits for it.
    const queue = !this.demanded && this.catalogSource === 'cached';
    this.demanded = false;
    const release = queue ? await this.gate?.enter() : undefined;
    try {
      if (generation === this.generation) await this.connect(generation);
    } finally {
      release?.();
    }
  }

  /** Plans the launch (environment, sandbox, credentials) and spawns or connects. */
  private async open(generation: number, sandbox?: SandboxNote): Promise<UpstreamConnection> {
    const plan = planLaunch(this.def, this.root, {
      onNetworkRefused: (r) => this.networkRefused(r.host, r.port),
      credentials: this.credentials,
      editorConnected: this.editor?.current() !== undefined,
    });
    sandbox?.(plan.sandbox);
    this.redactor = plan.redactor;
    this.withheldEnv = plan.withheld;
    // What this launch found (a granted path that is a link out of the root) is part of what holds.
    Object.assign(this.enforcement, plan.enforcement);
    if (plan.withheld.length) {
      const names = plan.withheld.join(', ');
      const why = "the server has no 'secrets' grant";
      this.logs.push(`withheld ${plan.withheld.length} variable(s) (${names}): ${why}`);
    }
    const signedIn = plan.launch.transport !== 'stdio' && this.signIn;
    const launch = signedIn ? merged(plan.launch, { auth: this.signIn }) : plan.launch;
    return await connectUpstream(
      launch,
      {
        toolsChanged: () => this.refresh(generation, 'tools'),
        promptsChanged: () => this.refresh(generation, 'prompts'),
        resourcesChanged: () => this.refresh(generation, 'resources'),
        resourceUpdated: (uri) => this.emit('resourceUpdated', uri),
        log: (params) => this.emit('log', redactParams(params, this.resultRedactor)),
        lost: (reason, needsSignIn) => this.onLost(generation, reason, needsSignIn),
        taskStatus: (task) => {
          if (generation === this.generation) this.emit('taskStatus', task);
        },
        serverRequest: this.serverRequests.handle,
      },
      this.logs,
      this.def.timeouts.startupMs,
    );
  }

  /** Spawns or connects, then loads the lists: the part of a start the gate admits a few at a time. */
  private async connect(generation: number): Promise<void> {
    let client: UpstreamConnection;
    const cause = this.launchCause;
    this.launchCause = undefined;
    try {
      client = await tracedLaunch(this.name, this.def.transport, cause, (sandbox) => this.open(generation, sandbox));
    } catch (err) {
      if (generation !== this.generation) return;
      if (err instanceof ConnectionError && err.kind === 'needs-sign-in') return this.awaitSignIn(err.message);
      if (err instanceof WaitingForCredentials) return this.awaitSignIn(err.message, err.state);
      // A command that does not exist will not appear by restarting.
      const permanent = err instanceof ConnectionError && err.kind === 'not-found';
      // `npx -y pkg` without the network grant hangs in a download it cannot make: say so.
      const hint =
        err instanceof ConnectionError && err.kind === 'start-failed' ? packageRunnerWarning(this.def) : undefined;
      this.onFailure(this.redactText((err as Error).message) + (hint ? `. ${hint}` : ''), permanent);
      return;
    }
    if (generation !== this.generation) {
      await client.close();
      return;
    }
    this.client = client;
    try {
      await this.loadLists(client, ['tools', 'prompts', 'resources']);
    } catch (err) {
      if (generation !== this.generation) return;
      this.client = undefined;
      await client.close();
      this.onFailure(`connected, but listing its capabilities failed: ${this.redactText((err as Error).message)}`);
      return;
    }
    if (generation !== this.generation) return;
    this.startedAt = Date.now();
    this.lastError = undefined;
    this.keepLastGood();
    this.logs.push(
      `running${client.pid ? ` (pid ${client.pid})` : ''} with ${this.tools.length} tools, ` +
        `${this.prompts.length} prompts, ${this.resources.length} resources`,
    );
    this.setState('running');
    this.emit('lists');
    // Learning its catalog was the only reason to run: it stops at once unless a request came meanwhile.
    if (this.lazy && this.learning) this.idleClock.arm(0, 'its catalog is learned');
    else if (this.lazy) this.idleClock.arm(this.def.idleStopMs);
    this.learning = false;
  }

  /** The live lists become the last good ones (served if it goes idle, persisted by the supervisor). */
  private keepLastGood(): void {
    this.confirmed = true;
    this.lastGood = {
      tools: this.tools,
      prompts: this.prompts,
      resources: this.resources,
      resourceTemplates: this.resourceTemplates,
      appPages: this.appPages,
    };
  }

  private async goIdle(why: string): Promise<void> {
    if (this.state !== 'running') return;
    const client = this.client;
    this.wanted = false;
    this.generation++;
    this.client = undefined;
    this.idleClock.reset();
    this.clearLists();
    this.logs.push(`stopped (lazy, ${why}); the next call starts it again`);
    // Idle before the close: its last good lists stay listed throughout.
    this.setState('idle');
    await client?.close();
  }

  /** The sandbox's proxy refused a host not in the allow-list: the server's log and the audit say so (host only). */
  private networkRefused(host: string, port: number): void {
    this.logs.push(`network: refused ${host}:${port} (not in this server's network allow-list)`);
    this.emit('audit', { event: 'network-refused', server: this.name, host, port });
  }

  private async loadLists(client: UpstreamConnection, which: ListKind[]): Promise<void> {
    const timeout = this.def.timeouts.startupMs;
    await Promise.all(
      which.map(async (kind) => {
        if (kind === 'tools') this.tools = await client.listTools(timeout);
        else if (kind === 'prompts') this.prompts = await client.listPrompts(timeout);
        else {
          const [resources, templates] = await Promise.all([
            client.listResources(timeout),
            client.listResourceTemplates(timeout),
          ]);
          this.resources = resources;
          this.resourceTemplates = templates;
        }
      }),
    );
    // The pages its tools open are judged with its tools (pins): read before either list is served.
    if (which.includes('tools') || which.includes('resources')) {
      this.appPages = await readAppPages(this.tools, this.resources, (uri) =>
        client.request('resources/read', { uri }, { timeoutMs: timeout }),
      );
    }
  }

  /**
   * Reloads one list after a list_changed. At most one reload is in flight and one more is queued
   * (it sees every change that came in meanwhile): a burst costs two reloads, not one per notification.
   */
  private refresh(generation: number, kind: ListKind): void {
    const client = this.client;
    if (!client || generation !== this.generation) return;
    const running = this.refreshes.get(kind);
    if (running?.generation === generation) {
      running.pending = true;
      return;
    }
    const state = { generation, pending: false };
    this.refreshes.set(kind, state);
    void (async () => {
      do {
        state.pending = false;
        try {
          await this.loadLists(client, [kind]);
          if (generation === this.generation) {
            this.keepLastGood();
            this.emit('lists');
          }
        } catch (err) {
          this.logs.push(`refreshing ${kind} after list_changed failed: ${this.redactText((err as Error).message)}`);
        }
      } while (state.pending && client === this.client && generation === this.generation);
      if (this.refreshes.get(kind) === state) this.refreshes.delete(kind);
    })();
  }

  /**
   * Waits for a sign-in: no restart and no crash counted (retrying cannot help until the person
   * acts); signing in restarts the server.
   */
  private awaitSignIn(reason: string, state: WaitingState = 'needs-sign-in'): void {
    this.lastError = reason;
    this.logs.push(`${state === 'needs-input' ? 'waiting for an entered secret' : 'waiting for sign-in'}: ${reason}`);
    this.clearRestartTimer();
    this.setState(state);
  }

  private onLost(generation: number, reason: string, needsSignIn = false): void {
    if (generation !== this.generation) return;
    this.client = undefined;
    this.idleClock.reset();
    this.clearLists();
    this.emit('lists');
    if (needsSignIn) return this.awaitSignIn(reason);
    const ranFor = this.startedAt ? Date.now() - this.startedAt : 0;
    if (ranFor >= this.def.restart.resetAfterMs) this.consecutiveFailures = 0;
    this.onFailure(this.redactText(reason));
  }

  private onFailure(reason: string, permanent = false): void {
    this.lastError = reason;
    this.logs.push(`stopped: ${reason}`);
    this.consecutiveFailures++;
    if (!this.wanted) {
      this.setState('stopped');
      return;
    }
    const policy = this.def.restart;
    if (this.consecutiveFailures > policy.maxRetries || permanent) {
      this.lastError =
        this.consecutiveFailures > policy.maxRetries && policy.maxRetries > 0
          ? `${reason} (gave up after ${policy.maxRetries} restart${policy.maxRetries === 1 ? '' : 's'})`
          : reason;
      this.setState('failed');
      return;
    }
    // A server that comes up and drops again, for ever (a remote that ends every session), never
    // trips maxRetries: the broker's own retries are capped per hour as well.
    while (this.recentRestarts.length && this.recentRestarts[0] <= Date.now() - HOUR_MS) this.recentRestarts.shift();
    if (this.recentRestarts.length >= policy.maxPerHour) {
      this.lastError =
        `${reason} (gave up: ${policy.maxPerHour} automatic restarts in the last hour, restart.maxPerHour; ` +
        'restart it by hand once it is back)';
      this.setState('failed');
      return;
    }
    const delay = Math.min(policy.backoffMs * 2 ** (this.consecutiveFailures - 1), policy.maxBackoffMs);
    this.nextRestartAt = Date.now() + delay;
    this.setState('backoff');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.wanted) return;
      this.restarts++;
      this.recentRestarts.push(Date.now());
      void this.launch();
    }, delay);
    this.restartTimer.unref();
  }

  /** Tells the running server its client's roots changed (the editor's folders); it may list them again. */
  async rootsChanged(): Promise<void> {
    const client = this.client;
    if (!client || this.state !== 'running') return;
    await client.notifyRootsChanged().catch((err: Error) => this.logs.push(`roots list_changed: ${err.message}`));
  }

  /** Forwards a request to the running upstream; any failure becomes a clear MCP error. */
  request(method: string, params: JsonObject, opts: Omit<CallOptions, 'timeoutMs'>): Promise<JsonObject> {
    const traced = telemetry();
    if (!traced) return this.forward(method, params, opts);
    const about = { server: this.name, method, protocol: this.protocol, trust: this.def.trust, parent: opts.trace };
    return traced.upstream(about, params, (sent, span) => {
      // The CLIENT span is the parent of server→client requests read while the call is in flight.
      // opts is this call's own (upstreamServer.ts makes it per call): set in place, no copy.
      opts.trace = span;
      return this.forward(method, sent, opts);
    });
  }

  private forward(method: string, params: JsonObject, opts: Omit<CallOptions, 'timeoutMs'>): Promise<JsonObject> {
    const client = this.client;
    if (!client || this.state !== 'running') return Promise.reject(this.unavailable());
    const sent = withTimeout(opts, this.def.timeouts.callMs);
    if (this.lazy) return this.lazyRequest(client, method, params, sent);
    // The per-call path of an eager server: the connection's promise, failures explained.
    let answer: Promise<JsonObject>;
    try {
      answer = client.request(method, params, sent);
    } catch (err) {
      return Promise.reject(this.explain(err, client));
    }
    return answer.catch((err: unknown) => {
      throw this.explain(err, client);
    });
  }

  /** A lazy server's request: its idle clock stops while the request runs. */
  private async lazyRequest(
    client: UpstreamConnection,
    method: string,
    params: JsonObject,
    sent: CallOptions,
  ): Promise<JsonObject> {
    this.idleClock.begin();
    let ok = false;
    try {
      const result = await client.request(method, params, sent);
      ok = true;
      return result;
    } catch (err) {
      throw this.explain(err, client);
    } finally {
      this.used(client, method, ok);
    }
  }

  /** A lazy server's request ended: its idle clock starts again once nothing holds it up. */
  private used(client: UpstreamConnection, method: string, ok: boolean): void {
    const current = client === this.client;
    this.idleClock.end(method, ok && current);
    if (current) this.idleClock.arm(this.def.idleStopMs);
  }

  /** Why a call cannot be forwarded now (restarting, failed, disabled, ...), as an MCP error. */
  unavailable(): McpFailure {
    const why: Record<UpstreamState, string> = {
      starting: 'is starting',
      running: 'is running',
      backoff: 'crashed and is waiting to restart',
      failed: 'has failed and will not be restarted until you restart it',
      stopped: 'is stopped',
      idle: 'is idle (lazy) and starts on the next call',
      disabled: 'is disabled',
      'awaiting-approval': "is waiting for the operator's approval",
      blocked: 'cannot run because the workspace is not trusted',
      'needs-sign-in': 'is waiting for you to sign in',
      'needs-input': 'is waiting for a secret to be entered',
    };
    return new McpFailure(
      ErrorCodes.UpstreamUnavailable,
      `Server '${this.name}' ${why[this.state]}${this.lastError ? ` (last error: ${this.lastError})` : ''}.`,
    );
  }

  private explain(err: unknown, client: UpstreamConnection): Error {
    if (client !== this.client || (err instanceof ConnectionError && err.kind === 'connection-lost')) {
      const why = this.lastError ?? 'connection closed';
      return new McpFailure(
        ErrorCodes.UpstreamUnavailable,
        `Server '${this.name}' stopped while handling this call (${why}); it will be restarted by its restart policy.`,
      );
    }
    if (err instanceof ConnectionError) {
      if (err.kind === 'timeout') {
        const limit = this.def.timeouts.callMs;
        return new McpFailure(
          ErrorCodes.RequestTimeout,
          `Server '${this.name}' did not answer within ${limit} ms; the call was cancelled.`,
        );
      }
      // Upstream JSON-RPC errors pass through with their own code, message and data.
      if (err.kind === 'upstream-error') {
        // An error's message is part of what comes back: redacted like a result (resultRedaction.ts).
        const secrets = this.resultRedactor;
        const message = secrets ? secrets.redact(err.message) : err.message;
        return new McpFailure(err.code ?? ErrorCodes.InternalError, message, redactParams({ d: err.data }, secrets).d);
      }
      if (err.kind === 'needs-sign-in') return new McpFailure(ErrorCodes.UpstreamUnavailable, err.message);
      return new McpFailure(ErrorCodes.InternalError, `Server '${this.name}': ${err.message}`);
    }
    // The caller's own cancellation (its signal's reason): passed on as it is.
    const e = err as { code?: unknown; message?: string; data?: unknown };
    if (typeof e.code === 'number') return new McpFailure(e.code, e.message ?? 'error', e.data);
    return new McpFailure(ErrorCodes.InternalError, `Server '${this.name}': ${e.message ?? String(err)}`);
  }

  /**
   * Every string that must never appear in anything the broker writes: this server's secret
   * values (envFile, resolved references, header values), as the redactor matches them.
   */
  get secretValues(): readonly string[] {
    return this.redactor.forms;
  }

  /** Scrubs this server's secret values from text. */
  redactText(text: string): string {
    return this.accountRedactor().redact(this.redactor.redact(text));
  }

  /**
   * What it sends back is redacted with: its launch secrets and its current tokens (guardrails:
   * docs/guardrails.md), unless the approved definition says returning secrets is its job.
   */
  get resultRedactor(): Redactor | undefined {
    if (this.def.redactResults === false) return undefined;
    const account = this.accountRedactor();
    const known = this.resultRedaction;
    if (known && known.launch === this.redactor && known.account === account) return known.redactor;
    const combined = Redactor.combined(this.redactor, account);
    // None when there is nothing to redact: the per-call path then does no work at all.
    const redactor = combined.forms.length ? combined : undefined;
    this.resultRedaction = { launch: this.redactor, account, redactor };
    return redactor;
  }

  /** Tokens can change while the server runs (VS Code refreshed the session; an OAuth refresh). */
  private accountRedactor(): Redactor {
    const oauth = this.signIn?.tokens();
    const tokens = [this.credentials?.accountToken(this.def), oauth?.access_token, oauth?.refresh_token];
    const token = tokens.filter((t): t is string => !!t).join('\0') || undefined;
    const known = this.accountRedaction;
    if (known && known.token === token) return known.redactor;
    const redactor = new Redactor(token ? token.split('\0') : []);
    this.accountRedaction = { token, redactor };
    return redactor;
  }

  private clearLists(): void {
    this.tools = [];
    this.prompts = [];
    this.resources = [];
    this.resourceTemplates = [];
    this.appPages = [];
  }

  private clearRestartTimer(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private setState(state: UpstreamState): void {
    if (this.state === state && state !== 'backoff') return;
    // A move upstreamStates.ts does not declare is a bug in this class: said loudly (the tests' broker
    // helper fails on it), never thrown here, where it would take the broker down with it.
    if (!mayMove(this.state, state))
      process.stderr.write(`switchboard: BUG: undeclared state move of '${this.name}': ${this.state} → ${state}\n`);
    const source = this.catalogSource;
    this.state = state;
    this.emit('state');
    // Cached lists appear or go with the state (idle, a first start): the catalog must hear of it.
    if (this.catalogSource !== source) this.emit('lists');
  }
}
