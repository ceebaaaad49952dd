// Finding tools by what they do: a MiniSearch (BM25+) index over every catalog tool's name, title,
// description, parameter names and its server's description, kept in step with the catalog by
// reindexing only the servers a rebuild changed, at the first search after the change.
import MiniSearch, { type SearchResult } from 'minisearch';
import type { Catalog, Route } from './catalog';
import type { Tool } from './mcpTypes';

/** The fields a query is matched against, and how much a match in each counts. */
const FIELDS = ['name', 'title', 'description', 'parameters', 'server'] as const;
type Field = (typeof FIELDS)[number];
const BOOST: Record<Field, number> = { name: 3, title: 2, description: 1.5, parameters: 1, server: 0.5 };

/** Words that say nothing about which tool is meant ("I want to ..."). */
const STOP_WORDS = new Set(
  (
    'a an and any are as at be by can do does for from get give how i in into is it its me my of on or ' +
    'please some that the their them then there these this to up want we what when which with you your'
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
 * One form per word for plurals and common verb endings, so "files" finds "file" and "reading"
 * finds "read". Deliberately light (no stemming library): a prefix search covers the rest.
 */
export function normalizeTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (STOP_WORDS.has(t)) return null;
  if (t.length > 5 && t.endsWith('ies')) return `${t.slice(0, -3)}y`;
  if (t.length > 5 && t.endsWith('ing')) return t.slice(0, -3);
  if (t.length > 4 && /(sses|xes|ches|shes)$/.test(t)) return t.slice(0, -2);
  if (t.length > 3 && t.endsWith('s') && !/(ss|us|is)$/.test(t)) return t.slice(0, -1);
  if (t.length > 4 && t.endsWith('ed') && !t.endsWith('eed')) return t.slice(0, -2);
  return t;
}

/**
 * What people type for what tool descriptions say: everyday and shell words on the query side only,
 * each also searched as the words it stands for. General vocabulary, no tool's or server's names.
 */
const QUERY_SYNONYMS: Record<string, readonly string[]> = {
  folder: ['directory'],
  dir: ['directory'],
  mkdir: ['create', 'directory'],
  ls: ['list', 'directory'],
  cat: ['read', 'file'],
  stat: ['info', 'metadata'],
  grep: ['search'],
  find: ['search'],
  lookup: ['search'],
  mv: ['move', 'rename'],
  rename: ['move'],
  relocate: ['move'],
  cp: ['copy'],
  rm: ['delete'],
  remove: ['delete'],
  erase: ['delete'],
  forget: ['delete'],
  drop: ['delete'],
  modify: ['edit'],
  change: ['edit'],
  patch: ['edit'],
  save: ['write'],
  picture: ['image'],
  photo: ['image'],
  png: ['image'],
  jpg: ['image'],
  biggest: ['size'],
  largest: ['size'],
  plus: ['sum', 'add'],
  addition: ['sum', 'add'],
  total: ['sum'],
  link: ['relation'],
  relationship: ['relation'],
  connect: ['relation'],
  remember: ['memory', 'knowledge'],
  recall: ['memory', 'knowledge'],
  memorize: ['memory', 'knowledge'],
  fact: ['observation'],
  env: ['environment'],
  var: ['variable'],
  zip: ['gzip', 'compress'],
  compress: ['gzip'],
};

/** A query word, normalized, and the words it also stands for. */
function queryTerms(term: string): string[] | null {
  const t = normalizeTerm(term);
  if (t === null) return null;
  const also = QUERY_SYNONYMS[t] ?? QUERY_SYNONYMS[term.toLowerCase()];
  return also ? [t, ...also] : [t];
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
      processTerm: queryTerms,
      combineWith: 'OR',
      // Prefixes and typos only for words long enough not to match everything.
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
    },
  });
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
    const results = this.index.search(query, {
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
      for (const field of fields as Field[]) (matched[field] ??= []).push(term);
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
    this.index.addAll(docs);
    this.indexed.set(server, { ids: docs.map((d) => d.id), about });
  }
}
