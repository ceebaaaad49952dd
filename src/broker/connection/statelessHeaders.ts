// The headers the 2026-07-28 revision mirrors from a request's body (version, method, name), as a
// client sends them: the broker's remote upstream connection and `switchboard connect`'s bridge.

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
