// Finding tools by what they do: a MiniSearch (BM25+) index over every catalog tool's name, title,
// description (its first sentence again, on its own), parameter names and descriptions (nested ones
// too) and its server's description, kept in step with the catalog by reindexing only the servers a
// rebuild changed, at the first search after the change. A query is read as concepts (each word it
// says, with its related words; a file name as "file"), and a tool ranks by how many it covers.
import MiniSearch, { type SearchResult } from 'minisearch';
import stem from 'wink-porter2-stemmer';
import type { Catalog, Route } from './catalog';
import { isAppOnly } from './apps/appMeta';

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

/**
 * What one query may cost, whoever sends it: find_tools is a read tool, so any agent can call it, and
 * ranking runs on the broker's one thread. The query is refused beyond MAX_QUERY_LENGTH characters (a
 * few words are what it is for); at most MAX_QUERY_WORDS of its words are searched; a word longer
 * than MAX_WORD_LENGTH is no word anyone types (and the stemmer's time grows with the square of a
 * word's length), so it is left out; typo matching is for words of at most MAX_FUZZY_LENGTH letters.
 */
export const MAX_QUERY_LENGTH = 1000;
export const MAX_QUERY_WORDS = 32;
export const MAX_WORD_LENGTH = 64;
const MAX_FUZZY_LENGTH = 24;

/** Words that say nothing about which tool is meant ("I want to ...", "where is the ..."). */
const STOP_WORDS = new Set(
  (
    'a about all also am an and any are as at be been but by called can could did do does for from get give ' +
    'had has have how i if in into is it its just let me might my named need of on or our please shall should ' +
    'so some than that the their them then there these they this those to up us use using want was we ' +
    'were what when where which while who whom why will with would you your ' +
    // What is left of a contraction once the apostrophe splits it ("what's", "doesn't", "I'll").
    's t d ll re ve m don doesn didn isn aren wasn won couldn shouldn'
  ).split(' '),
);

/**
 * Words of a name or a sentence: snake_case, kebab-case, dotted and camelCase names fall apart into
 * their words (`listDirectoryWithSizes` → list, directory, with, sizes), so "directory sizes" finds it.
 */
export function words(text: string): string[] {
  // The acronym split looks ahead instead of matching `[A-Z]+` (which backtracks over a long run of
  // capitals: 20,000 of them took 2 s, and an upstream's description is indexed this way).
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/**
 * One form per word: lower case, then the English (Porter2) stem, so "files", "filed" and "filing"
 * are one term and "directories" finds "directory". Filler words are dropped.
 */
export function normalizeTerm(term: string): string | null {
  // Not a word (a hash, base64, a run of letters from a hostile description): too long to stem.
  if (term.length > MAX_WORD_LENGTH) return null;
  const t = term.toLowerCase();
  if (STOP_WORDS.has(t)) return null;
  return /^[a-z]+$/.test(t) ? stem(t) : t;
}

/**
 * Groups of words that people use for the same action or thing in software, whatever the tool:
 * everyday words, shell commands, abbreviations and file extensions. Query side only: a query word
 * also searches the other words of its group, at RELATED_WEIGHT, so a tool that uses the query's own
 * word still ranks first. Kept short and general on purpose (no tool's or server's names). It was
 * written while looking at the misses of the bench's tuning, held-out and first blind query sets, and
 * a table grown from a query set's misses fits that set best: only a set written after it says how
 * well it carries over.
 */
const RELATED: readonly (readonly string[])[] = [
  // Things
  ['directory', 'folder', 'dir', 'subfolder', 'subdirectory', 'mkdir', 'ls'],
  ['content', 'contents', 'inside'],
  ['size', 'big', 'bigger', 'biggest', 'large', 'larger', 'largest', 'bytes', 'space'],
  ['info', 'metadata', 'stat', 'detail', 'properties', 'attributes'],
  ['image', 'picture', 'photo', 'screenshot', 'png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'media'],
  ['audio', 'sound', 'recording', 'voice', 'music', 'mp3', 'wav', 'ogg', 'flac', 'media'],
  ['compress', 'zip', 'gzip', 'gz', 'archive', 'tar', 'tgz'],
  ['tree', 'structure', 'layout', 'hierarchy'],
  ['environment', 'env'],
  ['variable', 'var'],
  ['relation', 'relationship', 'link', 'connect', 'unlink'],
  ['observation', 'fact', 'note', 'remark'],
  ['memory', 'remember', 'memorize', 'recall', 'know', 'knowledge'],
  ['sum', 'plus', 'total', 'addition'],
  ['ask', 'question', 'elicit', 'elicitation'],
  // Actions
  ['delete', 'remove', 'erase', 'rm', 'forget', 'discard', 'drop', 'unlink'],
  ['create', 'make', 'new', 'add', 'mkdir'],
  ['edit', 'modify', 'change', 'update', 'patch', 'alter'],
  ['replace', 'substitute', 'swap'],
  ['write', 'save', 'store', 'overwrite'],
  ['read', 'open', 'view', 'show', 'display', 'print', 'cat', 'load'],
  ['list', 'ls', 'enumerate', 'browse'],
  ['search', 'find', 'lookup', 'query', 'grep', 'locate', 'seek'],
  ['move', 'rename', 'mv', 'relocate'],
  ['copy', 'cp', 'duplicate'],
  ['echo', 'repeat', 'ping'],
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

/**
 * A file name in a query ("notes.txt", "src/utils.py", "backup.tar.gz", ".gz"): the thing a tool acts
 * on, so it stands for the word "file"; its extension says what kind of file, its base name nothing.
 * Not a web address's host ("example.com"), an e-mail address or an abbreviation ("e.g.").
 */
const FILE_NAME = /(?<![\p{L}\p{N}.@])([\p{L}\p{N}_-]*)((?:\.[A-Za-z][A-Za-z0-9]{0,4})+)(?![\p{L}\p{N}@])/gu;
const NOT_FILE_EXTENSIONS = new Set(['com', 'org', 'net', 'io', 'dev', 'ai', 'app', 'gov', 'edu']);

/** The query with each file name replaced by the word "file", and the file names' extensions. */
export function fileNames(query: string): { text: string; extensions: string[] } {
  const extensions: string[] = [];
  const text = query.replace(FILE_NAME, (name: string, base: string, ext: string) => {
    const parts = ext.split('.').filter(Boolean);
    if (base.length === 1 || NOT_FILE_EXTENSIONS.has(parts[parts.length - 1].toLowerCase())) return name;
    extensions.push(...parts);
    return ' file ';
  });
  return { text, extensions };
}

/**
 * Phrasal verbs and idioms whose words mean little alone ("take it out", "look for"): each is read
 * as the one word it means before the query is split into words.
 */
const PHRASES: readonly (readonly [RegExp, string])[] = [
  [/\btake (?:\w+ )?(?:out|away)\b/giu, 'remove'],
  [/\bget rid of\b/giu, 'delete'],
  [/\blook(?:ing)? (?:for|up)\b/giu, 'search'],
  [/\blook(?:ing)? at\b/giu, 'view'],
  [/\bpull (?:\w+ )?up\b/giu, 'open'],
  [/\bwrite (?:\w+ )?down\b/giu, 'save'],
];

/**
 * What a query asks for, one concept per word it said: the word itself at weight 1 (a file name's
 * extension at RELATED_WEIGHT: it qualifies the file rather than naming a tool), and the words
 * related to it at RELATED_WEIGHT.
 */
export function queryConcepts(query: string): Map<string, number>[] {
  const { text, extensions } = fileNames(query);
  let rest = text;
  for (const [phrase, word] of PHRASES) rest = rest.replace(phrase, ` ${word} `);
  const normalized = (list: string[]) => list.map((w) => normalizeTerm(w)).filter((t): t is string => t !== null);
  const concepts = new Map<string, Map<string, number>>();
  const add = (term: string, weight: number) => {
    if (concepts.has(term)) return;
    const concept = new Map([[term, weight]]);
    for (const related of RELATED_TERMS.get(term) ?? []) concept.set(related, RELATED_WEIGHT);
    concepts.set(term, concept);
  };
  for (const t of normalized(words(rest))) if (concepts.size < MAX_QUERY_WORDS) add(t, 1);
  for (const t of normalized(extensions)) if (concepts.size < MAX_QUERY_WORDS) add(t, RELATED_WEIGHT);
  return [...concepts.values()];
}

/** A query's terms, each with its weight: its own words at 1, related words at RELATED_WEIGHT. */
export function queryTerms(query: string, concepts = queryConcepts(query)): Map<string, number> {
  const terms = new Map<string, number>();
  for (const concept of concepts) {
    for (const [term, weight] of concept) terms.set(term, Math.max(weight, terms.get(term) ?? 0));
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

/**
 * The parameters' names and descriptions, nested ones included (an array of objects, as in
 * `edits: [{ oldText, newText }]` or `relations: [{ from, to, relationType }]`, says what a tool does
 * as much as its top level does), a few levels deep.
 */
export function parameterText(schema: unknown, depth = 0): string {
  if (!schema || typeof schema !== 'object' || depth > 4) return '';
  const { properties, items } = schema as { properties?: unknown; items?: unknown };
  const parts: string[] = [];
  if (properties && typeof properties === 'object') {
    for (const [name, sub] of Object.entries(properties as Record<string, unknown>)) {
      const description = (sub as { description?: unknown } | null)?.description;
      parts.push(name, typeof description === 'string' ? description : '', parameterText(sub, depth + 1));
    }
  }
  if (items) parts.push(parameterText(items, depth + 1));
  return parts.filter(Boolean).join(' ');
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
      fuzzy: (term) => (term.length >= 5 && term.length <= MAX_FUZZY_LENGTH ? 0.2 : false),
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

  /** Ranks the tools for `query`; a query over MAX_QUERY_LENGTH is cut there (callers refuse it first). */
  search(query: string, opts: SearchOptions): ToolMatch[] {
    this.sync();
    const concepts = queryConcepts(query.slice(0, MAX_QUERY_LENGTH));
    const terms = queryTerms(query, concepts);
    if (!terms.size) return [];
    // The terms are normalized already: searched as they are, each at its weight.
    const results = this.index.search([...terms.keys()].join(' '), {
      tokenize: (text) => text.split(' '),
      processTerm: (term) => term,
      boostTerm: (term) => terms.get(term) ?? 1,
      // Typos are the user's: a related word comes from the table, spelled right.
      fuzzy: (term) => (term.length >= 5 && term.length <= MAX_FUZZY_LENGTH && terms.get(term) === 1 ? 0.2 : false),
      filter: (r) => opts.visible({ server: r.serverName as string, name: r.tool as string, exposed: r.id as string }),
    });
    // MiniSearch multiplies a score by how many query terms matched; a word and its related words
    // are one thing asked for, so count the concepts matched instead (a related word's lower weight
    // is in the score already).
    for (const r of results) {
      const hit = new Set(r.queryTerms);
      const covered = concepts.filter((concept) => [...concept.keys()].some((term) => hit.has(term))).length;
      r.score = (r.score / Math.max(1, r.queryTerms.length)) * covered;
    }
    results.sort((x, y) => y.score - x.score);
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
      // An app-only tool (MCP Apps) is its page's to call, never a model's to find.
      if (exposed === undefined || this.index.has(exposed) || isAppOnly(tool)) continue;
      docs.push({
        id: exposed,
        serverName: server,
        tool: tool.name,
        name: tool.name,
        title: [tool.title, (tool.annotations as { title?: unknown } | undefined)?.title]
          .filter((t) => typeof t === 'string')
          .join(' '),
        description: tool.description ?? '',
        parameters: parameterText(tool.inputSchema),
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
