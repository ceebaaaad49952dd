// The persisted catalog: each server's last good tools, prompts, resources and templates, kept per
// workspace under SWITCHBOARD_HOME (never in the registry) and keyed by the hash of its definition,
// so a new broker lists them before any upstream is up. Written atomically, debounced, mode 0600.
import * as fs from 'node:fs';
import type { ServerDef } from '../../registry/schema';
import { hashMaterial, normalizeForApproval, readEnvFileDigest } from '../trust/approvalMaterial';
import type { Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';
import { readOrCreateToken } from '../shared/userState';
import { writePrivateFile } from '../shared/privateFiles';

/** One server's lists, as its upstream sent them. */
export interface CatalogLists {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  /** The MCP App pages as pin entries (apps/appPages.ts), when the server has any. */
  appPages?: Tool[];
}

interface CacheEntry {
  /** The definition's hash (approvalMaterial.ts) when these lists were live. */
  hash: string;
  savedAt: string;
  lists: CatalogLists;
}

interface CacheFile {
  version: 1;
  servers: Record<string, CacheEntry>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function listOf(v: unknown, key: 'name' | 'uri' | 'uriTemplate'): boolean {
  return Array.isArray(v) && v.every((item) => isObject(item) && typeof item[key] === 'string');
}

function validEntry(v: unknown): v is CacheEntry {
  if (!isObject(v) || typeof v.hash !== 'string' || !isObject(v.lists)) return false;
  const l = v.lists;
  return (
    listOf(l.tools, 'name') &&
    (l.tools as Record<string, unknown>[]).every((t) => isObject(t.inputSchema)) &&
    listOf(l.prompts, 'name') &&
    listOf(l.resources, 'uri') &&
    listOf(l.resourceTemplates, 'uriTemplate') &&
    (l.appPages === undefined || listOf(l.appPages, 'name'))
  );
}

/**
 * Pure: the cache file's entries, or why it cannot be used. One bad entry drops that entry only;
 * a file that is not the cache's shape at all is refused whole.
 */
export function parseCacheFile(text: string): { servers: Record<string, CacheEntry>; dropped: string[] } | Error {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return new Error(`not JSON (${(err as Error).message})`);
  }
  if (!isObject(parsed) || parsed.version !== 1 || !isObject(parsed.servers))
    return new Error('not a version 1 catalog cache');
  const servers: Record<string, CacheEntry> = {};
  const dropped: string[] = [];
  for (const [name, entry] of Object.entries(parsed.servers)) {
    if (validEntry(entry)) servers[name] = entry;
    else dropped.push(name);
  }
  return { servers, dropped };
}

export interface CatalogCacheOptions {
  /** The cache file (runtimePaths().catalogFile). */
  file: string;
  /** The per-user key the definition hashes are made with (a file next to the cache, 0600). */
  keyFile: string;
  root: string;
  debounceMs?: number;
  log?(line: string): void;
}

export class CatalogCache {
  private servers?: Record<string, CacheEntry>;
  private timer?: NodeJS.Timeout;
  private key?: string;

  constructor(private readonly opts: CatalogCacheOptions) {}

  /**
   * The definition's hash as approvals compute it (the whole normalised definition, env file
   * contents included), keyed per user: the file holds no digest one could test guesses against.
   */
  hashOf(def: ServerDef): string {
    this.key ??= readOrCreateToken(this.opts.keyFile);
    const material = normalizeForApproval(def, this.opts.root, readEnvFileDigest(this.opts.root, def.envFile));
    return hashMaterial(material, this.key);
  }

  /** The lists last seen live for this definition; undefined when none, or for another definition. */
  lookup(name: string, hash: string): CatalogLists | undefined {
    const entry = this.entries()[name];
    if (!entry) return undefined;
    if (entry.hash === hash) return entry.lists;
    // The definition changed: its old lists say nothing about the new one.
    this.forget(name);
    return undefined;
  }

  /** Records live lists; the file is rewritten once per burst, and not at all when nothing changed. */
  record(name: string, hash: string, lists: CatalogLists): void {
    const servers = this.entries();
    const before = servers[name];
    const copy: CatalogLists = {
      tools: lists.tools,
      prompts: lists.prompts,
      resources: lists.resources,
      resourceTemplates: lists.resourceTemplates,
    };
    if (before?.hash === hash && JSON.stringify(before.lists) === JSON.stringify(copy)) return;
    servers[name] = { hash, savedAt: new Date().toISOString(), lists: copy };
    this.schedule();
  }

  forget(name: string): void {
    const servers = this.entries();
    if (!(name in servers)) return;
    delete servers[name];
    this.schedule();
  }

  /** Drops entries of servers the registry no longer has. */
  retain(names: ReadonlySet<string>): void {
    for (const name of Object.keys(this.entries())) if (!names.has(name)) this.forget(name);
  }

  /** Writes a pending change now (at shutdown). */
  flush(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.write();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, this.opts.debounceMs ?? 200);
    this.timer.unref();
  }

  private write(): void {
    const file: CacheFile = { version: 1, servers: this.entries() };
    try {
      writePrivateFile(this.opts.file, JSON.stringify(file) + '\n');
    } catch (err) {
      // A cache that cannot be written costs the next start its head start, nothing more.
      this.opts.log?.(`catalog cache: could not write ${this.opts.file}: ${(err as Error).message}`);
    }
  }

  private entries(): Record<string, CacheEntry> {
    if (this.servers) return this.servers;
    let text: string;
    try {
      text = fs.readFileSync(this.opts.file, 'utf8');
    } catch {
      return (this.servers = {});
    }
    const parsed = parseCacheFile(text);
    if (parsed instanceof Error) {
      this.opts.log?.(`catalog cache: ignoring ${this.opts.file}: ${parsed.message}; it is rebuilt as servers start`);
      return (this.servers = {});
    }
    if (parsed.dropped.length)
      this.opts.log?.(`catalog cache: ignoring malformed entries for ${parsed.dropped.join(', ')}`);
    return (this.servers = parsed.servers);
  }
}
