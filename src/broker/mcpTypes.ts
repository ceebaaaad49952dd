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
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Server-defined range: the upstream behind this name is not available. */
  UpstreamUnavailable: -32001,
  RequestTimeout: -32001,
  Forbidden: -32003,
} as const;
