// Guardrails, what comes back (issue 33 item 3): a tool result larger than its client's limit
// (clients.d `maxResultBytes` / `maxResultTokens`) is cut. The client gets the head, a note saying
// how much was cut, and a resource link `switchboard://results/<id>` whose pages (`?page=N`, each
// within the limit) hold the whole text. Kept for a while, for the session that made the call only:
// another session (another client's or the same client's) is told the resource does not exist.
import * as crypto from 'node:crypto';
import { countTokens } from '../catalog/tokenCounter';
import { rememberedJson } from '../shared/rawJson';
import { McpFailure, type JsonObject } from '../shared/mcpTypes';

export const RESULTS_SCHEME = 'switchboard://results/';

/** A client's limit: bytes of text (UTF-8), or tokens (cl100k_base, estimated past 256 KiB). */
export interface ResultLimit {
  bytes?: number;
  tokens?: number;
}

export interface OversizedResultsOptions {
  /** How long a cut result can be read. */
  keepMs?: number;
  /** Cut results kept per session; the oldest goes first. */
  perSession?: number;
  now?: () => number;
}

interface Kept {
  session: string;
  pages: string[];
  expires: number;
}

const KEEP_MS = 15 * 60_000;
const PER_SESSION = 8;

/** The text of a result a person or model reads: its text blocks, then anything else as JSON. */
function documentOf(result: JsonObject): string {
  const content = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
  const parts = content.map((c) => (c.type === 'text' && typeof c.text === 'string' ? c.text : JSON.stringify(c)));
  if (result.structuredContent !== undefined && !content.some((c) => c.type === 'text'))
    parts.push(JSON.stringify(result.structuredContent, null, 2));
  return parts.join('\n');
}

/** `text` cut into pieces of at most `bytes` UTF-8 bytes, never inside a character. */
function byBytes(text: string, bytes: number): string[] {
  const buf = Buffer.from(text, 'utf8');
  const out: string[] = [];
  let at = 0;
  while (at < buf.length) {
    let end = Math.min(buf.length, at + bytes);
    // Back off continuation bytes (10xxxxxx) so a page ends on a character boundary.
    while (end < buf.length && end > at + 1 && (buf[end] & 0xc0) === 0x80) end--;
    out.push(buf.toString('utf8', at, end));
    at = end;
  }
  return out;
}

/** `text` cut into pieces of about `tokens` tokens each, at the rate of characters per token the text has. */
function byTokens(text: string, tokens: number): string[] {
  const total = countTokens(text);
  const chars = Math.max(1, Math.floor((tokens * text.length) / Math.max(total, 1)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += chars) out.push(text.slice(i, i + chars));
  return out;
}

export class OversizedResults {
  private readonly kept = new Map<string, Kept>();
  private readonly keepMs: number;
  private readonly perSession: number;
  private readonly now: () => number;

  constructor(opts: OversizedResultsOptions = {}) {
    this.keepMs = opts.keepMs ?? KEEP_MS;
    this.perSession = opts.perSession ?? PER_SESSION;
    this.now = opts.now ?? Date.now;
  }

  /** The result as the client may receive it: unchanged when within `limit`, else head, note and link. */
  fit(session: string, limit: ResultLimit | undefined, result: JsonObject): JsonObject {
    if (!limit || (limit.bytes === undefined && limit.tokens === undefined)) return result;
    const raw = rememberedJson(result);
    // Tokens are never more than bytes (byte-level BPE): a result within the limit in bytes is within it in tokens.
    const size = raw !== undefined ? raw.length : Buffer.byteLength(JSON.stringify(result));
    const bound = Math.min(limit.bytes ?? Infinity, limit.tokens ?? Infinity);
    if (size <= bound) return result;
    const full: JsonObject = raw !== undefined ? (JSON.parse(raw.toString()) as JsonObject) : result;
    const text = documentOf(full);
    const pages = limit.bytes !== undefined ? byBytes(text, limit.bytes) : byTokens(text, limit.tokens!);
    // Over the limit only by its JSON framing (escapes, structure): the text itself fits.
    if (pages.length <= 1) return result;
    const id = this.keep(session, pages);
    const unit =
      limit.bytes !== undefined ? `its first ${limit.bytes} bytes` : `about its first ${limit.tokens} tokens`;
    const cut = Buffer.byteLength(text) - Buffer.byteLength(pages[0]);
    const uri = `${RESULTS_SCHEME}${id}`;
    const note =
      `[Switchboard: this result was cut to ${unit} (your client's limit): ${cut} more bytes in ` +
      `${pages.length - 1} more page(s). Read them with resources/read ${uri}?page=2 … ?page=${pages.length}; ` +
      `kept ${Math.round(this.keepMs / 60_000)} minutes, for this session only.]`;
    // Structured content is kept when it fits; one that does not cannot be cut into valid data, and
    // a client that validates the tool's outputSchema refuses a result without it unless it is an error.
    const structured = full.structuredContent;
    const keeps = structured !== undefined && Buffer.byteLength(JSON.stringify(structured)) <= bound;
    const dropped = structured !== undefined && !keeps;
    const why = dropped ? ' It is marked as an error only because its structured content could not be cut.' : '';
    const told = `${note}${why}`;
    return {
      content: [
        { type: 'text', text: pages[0] },
        { type: 'text', text: told },
        { type: 'resource_link', uri, name: `result-${id}`, mimeType: 'text/plain', description: note },
      ],
      ...(keeps ? { structuredContent: structured } : {}),
      ...(full.isError || dropped ? { isError: true } : {}),
    };
  }

  /** Whether a URI is one of these resources (the router answers it, not a server). */
  owns(uri: string): boolean {
    return uri.startsWith(RESULTS_SCHEME);
  }

  /** One page (1 when not given) of a kept result, for the session that made the call only. */
  read(session: string, uri: string): JsonObject {
    this.expire();
    const url = new URL(uri);
    const id = url.pathname.replace(/^\//, '');
    const kept = this.kept.get(id);
    // Another session's result is as absent as an unknown one: its existence is not told either.
    if (!kept || kept.session !== session)
      throw new McpFailure(
        -32002,
        `Resource not found: ${uri} (a cut result is kept for a while, for its session only)`,
      );
    const page = Number(url.searchParams.get('page') ?? '1');
    if (!Number.isInteger(page) || page < 1 || page > kept.pages.length)
      throw new McpFailure(-32602, `${uri}: page must be 1 to ${kept.pages.length}.`);
    const base = `${RESULTS_SCHEME}${id}`;
    return {
      contents: [{ uri: `${base}?page=${page}`, mimeType: 'text/plain', text: kept.pages[page - 1] }],
      _meta: {
        page,
        pages: kept.pages.length,
        ...(page < kept.pages.length ? { next: `${base}?page=${page + 1}` } : {}),
      },
    };
  }

  sessionClosed(session: string): void {
    for (const [id, k] of this.kept) if (k.session === session) this.kept.delete(id);
  }

  private keep(session: string, pages: string[]): string {
    this.expire();
    const mine = [...this.kept].filter(([, k]) => k.session === session);
    for (const [id] of mine.slice(0, Math.max(0, mine.length - this.perSession + 1))) this.kept.delete(id);
    const id = crypto.randomUUID();
    this.kept.set(id, { session, pages, expires: this.now() + this.keepMs });
    return id;
  }

  private expire(): void {
    const now = this.now();
    for (const [id, k] of this.kept) if (k.expires <= now) this.kept.delete(id);
  }
}
