// The 2026-07-28 side of `switchboard connect`: a stdio client that sends per-request `_meta`
// (no initialize) gets each request POSTed on its own with the revision's headers; its
// notifications/cancelled (stdio's cancellation) closes that request's HTTP stream (HTTP's).

/** The protocol version a stdio message claims in its `_meta`, if any. */
export function claimedVersion(message: { params?: unknown }): string | undefined {
  const params = message.params as { _meta?: Record<string, unknown> } | undefined;
  const v = params?._meta?.['io.modelcontextprotocol/protocolVersion'];
  return typeof v === 'string' ? v : undefined;
}

/** A header value as the revision sends it: as is when plain visible ASCII, else `=?base64?…?=`. */
export function headerValue(value: string): string {
  const plain = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !/^=\?base64\?.*\?=$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The mirrored headers of one request: version, method and (for calls, gets and reads) name. */
export function statelessHeaders(
  message: { method?: string; params?: unknown },
  version: string,
): Record<string, string> {
  const headers: Record<string, string> = { 'mcp-protocol-version': version, 'mcp-method': message.method ?? '' };
  const params = (message.params ?? {}) as { name?: unknown; uri?: unknown };
  const named =
    message.method === 'resources/read'
      ? params.uri
      : ['tools/call', 'prompts/get'].includes(message.method ?? '')
        ? params.name
        : undefined;
  if (typeof named === 'string') headers['mcp-name'] = headerValue(named);
  return headers;
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
