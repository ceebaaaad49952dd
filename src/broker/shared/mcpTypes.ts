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
 * JSON-RPC error codes the broker answers with. The standard ones and ConnectionClosed are the
 * SDK's `ErrorCode` values (test/unit/errorCodes.test.ts checks); the rest are the broker's own, in
 * the server-defined range, one meaning each (the README's endpoint section lists them).
 */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The session or connection this message belonged to is closed (the SDK's ConnectionClosed). */
  ConnectionClosed: -32000,
  /** The upstream behind this name is not available: starting, restarting, failed, stopped, held. */
  UpstreamUnavailable: -32001,
  /** No server offers this resource (the code MCP uses for resources/read). */
  ResourceNotFound: -32002,
  /** The caller's scope or identity does not allow this. */
  Forbidden: -32003,
  /** The upstream did not answer within the server's call timeout; the call was cancelled upstream. */
  RequestTimeout: -32004,
} as const;
