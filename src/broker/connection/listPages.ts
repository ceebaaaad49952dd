/** The field that names an entry of each list: it must be a non-empty string. */
const IDENTITY: Record<string, string> = {
  tools: 'name',
  prompts: 'name',
  resources: 'uri',
  resourceTemplates: 'uriTemplate',
};

/**
 * Whether a list entry is an object named by a non-empty string. The broker keys pins, routes and
 * namespaced names by that string: a tool named `["read_notes"]` or `7` would print as a real
 * name in a template string but match no pin or hold by it, so such entries are not listed at all.
 */
function wellFormed(item: unknown, key: string): boolean {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  const field = IDENTITY[key];
  const id = field === undefined ? '' : (item as Record<string, unknown>)[field];
  return field === undefined || (typeof id === 'string' && id !== '');
}

/**
 * Collects every page of a paginated MCP list (`tools/list`, `prompts/list`, …) by following
 * `nextCursor`, keeping only well-formed entries. A server that hands back a cursor it already gave
 * would otherwise loop forever, so a repeated cursor ends the listing with what was collected.
 */
export async function listAllPages<T>(
  fetchPage: (params: { cursor?: string }) => Promise<Record<string, unknown>>,
  key: string,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor ? { cursor } : {});
    const list = page[key];
    if (Array.isArray(list)) for (const item of list) if (wellFormed(item, key)) items.push(item as T);
    cursor = typeof page.nextCursor === 'string' && page.nextCursor ? page.nextCursor : undefined;
    if (cursor !== undefined) {
      if (seen.has(cursor)) break;
      seen.add(cursor);
    }
  } while (cursor !== undefined);
  return items;
}
