// The 2026-07-28 side of `switchboard connect`: a stdio client that sends per-request `_meta`
// (no initialize) gets each request POSTed on its own with the revision's headers; its
// notifications/cancelled (stdio's cancellation) closes that request's HTTP stream (HTTP's).
import { paramHeaders, paramHeaderValues, type ParamHeader } from '../connection/statelessHeaders';

/** The protocol version a stdio message claims in its `_meta`, if any. */
export function claimedVersion(message: { params?: unknown }): string | undefined {
  const params = message.params as { _meta?: Record<string, unknown> } | undefined;
  const v = params?._meta?.['io.modelcontextprotocol/protocolVersion'];
  return typeof v === 'string' ? v : undefined;
}

/** Requests in flight on the stateless path, so a stdio cancellation can close the right stream. */
export class StatelessInFlight {
  private readonly controllers = new Map<string, AbortController>();

  begin(id: string | number): AbortSignal {
    const controller = new AbortController();
    this.controllers.set(`${typeof id}:${id}`, controller);
    return controller.signal;
  }

  end(id: string | number): void {
    this.controllers.delete(`${typeof id}:${id}`);
  }

  /** notifications/cancelled from the client: closing the request's stream cancels it on the broker. */
  cancel(params: unknown): void {
    const id = (params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    this.controllers.get(`${typeof id}:${id}`)?.abort();
  }
}

/**
 * The `x-mcp-header` declarations of the tools the client can call, so that the bridge sends a
 * tools/call's `Mcp-Param-*` headers as an HTTP client would: learnt from the tools/list answers it
 * relays, and listed by the bridge itself when a call names a tool it has not seen.
 */
export class ParamHeaderBook {
  private readonly tools = new Map<string, ParamHeader[]>();

  /** A relayed tools/list answer (one page). */
  learn(result: unknown): void {
    const tools = (result as { tools?: unknown } | undefined)?.tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as { name?: unknown; inputSchema?: unknown }[]) {
      if (typeof tool?.name === 'string') this.tools.set(tool.name, paramHeaders(tool.inputSchema));
    }
  }

  /** Whether a tools/call needs a listing first (its tool is not known yet). */
  needsList(message: { method?: string; params?: unknown }): boolean {
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return message.method === 'tools/call' && typeof name === 'string' && !this.tools.has(name);
  }

  /** The Mcp-Param-* headers of a tools/call (none for any other message). */
  headers(message: { method?: string; params?: unknown }): Record<string, string> {
    if (message.method !== 'tools/call') return {};
    const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
    const decls = typeof params?.name === 'string' ? this.tools.get(params.name) : undefined;
    return decls ? paramHeaderValues(decls, params?.arguments) : {};
  }
}

/** The request envelope of a 2026-07-28 message (its `io.modelcontextprotocol/*` `_meta` keys). */
export function envelopeOf(message: { params?: unknown }): Record<string, unknown> {
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta ?? {};
  return Object.fromEntries(Object.entries(meta).filter(([k]) => k.startsWith('io.modelcontextprotocol/')));
}
