// Which protocol era an upstream speaks, found the way the 2026-07-28 revision says: probe with
// server/discover; a DiscoverResult that offers 2026-07-28 means a 2026-07-28 server, anything else
// (an error, silence) a 2025-11-25 one. A stdio server is then initialized on the same pipe; a
// Streamable HTTP one is connected exactly as before the probe existed (RemoteConnection).
import type { LogRing } from '../shared/logRing';
import type { JsonObject } from '../shared/mcpTypes';
import { ChildStdioTransport } from './childStdioTransport';
import type { ConnectionEvents, RemoteLaunch, StdioLaunch, UpstreamConnection } from './connection';
import { ConnectionError } from './connectionError';
import { DualEraConnection } from './dualEraConnection';
import { explainStdioStartFailure } from './connectFailure';
import { StatelessHttpConnection, postStateless, type StatelessHttpTarget } from './statelessHttpConnection';
import { brokerEnvelope, infoFromDiscover } from './statelessSession';
import { StatelessStdioConnection } from './statelessStdioConnection';
import { signedInFetch } from './signIn';
import { RemoteConnection } from './remoteConnection';
import { signInError } from './signIn';
import { InitializeRefused, StdioConnection } from './stdioConnection';

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
  if (info) {
    // One child speaks one era on its pipe (the SDK pins it at the first request after the probe):
    // a child that also speaks 2025-11-25 keeps a 2025 session, the era in which both a tool's own
    // requests during a call and an input_required result (the SDK's shim sends it as requests)
    // reach every caller; 2026-07-28 callers are translated by the broker (http/inputRequired.ts).
    try {
      const session = await StdioConnection.connect(launch, events, logs, timeoutMs, transport, true);
      logs.push('the server speaks 2026-07-28 and 2025-11-25: its pipe carries a 2025-11-25 session');
      return session;
    } catch (err) {
      if (!(err instanceof InitializeRefused)) throw err;
      // 2026-07-28 only: it refused initialize and stays unpinned for the stateless requests.
    }
  }
  if (info) return new StatelessStdioConnection(transport, info, events, logs);
  if (transport.exitDescription !== undefined) {
    // A server that exits on a request before initialize: start it again, without the probe.
    logs.push(`the server ${transport.exitDescription} on the server/discover probe; starting it again`);
    return StdioConnection.connect(launch, events, logs, timeoutMs);
  }
  return StdioConnection.connect(launch, events, logs, timeoutMs, transport);
}

/**
 * Reaches a remote upstream in the era it speaks. Only Streamable HTTP is probed (legacy SSE
 * predates 2026-07-28). A server/discover POST whose answer offers 2026-07-28 makes it a 2026-07-28
 * upstream; any other answer (a 2025 server's 400 "no session" or -32601, an HTTP error, no answer)
 * leaves it to the 2025-11-25 connection, which reports a failure as it always did. A sign-in the
 * probe finds missing is the same error the 2025 handshake would give.
 */
export async function connectRemoteEitherEra(
  launch: RemoteLaunch,
  events: ConnectionEvents,
  logs: LogRing,
  timeoutMs: number,
): Promise<UpstreamConnection> {
  if (launch.transport !== 'http' || launch.session) return RemoteConnection.connect(launch, events, logs, timeoutMs);
  const target: StatelessHttpTarget = {
    url: new URL(launch.url),
    headers: launch.headers,
    fetch: signedInFetch(launch),
  };
  let discovered: JsonObject | undefined;
  try {
    const params = { _meta: brokerEnvelope(events.serverRequest !== undefined) };
    const signal = AbortSignal.timeout(Math.min(timeoutMs, PROBE_TIMEOUT_MS));
    discovered = await postStateless(target, 0, 'server/discover', params, signal);
  } catch (err) {
    const signIn = signInError(err);
    if (signIn) throw new ConnectionError('needs-sign-in', signIn.message);
    // Not a 2026-07-28 server, or not reachable: the 2025 handshake says which, in its own words.
  }
  const info = discovered && infoFromDiscover(discovered);
  if (!info) return RemoteConnection.connect(launch, events, logs, timeoutMs);
  const modern = new StatelessHttpConnection(target, info, events, logs);
  // A 2025-11-25 caller gets a 2025 session upstream where the server offers one.
  return new DualEraConnection(modern, launch, events, logs, timeoutMs);
}
