/**
 * Collects every page of a paginated MCP list (`tools/list`, `prompts/list`, …) by following
 * `nextCursor`. A server that hands back a cursor it already gave would otherwise loop forever, so a
 * repeated cursor ends the listing with what was collected.
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
    if (Array.isArray(list)) items.push(...(list as T[]));
    cursor = typeof page.nextCursor === 'string' && page.nextCursor ? page.nextCursor : undefined;
    if (cursor !== undefined) {
      if (seen.has(cursor)) break;
      seen.add(cursor);
    }
  } while (cursor !== undefined);
  return items;
}
