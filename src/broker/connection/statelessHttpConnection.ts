// A remote (Streamable HTTP) upstream that speaks 2026-07-28: no session, each request is its own
// POST with the revision's mirrored headers, answered as JSON or as an SSE stream that carries its
// progress first; closing that stream is how a call is cancelled. List changes come on a
// subscriptions/listen POST whose stream stays open (reopened when the server drops it).
import { paramHeaderValues, statelessHeaders } from './statelessHeaders';
import { readSseMessages } from './sseMessages';
import type { LogRing } from '../shared/logRing';
import { ErrorCodes, type JsonObject } from '../shared/mcpTypes';
import { CallTimer } from './callTimer';
import type { CallOptions, ConnectedInfo, ConnectionEvents } from './connection';
import { ConnectionError } from './connectionError';
import { STATELESS_PROTOCOL, StatelessSession } from './statelessSession';
import { signInError } from './signIn';
import { merged } from '../shared/objects';

type Fetch = typeof fetch;

/** How long a dropped listen stream waits before it is opened again. */
const RELISTEN_DELAY_MS = 1000;

/** Where a remote 2026-07-28 server is and how to reach it. */
export interface StatelessHttpTarget {
  url: URL;
  /** The definition's own headers (never logged). */
  headers: Record<string, string>;
  /** fetch, or the signed-in fetch of a server with `auth` (a bearer token on every request). */
  fetch: Fetch;
}

/** A JSON-RPC response message's outcome: its result, or its error as a ConnectionError. */
function settle(message: JsonObject): JsonObject {
  if (message.result && typeof message.result === 'object') return message.result as JsonObject;
  const error = (message.error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  const code = typeof error.code === 'number' ? error.code : ErrorCodes.InternalError;
  const text = typeof error.message === 'string' ? error.message : 'error without a message';
  throw new ConnectionError('upstream-error', text, code, error.data);
}

const isResponse = (m: unknown): m is JsonObject =>
  !!m && typeof m === 'object' && !Array.isArray(m) && ('result' in m || 'error' in m);

/**
 * Sends one 2026-07-28 request and reads its answer (JSON or SSE). `onMessage` gets what the
 * stream carries before the answer (progress, log messages). An HTTP error with a JSON-RPC body
 * (the revision's -32020/-32022/-32602, a 404's -32601) is that error; one without is a transport error.
 */
export async function postStateless(
  target: StatelessHttpTarget,
  id: number,
  method: string,
  params: JsonObject,
  signal: AbortSignal,
  onMessage: (m: JsonObject) => void = () => undefined,
  /** More headers: a tool's Mcp-Param-* (statelessHeaders.ts). */
  more: Record<string, string> = {},
): Promise<JsonObject> {
  const res = await target.fetch(target.url, {
    method: 'POST',
    headers: merged(
      target.headers,
      { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      statelessHeaders({ method, params }, STATELESS_PROTOCOL),
      more,
    ),
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    signal,
  });
  const type = res.headers.get('content-type') ?? '';
  if (res.ok && type.includes('text/event-stream')) {
    let answer: JsonObject | undefined;
    await readSseMessages(res, (m) => {
      if (m.id === id && isResponse(m)) {
        answer = m;
        return false;
      }
      if (typeof m.method === 'string' && m.id === undefined) onMessage(m);
      return true;
    });
    if (!answer) {
      throw new ConnectionError('transport-error', `The server ended the stream of ${method} without an answer`);
    }
    return settle(answer);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isResponse(body)) return settle(body);
  const shown = text.trim().slice(0, 200);
  throw new ConnectionError(
    'transport-error',
    `The server answered ${method} with HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` +
      (shown ? `: ${shown}` : ''),
    undefined,
    undefined,
    res.status,
  );
}

export class StatelessHttpConnection extends StatelessSession {
  readonly pid = undefined;
  protected readonly logsPerCall = true;
  private nextId = 1;
  /** Why the connection was given up (the server stopped answering, or wants a sign-in). */
  private lossReason?: string;

  constructor(
    private readonly target: StatelessHttpTarget,
    info: ConnectedInfo,
    events: ConnectionEvents,
    private readonly logs: LogRing,
  ) {
    super(info, events);
    this.listenForListChanges();
  }

  protected async post(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    if (this.lossReason) throw new ConnectionError('connection-lost', this.lossReason);
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('cancelled');
    const id = this.nextId++;
    const progressToken = opts.onprogress ? `switchboard-${id}` : undefined;
    const sent =
      progressToken === undefined
        ? params
        : merged(params, { _meta: merged(params._meta as JsonObject, { progressToken }) });
    // Closing the request's stream is the revision's cancellation: a timeout or the caller's cancel aborts the fetch.
    const controller = new AbortController();
    let timedOut = false;
    const timer = new CallTimer(opts.timeoutMs, () => {
      timedOut = true;
      controller.abort();
    });
    const onAbort = () => controller.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const decls = method === 'tools/call' ? this.toolHeaders.get(String(params.name)) : undefined;
      const more = decls?.length ? paramHeaderValues(decls, params.arguments) : undefined;
      return await postStateless(
        this.target,
        id,
        method,
        sent,
        controller.signal,
        (m) => {
          const p = (m.params ?? {}) as JsonObject;
          if (
            m.method === 'notifications/progress' &&
            progressToken !== undefined &&
            p.progressToken === progressToken
          ) {
            timer.refresh();
            const { progress, total, message } = p as { progress: number; total?: number; message?: string };
            opts.onprogress!({ progress, total, message });
          } else if (m.method === 'notifications/message' && opts.log) opts.log.send(p);
          else this.onNotification(m);
        },
        more,
      );
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('cancelled');
      if (timedOut) throw new ConnectionError('timeout', 'Request timed out');
      throw this.classify(err);
    } finally {
      timer.clear();
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A failure that is not the server's answer: a sign-in to renew, or a server that is gone. */
  private classify(err: unknown): unknown {
    if (err instanceof ConnectionError) return err;
    const signIn = signInError(err);
    if (signIn) {
      this.lose(signIn.message, true);
      return new ConnectionError('needs-sign-in', signIn.message);
    }
    // fetch failed (refused, reset): with no session to keep, the server is gone until it answers again.
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = `${(err as Error).message ?? String(err)}${cause?.code ? ` (${String(cause.code)})` : ''}`;
    this.lose(`the server stopped answering: ${why}`);
    return new ConnectionError('connection-lost', why);
  }

  /** Gives up the connection: the restart policy connects again (and detects the era again). */
  private lose(reason: string, needsSignIn = false): void {
    if (this.closing || this.lossReason) return;
    this.lossReason = reason;
    this.logs.push(reason);
    this.events.lost(reason, needsSignIn);
  }

  protected openListen(params: JsonObject, signal: AbortSignal): void {
    void this.keepListening(params, signal);
  }

  /** One listen request at a time for this filter, opened again while the server still answers. */
  private async keepListening(params: JsonObject, signal: AbortSignal): Promise<void> {
    let reopened = false;
    while (!signal.aborted && !this.closing && !this.lossReason) {
      try {
        await postStateless(this.target, this.nextId++, 'subscriptions/listen', params, signal, (m) => {
          if (m.method === 'notifications/subscriptions/acknowledged') {
            // Changes made while no stream was open were missed: list again.
            if (reopened) this.catchUp(params);
            return;
          }
          this.onNotification(m);
        });
        // An answer ends the subscription (the server closed it on purpose): open it again.
      } catch (err) {
        if (signal.aborted || this.closing) return;
        if (err instanceof ConnectionError) {
          if (err.kind === 'upstream-error' || err.status !== undefined) {
            // The server refuses listening: list changes will not be seen until the next restart.
            this.logs.push(`subscriptions/listen refused (${err.message}); list changes will not be followed`);
            return;
          }
        } else {
          this.classify(err);
          return;
        }
      }
      reopened = true;
      await new Promise((r) => setTimeout(r, RELISTEN_DELAY_MS).unref());
    }
  }

  private catchUp(params: JsonObject): void {
    const filter = (params.notifications ?? {}) as JsonObject;
    if (filter.toolsListChanged) this.events.toolsChanged();
    if (filter.promptsListChanged) this.events.promptsChanged();
    if (filter.resourcesListChanged) this.events.resourcesChanged();
  }

  protected closeTransport(): Promise<void> {
    return Promise.resolve();
  }
}
