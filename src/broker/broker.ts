// The daemon: registry snapshots in, supervised upstreams, one catalog, one endpoint out.
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RegistryLoader } from '../registry/loader';
import type { RegistrySnapshot } from '../registry/loader';
import { RegistryWatcher } from '../registry/watcher';
import type { ServerDef } from '../registry/schema';
import { Catalog, FACADE_NAMESPACE, SEPARATOR, type FacadeCatalog } from './catalog';
import { IdleCollector } from './idleCollector';
import { Endpoint } from './endpoint';
import type { Identity, RequestExtra, Router, SessionContext } from './routing';
import { ErrorCodes, McpFailure, type JsonObject, type Prompt, type Resource, type ResourceTemplate, type Tool } from './mcpTypes';
import type { StartPolicy } from './supervisor';
import { Supervisor } from './supervisor';
import type { Upstream } from './upstream';
import { rootId } from './runtime';

export const BROKER_VERSION = '0.1.0';

export interface BrokerOptions {
  root: string;
  port: number;
  /** An untrusted workspace: definitions are read and shown, nothing is spawned. */
  untrusted?: boolean;
  /** The operator accepts the workspace's trusted/builtin servers for this run (`--accept-workspace-trust`). */
  acceptWorkspaceTrust?: boolean;
  idleSessionMs?: number;
  maxBodyBytes?: number;
  debounceMs?: number;
  log?(line: string): void;
}

/** Hooks the control plane plugs into the data plane: identities, scopes, facade tools, policy. */
export interface ControlHooks {
  authenticate(token: string): Identity | undefined;
  policy: StartPolicy;
  facade?: FacadeCatalog;
  /** Runs a facade tool; throws McpFailure for a denied scope. */
  callFacade?(ctx: SessionContext, name: string, args: JsonObject, extra: RequestExtra): Promise<JsonObject>;
  getFacadePrompt?(ctx: SessionContext, name: string, args: Record<string, string>): Promise<JsonObject>;
  readFacadeResource?(ctx: SessionContext, uri: string): Promise<JsonObject> | undefined;
  facadeResources?(): Resource[];
  toolProfile?(identity: Identity): { allow?: string[]; deny?: string[] } | undefined;
  audit?(entry: JsonObject): void;
}

export interface BrokerEventMap {
  snapshot: [RegistrySnapshot];
  /** A snapshot has been reconciled: its upstreams are started/stopped and the catalog rebuilt. */
  applied: [RegistrySnapshot];
  state: [];
  catalog: [];
}

export class Broker extends EventEmitter<BrokerEventMap> {
  readonly root: string;
  readonly supervisor: Supervisor;
  readonly catalog: Catalog;
  readonly endpoint: Endpoint;
  snapshot!: RegistrySnapshot;
  private readonly watcher: RegistryWatcher;
  private readonly subscriptions = new Map<string, number>();
  private catalogTimer?: NodeJS.Timeout;
  private readonly idleCollector = new IdleCollector();
  private lastToolsKey = '';
  private lastPromptsKey = '';
  private lastResourcesKey = '';

  constructor(readonly opts: BrokerOptions, private readonly hooks: ControlHooks) {
    super();
    this.root = path.resolve(opts.root);
    this.supervisor = new Supervisor(this.root, hooks.policy);
    this.catalog = new Catalog(hooks.facade);
    this.watcher = new RegistryWatcher(new RegistryLoader(this.root), { debounceMs: opts.debounceMs });
    this.endpoint = new Endpoint({
      port: opts.port,
      authenticate: (token) => hooks.authenticate(token),
      router: this.router(),
      maxBodyBytes: opts.maxBodyBytes,
      idleSessionMs: opts.idleSessionMs,
      version: BROKER_VERSION,
      instance: rootId(this.root),
      onRejected: (reason, status) => hooks.audit?.({ event: 'rejected', status, reason }),
      onRequest: () => this.idleCollector.touch(),
    });
  }

  async start(): Promise<number> {
    fs.mkdirSync(this.root, { recursive: true });
    const port = await this.endpoint.listen();
    this.supervisor.on('state', () => this.emit('state'));
    this.supervisor.on('lists', () => this.scheduleCatalog());
    this.supervisor.on('log', (server, params) => this.endpoint.log(server, params));
    this.supervisor.on('resourceUpdated', (_server, uri) => this.endpoint.resourceUpdated(uri));
    this.watcher.on('snapshot', (snap) => void this.apply(snap));
    await this.apply(this.watcher.start());
    // Start-up leaves garbage too (the registry parse, every upstream's handshake).
    this.idleCollector.touch();
    return port;
  }

  /** Times the broker went quiet and ran a collection (0 where --expose-gc is not given). */
  get idleCollections(): number {
    return this.idleCollector.collections;
  }

  async stop(): Promise<void> {
    this.idleCollector.close();
    this.watcher.close();
    clearTimeout(this.catalogTimer);
    await this.endpoint.close();
    await this.supervisor.stopAll();
  }

  upstream(name: string): Upstream | undefined {
    return this.supervisor.get(name);
  }

  private async apply(snap: RegistrySnapshot): Promise<void> {
    this.snapshot = snap;
    for (const problem of snap.problems) {
      this.opts.log?.(`${path.relative(this.root, problem.file)}:${problem.line}:${problem.column}: ${problem.message}`);
    }
    this.emit('snapshot', snap);
    await this.supervisor.reconcile(snap.servers as ReadonlyMap<string, ServerDef>);
    this.rebuildCatalog();
    this.emit('applied', snap);
  }

  /** Re-evaluates trust/approval policy without a registry change (approval given or revoked). */
  async reapplyPolicy(): Promise<void> {
    await this.supervisor.setPolicy(this.hooks.policy);
    this.rebuildCatalog();
  }

  /** Resolves once the live snapshot satisfies `check` (a write through the registry landed). */
  waitForSnapshot(check: (snap: RegistrySnapshot) => boolean, timeoutMs = 10_000): Promise<void> {
    if (this.snapshot && check(this.snapshot)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('applied', onSnap);
        reject(new McpFailure(ErrorCodes.InternalError, `The registry did not pick up the change within ${timeoutMs} ms; check the Problems list.`));
      }, timeoutMs);
      const onSnap = (snap: RegistrySnapshot): void => {
        if (!check(snap)) return;
        clearTimeout(timer);
        this.off('applied', onSnap);
        resolve();
      };
      this.on('applied', onSnap);
    });
  }

  /** Facade definitions changed (prompts.d edited): rebuild and tell sessions. */
  refreshFacade(): void {
    this.rebuildCatalog();
  }

  private scheduleCatalog(): void {
    // A restart storm or a burst of list_changed collapses into one rebuild and one notification.
    if (this.catalogTimer) return;
    this.catalogTimer = setTimeout(() => {
      this.catalogTimer = undefined;
      this.rebuildCatalog();
    }, 5);
  }

  private rebuildCatalog(): void {
    this.catalog.rebuild(this.supervisor.all());
    const toolsKey = this.catalog.listTools().map((t) => `${t.name}\0${t.description ?? ''}\0${JSON.stringify(t.inputSchema)}`).join('\n');
    const promptsKey = this.catalog.listPrompts().map((p) => `${p.name}\0${JSON.stringify(p.arguments ?? [])}`).join('\n');
    const resourcesKey = [...this.catalog.listResources().map((r) => r.uri), ...this.catalog.listResourceTemplates().map((t) => t.uriTemplate)].join('\n');
    if (toolsKey !== this.lastToolsKey) {
      this.lastToolsKey = toolsKey;
      this.endpoint.listChanged('tools');
    }
    if (promptsKey !== this.lastPromptsKey) {
      this.lastPromptsKey = promptsKey;
      this.endpoint.listChanged('prompts');
    }
    if (resourcesKey !== this.lastResourcesKey) {
      this.lastResourcesKey = resourcesKey;
      this.endpoint.listChanged('resources');
    }
    this.emit('catalog');
  }

  private running(name: string): Upstream {
    const upstream = this.supervisor.get(name);
    if (!upstream) throw new McpFailure(ErrorCodes.InvalidParams, `No server named '${name}' in this registry.`);
    return upstream;
  }

  private router(): Router {
    const hooks = this.hooks;
    const audit = (ctx: SessionContext, entry: JsonObject, started: number, error?: unknown): void => {
      hooks.audit?.({
        client: ctx.identity.client,
        ...entry,
        ms: Math.round((performance.now() - started) * 100) / 100,
        outcome: error ? 'error' : 'ok',
        ...(error ? { error: (error as Error).message } : {}),
      });
    };
    const progressOptions = (extra: RequestExtra) => ({
      signal: extra.signal,
      onprogress: extra.progressToken === undefined ? undefined : extra.sendProgress,
    });
    const forwardMeta = (meta: JsonObject | undefined): JsonObject | undefined => {
      if (!meta) return undefined;
      // The upstream gets its own progress token from our client; the caller's is mapped back.
      const { progressToken: _drop, ...rest } = meta;
      return Object.keys(rest).length ? rest : undefined;
    };

    return {
      hasServer: (name) => this.supervisor.get(name) !== undefined,
      instructions: (server) => {
        if (server) return this.supervisor.get(server)?.instructions;
        return 'MCP Switchboard: tools, prompts and resources of every server in this workspace, named <server>__<name>. ' +
          `Tools under ${FACADE_NAMESPACE}__ control the broker itself.`;
      },
      listTools: (ctx) => {
        if (ctx.server) return this.catalog.toolsOf(ctx.server);
        return this.catalog.listTools(hooks.toolProfile?.(ctx.identity));
      },
      callTool: async (ctx, name, args, meta, extra) => {
        const started = performance.now();
        let serverName: string;
        let toolName: string;
        if (ctx.server) {
          serverName = ctx.server;
          toolName = name;
          if (!this.catalog.toolsOf(serverName).some((t) => t.name === name)) {
            throw new McpFailure(ErrorCodes.InvalidParams, `Unknown tool '${name}' on server '${serverName}'.`);
          }
        } else {
          let route = this.catalog.resolveTool(name);
          if (!route && this.catalogTimer) {
            // An upstream just came back and the catalog rebuild is a few ms away: do it now.
            clearTimeout(this.catalogTimer);
            this.catalogTimer = undefined;
            this.rebuildCatalog();
            route = this.catalog.resolveTool(name);
          }
          if (!route) {
            // A restarting upstream's tools are out of the catalog for a moment: say it is restarting
            // (or failed, disabled...), not that its tool is unknown.
            const owner = this.supervisor.get(name.split(SEPARATOR, 1)[0]);
            if (owner && owner.state !== 'running') throw owner.unavailable();
            throw new McpFailure(ErrorCodes.InvalidParams, `Unknown tool '${name}'. List tools again: the catalog may have changed.`);
          }
          if (route.server === FACADE_NAMESPACE) {
            if (!hooks.callFacade) throw new McpFailure(ErrorCodes.MethodNotFound, 'The control plane is not available.');
            try {
              const result = await hooks.callFacade(ctx, name, args, extra);
              audit(ctx, { event: 'facade', tool: name }, started);
              return result;
            } catch (err) {
              audit(ctx, { event: 'facade', tool: name }, started, err);
              throw err;
            }
          }
          const profile = hooks.toolProfile?.(ctx.identity);
          if (profile && !this.catalog.listTools(profile).some((t) => t.name === name)) {
            throw new McpFailure(ErrorCodes.Forbidden, `Tool '${name}' is not in client '${ctx.identity.client}''s tool profile.`);
          }
          serverName = route.server;
          toolName = route.name;
        }
        const upstream = this.running(serverName);
        const params: JsonObject = { name: toolName, arguments: args };
        const fwd = forwardMeta(meta);
        if (fwd) params._meta = fwd;
        try {
          const result = await upstream.request('tools/call', params, { ...progressOptions(extra), forward: true });
          audit(ctx, { event: 'call', server: serverName, tool: toolName }, started);
          return result;
        } catch (err) {
          audit(ctx, { event: 'call', server: serverName, tool: toolName }, started, err);
          throw err;
        }
      },
      listPrompts: (ctx): Prompt[] => {
        if (ctx.server) return this.supervisor.get(ctx.server)?.state === 'running' ? this.supervisor.get(ctx.server)!.prompts : [];
        return this.catalog.listPrompts();
      },
      getPrompt: async (ctx, name, args, extra) => {
        let serverName: string;
        let promptName: string;
        if (ctx.server) {
          serverName = ctx.server;
          promptName = name;
        } else {
          const route = this.catalog.resolvePrompt(name);
          if (!route) throw new McpFailure(ErrorCodes.InvalidParams, `Unknown prompt '${name}'.`);
          if (route.server === FACADE_NAMESPACE) {
            if (!hooks.getFacadePrompt) throw new McpFailure(ErrorCodes.InvalidParams, `Unknown prompt '${name}'.`);
            return hooks.getFacadePrompt(ctx, name, args);
          }
          serverName = route.server;
          promptName = route.name;
        }
        return this.running(serverName).request('prompts/get', { name: promptName, arguments: args }, progressOptions(extra));
      },
      listResources: (ctx): Resource[] => {
        if (ctx.server) return this.supervisor.get(ctx.server)?.state === 'running' ? this.supervisor.get(ctx.server)!.resources : [];
        return [...(hooks.facadeResources?.() ?? []), ...this.catalog.listResources()];
      },
      listResourceTemplates: (ctx): ResourceTemplate[] => {
        if (ctx.server) return this.supervisor.get(ctx.server)?.state === 'running' ? this.supervisor.get(ctx.server)!.resourceTemplates : [];
        return this.catalog.listResourceTemplates();
      },
      readResource: async (ctx, uri, extra) => {
        if (!ctx.server) {
          const facade = hooks.readFacadeResource?.(ctx, uri);
          if (facade) return facade;
        }
        const serverName = ctx.server ?? this.catalog.resolveResource(uri);
        if (!serverName) throw new McpFailure(-32002, `Resource not found: no server offers ${uri}`);
        return this.running(serverName).request('resources/read', { uri }, { ...progressOptions(extra), forward: true });
      },
      subscribe: async (ctx, uri) => {
        if (!ctx.server && hooks.readFacadeResource && uri.startsWith(`${FACADE_NAMESPACE}://`)) return;
        const serverName = ctx.server ?? this.catalog.resolveResource(uri);
        if (!serverName) throw new McpFailure(-32002, `Resource not found: no server offers ${uri}`);
        const upstream = this.running(serverName);
        const count = this.subscriptions.get(uri) ?? 0;
        this.subscriptions.set(uri, count + 1);
        if (count === 0) {
          await upstream.request('resources/subscribe', { uri }, { signal: undefined }).catch((err: Error) => {
            this.subscriptions.set(uri, count);
            throw err;
          });
        }
      },
      unsubscribe: async (ctx, uri) => {
        const count = this.subscriptions.get(uri) ?? 0;
        if (count <= 0) return;
        this.subscriptions.set(uri, count - 1);
        if (count === 1) {
          this.subscriptions.delete(uri);
          const serverName = ctx.server ?? this.catalog.resolveResource(uri);
          const upstream = serverName ? this.supervisor.get(serverName) : undefined;
          if (upstream?.state === 'running') await upstream.request('resources/unsubscribe', { uri }, {}).catch(() => undefined);
        }
      },
      complete: async (ctx, params, extra) => {
        const ref = params.ref as { type?: string; name?: string; uri?: string } | undefined;
        let serverName = ctx.server;
        const forwarded: JsonObject = { ...params };
        if (!serverName && ref?.type === 'ref/prompt' && ref.name) {
          const route = this.catalog.resolvePrompt(ref.name);
          if (!route || route.server === FACADE_NAMESPACE) return { completion: { values: [] } };
          serverName = route.server;
          forwarded.ref = { ...ref, name: route.name };
        } else if (!serverName && ref?.type === 'ref/resource' && ref.uri) {
          serverName = this.catalog.resolveResource(ref.uri);
        }
        const upstream = serverName ? this.supervisor.get(serverName) : undefined;
        if (upstream?.state !== 'running') return { completion: { values: [] } };
        return upstream.request('completion/complete', forwarded, progressOptions(extra)).catch(() => ({ completion: { values: [] } }));
      },
      sessionClosed: () => undefined,
    };
  }
}
