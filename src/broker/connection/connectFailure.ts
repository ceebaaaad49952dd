// Why an upstream could not be started or reached, in words the operator can act on: the exit and
// the last lines of stderr, "command not found", the HTTP status, or a handshake that timed out.
import type { LogRing } from '../shared/logRing';
import type { ChildStdioTransport } from './childStdioTransport';
import type { RemoteLaunch } from './connection';
import { ConnectionError } from './connectionError';
import { isSdkTimeout } from './sdkSession';
import { merged } from '../shared/objects';

/** Called before the transport is closed: the exit that closing causes is not why the start failed. */
export function explainStdioStartFailure(err: unknown, transport: ChildStdioTransport, logs: LogRing): ConnectionError {
  const why = transport.exitDescription;
  if (transport.notFound && why) return new ConnectionError('not-found', why);
  const message = err instanceof Error ? err.message : String(err);
  const parts = [why ? `process ${why} before it finished the MCP handshake` : `handshake failed: ${message}`];
  const tail = logs.stderrSince(transport.launchMark, 5);
  if (tail) parts.push(`last output:\n${tail}`);
  return new ConnectionError('start-failed', parts.join('; '));
}

export async function explainRemoteConnectFailure(err: unknown, launch: RemoteLaunch): Promise<ConnectionError> {
  const message = err instanceof Error ? err.message : String(err);
  const explained = isSdkTimeout(err)
    ? `no answer to the MCP handshake in time (${message})`
    : `could not connect: ${message}`;
  const status = await httpStatusOf(launch);
  return new ConnectionError('start-failed', explained + (status ? ` (${status})` : ''));
}

/** The SDK's errors do not always carry the HTTP status; one plain request tells the operator. */
async function httpStatusOf(launch: RemoteLaunch): Promise<string | undefined> {
  try {
    const res = await fetch(launch.url, {
      method: launch.transport === 'sse' ? 'GET' : 'POST',
      headers: merged(launch.headers, {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      }),
      body: launch.transport === 'sse' ? undefined : '{"jsonrpc":"2.0","id":0,"method":"ping"}',
      signal: AbortSignal.timeout(3000),
    });
    await res.body?.cancel();
    return res.ok ? undefined : `HTTP ${res.status} ${res.statusText}`.trim();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return cause ? `connection failed: ${cause}` : undefined;
  }
}
