// One supervised upstream server: its lifecycle, restart policy and cached lists.
import { EventEmitter } from 'node:events';
import type { ServerDef } from '../registry/schema';
import { connectUpstream, type CallOptions, type UpstreamConnection } from './connection/connection';
import { ConnectionError } from './connection/connectionError';
import { planLaunch } from './launch';
import { LogRing } from './logRing';
import {
  ErrorCodes,
  McpFailure,
  type JsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from './mcpTypes';
import { Redactor } from './redact';
import { describeEnforcement, type Enforcement } from './sandbox';
import { ServerRequestDispatch } from './serverRequestDispatch';

export type UpstreamState =
  | 'starting'
  | 'running'
  | 'backoff' // crashed; waiting to restart
  | 'failed' // crash-loop breaker open, or a start that can never succeed
  | 'stopped'
  | 'disabled' // enabled: false
  | 'awaiting-approval' // community tier without the operator's approval
  | 'blocked'; // the workspace is not trusted: nothing from it may run

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
}

type ListKind = 'tools' | 'prompts' | 'resources';

/** Why an upstream must not start now. */
export interface Held {
  state: 'disabled' | 'awaiting-approval' | 'blocked';
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
  readonly logs = new LogRing();
  readonly enforcement: Enforcement;
  withheldEnv: string[] = [];
  /** Where the requests this server sends its client go (serverRequestDispatch.ts). */
  readonly serverRequests: ServerRequestDispatch;
  /** Scrubs this server's secrets from text; replaced at each launch (the definition's values). */
  private redactor = new Redactor([]);

  private client?: UpstreamConnection;
  private consecutiveFailures = 0;
  private restartTimer?: NodeJS.Timeout;
  private generation = 0;
  private wanted = false;
  /** Per list kind: a refresh is running, and whether another list_changed came in meanwhile. */
  private readonly refreshes = new Map<ListKind, { generation: number; pending: boolean }>();

  /**
   * `mayStart` is asked before every launch, crash restarts included: what was approved can stop
   * being so without a registry change (the env file's contents changed), and a restart must not
   * run what the operator did not see.
   */
  constructor(
    readonly def: ServerDef,
    private readonly root: string,
    private readonly mayStart?: () => Held | undefined,
  ) {
    super();
    this.enforcement = describeEnforcement(def.transport, def.grants);
    this.serverRequests = new ServerRequestDispatch(def.name, root, (entry) => this.emit('audit', entry));
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
      toolCount: this.tools.length,
    };
  }

  /** Puts the upstream in a state where it must not run (disabled, awaiting approval, blocked). */
  async hold(state: 'disabled' | 'awaiting-approval' | 'blocked', reason?: string): Promise<void> {
    await this.stop();
    this.lastError = reason;
    this.setState(state);
  }

  start(): void {
    this.wanted = true;
    this.consecutiveFailures = 0;
    this.clearRestartTimer();
    if (this.state === 'starting' || this.state === 'running') return;
    void this.launch();
  }

  async stop(): Promise<void> {
    this.wanted = false;
    this.generation++;
    this.clearRestartTimer();
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
    let client: UpstreamConnection;
    try {
      const plan = planLaunch(this.def, this.root);
      this.redactor = plan.redactor;
      this.withheldEnv = plan.withheld;
      if (plan.withheld.length) {
        const names = plan.withheld.join(', ');
        const why = "the server has no 'secrets' grant";
        this.logs.push(`withheld ${plan.withheld.length} variable(s) (${names}): ${why}`);
      }
      client = await connectUpstream(
        plan.launch,
        {
          toolsChanged: () => this.refresh(generation, 'tools'),
          promptsChanged: () => this.refresh(generation, 'prompts'),
          resourcesChanged: () => this.refresh(generation, 'resources'),
          resourceUpdated: (uri) => this.emit('resourceUpdated', uri),
          log: (params) => this.emit('log', params),
          lost: (reason) => this.onLost(generation, reason),
          serverRequest: this.serverRequests.handle,
        },
        this.logs,
        this.def.timeouts.startupMs,
      );
    } catch (err) {
      if (generation !== this.generation) return;
      // A command that does not exist will not appear by restarting.
      const permanent = err instanceof ConnectionError && err.kind === 'not-found';
      this.onFailure(this.redactText((err as Error).message), permanent);
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
    this.logs.push(
      `running${client.pid ? ` (pid ${client.pid})` : ''} with ${this.tools.length} tools, ` +
        `${this.prompts.length} prompts, ${this.resources.length} resources`,
    );
    this.setState('running');
    this.emit('lists');
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
          if (generation === this.generation) this.emit('lists');
        } catch (err) {
          this.logs.push(`refreshing ${kind} after list_changed failed: ${this.redactText((err as Error).message)}`);
        }
      } while (state.pending && client === this.client && generation === this.generation);
      if (this.refreshes.get(kind) === state) this.refreshes.delete(kind);
    })();
  }

  private onLost(generation: number, reason: string): void {
    if (generation !== this.generation) return;
    this.client = undefined;
    this.clearLists();
    this.emit('lists');
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
    const delay = Math.min(policy.backoffMs * 2 ** (this.consecutiveFailures - 1), policy.maxBackoffMs);
    this.nextRestartAt = Date.now() + delay;
    this.setState('backoff');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.wanted) return;
      this.restarts++;
      void this.launch();
    }, delay);
    this.restartTimer.unref();
  }

  /** Forwards a request to the running upstream; any failure becomes a clear MCP error. */
  async request(method: string, params: JsonObject, opts: Omit<CallOptions, 'timeoutMs'>): Promise<JsonObject> {
    const client = this.client;
    if (!client || this.state !== 'running') throw this.unavailable();
    try {
      return await client.request(method, params, { ...opts, timeoutMs: this.def.timeouts.callMs });
    } catch (err) {
      throw this.explain(err, client);
    }
  }

  /** Why a call cannot be forwarded now (restarting, failed, disabled, ...), as an MCP error. */
  unavailable(): McpFailure {
    const why: Record<UpstreamState, string> = {
      starting: 'is starting',
      running: 'is running',
      backoff: 'crashed and is waiting to restart',
      failed: 'has failed and will not be restarted until you restart it',
      stopped: 'is stopped',
      disabled: 'is disabled',
      'awaiting-approval': "is waiting for the operator's approval",
      blocked: 'cannot run because the workspace is not trusted',
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
      if (err.kind === 'upstream-error')
        return new McpFailure(err.code ?? ErrorCodes.InternalError, err.message, err.data);
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
    return this.redactor.redact(text);
  }

  private clearLists(): void {
    this.tools = [];
    this.prompts = [];
    this.resources = [];
    this.resourceTemplates = [];
  }

  private clearRestartTimer(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private setState(state: UpstreamState): void {
    if (this.state === state && state !== 'backoff') return;
    this.state = state;
    this.emit('state');
  }
}
