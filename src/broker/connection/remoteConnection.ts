// A remote upstream over Streamable HTTP or legacy SSE. The SDK's remote transports report a
// dropped stream as an error and never close on their own, so this connection decides when the
// session is lost (a legacy SSE stream ended, or a ping after a transport error failed).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { LogRing } from '../shared/logRing';
import type { JsonObject } from '../shared/mcpTypes';
import {
  signalOf,
  type CallOptions,
  type ConnectedInfo,
  type ConnectionEvents,
  type RemoteLaunch,
  type UpstreamConnection,
} from './connection';
import { CallTimer } from './callTimer';
import { ConnectionError } from './connectionError';
import { explainRemoteConnectFailure } from './connectFailure';
import { signedInFetch, signInError } from './signIn';
import { AnyResult, connectedInfo, createSdkClient, isSdkTimeout, SdkSession } from './sdkSession';
import {
  holdTimers,
  oneCallerPerSession,
  traceOfSession,
  withRelatedCaller,
  type ServerRequestCaller,
} from './serverRequests';
import { telemetry, type TraceParent } from '../telemetry/telemetry';
import { merged } from '../shared/objects';

/**
 * The SDK's own request timeout, set out of the way: the call's limit is a CallTimer of ours, which
 * pauses while a person answers a request of that call (setTimeout's largest delay).
 */
const NO_SDK_TIMEOUT = 2_147_483_647;

interface RemoteTransport {
  transport: Transport;
  /** Whether a transport error is a legacy SSE stream ending (the SDK's SseError). */
  isStreamEnd(err: Error): boolean;
}

/**
 * Loaded on first use: a registry of stdio servers never pays for the HTTP clients (their OAuth
 * and EventSource modules and schemas are a few MB of the broker's memory).
 */
async function remoteTransport(launch: RemoteLaunch): Promise<RemoteTransport> {
  const url = new URL(launch.url);
  const requestInit = { headers: launch.headers };
  // A signed-in server: every request (POST, GET stream, SSE) carries the current access token.
  const base = signedInFetch(launch);
  const signedIn = launch.auth || launch.bearer ? { fetch: base } : {};
  if (launch.transport === 'http') {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const transport = new StreamableHTTPClientTransport(url, { requestInit, ...signedIn });
    return { transport, isStreamEnd: () => false };
  }
  const { SSEClientTransport, SseError } = await import('@modelcontextprotocol/sdk/client/sse.js');
  const withHeaders: typeof fetch = (u, init) =>
    base(u, merged(init, { headers: merged(init?.headers as Record<string, string>, launch.headers) }));
  return {
    transport: new SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: withHeaders }, ...signedIn }),
    isStreamEnd: (err) => err instanceof SseError,
  };
}

export class RemoteConnection extends SdkSession implements UpstreamConnection {
  readonly pid = undefined;
  private closing = false;
  /** The SDK client closed: every call still in flight failed with it. */
  private ended = false;
  /** Why the connection was given up (its session is gone or the server unreachable). */
  private lossReason?: string;
  /** It was given up because the server wants a (new) sign-in. */
  private lostSignIn = false;
  private checking?: Promise<boolean>;
  /** The calls in flight: their callers and time limits (one entry per call). */
  private readonly inFlight = new Set<{ caller?: ServerRequestCaller; timer: CallTimer; trace?: TraceParent }>();

  private constructor(
    client: Client,
    private readonly transport: Transport,
    info: ConnectedInfo,
  ) {
    super(client, info);
  }

  static async connect(
    launch: RemoteLaunch,
    events: ConnectionEvents,
    logs: LogRing,
    timeoutMs: number,
  ): Promise<RemoteConnection> {
    // eslint-disable-next-line prefer-const -- the callbacks below may run before it is assigned; const would throw (TDZ)
    let connection: RemoteConnection | undefined;
    const client = createSdkClient(events, {
      callers: () => connection?.callersInFlight() ?? [],
      hold: (callers) => holdTimers(connection?.inFlight ?? [], callers),
      traceOf: (caller) => traceOfSession(connection?.inFlight ?? [], caller),
    });
    const { transport, isStreamEnd } = await remoteTransport(launch);
    client.onclose = () => {
      if (!connection) return;
      connection.ended = true;
      if (!connection.closing) {
        events.lost(connection.lossReason ?? 'connection closed by the server', connection.lostSignIn);
      }
    };
    client.onerror = (err) => {
      logs.push(`transport error: ${err.message}`);
      if (!connection || connection.closing) return;
      if (signInError(err)) return void connection.lose(err.message, true);
      // A legacy SSE session lives exactly as long as its stream; otherwise a ping tells.
      if (isStreamEnd(err)) void connection.lose(`the SSE stream ended (${err.message})`);
      else void connection.stillConnected(err.message);
    };
    try {
      await client.connect(transport, { timeout: timeoutMs });
    } catch (err) {
      await transport.close().catch(() => undefined);
      const signIn = signInError(err);
      if (signIn) throw new ConnectionError('needs-sign-in', signIn.message);
      throw await explainRemoteConnectFailure(err, launch);
    }
    connection = new RemoteConnection(client, transport, connectedInfo(client));
    return connection;
  }

  async request(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    // The SDK client needs the caller's cancellation as an AbortSignal.
    if (opts.cancel && !opts.signal) opts = merged(opts, { signal: signalOf(opts) });
    // Timing out aborts the request: the SDK then tells the server it is cancelled.
    const timedOut = new AbortController();
    const timer = new CallTimer(opts.timeoutMs, () => timedOut.abort(new Error('Request timed out')));
    const entry = { caller: opts.caller, timer, trace: opts.trace ?? telemetry()?.currentTrace() };
    this.inFlight.add(entry);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timedOut.signal]) : timedOut.signal;
    const onprogress = opts.onprogress;
    try {
      // In the caller's context: the SDK reads this call's response stream in it (serverRequests.ts).
      return (await withRelatedCaller(
        opts.caller,
        () =>
          this.client.request({ method, params } as never, AnyResult, {
            signal,
            timeout: NO_SDK_TIMEOUT,
            onprogress: onprogress
              ? (progress) => {
                  timer.refresh();
                  onprogress(progress);
                }
              : undefined,
          }),
        entry.trace,
      )) as JsonObject;
    } catch (err) {
      if (timedOut.signal.aborted && !opts.signal?.aborted) throw new ConnectionError('timeout', 'Request timed out');
      throw await this.classify(err, opts);
    } finally {
      timer.clear();
      this.inFlight.delete(entry);
    }
  }

  /** One caller per session with a call in flight, for a request that came on no call's stream. */
  callersInFlight(): ServerRequestCaller[] {
    return oneCallerPerSession([...this.inFlight].map((entry) => entry.caller));
  }

  private async classify(err: unknown, opts: CallOptions): Promise<unknown> {
    if (opts.signal?.aborted) return err;
    const message = err instanceof Error ? err.message : String(err);
    const signIn = signInError(err);
    if (signIn) {
      void this.lose(signIn.message, true);
      return new ConnectionError('needs-sign-in', signIn.message);
    }
    if (this.ended) return new ConnectionError('connection-lost', message);
    if (isSdkTimeout(err)) return new ConnectionError('timeout', message);
    if (err instanceof McpError) {
      // The SDK prefixes the upstream's own message with "MCP error <code>: ".
      const own = message.startsWith(`MCP error ${err.code}: `)
        ? message.slice(`MCP error ${err.code}: `.length)
        : message;
      return new ConnectionError('upstream-error', own, err.code, err.data);
    }
    // Not an answer from the server (an HTTP 404 for a forgotten session, a refused connection):
    // if the session no longer answers a ping, the connection is lost and the call with it.
    const status = err instanceof StreamableHTTPError || err instanceof SseError ? err.code : undefined;
    if (await this.stillConnected(message))
      return new ConnectionError('transport-error', message, undefined, undefined, status);
    return new ConnectionError('connection-lost', message);
  }

  /** Pings after a transport error (one ping at a time); false once the connection is lost. */
  private stillConnected(why: string): Promise<boolean> {
    if (this.lossReason) return Promise.resolve(false);
    this.checking ??= this.client.ping({ timeout: 3000 }).then(
      () => {
        this.checking = undefined;
        return true;
      },
      async (err: Error) => {
        const pingFailed = err.message.slice(0, 200);
        await this.lose(`the connection was lost (${why.slice(0, 200)}); a ping on the session failed: ${pingFailed}`);
        return false;
      },
    );
    return this.checking;
  }

  /** Gives up the connection: closing it reports `lost`, and the restart policy reconnects. */
  private async lose(reason: string, needsSignIn = false): Promise<void> {
    if (this.closing || this.lossReason) return;
    this.lossReason = reason;
    this.lostSignIn = needsSignIn;
    await this.client.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => undefined);
    await this.transport.close().catch(() => undefined);
  }
}
