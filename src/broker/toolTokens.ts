// What tool definitions cost a model's context: tokens (js-tiktoken, cl100k_base) of each tool as
// tools/list sends it, per server and per client profile. Counted off the request path: loading the
// tokenizer is ~0.5 s of CPU once, so counting waits until the catalog has been quiet for a moment,
// and goes one server per turn of the event loop. Each tool is counted once per definition.
import type { Catalog, Route } from './catalog';
import type { Tool } from './mcpTypes';

/** The encoding used (OpenAI's GPT-4 family); other models' counts differ by some percent. */
export const TOKEN_ENCODING = 'cl100k_base';

interface Encoder {
  encode(text: string): number[];
}

let encoder: Encoder | undefined;
function encoderNow(): Encoder {
  // Required here, not imported: the ranks are a megabyte that only counting needs (js-tiktoken is
  // an ES module to TypeScript, and a plain CommonJS module in the bundle).
  if (!encoder) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { Tiktoken } = require('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => Encoder };
    encoder = new Tiktoken(require('js-tiktoken/ranks/cl100k_base'));
    /* eslint-enable @typescript-eslint/no-require-imports */
  }
  return encoder;
}

/** Tokens of one definition as it is listed: the JSON of the tool object under its listed name. */
export function countToolTokens(tool: Tool): number {
  return encoderNow().encode(JSON.stringify(tool)).length;
}

export class ToolTokens {
  /** Per server's own tool object (the same object while its definition is unchanged). */
  private readonly perTool = new WeakMap<Tool, number>();
  /** Tokens per listed (namespaced) name, and the names each server contributed. */
  private readonly perExposed = new Map<string, number>();
  private readonly namesOf = new Map<string, string[]>();
  private readonly perServer = new Map<string, number>();
  /** Client totals, per key, until the next count or catalog change. */
  private readonly totals = new Map<string, number>();
  private totalsOf?: object;
  private readonly pending = new Set<string>();
  private timer?: NodeJS.Timeout;
  private next?: NodeJS.Immediate;
  private built = false;

  constructor(
    private readonly catalog: Catalog,
    /** Told when counts changed (the state resource is then re-read). */
    private readonly onCounted: () => void,
    private readonly quietMs = 300,
  ) {}

  /** Servers whose tools a catalog rebuild changed; they are counted again once things are quiet. */
  invalidate(servers: readonly string[]): void {
    if (!this.built) {
      this.built = true;
      for (const tool of this.catalog.listTools()) this.pending.add(this.catalog.resolveTool(tool.name)!.server);
    }
    for (const server of servers) this.pending.add(server);
    if (this.pending.size && !this.next) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.countNext(), this.quietMs);
      this.timer.unref();
    }
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
    clearTimeout(this.timer);
    if (this.next) clearImmediate(this.next);
  }

  private countNext(): void {
    this.next = undefined;
    const [server] = this.pending;
    if (server === undefined) return this.onCounted();
    this.pending.delete(server);
    for (const name of this.namesOf.get(server) ?? []) this.perExposed.delete(name);
    const view = this.catalog.server(server);
    const names: string[] = [];
    let sum = 0;
    for (const tool of view.tools) {
      const exposed = view.exposedTool(tool.name);
      if (exposed === undefined) continue;
      let n = this.perTool.get(tool);
      if (n === undefined) this.perTool.set(tool, (n = countToolTokens({ ...tool, name: exposed })));
      this.perExposed.set(exposed, n);
      names.push(exposed);
      sum += n;
    }
    this.namesOf.set(server, names);
    if (names.length) this.perServer.set(server, sum);
    else this.perServer.delete(server);
    this.totals.clear();
    this.next = setImmediate(() => this.countNext());
  }
}
