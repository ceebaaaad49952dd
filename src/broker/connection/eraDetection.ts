// Which protocol era a stdio upstream speaks, found the way the 2026-07-28 revision says: probe
// with server/discover on the started process; a DiscoverResult means 2026-07-28, anything else
// (an error, silence) means a 2025-11-25 server, which is then initialized on the same pipe.
import type { LogRing } from '../logRing';
import type { JsonObject } from '../mcpTypes';
import { ChildStdioTransport } from './childStdioTransport';
import type { ConnectionEvents, StdioLaunch, UpstreamConnection } from './connection';
import { explainStdioStartFailure } from './connectFailure';
import { brokerEnvelope, infoFromDiscover, ModernStdioConnection } from './modernStdioConnection';
import { StdioConnection } from './stdioConnection';

/** How long a silent process may take to answer the probe before it is taken for a legacy server. */
export const PROBE_TIMEOUT_MS = 5000;

/** Starts a stdio upstream and connects in the era it speaks. */
export async function connectStdioEitherEra(
  launch: StdioLaunch,
  events: ConnectionEvents,
  logs: LogRing,
  timeoutMs: number,
): Promise<UpstreamConnection> {
  const transport = new ChildStdioTransport(launch, logs);
  try {
    await transport.start();
  } catch (err) {
    const failure = explainStdioStartFailure(err, transport, logs);
    await transport.close().catch(() => undefined);
    throw failure;
  }
  let discovered: JsonObject | undefined;
  try {
    const params = { _meta: brokerEnvelope(events.serverRequest !== undefined) };
    discovered = await transport.call('server/discover', params, { timeoutMs: Math.min(timeoutMs, PROBE_TIMEOUT_MS) });
  } catch {
    // Not a 2026-07-28 server (it refused the method, or said nothing): initialize it below.
  }
  const info = discovered && infoFromDiscover(discovered);
  if (info) return new ModernStdioConnection(transport, info, events, logs);
  if (transport.exitDescription !== undefined) {
    // A server that exits on a request before initialize: start it again, without the probe.
    logs.push(`the server ${transport.exitDescription} on the server/discover probe; starting it again`);
    return StdioConnection.connect(launch, events, logs, timeoutMs);
  }
  return StdioConnection.connect(launch, events, logs, timeoutMs, transport);
}
