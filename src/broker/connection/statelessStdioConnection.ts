// A stdio upstream that speaks 2026-07-28: requests and listen requests on the direct path of the
// pipe (childStdioTransport.ts); what the era means for the broker is in statelessSession.ts.
import type { LogRing } from '../shared/logRing';
import type { JsonObject } from '../shared/mcpTypes';
import type { ChildStdioTransport } from './childStdioTransport';
import type { CallOptions, ConnectedInfo, ConnectionEvents } from './connection';
import { StatelessSession } from './statelessSession';

export { brokerEnvelope, infoFromDiscover, STATELESS_PROTOCOL } from './statelessSession';

/** setTimeout's longest delay: a listen request has no answer to wait for. */
const FOREVER_MS = 2 ** 31 - 1;

export class StatelessStdioConnection extends StatelessSession {
  protected readonly logsPerCall = false;
  constructor(
    private readonly transport: ChildStdioTransport,
    info: ConnectedInfo,
    events: ConnectionEvents,
    logs: LogRing,
  ) {
    super(info, events);
    transport.onmessage = (message) => this.onNotification(message as JsonObject);
    transport.onclose = () => {
      if (!this.closing) events.lost(`process ${transport.exitDescription ?? 'ended'}`);
    };
    transport.onerror = (err) => logs.push(`transport error: ${err.message}`);
    this.listenForListChanges();
  }

  get pid(): number | undefined {
    return this.transport.child?.pid;
  }

  protected post(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    return this.transport.call(method, params, opts);
  }

  protected openListen(params: JsonObject, signal: AbortSignal): void {
    this.transport.call('subscriptions/listen', params, { timeoutMs: FOREVER_MS, signal }).catch(() => undefined);
  }

  protected closeTransport(): Promise<void> {
    return this.transport.close();
  }
}
