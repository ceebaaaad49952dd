// The broker's telemetry as the call path sees it: undefined while it is off (the default), so the
// whole cost of "off" is one read of `activeTelemetry` per request (and none for the router's
// SERVER spans: tracedRouter.ts takes its layer away while telemetry is off). The OpenTelemetry SDK lives in
// otelSdk.ts, bundled apart (dist/telemetry-sdk.js) and loaded only when telemetry is turned on.
import type { TelemetrySettings } from './settings';
import type { Telemetry, TraceParent } from './types';

export type { BrokerGauges, ServedRequest, SpanAbout, Telemetry, TraceParent, UpstreamRequest } from './types';

let activeTelemetry: Telemetry | undefined;
/** Told when telemetry starts (true) or stops (false): the traced router puts its spans on or off. */
const changeListeners = new Set<(on: boolean) => void>();

/** Calls `listener` whenever telemetry starts or stops; returns the unsubscribe. */
export function onTelemetryChange(listener: (on: boolean) => void): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

function changed(on: boolean): void {
  for (const listener of [...changeListeners]) listener(on);
}

/** The running telemetry, or undefined when it is off. */
export function telemetry(): Telemetry | undefined {
  return activeTelemetry;
}

/** Starts telemetry with these settings; loads the SDK (only now). */
export function startTelemetry(settings: TelemetrySettings): Telemetry {
  // Required here, not imported: while telemetry is off the SDK is never read from disk.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = require('./otelSdk') as { createTelemetry(settings: TelemetrySettings): Telemetry };
  activeTelemetry = sdk.createTelemetry(settings);
  changed(true);
  return activeTelemetry;
}

export async function stopTelemetry(): Promise<void> {
  const running = activeTelemetry;
  activeTelemetry = undefined;
  if (running) changed(false);
  await running?.shutdown();
}

/**
 * A log line with the trace id of the request it belongs to, when telemetry is on and there is one:
 * `trace` when the caller has it (RequestExtra.trace), else the span running now (currentTrace).
 */
export function withTraceId(line: string, trace?: TraceParent): string {
  const id = activeTelemetry?.traceId(trace);
  return id ? `${line} (trace ${id})` : line;
}

/** `{ traceId }` of the request (`trace`, else the one running now) for its audit entry, when telemetry is on. */
export function traceIdEntry(trace?: TraceParent): { traceId?: string } {
  const id = activeTelemetry?.traceId(trace);
  return id ? { traceId: id } : {};
}

/** The trace id of the request (`trace`, else the one running now) when telemetry is on: no object made. */
export function traceIdOf(trace?: TraceParent): string | undefined {
  return activeTelemetry?.traceId(trace);
}
