// What the "Add Server from Registry…" quick pick shows, as plain data: one item per server found
// (name, version and transport; description; what it runs and whether it needs secrets), a "more"
// item when the registry has another page, and a line for each registry that failed. Pure, so it is
// unit-tested without an editor; the command (commands/addFromRegistry.ts) draws it.
import type { FoundServer, SearchResult } from '../broker/control/registryClient/registryClient';

export interface RegistryPickItem {
  label: string;
  description?: string;
  detail?: string;
  /** The server to add; absent for the "more" and problem items. */
  server?: FoundServer;
  /** The cursor of the next page (the "more" item). */
  more?: string;
}

export function registryPickItems(result: SearchResult, shown: readonly FoundServer[] = []): RegistryPickItem[] {
  const servers = [...shown, ...result.servers];
  const several = new Set(servers.map((s) => s.registry)).size > 1;
  const items: RegistryPickItem[] = servers.map((s) => ({
    label: s.title ? `${s.title}` : s.name,
    description: `${s.title ? `${s.name} ` : ''}${s.version} · ${s.transport}${s.needsSecrets ? ' · needs secrets' : ''}`,
    detail: `${s.description} — ${s.runs}${several ? ` (${s.registry})` : ''}`,
    server: s,
  }));
  if (result.nextCursor) items.push({ label: '$(ellipsis) More results…', more: result.nextCursor });
  for (const p of result.problems) items.push({ label: `$(warning) ${p}` });
  return items;
}

/** The text of the details shown before adding one server. */
export function registryServerDetails(s: FoundServer): string {
  return [
    s.description,
    `Version: ${s.version}`,
    `Runs: ${s.runs} (${s.transport})`,
    `Secrets: ${s.needsSecrets ? 'yes; you are asked for each after adding it' : 'none'}`,
    `Registry: ${s.registry}`,
    'It is added as a community server: it runs only after you approve it.',
  ].join('\n');
}

/** Calls `fn` once input has been quiet for `ms`; a newer call cancels the older one's wait. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: NodeJS.Timeout | undefined;
  return (...args: A) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
