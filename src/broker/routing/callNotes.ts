// The lines a call leaves in its server's log (what tail_logs and the console show) when it did not
// end as asked: it timed out, its caller cancelled it, the server failed under it, or its result was
// cut to the client's limit. While telemetry is on each ends with the trace id of the call's span:
// the span is handed down with the request (RequestExtra.trace), since these lines are written after
// the request's waits, where no span is "running" any more (no AsyncLocalStorage on the call path).
// Only these rare ends pay anything: a call that succeeds within its limit writes nothing here.
import { ErrorCodes } from '../shared/mcpTypes';
import { withTraceId } from '../telemetry/telemetry';
import type { RequestExtra } from './requestContext';

/** Where a call's lines go: a served upstream's own log. */
export interface CallNoteSink {
  note?(line: string): void;
}

/** Longest error text quoted in a line: a server's message can be long, the line says what happened. */
const MAX_QUOTED = 300;

/** A caller's cancellation, read without making an AbortSignal where the request has a CallCancel. */
function cancelledBy(extra: RequestExtra): boolean {
  return extra.cancel ? extra.cancel.aborted : extra.signal?.aborted === true;
}

/**
 * The line for a call that failed, or undefined for a refusal: the broker's own (a profile, a
 * guardrail, a quarantine: audited, and no event of the server's) or a server's that is not running.
 */
function failureLine(tool: string, error: unknown, extra: RequestExtra): string | undefined {
  if (cancelledBy(extra)) return `call of '${tool}' cancelled by its caller`;
  const code = (error as { code?: unknown }).code;
  const message = String((error as Error)?.message ?? error).slice(0, MAX_QUOTED);
  if (code === ErrorCodes.RequestTimeout) return `call of '${tool}' timed out: ${message}`;
  if (code === ErrorCodes.Forbidden || code === ErrorCodes.RateLimited || code === ErrorCodes.InvalidParams) {
    return undefined;
  }
  // A server that is not running refuses the call before it is sent (restarting, failed, held):
  // its own log says why already, and a line per refused call would push that out of the ring
  // (500 lines). Only "stopped while handling this call" (supervision/upstream.ts) happened to a call.
  if (code === ErrorCodes.UpstreamUnavailable && !message.includes('while handling this call')) return undefined;
  return `call of '${tool}' failed: ${message}`;
}

/** Notes a failed call of `tool` in its server's log, with the call's trace id when telemetry is on. */
export function noteCallFailed(server: CallNoteSink, tool: string, error: unknown, extra: RequestExtra): void {
  if (!server.note) return;
  const line = failureLine(tool, error, extra);
  if (line) server.note(withTraceId(line, extra.trace));
}

/** Notes a result of `tool` cut to `client`'s limit (oversizedResults.ts), with the call's trace id. */
export function noteResultCut(server: CallNoteSink, tool: string, client: string, extra: RequestExtra): void {
  server.note?.(withTraceId(`result of '${tool}' cut to client '${client}''s limit; the rest is paged`, extra.trace));
}
