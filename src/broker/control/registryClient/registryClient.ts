// Requests to one MCP Registry, and a search over several. A registry is someone else's server: its
// answers are read with a deadline and a size cap as they arrive, a redirect is followed only within
// its own origin (a registry cannot send the request, or its answer's trust, to another host), and
// every answer is checked (src/registry/registryApi.ts) before anything is shown or imported.
import {
  normalizeRegistryUrl,
  parseServerList,
  parseServerVersion,
  registryRow,
  searchUrl,
  versionUrl,
  type RegistryPage,
  type RegistryRow,
  type RegistryServer,
  type SearchQuery,
} from '../../../registry/registryApi';
import { readCappedBody, shownUrl } from '../../shared/cappedBody';

/** A page of 100 servers is a few hundred KB; more than this is not a registry answering. */
export const REGISTRY_ANSWER_LIMIT = 4 * 1024 * 1024;
export const REGISTRY_TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 3;

export interface RegistryClientOptions {
  timeoutMs?: number;
  limit?: number;
}

/** A registry that could not be asked or did not answer as one: the message says which and why. */
export class RegistryRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistryRequestError';
  }
}

/** The body as text, or a RegistryRequestError once it passes `limit` bytes. */
async function readCapped(res: Response, limit: number, url: URL): Promise<string> {
  const body = await readCappedBody(res, limit, url, (m) => new RegistryRequestError(m));
  return body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') : '';
}

export class RegistryClient {
  readonly base: string;
  private readonly timeoutMs: number;
  private readonly limit: number;

  constructor(base: string, opts: RegistryClientOptions = {}) {
    this.base = normalizeRegistryUrl(base);
    this.timeoutMs = opts.timeoutMs ?? REGISTRY_TIMEOUT_MS;
    this.limit = opts.limit ?? REGISTRY_ANSWER_LIMIT;
  }

  /** One page of servers matching `q`. */
  async search(q: SearchQuery, signal?: AbortSignal): Promise<RegistryPage> {
    return parseServerList(await this.getJson(searchUrl(this.base, q), signal));
  }

  /** One version ('latest' for the newest) of one server, checked to be the one asked for. */
  async server(name: string, version: string, signal?: AbortSignal): Promise<RegistryServer> {
    return parseServerVersion(await this.getJson(versionUrl(this.base, name, version), signal), name, version);
  }

  private async getJson(first: URL, signal?: AbortSignal): Promise<unknown> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const both = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let url = first;
    try {
      for (let hop = 0; ; hop++) {
        const res = await fetch(url, { redirect: 'manual', signal: both, headers: { accept: 'application/json' } });
        if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
          await res.body?.cancel();
          const next = new URL(res.headers.get('location')!, url);
          if (next.origin !== url.origin)
            throw new RegistryRequestError(
              `${shownUrl(url)} redirected to ${next.origin}, another host; a registry's redirect is followed only within ${url.origin}`,
            );
          if (hop >= MAX_REDIRECTS)
            throw new RegistryRequestError(`${shownUrl(first)} redirected more than ${MAX_REDIRECTS} times`);
          url = next;
          continue;
        }
        const text = await readCapped(res, this.limit, url);
        if (res.status === 404) throw new RegistryRequestError(`${this.base} has no ${notFound(url)}`);
        if (!res.ok) throw new RegistryRequestError(`${shownUrl(url)} answered ${res.status} ${res.statusText}`.trim());
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new RegistryRequestError(`${shownUrl(url)} did not answer with JSON`);
        }
      }
    } catch (err) {
      if (err instanceof RegistryRequestError) throw err;
      if (deadline.aborted && !signal?.aborted) {
        throw new RegistryRequestError(`${this.base} did not answer within ${Math.round(this.timeoutMs / 100) / 10} s`);
      }
      if (signal?.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as Error).message;
      throw new RegistryRequestError(`${this.base} could not be reached (${why})`);
    }
  }
}

/** `server io.x/y version 1.0` from a version URL, for a 404's message. */
function notFound(url: URL): string {
  const parts = url.pathname.split('/');
  const i = parts.lastIndexOf('versions');
  if (i > 1 && parts[i + 1]) {
    return `server ${decodeURIComponent(parts[i - 1])} version ${decodeURIComponent(parts[i + 1])}`;
  }
  return shownUrl(url);
}

/** A row of a search over several registries: which one it came from. */
export interface FoundServer extends RegistryRow {
  registry: string;
}

export interface SearchResult {
  servers: FoundServer[];
  /** Give back as `cursor` for the next page; absent on the last. */
  nextCursor?: string;
  /** Registries that failed and entries left out, each a sentence. */
  problems: string[];
}

/** The cursor of a search over several registries: each one's own cursor, by base URL. */
function decodeCursor(cursor: string | undefined): Record<string, string> | undefined {
  if (!cursor) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && Object.values(parsed).every((v) => typeof v === 'string'))
      return parsed as Record<string, string>;
  } catch {
    /* not one of ours */
  }
  throw new RegistryRequestError('that cursor is not one this search gave out; start the search again without it');
}

/**
 * One page from each registry (the next page of those a cursor names), merged. A registry that fails
 * is a problem in the result; when every one fails, the search fails with all their reasons.
 */
export async function searchRegistries(
  clients: readonly RegistryClient[],
  query: { search?: string; limit?: number; cursor?: string },
  signal?: AbortSignal,
): Promise<SearchResult> {
  const cursors = decodeCursor(query.cursor);
  const asked = cursors ? clients.filter((c) => cursors[c.base] !== undefined) : clients;
  if (!asked.length) throw new RegistryRequestError('no registry is configured for this search');
  const pages = await Promise.allSettled(
    asked.map((c) => c.search({ search: query.search, limit: query.limit, cursor: cursors?.[c.base] }, signal)),
  );
  const servers: FoundServer[] = [];
  const problems: string[] = [];
  const next: Record<string, string> = {};
  pages.forEach((p, i) => {
    const base = asked[i].base;
    if (p.status === 'rejected') {
      problems.push((p.reason as Error).message);
      return;
    }
    for (const s of p.value.servers) servers.push({ ...registryRow(s.server), registry: base });
    if (p.value.skipped.length)
      problems.push(
        `${base}: ${p.value.skipped.length} entr${p.value.skipped.length === 1 ? 'y was' : 'ies were'} not valid server.json and ` +
          `are not shown (${p.value.skipped.join('; ')})`,
      );
    if (p.value.nextCursor) next[base] = p.value.nextCursor;
  });
  if (pages.every((p) => p.status === 'rejected')) throw new RegistryRequestError(problems.join('; '));
  const nextCursor = Object.keys(next).length ? Buffer.from(JSON.stringify(next)).toString('base64url') : undefined;
  return { servers, problems, ...(nextCursor ? { nextCursor } : {}) };
}
