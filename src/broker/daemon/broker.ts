// The daemon: registry snapshots in, supervised upstreams, one catalog, one endpoint out.
import { aggregatedUiUri, isUiUri } from '../catalog/apps/appMeta';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RegistryLoader } from '../../registry/loader';
import type { RegistrySnapshot } from '../../registry/loader';
import { KIND_DIRS } from '../../registry/schema';
import { RegistryWatcher } from '../../registry/watcher';
import { AccessPolicy } from '../routing/accessPolicy';
import { AuditLog } from '../routing/audit';
import { Catalog, type CatalogChanges } from '../catalog/catalog';
import { CatalogCache } from '../catalog/catalogCache';
import { ClientTokens } from '../trust/clientTokens';
import { EditorLink } from '../supervision/editorLink';
import { Endpoint } from '../http/endpoint';
import type { LogRate } from '../http/logRateLimit';
import { IdleCollector } from './idleCollector';
import { ErrorCodes, McpFailure } from '../shared/mcpTypes';
import { BrokerRouter } from '../routing/router';
import { rootId, type RuntimePaths } from '../shared/userState';
import type { ServedServer } from '../routing/servedServer';
import { UpstreamServer } from '../routing/upstreamServer';
import { Supervisor } from '../supervision/supervisor';
import { ToolSearch } from '../catalog/toolSearch';
import { countHere, ToolTokens, processCounter, type TokenCounter } from '../catalog/tokenCounts';
import type { Upstream } from '../supervision/upstream';
import type { BrokerEventMap, ControlledBroker, Governance } from '../control/controlledBroker';
import { BROKER_VERSION } from '../shared/version';
import { facadeToolScope } from '../control/facade';
import { Guardrails } from '../trust/guardrails/guardrails';
import { tracedRouter } from '../telemetry/tracedRouter';

/**
 * How long, at most, servers listed from the catalog cache wait for the first tools/list before
 * they start anyway (nobody may be connecting yet: the editor's client can come seconds later).
 */
const START_HOLD_MS = 1500;
/** Catalog rebuilds are at least this far apart (a restart storm or a burst of list_changed). */
const CATALOG_GAP_MS = 5;

export interface BrokerOptions {
  root: string;
  port: number;
  /** An untrusted workspace: definitions are read and shown, nothing is spawned. */
  untrusted?: boolean;
  /** The operator accepts the workspace's trusted/builtin servers for this run (`--accept-workspace-trust`). */
  acceptWorkspaceTrust?: boolean;
  idleSessionMs?: number;
  maxBodyBytes?: number;
  /** How many log messages per upstream reach the sessions (`serve --log-rate`). */
  logRate?: LogRate;
  /** How long a call parked on input_required waits for the caller's retry (`serve --park-timeout`). */
  parkTimeoutMs?: number;
  debounceMs?: number;
  log?(line: string): void;
}

/** What the broker is given to start with: where its per-user files are, and the operator's token. */
export interface BrokerRuntime {
  paths: RuntimePaths;
  operatorToken: string;
}

/**
 * Counting tokens in a child process on the broker's own entry point (the bundle, or bin/switchboard.js);
 * in this process when the broker is embedded elsewhere (there is no entry point to run).
 */
function tokenCounter(): TokenCounter {
  const script = process.argv[1];
  return script && /(broker|switchboard)\.js$/.test(script) ? processCounter(script) : countHere;
}

export class Broker extends EventEmitter<BrokerEventMap> implements ControlledBroker {
  readonly root: string;
  readonly supervisor: Supervisor;
  readonly catalog = new Catalog();
  /** find_tools' index, and what each server's tool definitions cost in tokens. */
  readonly toolSearch = new ToolSearch(this.catalog, (name) => this.snapshot?.servers.get(name)?.description);
  readonly toolTokens = new ToolTokens(this.catalog, () => this.emit('state'), tokenCounter());
  readonly endpoint: Endpoint;
  readonly tokens: ClientTokens;
  readonly access: AccessPolicy;
  readonly audit: AuditLog;
  /** The VS Code window that answers for callers that cannot, and its folders (editorLink.ts). */
  readonly editor = new EditorLink();
  /** The rules and limits of the approved policies (policies.d/) on every tool call. */
  readonly guardrails: Guardrails;
  snapshot!: RegistrySnapshot;
  /** The last snapshot whose servers have been reconciled: what waitForSnapshot answers from. */
  private applied?: RegistrySnapshot;
  private governance?: Governance;
  private readonly watcher: RegistryWatcher;
  private readonly servedUpstreams = new WeakMap<Upstream, UpstreamServer>();
  private catalogTimer?: NodeJS.Timeout;
  /** When the catalog was last rebuilt (performance.now()), for CATALOG_GAP_MS. */
  private catalogBuiltAt = -Infinity;
  private readonly idleCollector = new IdleCollector();
  private listServed = false;

  constructor(
    readonly opts: BrokerOptions,
    runtime: BrokerRuntime,
  ) {
    super();
    this.root = path.resolve(opts.root);
    const cache = new CatalogCache({
      file: runtime.paths.catalogFile,
      keyFile: runtime.paths.catalogKeyFile,
      root: this.root,
      log: opts.log,
    });
    this.supervisor = new Supervisor(this.root, cache, this.editor);
    this.tokens = new ClientTokens(runtime.paths.tokensDir);
    this.access = new AccessPolicy({
      operatorToken: runtime.operatorToken,
      clientOf: (token) => this.tokens.clientOf(token),
      clients: () => this.snapshot?.clients,
    });
    this.audit = new AuditLog(runtime.paths.auditFile, () => [runtime.operatorToken, ...this.secretValues()]);
    this.watcher = new RegistryWatcher(new RegistryLoader(this.root), { debounceMs: opts.debounceMs });
    const policyApprovals = path.join(path.dirname(runtime.paths.approvalsFile), 'policy-approvals.json');
    this.guardrails = new Guardrails(policyApprovals, this.root, () => this.editor.current());
    this.guardrails.on('changed', () => this.emit('state'));
    // Each request the endpoint serves is a SERVER span while telemetry is on.
    const router = tracedRouter(
      new BrokerRouter({
        catalog: this.catalog,
        access: this.access,
        servedServer: (name) => this.servedServer(name),
        isUpstream: (name) => this.supervisor.get(name) !== undefined,
        settleCatalog: () => this.settleCatalog(),
        audit: (entry) => this.audit.write(entry),
        toolsChanged: (sessionId) => this.endpoint.toolListChanged(sessionId),
        toolsListed: () => this.firstListServed(),
        facadeToolScope,
        guard: (call, audit, signal) => this.guardrails.admit(call, audit, signal),
      }),
    );
    this.endpoint = new Endpoint({
      port: opts.port,
      authenticate: (token) => this.access.authenticate(token),
      router,
      maxBodyBytes: opts.maxBodyBytes,
      idleSessionMs: opts.idleSessionMs,
      logRate: opts.logRate,
      parkTimeoutMs: opts.parkTimeoutMs,
      version: BROKER_VERSION,
      instance: rootId(this.root),
      onRejected: (reason, status) => this.audit.write({ event: 'rejected', status, reason }),
      onRequest: () => this.idleCollector.touch(),
      onSessionOpened: (opened) => this.audit.write({ event: 'session', ...opened }),
      editor: this.editor,
    });
    // The editor's folders are part of every upstream's roots (when its caller gives none).
    this.editor.on('roots', () => {
      for (const upstream of this.supervisor.all()) void upstream.rootsChanged();
    });
  }

  /** The aggregated endpoint's URL (known once the broker listens). */
  get url(): string {
    return `http://127.0.0.1:${this.endpoint.port}/mcp`;
  }

  /** Listens, then applies the registry under the control plane's governance. */
  async start(governance: Governance): Promise<number> {
    this.governance = governance;
    fs.mkdirSync(this.root, { recursive: true });
    const port = await this.endpoint.listen();
    this.supervisor.on('state', () => this.emit('state'));
    this.supervisor.on('lists', () => this.scheduleCatalog());
    this.supervisor.on('log', (server, params) => this.endpoint.log(server, params));
    this.supervisor.on('resourceUpdated', (server, uri) => {
      this.endpoint.resourceUpdated(uri);
      // An app's page is subscribed on the aggregated endpoint under its ui://<server>/… URI.
      if (isUiUri(uri)) this.endpoint.resourceUpdated(aggregatedUiUri(server, uri));
    });
    this.supervisor.on('audit', (entry) => this.audit.write(entry));
    this.watcher.on('snapshot', (snap) => void this.apply(snap));
    await this.supervisor.setPolicy((def) => governance.decide(def));
    this.supervisor.holdQueuedStarts(START_HOLD_MS);
    await this.apply(this.watcher.start());
    // Start-up leaves garbage too (the registry parse, every upstream's handshake).
    this.idleCollector.touch();
    return port;
  }

  /**
   * The first tools/list since start: once its answer is written (setImmediate), the servers
   * listed from the catalog cache may start. Until then they would compete with it for the CPU.
   */
  private firstListServed(): void {
    if (this.listServed) return;
    this.listServed = true;
    setImmediate(() => this.supervisor.openQueuedStarts());
  }

  /** Times the broker went quiet and ran a collection (0 where --expose-gc is not given). */
  get idleCollections(): number {
    return this.idleCollector.collections;
  }

  async stop(): Promise<void> {
    this.idleCollector.close();
    this.watcher.close();
    clearTimeout(this.catalogTimer);
    this.toolTokens.close();
    await this.endpoint.close();
    await this.supervisor.stopAll();
    this.audit.close();
  }

  upstream(name: string): Upstream | undefined {
    return this.supervisor.get(name);
  }

  private async apply(snap: RegistrySnapshot): Promise<void> {
    const previous = this.snapshot;
    this.snapshot = snap;
    for (const problem of snap.problems) {
      this.opts.log?.(
        // The severity word lets a reader of the log (the editor's log channel) give the line its level.
        `${path.relative(this.root, problem.file)}:${problem.line}:${problem.column}: ${problem.severity}: ${problem.message}`,
      );
    }
    this.retireClients(previous, snap);
    this.guardrails.update(snap.policies);
    this.emit('snapshot', snap);
    await this.supervisor.reconcile(snap.servers);
    this.refreshCatalog();
    // Reconciles queue in order; an older one ending after a newer snapshot was read is not the state.
    if (this.snapshot === snap) this.applied = snap;
    this.emit('applied', snap);
  }

  /**
   * A client that left the registry loses its sessions and its token, so a client of the same
   * name added later gets a new token rather than reviving the old one. At start, token files of
   * clients with no definition file at all are swept the same way (a file that only fails to
   * parse keeps its token: the client is still meant to exist).
   */
  private retireClients(previous: RegistrySnapshot | undefined, snap: RegistrySnapshot): void {
    const gone = previous
      ? [...previous.clients.keys()].filter((name) => !snap.clients.has(name))
      : this.tokens.clients().filter((name) => !snap.clients.has(name) && !this.hasClientFile(snap, name));
    for (const name of gone) {
      this.tokens.revoke(name);
      this.endpoint.dropClient(name);
    }
  }

  /** Whether clients.d/ has a file for this name that the registry reported a problem with. */
  private hasClientFile(snap: RegistrySnapshot, name: string): boolean {
    const dir = path.join(this.root, KIND_DIRS.client);
    return snap.problems.some((p) => path.dirname(p.file) === dir && path.parse(p.file).name === name);
  }

  /** Re-evaluates trust/approval policy without a registry change (approval given or revoked). */
  async reapplyPolicy(): Promise<void> {
    const governance = this.governance;
    if (!governance) return;
    await this.supervisor.setPolicy((def) => governance.decide(def));
    this.refreshCatalog();
  }

  /** Rebuilds the catalog now, without touching any upstream (tool pins accepted or a new lockfile). */
  rebuildCatalog(): void {
    this.refreshCatalog();
  }

  /** Resolves once the live snapshot satisfies `check` (a write through the registry landed). */
  waitForSnapshot(check: (snap: RegistrySnapshot) => boolean, timeoutMs = 10_000): Promise<void> {
    // The last snapshot applied, not the last read: a reload in progress (the servers still being
    // stopped or started) must not answer an operation that waits for its own write to take effect.
    if (this.applied && check(this.applied)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('applied', onSnap);
        reject(
          new McpFailure(
            ErrorCodes.InternalError,
            `The registry did not pick up the change within ${timeoutMs} ms; check the Problems list.`,
          ),
        );
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

  /** Every served server, the facade first so that nothing can shadow its names. */
  private servedServers(): ServedServer[] {
    const upstreams = this.supervisor.all().map((u) => this.servedUpstream(u));
    return this.governance ? [this.governance.served, ...upstreams] : upstreams;
  }

  private servedServer(name: string): ServedServer | undefined {
    if (this.governance?.served.name === name) return this.governance.served;
    const upstream = this.supervisor.get(name);
    return upstream && this.servedUpstream(upstream);
  }

  private servedUpstream(upstream: Upstream): UpstreamServer {
    let served = this.servedUpstreams.get(upstream);
    if (!served) this.servedUpstreams.set(upstream, (served = new UpstreamServer(upstream)));
    return served;
  }

  private secretValues(): string[] {
    const values = this.tokens.values();
    for (const upstream of this.supervisor.all()) values.push(...upstream.secretValues);
    values.push(...this.supervisor.credentials.values());
    return values;
  }

  private scheduleCatalog(): void {
    // A restart storm or a burst of list_changed collapses into one rebuild and one notification
    // per CATALOG_GAP_MS. The first change after a quiet spell (a server added by a reload, now
    // running) is rebuilt on the next timer turn, not CATALOG_GAP_MS later: clients hear of it at once.
    if (this.catalogTimer) return;
    const wait = Math.max(0, this.catalogBuiltAt + CATALOG_GAP_MS - performance.now());
    this.catalogTimer = setTimeout(() => {
      this.catalogTimer = undefined;
      this.refreshCatalog();
    }, wait);
  }

  /** A rebuild is pending (an upstream just came back): do it now, a call is waiting on it. */
  private settleCatalog(): void {
    if (this.catalogTimer) this.refreshCatalog();
  }

  /** The one place the catalog is rebuilt; sessions hear list_changed for what changed. */
  private refreshCatalog(): void {
    clearTimeout(this.catalogTimer);
    this.catalogTimer = undefined;
    const changes = this.catalog.rebuild(this.servedServers());
    this.catalogBuiltAt = performance.now();
    this.toolSearch.invalidate(changes.tools);
    this.toolTokens.invalidate(changes.tools);
    this.notifyChanges(changes);
    this.emit('catalog');
  }

  private notifyChanges(changes: CatalogChanges): void {
    for (const kind of ['tools', 'prompts', 'resources'] as const) {
      const servers = changes[kind];
      // One server changed: only sessions that can see it hear of it (per-server sessions of others don't).
      if (servers.length) this.endpoint.listChanged(kind, servers.length === 1 ? servers[0] : undefined);
    }
  }
}
