// A stdio upstream: its own process group, the SDK client for the handshake, lists and
// notifications, and the direct path (childStdioTransport.ts) for every forwarded call.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { LogRing } from '../shared/logRing';
import type { JsonObject } from '../shared/mcpTypes';
import { ChildStdioTransport } from './childStdioTransport';
import type { CallOptions, ConnectedInfo, ConnectionEvents, StdioLaunch, UpstreamConnection } from './connection';
import { explainStdioStartFailure } from './connectFailure';
import { StartedTransport } from './startedTransport';
import { connectedInfo, createSdkClient, SdkSession } from './sdkSession';

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
  ): Promise<StdioConnection> {
    const transport = started ?? new ChildStdioTransport(launch, logs);
    const client = createSdkClient(events, {
      callers: () => transport.callersInFlight(),
      hold: (callers) => transport.holdCalls(callers),
    });
    // eslint-disable-next-line prefer-const -- the callbacks below may run before it is assigned; const would throw (TDZ)
    let connection: StdioConnection | undefined;
    client.onclose = () => {
      if (connection && !connection.closing) events.lost(`process ${transport.exitDescription ?? 'ended'}`);
    };
    client.onerror = (err) => logs.push(`transport error: ${err.message}`);
    try {
      const sdkTransport = started ? new StartedTransport(started) : transport;
      await client.connect(sdkTransport, { timeout: timeoutMs });
    } catch (err) {
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
