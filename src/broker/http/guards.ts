// Where a request is turned away before any MCP is read: the loopback Host and Origin checks (DNS
// rebinding), the bearer token, the path, content type and Accept, the declared body size, the
// protocol-version header and whose session it is; and the answer to a body that came too late.
// Pure functions: each returns a Rejection, or undefined to let the request pass.
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Identity } from '../routing/requestContext';
import { isStatelessProtocol, StatelessCodes, STATELESS_VERSIONS } from './statelessEnvelope';

/** An HTTP answer that turns a request away, with a message that says what to do. */
export interface Rejection {
  status: number;
  message: string;
  headers?: Record<string, string>;
  /** The JSON-RPC error code, when not the endpoint's default for the status. */
  code?: number;
  data?: unknown;
}

// Rejections that do not depend on the request are made once: the guards run on every request.
const reject = (status: number, message: string, headers?: Record<string, string>): Rejection =>
  Object.freeze({ status, message, ...(headers ? { headers: Object.freeze(headers) } : {}) });

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export const FOREIGN_HOST = reject(403, 'Forbidden: the Host header must name this loopback endpoint');
export const FOREIGN_ORIGIN = reject(403, 'Forbidden: requests from this Origin are not allowed');

/** A Host header that names this endpoint: a loopback name with this port (a browser always sends one). */
export function checkHost(host: string | undefined, port: number): Rejection | undefined {
  if (!host) return FOREIGN_HOST;
  const m = /^(\[::1\]|[^:]+)(?::(\d+))?$/.exec(host.toLowerCase());
  if (!m || !LOOPBACK_HOSTS.has(m[1]) || m[2] === undefined || Number(m[2]) !== port) return FOREIGN_HOST;
  return undefined;
}

/** No Origin (not a browser), or a loopback page: a page elsewhere must not drive the broker. */
export function checkOrigin(origin: string | undefined): Rejection | undefined {
  if (origin === undefined) return undefined;
  try {
    const u = new URL(origin);
    const host = u.hostname.replace(/^\[|\]$/g, '') === '::1' ? '[::1]' : u.hostname;
    return (u.protocol === 'http:' || u.protocol === 'https:') && LOOPBACK_HOSTS.has(host) ? undefined : FOREIGN_ORIGIN;
  } catch {
    return FOREIGN_ORIGIN;
  }
}

/** Where a request goes: the health probe, the metrics, the aggregated endpoint, or one server's endpoint. */
export type Route = { kind: 'health' } | { kind: 'metrics' } | { kind: 'mcp'; server?: string };

const HEALTH: Route = { kind: 'health' };
const METRICS: Route = { kind: 'metrics' };
const AGGREGATED: Route = { kind: 'mcp' };
export const NOT_FOUND = reject(404, 'Not found: the MCP endpoint is /mcp (or /servers/<name>/mcp)');

export function routeOf(url: string | undefined, method: string | undefined): Route | Rejection {
  const pathname = (url ?? '/').split('?', 1)[0];
  if (pathname === '/mcp') return AGGREGATED;
  if (pathname === '/health' && method === 'GET') return HEALTH;
  if (pathname === '/metrics' && method === 'GET') return METRICS;
  const m = /^\/servers\/([a-z][a-z0-9-]{0,30})\/mcp$/.exec(pathname);
  return m ? { kind: 'mcp', server: m[1] } : NOT_FOUND;
}

/** The token of an `Authorization: Bearer <token>` header (no other scheme, never the query). */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization?.startsWith('Bearer ')) return undefined;
  return authorization.slice(7).trim() || undefined;
}

const CHALLENGE = { 'www-authenticate': 'Bearer realm="switchboard"' };
export const NO_TOKEN = reject(
  401,
  'Unauthorized: send "Authorization: Bearer <token>"; see `switchboard status` for where the token is',
  CHALLENGE,
);
export const BAD_TOKEN = reject(
  401,
  'Unauthorized: this token is not valid (revoked or from another broker)',
  CHALLENGE,
);

/** The 401 for a request that did not authenticate: it says whether a token was sent at all. */
export function unauthorized(token: string | undefined): Rejection {
  return token ? BAD_TOKEN : NO_TOKEN;
}

/** Every version the endpoint speaks: the stateless era's first, then the sessions' (newest first). */
export const ALL_PROTOCOL_VERSIONS: readonly string[] = [...STATELESS_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

/** The versions a session (initialize) may negotiate. */
export const SESSION_PROTOCOL_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;

/** Whether an `Mcp-Protocol-Version` header selects the stateless 2026-07-28 path. */
export const isStatelessVersion = (header: string | string[] | undefined): boolean => isStatelessProtocol(header);

/**
 * An `Mcp-Protocol-Version` header, when sent, must name a version this endpoint speaks; the
 * refusal is the 2026-07-28 UnsupportedProtocolVersion error (-32022), which both eras' clients read.
 */
export function checkProtocolVersion(header: string | string[] | undefined): Rejection | undefined {
  if (typeof header !== 'string' || ALL_PROTOCOL_VERSIONS.includes(header)) return undefined;
  const supported = ALL_PROTOCOL_VERSIONS.join(', ');
  const requested = header.slice(0, 40);
  return {
    status: 400,
    message: `Bad Request: unsupported MCP protocol version ${requested} (supported: ${supported})`,
    code: StatelessCodes.UnsupportedProtocolVersion,
    data: { supported: [...ALL_PROTOCOL_VERSIONS], requested },
  };
}

export const WRONG_CONTENT_TYPE = reject(415, 'Unsupported Media Type: send "Content-Type: application/json"');
export const POST_NOT_ACCEPTABLE = reject(406, 'Not Acceptable: accept both application/json and text/event-stream');
export const GET_NOT_ACCEPTABLE = reject(406, 'Not Acceptable: a GET stream needs "Accept: text/event-stream"');

/** A POST carries JSON and accepts both answers the transport may give (JSON or an SSE stream). */
export function checkPostHeaders(contentType: string | undefined, accept: string | undefined): Rejection | undefined {
  if (!/^application\/json\b/i.test(contentType ?? '')) return WRONG_CONTENT_TYPE;
  const a = accept ?? '*/*';
  const any = a.includes('*/*');
  if (!(any || a.includes('application/json')) || !(any || a.includes('text/event-stream'))) return POST_NOT_ACCEPTABLE;
  return undefined;
}

/** A GET opens the session's event stream, so it must accept one. */
export function checkGetAccept(accept: string | undefined): Rejection | undefined {
  return (accept ?? '').includes('text/event-stream') ? undefined : GET_NOT_ACCEPTABLE;
}

export function payloadTooLarge(maxBytes: number): Rejection {
  return reject(413, `Payload too large: the limit is ${maxBytes} bytes`);
}

/** A declared Content-Length over the limit is refused before any of the body is read. */
export function checkDeclaredLength(contentLength: string | undefined, maxBytes: number): Rejection | undefined {
  return Number(contentLength ?? 0) > maxBytes ? payloadTooLarge(maxBytes) : undefined;
}

export const SESSION_ID_REQUIRED = reject(400, 'Bad Request: Mcp-Session-Id header is required');
export const SESSION_NOT_FOUND = reject(404, 'Session not found: it expired or was closed; initialize a new one');
export const FOREIGN_SESSION = reject(403, 'Forbidden: this session belongs to another client');

/**
 * The same identity: the same client name AND the same operator flag. A name alone is not enough:
 * a declared client called `operator` must not pass for the editor's own identity.
 */
export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.client === b.client && a.operator === b.operator;
}

/** A session is used only by the identity that opened it. */
export function checkSessionOwner(owner: Identity, caller: Identity): Rejection | undefined {
  return sameIdentity(owner, caller) ? undefined : FOREIGN_SESSION;
}

/** A POST whose body did not arrive in time (answered, then the connection is closed). */
export function bodyTimedOut(timeoutMs: number): Rejection {
  const within = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`;
  return reject(
    408,
    `Request Timeout: the request body did not arrive within ${within} of the request's start; ` +
      'send the whole body at once and retry on a new connection',
    { connection: 'close' },
  );
}
