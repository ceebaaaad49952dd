// What tool definitions cost a model's context: tokens (js-tiktoken, cl100k_base) of each tool as
// tools/list sends it, per server and per client profile. Counted off the request path and out of
// the broker's memory: the tokenizer takes ~0.5 s of CPU and ~80 MB to load, so the broker hands the
// definitions to a short-lived process running its own entry point as `count-tokens` once the
// catalog has been quiet for a moment (tokenCounter.ts: its bounds, deadline and watchdog).
// Each definition is counted once by its text, so an upstream that restarts with the same tools
// (new objects, same JSON) loads no tokenizer again.
import { createHash } from 'node:crypto';
import type { Catalog, Route } from './catalog';
import type { Tool } from '../shared/mcpTypes';
import { countHere, countTokens, type TokenCounter } from './tokenCounter';

export {
  COUNT_TOKENS_COMMAND,
  countHere,
  countTokensFromStdin,
  processCounter,
  TOKEN_ENCODING,
  type TokenCounter,
} from './tokenCounter';

/** Tokens of one definition as it is listed: the JSON of the tool object under its listed name. */
export function countToolTokens(tool: Tool): number {
  return countTokens(JSON.stringify(tool));
}

export class ToolTokens {
  /** Tokens per definition text (its digest), bounded by the catalog's size (see prune). */
  private readonly perText = new Map<string, number>();
  /** The digest of each tool object as listed, so a count or a record hashes a definition once. */
  private readonly digestOf = new WeakMap<Tool, string>();
  /** Tokens per listed (namespaced) name, and the names each server contributed. */
  private readonly perExposed = new Map<string, number>();
  private readonly namesOf = new Map<string, string[]>();
  private readonly perServer = new Map<string, number>();
  /** Client totals, per key, until the next count or catalog change. */
  private readonly totals = new Map<string, number>();
  private totalsOf?: object;
  private readonly pending = new Set<string>();
  private timer?: NodeJS.Timeout;
  private counting = false;
  /** Failed counts in a row: each retry waits twice as long (the counting child may fail under load). */
  private failures = 0;
  private built = false;
  private closed = false;
  /** Stops a count in progress when the broker stops (the child is killed, not left to finish). */
  private readonly stopping = new AbortController();

  constructor(
    private readonly catalog: Catalog,
    /** Told when counts changed (the state resource is then re-read). */
    private readonly onCounted: () => void,
    private readonly counter: TokenCounter = countHere,
    private readonly quietMs = 300,
  ) {}

  /** Servers whose tools a catalog rebuild changed; they are counted again once things are quiet. */
  invalidate(servers: readonly string[]): void {
    if (!this.built) {
      this.built = true;
      for (const tool of this.catalog.listTools()) this.pending.add(this.catalog.resolveTool(tool.name)!.server);
    }
    for (const server of servers) this.pending.add(server);
    if (this.pending.size && !this.counting) this.schedule();
  }

  /** A server's tool-definition tokens; undefined until counted (or while it lists no tools). */
  ofServer(server: string): number | undefined {
    return this.pending.has(server) ? undefined : this.perServer.get(server);
  }

  /**
   * The tokens of every listed tool `visible` admits, remembered under `key` until counts or the
   * catalog change; undefined while servers are still being counted.
   */
  total(key: string, visible: (route: Route) => boolean): number | undefined {
    if (this.pending.size || !this.built) return undefined;
    const list = this.catalog.listTools();
    if (this.totalsOf !== list) {
      this.totalsOf = list;
      this.totals.clear();
    }
    let sum = this.totals.get(key);
    if (sum === undefined) {
      sum = 0;
      for (const tool of list) {
        const route = this.catalog.resolveTool(tool.name);
        if (route && visible(route)) sum += this.perExposed.get(tool.name) ?? 0;
      }
      this.totals.set(key, sum);
    }
    return sum;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.stopping.abort();
  }

  private schedule(delayMs = this.quietMs): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.countPending(), delayMs);
    this.timer.unref();
  }

  /** Counts every pending server in one batch: only definitions not counted before are sent. */
  private async countPending(): Promise<void> {
    if (this.closed) return;
    this.counting = true;
    const servers = [...this.pending];
    const fresh = new Map<string, string>();
    for (const server of servers) {
      const view = this.catalog.server(server);
      for (const tool of view.tools) {
        const exposed = view.exposedTool(tool.name);
        if (exposed === undefined) continue;
        const text = JSON.stringify({ ...tool, name: exposed });
        const digest = createHash('sha256').update(text).digest('base64');
        this.digestOf.set(tool, digest);
        if (!this.perText.has(digest)) fresh.set(digest, text);
      }
    }
    try {
      const counts = fresh.size ? await this.counter([...fresh.values()], this.stopping.signal) : [];
      [...fresh.keys()].forEach((digest, i) => this.perText.set(digest, counts[i]));
    } catch {
      // No counts this time (the state has none yet): try again later rather than wait for a catalog
      // change that may never come (a fleet of idle lazy servers), backing off up to a minute.
      this.counting = false;
      this.failures++;
      if (!this.closed) this.schedule(Math.min(60_000, this.quietMs * 2 ** this.failures + 1_000 * this.failures));
      return;
    }
    this.counting = false;
    this.failures = 0;
    if (this.closed) return;
    for (const server of servers) {
      this.pending.delete(server);
      this.record(server);
    }
    this.totals.clear();
    this.prune();
    // Servers that changed while counting get their own batch.
    if (this.pending.size) this.schedule();
    else this.onCounted();
  }

  /**
   * Keeps the counts bounded by the catalog's size, oldest first out. Not pruned to exactly what is
   * listed: a server that restarts drops out of the catalog for a moment and comes back with the same
   * definitions, which should not need a tokenizer again.
   */
  private prune(): void {
    const cap = 2 * this.catalog.listTools().length + 1_000;
    for (const digest of this.perText.keys()) {
      if (this.perText.size <= cap) break;
      this.perText.delete(digest);
    }
  }

  private record(server: string): void {
    for (const name of this.namesOf.get(server) ?? []) this.perExposed.delete(name);
    const view = this.catalog.server(server);
    const names: string[] = [];
    let sum = 0;
    for (const tool of view.tools) {
      const exposed = view.exposedTool(tool.name);
      const digest = this.digestOf.get(tool);
      const n = digest === undefined ? undefined : this.perText.get(digest);
      if (exposed === undefined || n === undefined) continue;
      this.perExposed.set(exposed, n);
      names.push(exposed);
      sum += n;
    }
    this.namesOf.set(server, names);
    if (names.length) this.perServer.set(server, sum);
    else this.perServer.delete(server);
  }
}
