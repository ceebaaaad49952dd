// The headers the 2026-07-28 revision mirrors from a request's body (version, method, name, and a
// tool's `x-mcp-header` arguments as `Mcp-Param-*`), as a client sends them: the broker's remote
// upstream connection and `switchboard connect`'s bridge; the endpoint checks a caller's with them.

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

/** One `x-mcp-header` declaration of a tool: the header's name and where its argument is. */
export interface ParamHeader {
  header: string;
  path: string[];
}

/**
 * A tool's `x-mcp-header` declarations: primitive properties reached through `properties` alone
 * (the revision allows them nowhere else; a declaration elsewhere is ignored here).
 */
export function paramHeaders(inputSchema: unknown, path: string[] = []): ParamHeader[] {
  const properties = (inputSchema as { properties?: unknown } | undefined)?.properties;
  if (!properties || typeof properties !== 'object') return [];
  const found: ParamHeader[] = [];
  for (const [key, schema] of Object.entries(properties as Record<string, unknown>)) {
    const header = (schema as Record<string, unknown> | undefined)?.['x-mcp-header'];
    if (typeof header === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header)) {
      found.push({ header, path: [...path, key] });
    }
    found.push(...paramHeaders(schema, [...path, key]));
  }
  return found;
}

/** The argument a declaration mirrors, as its header carries it (undefined: absent or not primitive). */
export function paramValue(args: unknown, decl: ParamHeader): string | undefined {
  let node = args;
  for (const key of decl.path)
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  return ['string', 'number', 'boolean'].includes(typeof node) ? String(node) : undefined;
}

/** The `Mcp-Param-*` headers of a tools/call whose tool declares them. */
export function paramHeaderValues(decls: readonly ParamHeader[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const decl of decls) {
    const value = paramValue(args, decl);
    if (value !== undefined) headers[`mcp-param-${decl.header.toLowerCase()}`] = headerValue(value);
  }
  return headers;
}
