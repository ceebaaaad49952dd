// Finding tools by what they do: a MiniSearch (BM25+) index over every catalog tool's name, title,
// description (its first sentence again, on its own), parameter names and its server's description,
// kept in step with the catalog by reindexing only the servers a rebuild changed, at the first search
// after the change.
import MiniSearch, { type SearchResult } from 'minisearch';
import stem from 'wink-porter2-stemmer';
import type { Catalog, Route } from './catalog';
import type { Tool } from './mcpTypes';

/** The fields a query is matched against, and how much a match in each counts. */
const FIELDS = ['name', 'title', 'summary', 'description', 'parameters', 'server'] as const;
type Field = (typeof FIELDS)[number];
/**
 * The first sentence says what a tool does; the rest of a description is often caveats and the
 * format of the result ("use with caution", "returns JSON"), so the summary counts on top of it.
 */
const BOOST: Record<Field, number> = { name: 3, title: 2, summary: 1.5, description: 1, parameters: 1, server: 0.5 };

/** How much a word counts that the query did not say but stands for (see RELATED). */
const RELATED_WEIGHT = 0.5;

/** Words that say nothing about which tool is meant ("I want to ...", "where is the ..."). */
const STOP_WORDS = new Set(
  (
    'a about all also am an and any are as at be been but by called can could did do does for from get give ' +
    'had has have how i if in into is it its just let me might my named need of on or our please shall should ' +
    'so some than that the their them then there these they this those to up us use using want was we ' +
    'were what when where which while who whom why will with would you your'
  ).split(' '),
);

/**
 * Words of a name or a sentence: snake_case, kebab-case, dotted and camelCase names fall apart into
 * their words (`listDirectoryWithSizes` → list, directory, with, sizes), so "directory sizes" finds it.
 */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/**
 * One form per word: lower case, then the English (Porter2) stem, so "files", "filed" and "filing"
 * are one term and "directories" finds "directory". Filler words are dropped.
 */
export function normalizeTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (STOP_WORDS.has(t)) return null;
  return /^[a-z]+$/.test(t) ? stem(t) : t;
}

/**
 * Groups of words that people use for the same action or thing in software, whatever the tool:
 * everyday words, shell commands and abbreviations. Query side only: a query word also searches the
 * other words of its group, at RELATED_WEIGHT, so a tool that uses the query's own word still ranks
 * first. Kept short and general on purpose (no tool's or server's names): it was written while
 * looking at the tuning queries, and a table grown from a query set's misses only fits that set.
 */
const RELATED: readonly (readonly string[])[] = [
  ['directory', 'folder', 'dir', 'mkdir', 'ls'],
  ['delete', 'remove', 'erase', 'rm', 'forget', 'discard'],
  ['create', 'make', 'new', 'add', 'mkdir'],
  ['edit', 'modify', 'change', 'update', 'patch', 'alter'],
  ['write', 'save', 'store'],
  ['read', 'open', 'view', 'show', 'display', 'cat'],
  ['list', 'ls', 'enumerate'],
  ['search', 'find', 'lookup', 'query', 'grep'],
  ['move', 'rename', 'mv'],
  ['copy', 'cp', 'duplicate'],
  ['info', 'metadata', 'stat', 'detail'],
  ['image', 'picture', 'photo', 'png', 'jpg'],
  ['environment', 'env'],
  ['variable', 'var'],
  ['compress', 'zip', 'gzip'],
  ['relation', 'relationship', 'link', 'connect'],
  ['memory', 'remember', 'memorize', 'recall'],
  ['sum', 'plus', 'total', 'addition'],
];

/** Each normalized word → the normalized words of every group it is in. */
const RELATED_TERMS: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, Set<string>>();
  for (const group of RELATED) {
    const terms = group.map((w) => normalizeTerm(w)).filter((t): t is string => t !== null);
    for (const t of terms) {
      const set = map.get(t) ?? new Set<string>();
      for (const other of terms) if (other !== t) set.add(other);
      map.set(t, set);
    }
  }
  return new Map([...map].map(([k, v]) => [k, [...v]]));
})();

/** A query's terms, each with its weight: its own words at 1, related words at RELATED_WEIGHT. */
export function queryTerms(query: string): Map<string, number> {
  const terms = new Map<string, number>();
  const own = words(query)
    .map((w) => normalizeTerm(w))
    .filter((t): t is string => t !== null);
  for (const t of own) terms.set(t, 1);
  for (const t of own) {
    for (const related of RELATED_TERMS.get(t) ?? []) {
      if (!terms.has(related)) terms.set(related, RELATED_WEIGHT);
    }
  }
  return terms;
}

interface ToolDocument {
  /** The exposed (namespaced) name. */
  id: string;
  serverName: string;
  tool: string;
  name: string;
  title: string;
  description: string;
  parameters: string;
  /** The server's name and description, as words. */
  server: string;
  /** The first sentence of the description, searched on its own and returned as the one-liner. */
  summary: string;
}

/** One ranked tool, as find_tools returns it. */
export interface ToolMatch {
  /** The name to call it by (namespaced, as tools/list shows it). */
  name: string;
  server: string;
  /** Its name on its own server. */
  tool: string;
  /** The first line (or sentence) of its description. */
  description: string;
  score: number;
  /** Why it matched: for each field, the indexed words the query hit there. */
  matched: Partial<Record<Field, string[]>>;
}

export interface SearchOptions {
  limit: number;
  /** Whether the caller may see a tool; only tools it may see are ranked and returned. */
  visible(route: Route): boolean;
}

/** The first line, cut at the first sentence end and at 200 characters. */
export function oneLine(description: string | undefined): string {
  const line = (description ?? '').trim().split(/\r?\n/, 1)[0] ?? '';
  const sentence = /^(.*?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length > 200 ? `${sentence.slice(0, 199)}…` : sentence;
}

function parameterText(tool: Tool): string {
  const properties = (tool.inputSchema?.properties ?? {}) as Record<string, { description?: unknown }>;
  return Object.entries(properties)
    .map(([name, schema]) => `${name} ${typeof schema?.description === 'string' ? schema.description : ''}`)
    .join(' ');
}

export class ToolSearch {
  private readonly index = new MiniSearch<ToolDocument>({
    fields: [...FIELDS],
    storeFields: ['serverName', 'tool', 'summary'],
    tokenize: words,
    processTerm: normalizeTerm,
    searchOptions: {
      boost: BOOST,
      combineWith: 'OR',
      // Prefixes and typos only for words long enough not to match everything.
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
    },
  });
  /** A readable word for each indexed stem ("directori" → "directories"), for the "why" of a match. */
  private readonly surface = new Map<string, string>();
  /** Indexed document ids per server, and the server description they were indexed with. */
  private readonly indexed = new Map<string, { ids: string[]; about: string }>();
  private pending = new Set<string>();
  private built = false;

  constructor(
    private readonly catalog: Catalog,
    /** What a server is for (its registry description), searched as the `server` field. */
    private readonly aboutServer: (server: string) => string | undefined,
  ) {}

  /** The servers a catalog rebuild changed the tools of: reindexed at the next search. */
  invalidate(servers: readonly string[]): void {
    for (const server of servers) this.pending.add(server);
  }

  search(query: string, opts: SearchOptions): ToolMatch[] {
    this.sync();
    const terms = queryTerms(query);
    if (!terms.size) return [];
    // The terms are normalized already: searched as they are, each at its weight.
    const results = this.index.search([...terms.keys()].join(' '), {
      tokenize: (text) => text.split(' '),
      processTerm: (term) => term,
      boostTerm: (term) => terms.get(term) ?? 1,
      filter: (r) => opts.visible({ server: r.serverName as string, name: r.tool as string, exposed: r.id as string }),
    });
    return results.slice(0, Math.max(0, opts.limit)).map((r) => this.toMatch(r));
  }

  /** How many tools are indexed now (after applying pending changes). */
  get size(): number {
    this.sync();
    return this.index.documentCount;
  }

  private toMatch(result: SearchResult): ToolMatch {
    const matched: Partial<Record<Field, string[]>> = {};
    for (const [term, fields] of Object.entries(result.match)) {
      const word = this.surface.get(term) ?? term;
      for (const field of fields as Field[]) (matched[field] ??= []).push(word);
    }
    return {
      name: result.id as string,
      server: result.serverName as string,
      tool: result.tool as string,
      description: result.summary as string,
      score: Math.round(result.score * 1000) / 1000,
      matched,
    };
  }

  private sync(): void {
    if (!this.built) {
      this.built = true;
      this.pending = new Set(this.catalog.listTools().map((t) => this.catalog.resolveTool(t.name)!.server));
    }
    // A description edited without a tool change still has to be searchable.
    for (const [server, entry] of this.indexed) {
      if ((this.aboutServer(server) ?? '') !== entry.about) this.pending.add(server);
    }
    if (!this.pending.size) return;
    const servers = [...this.pending];
    this.pending.clear();
    for (const server of servers) this.reindex(server);
  }

  private learnWords(text: string): void {
    for (const word of words(text)) {
      const term = normalizeTerm(word);
      if (term !== null && !this.surface.has(term)) this.surface.set(term, word.toLowerCase());
    }
  }

  private reindex(server: string): void {
    for (const id of this.indexed.get(server)?.ids ?? []) this.index.discard(id);
    this.indexed.delete(server);
    const view = this.catalog.server(server);
    const about = this.aboutServer(server) ?? '';
    const docs: ToolDocument[] = [];
    for (const tool of view.tools) {
      const exposed = view.exposedTool(tool.name);
      if (exposed === undefined || this.index.has(exposed)) continue;
      docs.push({
        id: exposed,
        serverName: server,
        tool: tool.name,
        name: tool.name,
        title: [tool.title, (tool.annotations as { title?: unknown } | undefined)?.title]
          .filter((t) => typeof t === 'string')
          .join(' '),
        description: tool.description ?? '',
        parameters: parameterText(tool),
        // The server's name reads as words too ("github" finds github__create_issue).
        server: `${server} ${about}`,
        summary: oneLine(tool.description),
      });
    }
    if (!docs.length) return;
    for (const doc of docs)
      this.learnWords(`${doc.name} ${doc.title} ${doc.description} ${doc.parameters} ${doc.server}`);
    this.index.addAll(docs);
    this.indexed.set(server, { ids: docs.map((d) => d.id), about });
  }
}
