// A stdio upstream: its own process group, the SDK client for the handshake, lists and
// notifications, and the direct path (childStdioTransport.ts) for every forwarded call.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { LogRing } from '../shared/logRing';
import type { JsonObject } from '../shared/mcpTypes';
import { ChildStdioTransport } from './childStdioTransport';
import type { CallOptions, ConnectedInfo, ConnectionEvents, StdioLaunch, UpstreamConnection } from './connection';
import { explainStdioStartFailure } from './connectFailure';
import { StartedTransport } from './startedTransport';
import { connectedInfo, createSdkClient, SdkSession } from './sdkSession';

/** How long a dual-era probe waits for a 2026-07-28 server's answer to initialize. */
const LEGACY_TRY_MS = 5000;

/** A 2026-07-28 stdio server refused (or did not answer) the 2025-11-25 initialize; it still runs. */
export class InitializeRefused extends Error {}

export class StdioConnection extends SdkSession implements UpstreamConnection {
  private closing = false;

  private constructor(
    client: Client,
    private readonly transport: ChildStdioTransport,
    info: ConnectedInfo,
  ) {
    super(client, info);
  }

  static async connect(
    launch: StdioLaunch,
    events: ConnectionEvents,
    logs: LogRing,
    timeoutMs: number,
    /** A process already started (by the era probe, eraDetection.ts): initialized as it runs. */
    started?: ChildStdioTransport,
    /**
     * A 2026-07-28 server that may also speak 2025-11-25: a refused (or unanswered) initialize
     * leaves the process running and rejects with InitializeRefused, for the stateless connection.
     */
    tryLegacy = false,
  ): Promise<StdioConnection> {
    const transport = started ?? new ChildStdioTransport(launch, logs);
    const client = createSdkClient(events, {
      callers: () => transport.callersInFlight(),
      hold: (callers) => transport.holdCalls(callers),
      traceOf: (caller) => transport.traceOf(caller),
    });
    // eslint-disable-next-line prefer-const -- the callbacks below may run before it is assigned; const would throw (TDZ)
    let connection: StdioConnection | undefined;
    client.onclose = () => {
      if (connection && !connection.closing) events.lost(`process ${transport.exitDescription ?? 'ended'}`);
    };
    client.onerror = (err) => logs.push(`transport error: ${err.message}`);
    const sdkTransport = started ? new StartedTransport(started, !tryLegacy) : transport;
    try {
      await client.connect(sdkTransport, { timeout: tryLegacy ? Math.min(timeoutMs, LEGACY_TRY_MS) : timeoutMs });
      if (sdkTransport instanceof StartedTransport) sdkTransport.own();
    } catch (err) {
      if (tryLegacy && err instanceof McpError && transport.exitDescription === undefined) {
        throw new InitializeRefused(err.message);
      }
      const failure = explainStdioStartFailure(err, transport, logs);
      await transport.close().catch(() => undefined);
      throw failure;
    }
    connection = new StdioConnection(client, transport, connectedInfo(client));
    return connection;
  }

  get pid(): number | undefined {
    return this.transport.child?.pid;
  }

  request(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    return this.transport.call(method, params, opts);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => undefined);
    await this.transport.close().catch(() => undefined);
  }
}
