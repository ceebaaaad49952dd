// The 2026-07-28 side of `switchboard connect`: a stdio client that sends per-request `_meta`
// (no initialize) gets each request POSTed on its own with the revision's headers; its
// notifications/cancelled (stdio's cancellation) closes that request's HTTP stream (HTTP's).

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
