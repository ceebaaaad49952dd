// Keeps the live set of upstreams equal to the registry: start new, stop removed, restart changed,
// and leave every unchanged upstream alone.
import { EventEmitter } from 'node:events';
import type { ServerDef } from '../registry/schema';
import type { JsonObject } from './mcpTypes';
import { Upstream } from './upstream';
import { compareOrdinal } from './ordinal';

export type StartDecision =
  | { run: true }
  | { run: false; state: 'disabled' | 'awaiting-approval' | 'blocked'; reason: string };

/** Decides whether a definition may run now (enabled flag, trust tier, approval, workspace trust). */
export type StartPolicy = (def: ServerDef) => StartDecision;

export interface SupervisorEventMap {
  /** Any upstream changed state (the console's state view). */
  state: [];
  /** Some upstream's tools/prompts/resources changed (the catalog). */
  lists: [];
  log: [string, JsonObject];
  resourceUpdated: [string, string];
}

/** A stable serialization: key order in the YAML must not count as a change. */
export function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => compareOrdinal(a, b)))
      : v);
}

export class Supervisor extends EventEmitter<SupervisorEventMap> {
  private readonly upstreams = new Map<string, { upstream: Upstream; print: string }>();
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly root: string, private policy: StartPolicy) {
    super();
  }

  get(name: string): Upstream | undefined {
    return this.upstreams.get(name)?.upstream;
  }

  all(): Upstream[] {
    return [...this.upstreams.values()].map((e) => e.upstream).sort((a, b) => compareOrdinal(a.name, b.name));
  }

  /** Reconciles in order: a snapshot never races the previous one. */
  reconcile(servers: ReadonlyMap<string, ServerDef>): Promise<void> {
    return this.enqueue(async () => {
      const work: Promise<void>[] = [];
      for (const [name, entry] of this.upstreams) {
        const next = servers.get(name);
        if (!next || fingerprint(next) !== entry.print) {
          this.upstreams.delete(name);
          work.push(this.retire(entry.upstream));
        }
      }
      await Promise.all(work);
      for (const [name, def] of servers) {
        if (this.upstreams.has(name)) continue;
        const upstream = this.adopt(def);
        this.upstreams.set(name, { upstream, print: fingerprint(def) });
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
      if (upstream.state !== 'running' && upstream.state !== 'starting' && upstream.state !== 'backoff') upstream.start();
    } else if (upstream.state !== decision.state || upstream.lastError !== decision.reason) {
      await upstream.hold(decision.state, decision.reason);
    }
  }

  private adopt(def: ServerDef): Upstream {
    const upstream = new Upstream(def, this.root, () => {
      const decision = this.policy(def);
      return decision.run ? undefined : decision;
    });
    upstream.on('state', () => this.emit('state'));
    upstream.on('lists', () => this.emit('lists'));
    upstream.on('log', (params) => this.emit('log', def.name, params));
    upstream.on('resourceUpdated', (uri) => this.emit('resourceUpdated', def.name, uri));
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
