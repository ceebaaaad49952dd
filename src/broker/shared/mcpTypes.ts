// Plain shapes of the MCP objects the broker passes through. They are deliberately loose: the
// broker forwards what upstreams send and leaves strict validation to the clients at either end.
export type JsonObject = Record<string, unknown>;

export interface Tool extends JsonObject {
  name: string;
  description?: string;
  inputSchema: JsonObject;
}
export interface Prompt extends JsonObject {
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}
export interface Resource extends JsonObject {
  uri: string;
  name: string;
}
export interface ResourceTemplate extends JsonObject {
  uriTemplate: string;
  name: string;
}

/** A JSON-RPC error the endpoint returns to the caller as is. */
export class McpFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * JSON-RPC error codes the broker answers with, one meaning each (docs/endpoint.md lists
 * them). The standard ones, ConnectionClosed and RequestTimeout are the SDK's `ErrorCode` values with the
 * SDK's meaning; ResourceNotFound is MCP's; Forbidden and UpstreamUnavailable are the broker's own, in
 * the server-defined range, on codes neither SDK nor any revision of the spec defines
 * (test/unit/shared/errorCodes.test.ts checks all of this against both SDKs).
 */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The session or connection this message belonged to is closed (the SDK's ConnectionClosed). */
  ConnectionClosed: -32000,
  /** The upstream did not answer within the server's call timeout; the call was cancelled upstream (the SDK's RequestTimeout). */
  RequestTimeout: -32001,
  /** No server offers this resource (the code MCP used for resources/read before 2026-07-28). */
  ResourceNotFound: -32002,
  /** The caller's scope or identity does not allow this. */
  Forbidden: -32003,
  /** The upstream behind this name is not available: starting, restarting, failed, stopped, held; or the broker itself is not reachable. */
  UpstreamUnavailable: -32005,
  /** A guardrail limit (policies.d/) is spent: calls per minute or calls at once; `data.retryAfterSeconds` says when to try again. */
  RateLimited: -32006,
} as const;

/** Where a failed facade tool's result says which error it was (`result._meta`): its code and data. */
export const ERROR_META_KEY = 'switchboard/error';

/** A file-system or operating-system failure (a full disk, a read-only folder, permissions): never the caller's fault. */
export function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  const e = err as NodeJS.ErrnoException;
  return err instanceof Error && typeof e.code === 'string' && typeof e.syscall === 'string';
}

/**
 * The JSON-RPC error for something an operation threw: an McpFailure as it is, a system error as an
 * internal error (with its errno code), anything else as `code` (by default: the caller's params were wrong).
 */
export function failureFrom(err: unknown, code: number = ErrorCodes.InvalidParams): McpFailure {
  if (err instanceof McpFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (isSystemError(err)) return new McpFailure(ErrorCodes.InternalError, message, { errno: err.code });
  return new McpFailure(code, message);
}
