// The one error type of upstream connections: a `kind` says what went wrong, so callers decide by
// kind, never by the wording of a message.
export type ConnectionErrorKind =
  /** The upstream did not answer a call in time (the call was cancelled upstream). */
  | 'timeout'
  /** The process ended or the remote session went away while the call was in flight. */
  | 'connection-lost'
  /** The upstream answered with a JSON-RPC error: `code`, message and `data` are its own. */
  | 'upstream-error'
  /** The call failed on the way (a refused connection, an HTTP error) while the session still answers. */
  | 'transport-error'
  /** The command to start does not exist: retrying cannot help. */
  | 'not-found'
  /** The server could not be started or did not complete the MCP handshake. */
  | 'start-failed'
  /** A remote server refuses the broker until the person signs in (again, or with a wider scope). */
  | 'needs-sign-in';

export class ConnectionError extends Error {
  constructor(
    readonly kind: ConnectionErrorKind,
    message: string,
    /** The upstream's JSON-RPC error code, for `upstream-error`. */
    readonly code?: number,
    readonly data?: unknown,
    /** The HTTP status a remote server answered with, when the failure was one (never parsed from text). */
    readonly status?: number,
  ) {
    super(message);
  }
}
