// The open `subscriptions/listen` streams of 2026-07-28 callers: each acknowledges the filter it
// honours, then carries only the change notifications it asked for, tagged with its subscription id.
import type { JsonObject } from '../shared/mcpTypes';
import type { Router, SessionContext } from '../routing/requestContext';
import type { Exchange } from './exchange';
import { META_SUBSCRIPTION_ID } from './statelessEnvelope';

type ListKind = 'tools' | 'prompts' | 'resources';

const FILTER_KEYS: Record<ListKind, string> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};

interface Listener {
  ctx: SessionContext;
  exchange: Exchange;
  kinds: Set<ListKind>;
  uris: Set<string>;
  keepAlive: NodeJS.Timeout;
}

export class ListenStreams {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly router: Router) {}

  get size(): number {
    return this.listeners.size;
  }

  /** Opens the stream: subscribes upstream to the URIs asked for, then acknowledges what it honours. */
  async open(ctx: SessionContext, exchange: Exchange, filter: JsonObject): Promise<void> {
    const kinds = new Set<ListKind>();
    for (const kind of Object.keys(FILTER_KEYS) as ListKind[]) if (filter[FILTER_KEYS[kind]] === true) kinds.add(kind);
    const uris = new Set<string>();
    const asked = Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions : [];
    for (const uri of asked.slice(0, 1000)) {
      if (typeof uri !== 'string' || uris.has(uri)) continue;
      try {
        await this.router.subscribe(ctx, uri);
        uris.add(uri);
      } catch {
        // A URI no server offers (or one that cannot subscribe) is left out of the acknowledgment.
      }
    }
    if (exchange.done) return this.unsubscribe(ctx, uris);
    const keepAlive = setInterval(() => exchange.comment('keep-alive'), 25_000);
    keepAlive.unref();
    const listener: Listener = { ctx, exchange, kinds, uris, keepAlive };
    this.listeners.add(listener);
    exchange.controller.signal.addEventListener('abort', () => this.remove(listener), { once: true });
    const honoured: JsonObject = {};
    for (const kind of kinds) honoured[FILTER_KEYS[kind]] = true;
    if (uris.size) honoured.resourceSubscriptions = [...uris];
    exchange.upgrade();
    exchange.notify('notifications/subscriptions/acknowledged', {
      _meta: { [META_SUBSCRIPTION_ID]: exchange.id },
      notifications: honoured,
    });
  }

  listChanged(kind: ListKind, server?: string): void {
    for (const l of this.listeners) {
      if (!l.kinds.has(kind)) continue;
      if (server !== undefined && l.ctx.server !== undefined && l.ctx.server !== server) continue;
      l.exchange.notify(`notifications/${kind}/list_changed`, { _meta: { [META_SUBSCRIPTION_ID]: l.exchange.id } });
    }
  }

  resourceUpdated(uri: string): void {
    for (const l of this.listeners) {
      if (!l.uris.has(uri)) continue;
      l.exchange.notify('notifications/resources/updated', { _meta: { [META_SUBSCRIPTION_ID]: l.exchange.id }, uri });
    }
  }

  /** Ends every stream gracefully (the broker is shutting down): a complete result, then the end. */
  close(): void {
    for (const l of [...this.listeners]) {
      this.remove(l);
      l.exchange.result({ resultType: 'complete', _meta: { [META_SUBSCRIPTION_ID]: l.exchange.id } });
    }
  }

  private remove(l: Listener): void {
    if (!this.listeners.delete(l)) return;
    clearInterval(l.keepAlive);
    this.unsubscribe(l.ctx, l.uris);
  }

  private unsubscribe(ctx: SessionContext, uris: Set<string>): void {
    for (const uri of uris) this.router.unsubscribe(ctx, uri).catch(() => undefined);
  }
}
