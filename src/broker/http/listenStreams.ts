// The open `subscriptions/listen` streams of 2026-07-28 callers: each acknowledges the filter it
// honours, then carries only the change notifications it asked for, tagged with its subscription id.
// Streams are capped per client and in all (sessionLimits.ts): each holds a connection and a file
// descriptor for as long as the caller likes, so a read token must not be able to open thousands.
import { McpFailure, type JsonObject } from '../shared/mcpTypes';
import type { Identity, Router, SessionContext } from '../routing/requestContext';
import type { Exchange } from './exchange';
import { DEFAULT_LISTEN_LIMITS, listenRoom, type SessionLimits } from './sessionLimits';
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
  slot: Slot;
}

/** One stream's place under the caps, taken before it subscribes (subscribing may take a while). */
interface Slot {
  identity: Identity;
}

export class ListenStreams {
  private readonly listeners = new Set<Listener>();
  /** Who holds each stream slot: the open streams' callers and those still subscribing. */
  private readonly slots = new Set<Slot>();

  constructor(
    private readonly router: Router,
    private readonly limits: SessionLimits = DEFAULT_LISTEN_LIMITS,
  ) {}

  get size(): number {
    return this.listeners.size;
  }

  /**
   * Opens the stream, or refuses it past a cap (429 for the client's own, 503 for all); the slot is
   * taken at once and freed when the stream ends, however it ends.
   */
  async open(ctx: SessionContext, exchange: Exchange, filter: JsonObject): Promise<void> {
    const refused = listenRoom(
      [...this.slots].map((s) => s.identity),
      ctx.identity,
      this.limits,
    );
    if (refused) return exchange.error(new McpFailure(-32000, refused.message), refused.status);
    const slot = { identity: ctx.identity };
    this.slots.add(slot);
    let opened = false;
    try {
      opened = await this.subscribeAndAcknowledge(ctx, exchange, filter, slot);
    } finally {
      // An open stream holds its slot until it ends (remove); one that never opened frees it now.
      if (!opened) this.slots.delete(slot);
    }
  }

  /** Subscribes upstream to the URIs asked for, then acknowledges what it honours. */
  private async subscribeAndAcknowledge(
    ctx: SessionContext,
    exchange: Exchange,
    filter: JsonObject,
    slot: Slot,
  ): Promise<boolean> {
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
    if (exchange.done) {
      this.unsubscribe(ctx, uris);
      return false;
    }
    const keepAlive = setInterval(() => exchange.comment('keep-alive'), 25_000);
    keepAlive.unref();
    const listener: Listener = { ctx, exchange, kinds, uris, keepAlive, slot };
    this.listeners.add(listener);
    exchange.cancel.onAbort(() => this.remove(listener));
    const honoured: JsonObject = {};
    for (const kind of kinds) honoured[FILTER_KEYS[kind]] = true;
    if (uris.size) honoured.resourceSubscriptions = [...uris];
    exchange.upgrade();
    exchange.notify('notifications/subscriptions/acknowledged', {
      _meta: { [META_SUBSCRIPTION_ID]: exchange.id },
      notifications: honoured,
    });
    return true;
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
    this.slots.delete(l.slot);
    clearInterval(l.keepAlive);
    this.unsubscribe(l.ctx, l.uris);
  }

  private unsubscribe(ctx: SessionContext, uris: Set<string>): void {
    for (const uri of uris) this.router.unsubscribe(ctx, uri).catch(() => undefined);
  }
}
