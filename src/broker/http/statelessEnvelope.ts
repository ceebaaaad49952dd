// The 2026-07-28 revision's per-request rules, as pure checks: which version a request claims, its
// `_meta` envelope (version, client capabilities, client info), the mirrored HTTP headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name) and the errors the revision defines for each.
import type * as http from 'node:http';
import { ErrorCodes, type JsonObject } from '../shared/mcpTypes';
import type { Id } from './wire';

/** The revisions served statelessly (per-request `_meta`, no initialize, no session). */
export const STATELESS_VERSIONS: readonly string[] = ['2026-07-28'];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

/** The syslog severities of notifications/message, least severe first. */
export const LOG_LEVELS: readonly string[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** The error codes 2026-07-28 reserves (-32020..-32099), used only with their meaning. */
export const StatelessCodes = {
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** A request refused before it is served: HTTP status and the JSON-RPC error. */
export interface StatelessFailure {
  status: number;
  code: number;
  message: string;
  data?: unknown;
  id: Id | null;
}

/** A request that passed: what the stateless path needs of it. */
export interface StatelessRequest {
  id: Id;
  method: string;
  params: JsonObject;
  version: string;
  capabilities: JsonObject;
  clientName?: string;
}

export const isStatelessProtocol = (v: unknown): v is string => typeof v === 'string' && STATELESS_VERSIONS.includes(v);

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The protocol version a single message claims in its `_meta`, if it claims one. */
export function claimedVersion(message: unknown): string | undefined {
  if (!isObject(message) || !isObject(message.params)) return undefined;
  const meta = message.params._meta;
  if (!isObject(meta)) return undefined;
  const v = meta[META_PROTOCOL_VERSION];
  return typeof v === 'string' ? v : undefined;
}

/** `=?base64?…?=` is how a client sends an Mcp-Name that is not plain ASCII. */
export function decodeHeaderValue(value: string): string {
  const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  return m ? Buffer.from(m[1], 'base64').toString('utf8') : value;
}

/** Methods whose target is mirrored in Mcp-Name, and the param it mirrors. */
const NAMED: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

const fail = (status: number, code: number, message: string, id: Id | null, data?: unknown): StatelessFailure => ({
  status,
  code,
  message,
  id,
  ...(data === undefined ? {} : { data }),
});

const header = (headers: http.IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return typeof v === 'string' ? v : undefined;
};

/** The UnsupportedProtocolVersion error (-32022), naming every version this endpoint speaks. */
export function unsupportedVersion(requested: string, supported: readonly string[], id: Id | null): StatelessFailure {
  const shown = requested.slice(0, 40);
  return fail(
    400,
    StatelessCodes.UnsupportedProtocolVersion,
    `Unsupported protocol version ${shown}: this endpoint speaks ${supported.join(', ')}`,
    id,
    { supported: [...supported], requested: shown },
  );
}

/**
 * Checks one POSTed message against the revision's rules, in the order the spec gives them:
 * the envelope, the version header against it, the version itself, then the method headers.
 * `supported` lists every version the endpoint speaks (both eras), for the -32022 error.
 */
export function checkStatelessRequest(
  message: unknown,
  headers: http.IncomingHttpHeaders,
  supported: readonly string[],
): StatelessRequest | StatelessFailure {
  if (!isObject(message) || typeof message.method !== 'string' || !('id' in message)) {
    return fail(
      400,
      ErrorCodes.InvalidRequest,
      'Invalid Request: a 2026-07-28 POST carries exactly one JSON-RPC request (no batch, no response)',
      null,
    );
  }
  const id = message.id as Id;
  const params = isObject(message.params) ? message.params : {};
  const meta = isObject(params._meta) ? params._meta : undefined;
  const version = meta?.[META_PROTOCOL_VERSION];
  if (typeof version !== 'string') {
    return fail(
      400,
      ErrorCodes.InvalidParams,
      `Invalid params: a 2026-07-28 request needs params._meta["${META_PROTOCOL_VERSION}"] ` +
        '(and clientCapabilities); to open a 2025-11-25 session instead, send initialize without that header',
      id,
    );
  }
  const versionHeader = header(headers, 'mcp-protocol-version');
  if (versionHeader === undefined) {
    return fail(400, StatelessCodes.HeaderMismatch, 'Header mismatch: the MCP-Protocol-Version header is missing', id);
  }
  if (versionHeader !== version) {
    return fail(
      400,
      StatelessCodes.HeaderMismatch,
      `Header mismatch: MCP-Protocol-Version header '${versionHeader.slice(0, 40)}' does not match ` +
        `_meta protocolVersion '${version.slice(0, 40)}'`,
      id,
    );
  }
  if (!isStatelessProtocol(version)) return unsupportedVersion(version, supported, id);
  const capabilities = meta![META_CLIENT_CAPABILITIES];
  if (!isObject(capabilities)) {
    return fail(
      400,
      ErrorCodes.InvalidParams,
      `Invalid params: params._meta["${META_CLIENT_CAPABILITIES}"] must be an object (send {} for none)`,
      id,
    );
  }
  const methodHeader = header(headers, 'mcp-method');
  if (methodHeader !== message.method) {
    const said = methodHeader === undefined ? 'is missing' : `'${methodHeader.slice(0, 60)}' does not match`;
    return fail(
      400,
      StatelessCodes.HeaderMismatch,
      `Header mismatch: the Mcp-Method header ${said} the body's method '${message.method.slice(0, 60)}'`,
      id,
    );
  }
  const named = NAMED[message.method];
  if (named) {
    const nameHeader = header(headers, 'mcp-name');
    const bodyValue = params[named];
    if (nameHeader === undefined || decodeHeaderValue(nameHeader) !== bodyValue) {
      const said = nameHeader === undefined ? 'is missing' : `'${nameHeader.slice(0, 60)}' does not match`;
      return fail(
        400,
        StatelessCodes.HeaderMismatch,
        `Header mismatch: the Mcp-Name header ${said} the body's params.${named}`,
        id,
      );
    }
  }
  const info = meta![META_CLIENT_INFO];
  const clientName = isObject(info) && typeof info.name === 'string' ? info.name : undefined;
  return { id, method: message.method, params, version, capabilities, clientName };
}

export function isStatelessFailure(r: StatelessRequest | StatelessFailure): r is StatelessFailure {
  return 'status' in r;
}

/** Why a method is not served to a 2026-07-28 caller: it was removed, or it is the other era's. */
export function removedMethodMessage(method: string): string | undefined {
  switch (method) {
    case 'initialize':
      return (
        'initialize is not part of 2026-07-28 (no handshake, no session): send server/discover, or send ' +
        'initialize without the 2026-07-28 MCP-Protocol-Version header to open a 2025-11-25 session'
      );
    case 'ping':
      return 'ping was removed in 2026-07-28: any request (e.g. server/discover) shows the endpoint is up';
    case 'logging/setLevel':
      return (
        "logging/setLevel was removed in 2026-07-28: set io.modelcontextprotocol/logLevel in a request's " +
        "_meta instead; that request's log messages then come on its own stream"
      );
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return `${method} was removed in 2026-07-28: open subscriptions/listen with resourceSubscriptions instead`;
    default:
      if (method.startsWith('tasks/')) {
        return (
          `${method.slice(0, 60)}: tasks are not offered to 2026-07-28 callers (the io.modelcontextprotocol/tasks ` +
          'extension is not implemented by the broker); use a 2025-11-25 session for task-augmented calls'
        );
      }
      return undefined;
  }
}
