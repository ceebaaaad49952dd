// Keeps the live set of upstreams equal to the registry: start new, stop removed, restart changed,
// and leave every unchanged upstream alone. Eager servers run while they may; lazy ones rest idle
// on their cached catalog until a request needs them. Live lists go to the persisted catalog.
import { EventEmitter } from 'node:events';
import { inputsReferenced, type ServerDef } from '../../registry/schema';
import { Credentials } from '../connection/auth/credentials';
import { SignIns } from '../connection/auth/signIns';
import type { CatalogCache } from '../catalog/catalogCache';
import { StartGate } from './startGate';
import type { EditorLink } from './editorLink';
import type { JsonObject } from '../shared/mcpTypes';
import { Upstream } from './upstream';
import { compareOrdinal } from '../shared/ordinal';
import { switchboardHome } from '../shared/userState';
import { isUp, waitsForPerson, type HeldState } from './upstreamStates';

export type StartDecision = { run: true } | { run: false; state: HeldState; reason: string };

/** Decides whether a definition may run now (enabled flag, trust tier, approval, workspace trust). */
export type StartPolicy = (def: ServerDef) => StartDecision;

export interface SupervisorEventMap {
  /** Any upstream changed state (the console's state view). */
  state: [];
  /** Some upstream's tools/prompts/resources changed (the catalog). */
  lists: [];
  log: [string, JsonObject];
  resourceUpdated: [string, string];
  /** An upstream's audit entry (its server→client requests). */
  audit: [JsonObject];
}

/** Until the control plane governs it, nothing runs. */
const NOTHING_RUNS: StartPolicy = () => ({ run: false, state: 'blocked', reason: 'the broker has not started yet' });

export class Supervisor extends EventEmitter<SupervisorEventMap> {
  private readonly upstreams = new Map<string, Upstream>();
  private queue: Promise<void> = Promise.resolve();
  private policy: StartPolicy = NOTHING_RUNS;
  /** The remote servers' sign-ins: a completed one reconnects its server. */
  readonly signIns: SignIns;
  /** Entered secrets and VS Code account tokens: a change restarts the servers that wait for it or use it. */
  readonly credentials: Credentials;
  /** Each adopted definition's hash in the catalog cache (computed once: it reads the env file). */
  private readonly hashes = new WeakMap<Upstream, string>();
  private readonly gate = new StartGate();

  constructor(
    private readonly root: string,
    private readonly cache?: CatalogCache,
    private readonly editor?: EditorLink,
    home = switchboardHome(),
  ) {
    super();
    this.signIns = new SignIns(home, root);
    this.credentials = new Credentials(home);
    this.credentials.on('inputs', (names) => void this.credentialsChanged((u) => usesInput(u.def, names)));
    this.credentials.on('account', (name) => void this.credentialsChanged((u) => u.name === name, true));
    this.signIns.on('changed', () => this.emit('state'));
    this.signIns.on('signedIn', (name) => {
      const upstream = this.get(name);
      if (upstream && this.policy(upstream.def).run) void upstream.restart();
      this.emit('state');
    });
  }

  /**
   * Starts again the servers a changed credential concerns: those waiting for it, and those that
   * run with a value it replaced (an entered secret is read at launch). A running server whose
   * VS Code token was refreshed keeps running: it reads the token at each request.
   */
  private async credentialsChanged(concerns: (u: Upstream) => boolean, account = false): Promise<void> {
    await this.enqueue(async () => {
      for (const upstream of this.all()) {
        if (!concerns(upstream) || !this.policy(upstream.def).run) continue;
        const waiting = waitsForPerson(upstream.state);
        const withdrawn = account && this.credentials.accountToken(upstream.def) === undefined;
        const running = isUp(upstream.state);
        if (waiting || (running && (!account || withdrawn))) void upstream.restart();
      }
    });
    this.emit('state');
  }

  get(name: string): Upstream | undefined {
    return this.upstreams.get(name);
  }

  all(): Upstream[] {
    return [...this.upstreams.values()].sort((a, b) => compareOrdinal(a.name, b.name));
  }

  /**
   * Reconciles in order: a snapshot never races the previous one. A definition is unchanged when
   * it is the same object: the registry loader keeps the object of a definition whose content did
   * not change (comments, layout and key order do not count), so nothing is compared again here.
   */
  reconcile(servers: ReadonlyMap<string, ServerDef>): Promise<void> {
    return this.enqueue(async () => {
      const work: Promise<void>[] = [];
      for (const [name, upstream] of this.upstreams) {
        if (servers.get(name) !== upstream.def) {
          this.upstreams.delete(name);
          work.push(this.retire(upstream));
        }
      }
      await Promise.all(work);
      this.signIns.retain(new Set(servers.keys()));
      this.credentials.retain(new Set(servers.keys()));
      this.cache?.retain(new Set(servers.keys()));
      for (const [name, def] of servers) {
        if (this.upstreams.has(name)) continue;
        const upstream = this.adopt(def);
        this.upstreams.set(name, upstream);
        await this.apply(upstream);
      }
      this.emit('state');
      this.emit('lists');
    });
  }

  /** Re-evaluates the policy for every upstream (after an approval, or a change of workspace trust). */
  setPolicy(policy: StartPolicy): Promise<void> {
    this.policy = policy;
    return this.enqueue(async () => {
      await Promise.all(this.all().map((u) => this.apply(u)));
      this.emit('state');
    });
  }

  async restart(name: string): Promise<Upstream> {
    const upstream = this.get(name);
    if (!upstream) throw new Error(`no server named '${name}'`);
    const decision = this.policy(upstream.def);
    if (!decision.run) throw new Error(`server '${name}' cannot start: ${decision.reason}`);
    await upstream.restart();
    return upstream;
  }

  /** Cache-listed servers wait to start until openQueuedStarts() or `maxMs` (see StartGate.hold). */
  holdQueuedStarts(maxMs: number): void {
    this.gate.hold(maxMs);
  }

  openQueuedStarts(): void {
    this.gate.open();
  }

  stopAll(): Promise<void> {
    return this.enqueue(async () => {
      await Promise.all(this.all().map((u) => this.retire(u)));
      this.upstreams.clear();
      this.signIns.retain(new Set());
      this.cache?.flush();
    });
  }

  private async apply(upstream: Upstream): Promise<void> {
    const decision = this.policy(upstream.def);
    if (decision.run) {
      // A server waiting for sign-in starts again when the sign-in completes, not on every policy change.
      const up = isUp(upstream.state) || waitsForPerson(upstream.state);
      if (!upstream.lazy) {
        if (!up) upstream.start();
      } else if (!up && upstream.state !== 'idle') {
        // A lazy server rests on its catalog; with none yet, it runs once to learn it.
        if (upstream.hasCatalog) upstream.rest();
        else upstream.learn();
      }
    } else if (upstream.state !== decision.state || upstream.lastError !== decision.reason) {
      await upstream.hold(decision.state, decision.reason);
    }
  }

  private adopt(def: ServerDef): Upstream {
    const mayStart = () => {
      const decision = this.policy(def);
      return decision.run ? undefined : decision;
    };
    const signIn = this.signIns.forServer(def);
    const upstream = new Upstream(def, this.root, mayStart, signIn, this.gate, this.editor, this.credentials);
    if (this.cache) {
      const hash = this.cache.hashOf(def);
      this.hashes.set(upstream, hash);
      // Served only in states the policy allows (idle, starting): an unapproved server's cache never shows.
      const cached = this.cache.lookup(def.name, hash);
      if (cached) upstream.useCached(cached);
    }
    upstream.on('state', () => this.emit('state'));
    upstream.on('lists', () => {
      this.persist(upstream);
      this.emit('lists');
    });
    upstream.on('log', (params) => this.emit('log', def.name, params));
    upstream.on('resourceUpdated', (uri) => this.emit('resourceUpdated', def.name, uri));
    upstream.on('audit', (entry) => this.emit('audit', entry));
    return upstream;
  }

  /** Live lists of a server that runs (so was allowed to) are its last good catalog. */
  private persist(upstream: Upstream): void {
    const hash = this.hashes.get(upstream);
    if (!this.cache || hash === undefined || upstream.catalogSource !== 'live') return;
    if (this.upstreams.get(upstream.name) !== upstream) return;
    this.cache.record(upstream.name, hash, upstream.listed);
  }

  private async retire(upstream: Upstream): Promise<void> {
    upstream.removeAllListeners();
    await upstream.stop();
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function usesInput(def: ServerDef, names: readonly string[]): boolean {
  return inputsReferenced(def).some((n) => names.includes(n));
}
