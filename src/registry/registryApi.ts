// The MCP Registry's v0 API as data: where a request goes, what an answer must look like, and one
// line per server for a table or a picker. Pure (no network): the broker's client fetches, the CLI,
// the facade and the extension show. From the registry's own documentation
// (modelcontextprotocol/registry docs/reference/api/openapi.yaml and generic-registry-api.md):
//   GET /v0/servers?search=&cursor=&limit=&version=latest → { servers: [{ server, _meta }], metadata: { nextCursor, count } }
//   GET /v0/servers/{name}/versions/{version}            → { server, _meta } ('latest' is a version)
// Names and versions are URL-encoded into one path segment each; a name must first be a server.json
// name (reverse-DNS, one '/') and a version one version, so no answer and no argument can make the
// request climb to another path. Every `server` is checked against the server.json schema the
// importer uses; an entry that fails is left out and counted, never shown half-read.
import { z } from 'zod';
import { parseServerJson, type ServerJson } from './serverJson';
import { visibleText } from './visibleText';
import { webAddressProblem } from './webAddress';

/** The official registry: the default when nothing else is configured. */
export const OFFICIAL_REGISTRY = 'https://registry.modelcontextprotocol.io';

/** The most entries one page asks for (the official registry's own maximum is 100). */
export const MAX_PAGE_LIMIT = 100;

const SERVER_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_~-]{0,99}$/;

/** Why `raw` cannot be a registry's base URL, or undefined: https (http only on this computer), no query. */
export function registryUrlProblem(raw: string): string | undefined {
  const problem = webAddressProblem(raw);
  if (problem) return problem;
  const url = new URL(raw);
  if (url.search || url.hash) return `${raw} has a query or fragment; give the registry's base address only`;
  return undefined;
}

/** The base URL as the client uses it: no trailing slash, so `${base}/v0/…` is one path. */
export function normalizeRegistryUrl(raw: string): string {
  const problem = registryUrlProblem(raw);
  if (problem) throw new Error(`registry address ${problem}`);
  return new URL(raw).href.replace(/\/+$/, '');
}

/** Why `name` is not a registry server name (io.github.user/weather), or undefined. */
export function serverNameProblem(name: string): string | undefined {
  if (!SERVER_NAME.test(name) || name.length > 200 || name.split('/').some((part) => /^\.+$/.test(part)))
    return `'${visibleText(name)}' is not a registry server name (reverse-DNS with one '/', e.g. io.github.user/weather)`;
  return undefined;
}

/** Why `version` is not one version (1.2.0, or 'latest'), or undefined. */
export function versionProblem(version: string): string | undefined {
  if (!VERSION.test(version) || /^\.+$/.test(version))
    return `'${visibleText(version)}' is not a version (e.g. 1.2.0, or latest)`;
  return undefined;
}

/** `io.github.user/weather@1.2.0` → name and version ('latest' when none is given). */
export function parseServerRef(ref: string): { name: string; version: string } {
  const at = ref.lastIndexOf('@');
  const name = at > 0 ? ref.slice(0, at) : ref;
  const version = at > 0 ? ref.slice(at + 1) : 'latest';
  const problem = serverNameProblem(name) ?? versionProblem(version);
  if (problem) throw new Error(problem);
  return { name, version };
}

export interface SearchQuery {
  search?: string;
  cursor?: string;
  limit?: number;
  /** Only each server's latest version (version=latest). Default true. */
  latestOnly?: boolean;
}

/** The list URL under `base`; the path is checked to be the one intended. */
export function searchUrl(base: string, q: SearchQuery): URL {
  const url = new URL(`${base}/v0/servers`);
  if (q.search) url.searchParams.set('search', q.search);
  if (q.cursor) url.searchParams.set('cursor', q.cursor);
  url.searchParams.set('limit', String(Math.max(1, Math.min(q.limit ?? 30, MAX_PAGE_LIMIT))));
  if (q.latestOnly ?? true) url.searchParams.set('version', 'latest');
  return url;
}

/** The URL of one version of one server; the name and version are checked, then encoded. */
export function versionUrl(base: string, name: string, version: string): URL {
  const problem = serverNameProblem(name) ?? versionProblem(version);
  if (problem) throw new Error(problem);
  const prefix = `${new URL(base).pathname.replace(/\/+$/, '')}/v0/servers/`;
  const url = new URL(`${base}/v0/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`);
  // The checks above already keep it there; this says so where the request is made.
  if (!url.pathname.startsWith(prefix) || url.pathname.split('/').length !== prefix.split('/').length + 2)
    throw new Error(`the request for '${visibleText(name)}' would leave ${prefix}`);
  return url;
}

const OfficialMeta = z.looseObject({
  status: z.string().optional(),
  isLatest: z.boolean().optional(),
  publishedAt: z.string().optional(),
});
const ServerResponseSchema = z.looseObject({
  server: z.unknown(),
  _meta: z.looseObject({ 'io.modelcontextprotocol.registry/official': OfficialMeta.optional() }).optional(),
});
const ServerListSchema = z.looseObject({
  servers: z.array(ServerResponseSchema),
  metadata: z.looseObject({ nextCursor: z.string().nullish(), count: z.number().optional() }).optional(),
});

/** One server version a registry answered, checked. */
export interface RegistryServer {
  server: ServerJson;
  status?: string;
  isLatest?: boolean;
}

export interface RegistryPage {
  servers: RegistryServer[];
  nextCursor?: string;
  /** Entries left out because they were not valid server.json, each as `name: why`. */
  skipped: string[];
}

function shapeError(what: string, error: z.ZodError): Error {
  const first = error.issues[0];
  const at = first.path.length ? first.path.join('.') : '(top level)';
  return new Error(`the registry's answer is not ${what} (${at}: ${first.message})`);
}

function entryOf(raw: z.output<typeof ServerResponseSchema>): RegistryServer {
  const server = parseServerJson(raw.server);
  const official = raw._meta?.['io.modelcontextprotocol.registry/official'];
  return { server, status: official?.status, isLatest: official?.isLatest };
}

/** A list answer, checked: each entry a valid server.json with a registry name, or left out and counted. */
export function parseServerList(body: unknown): RegistryPage {
  const r = ServerListSchema.safeParse(body);
  if (!r.success) throw shapeError('a server list', r.error);
  const servers: RegistryServer[] = [];
  const skipped: string[] = [];
  for (const raw of r.data.servers) {
    try {
      servers.push(entryOf(raw));
    } catch (err) {
      const name = (raw.server as { name?: unknown } | null)?.name;
      const first = (err as Error).message.split('\n').slice(0, 2).join(' ');
      skipped.push(`${typeof name === 'string' ? visibleText(name) : '(no name)'}: ${visibleText(first)}`);
    }
  }
  const next = r.data.metadata?.nextCursor;
  return { servers, skipped, ...(next ? { nextCursor: next } : {}) };
}

/** One version's answer, checked, and checked to be the server and version asked for. */
export function parseServerVersion(body: unknown, name: string, version: string): RegistryServer {
  const r = ServerResponseSchema.safeParse(body);
  if (!r.success) throw shapeError('a server', r.error);
  const entry = entryOf(r.data);
  if (entry.server.name !== name)
    throw new Error(`the registry answered with '${visibleText(entry.server.name)}' when asked for '${name}'`);
  if (version !== 'latest' && entry.server.version !== version)
    throw new Error(
      `the registry answered with version ${visibleText(entry.server.version)} when asked for ${version}`,
    );
  return entry;
}

/** What a table row or a picker item shows of one server. Every string is safe to print. */
export interface RegistryRow {
  name: string;
  title?: string;
  description: string;
  version: string;
  /** stdio, streamable-http, sse; several joined with ', '. */
  transport: string;
  /** The package (`npm @scope/pkg`) or the remote URL of the first way to run it. */
  runs: string;
  /** Whether any way to run it asks for a secret (an env variable, header, argument or variable marked isSecret). */
  needsSecrets: boolean;
}

function anySecret(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(anySecret);
  if (!value || typeof value !== 'object') return false;
  const o = value as Record<string, unknown>;
  return o.isSecret === true || Object.values(o).some(anySecret);
}

export function registryRow(server: ServerJson): RegistryRow {
  const packages = server.packages ?? [];
  const remotes = server.remotes ?? [];
  const transports = [...new Set([...packages.map((p) => p.transport.type), ...remotes.map((r) => r.type)])];
  const first = packages[0];
  const runs = first ? `${first.registryType} ${first.identifier}` : (remotes[0]?.url ?? '');
  return {
    name: visibleText(server.name),
    ...(server.title ? { title: visibleText(server.title) } : {}),
    description: visibleText(server.description),
    version: visibleText(server.version),
    transport: transports.join(', '),
    runs: visibleText(runs),
    needsSecrets: anySecret(packages) || anySecret(remotes),
  };
}
