// The one way to an upstream: starts (stdio) or reaches (remote) it in the newest era it speaks.
import type { LogRing } from '../shared/logRing';
import type { ConnectionEvents, UpstreamConnection, UpstreamLaunch } from './connection';
import { connectRemoteEitherEra, connectStdioEitherEra } from './eraDetection';

/** Starts (stdio) or reaches (remote) an upstream and completes the MCP handshake. */
export function connectUpstream(
  launch: UpstreamLaunch,
  events: ConnectionEvents,
  logs: LogRing,
  timeoutMs: number,
): Promise<UpstreamConnection> {
  if (launch.transport === 'stdio') return connectStdioEitherEra(launch, events, logs, timeoutMs);
  return connectRemoteEitherEra(launch, events, logs, timeoutMs);
}
