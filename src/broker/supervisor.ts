// Keeps the live set of upstreams equal to the registry: start new, stop removed, restart changed,
// and leave every unchanged upstream alone.
import { EventEmitter } from 'node:events';
import type { ServerDef } from '../registry/schema';
import type { EditorLink } from './editorLink';
import type { JsonObject } from './mcpTypes';
import { Upstream } from './upstream';
import { compareOrdinal } from './ordinal';

export type StartDecision =
  { run: true } | { run: false; state: 'disabled' | 'awaiting-approval' | 'blocked'; reason: string };

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

  constructor(
    private readonly root: string,
    private readonly editor?: EditorLink,
  ) {
    super();
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

  stopAll(): Promise<void> {
    return this.enqueue(async () => {
      await Promise.all(this.all().map((u) => this.retire(u)));
      this.upstreams.clear();
    });
  }

  private async apply(upstream: Upstream): Promise<void> {
    const decision = this.policy(upstream.def);
    if (decision.run) {
      if (upstream.state !== 'running' && upstream.state !== 'starting' && upstream.state !== 'backoff')
        upstream.start();
    } else if (upstream.state !== decision.state || upstream.lastError !== decision.reason) {
      await upstream.hold(decision.state, decision.reason);
    }
  }

  private adopt(def: ServerDef): Upstream {
    const upstream = new Upstream(
      def,
      this.root,
      () => {
        const decision = this.policy(def);
        return decision.run ? undefined : decision;
      },
      this.editor,
    );
    upstream.on('state', () => this.emit('state'));
    upstream.on('lists', () => this.emit('lists'));
    upstream.on('log', (params) => this.emit('log', def.name, params));
    upstream.on('resourceUpdated', (uri) => this.emit('resourceUpdated', def.name, uri));
    upstream.on('audit', (entry) => this.emit('audit', entry));
    return upstream;
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
