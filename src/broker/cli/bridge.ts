// `switchboard connect`: a stdio <-> broker bridge for agents that only speak stdio (terminal CLIs).
// Messages pass through as bytes-in-JSON; the bridge owns only the session: it re-initializes
// transparently when the broker restarts, and ends the session when stdin closes. A client of
// the 2026-07-28 era (per-request `_meta`, no initialize) is bridged statelessly (bridgeStateless.ts).
import * as readline from 'node:readline';
import { statelessHeaders } from '../connection/statelessHeaders';
import { claimedVersion, envelopeOf, ParamHeaderBook, StatelessInFlight } from './bridgeStateless';
import { readSseMessages } from '../connection/sseMessages';
import { ErrorCodes } from '../shared/mcpTypes';

export interface BridgeTarget {
  url: string;
  token: string;
}

export interface BridgeOptions {
  /** Finds (or starts) the broker; called again after the broker went away. */
  discover(): Promise<BridgeTarget>;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  log(line: string): void;
}

type Message = {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
};

const PROTOCOL_FALLBACK = '2025-06-18';

/** The broker refused the bridge's token: retrying cannot help, so every request gets this reason. */
export class BridgeRefused extends Error {}

/** Delay before reconnect attempt `n` (0-based): 250 ms doubling to 5 s, so a dead broker is not hammered. */
export function reconnectDelayMs(n: number): number {
  return Math.min(250 * 2 ** n, 5000);
}

export class Bridge {
  private target?: BridgeTarget;
  private sessionId?: string;
  private protocolVersion?: string;
  private initialize?: Message;
  private ready?: Promise<void>;
  private stream?: AbortController;
  private closing = false;
  private inFlight = 0;
  private reconnecting?: Promise<void>;
  private refused?: BridgeRefused;
  private readonly stateless = new StatelessInFlight();
  private readonly paramHeaders = new ParamHeaderBook();

  constructor(private readonly opts: BridgeOptions) {}

  /** Runs until stdin ends; resolves after the session was closed on the broker. */
  async run(): Promise<void> {
    const lines = readline.createInterface({ input: this.opts.input, crlfDelay: Infinity });
    const pending: Promise<void>[] = [];
    for await (const line of lines) {
      if (!line.trim()) continue;
      let message: Message;
      try {
        message = JSON.parse(line) as Message;
      } catch {
        this.write({
          jsonrpc: '2.0',
          id: null as never,
          error: { code: -32700, message: 'Parse error: a line on stdin is not JSON' },
        });
        continue;
      }
      const p = this.handle(message).catch((err: Error) => this.opts.log(`error: ${err.message}`));
      pending.push(p);
      if (pending.length > 64) await Promise.race(pending.splice(0, 32));
    }
    await Promise.allSettled(pending);
    await this.close();
  }

  private write(message: unknown): void {
    this.opts.output.write(JSON.stringify(message) + '\n');
  }

  private async handle(message: Message): Promise<void> {
    if (this.refused) return this.fail(message, this.refused.message);
    if (!this.initialize && message.method === 'notifications/cancelled') return this.stateless.cancel(message.params);
    const version = this.initialize ? undefined : claimedVersion(message);
    if (version !== undefined && message.method !== 'initialize') return this.postStateless(message, version, true);
    if (message.method === 'initialize') {
      this.initialize = message;
      this.ready = this.open(message, true);
      try {
        await this.ready;
      } catch (err) {
        if (!(err instanceof BridgeRefused)) throw err;
        this.refused = err;
        this.opts.log(err.message);
        this.fail(message, err.message);
      }
      return;
    }
    if (!this.ready) {
      if (message.id !== undefined && message.method)
        this.write({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32600, message: 'Not initialized: send initialize first' },
        });
      return;
    }
    await this.ready.catch(() => undefined);
    const refused = this.refusedReason();
    if (refused) return this.fail(message, refused);
    if (this.reconnecting) await this.reconnecting;
    this.inFlight++;
    try {
      await this.post(message, true);
    } finally {
      this.inFlight--;
    }
  }

  // A method, so the check after an await is not narrowed away by the one before it.
  private refusedReason(): string | undefined {
    return this.refused?.message;
  }

  /** Opens a session on the broker; on a re-open the client's initialize is replayed silently. */
  private async open(init: Message, forward: boolean): Promise<void> {
    this.target = await this.opts.discover();
    this.sessionId = undefined;
    const res = await this.send(init);
    if (res.status === 401 || res.status === 403) throw new BridgeRefused(await refusal(res));
    this.sessionId = res.headers.get('mcp-session-id') ?? undefined;
    const replies = await this.readReplies(res);
    for (const reply of replies) {
      const result = reply.result as { protocolVersion?: string } | undefined;
      if (reply.id === init.id && result?.protocolVersion) this.protocolVersion = result.protocolVersion;
      if (forward) this.write(reply);
    }
    if (!forward) {
      await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' }).then((r) => r.body?.cancel());
    }
    this.openStream();
  }

  private async send(message: Message): Promise<Response> {
    const target = this.target!;
    const headers: Record<string, string> = {
      authorization: `Bearer ${target.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    return fetch(target.url, { method: 'POST', headers, body: JSON.stringify(message) });
  }

  private async post(message: Message, retry: boolean): Promise<void> {
    let res: Response;
    try {
      res = await this.send(message);
    } catch (err) {
      if (retry && !this.closing) {
        await this.reconnect(`broker unreachable (${(err as Error).message})`);
        return this.post(message, false);
      }
      return this.fail(message, `The broker is not reachable: ${(err as Error).message}`);
    }
    if (res.status === 404 && retry && !this.closing) {
      await res.body?.cancel();
      await this.reconnect('session expired or broker restarted');
      return this.post(message, false);
    }
    if (res.status === 202) {
      await res.body?.cancel();
      return;
    }
    if (!res.ok && !(res.headers.get('content-type') ?? '').includes('json')) {
      await res.body?.cancel();
      return this.fail(message, `The broker answered HTTP ${res.status}`);
    }
    for (const reply of await this.readReplies(res)) this.write(reply);
  }

  /** One 2026-07-28 request, on its own POST; the broker is found again if it went away. */
  private async postStateless(message: Message, version: string, retry: boolean): Promise<void> {
    this.target ??= await this.opts.discover();
    const target = this.target;
    const signal = message.id !== undefined ? this.stateless.begin(message.id) : undefined;
    try {
      // A tool's x-mcp-header arguments go as Mcp-Param-* headers, as an HTTP client sends them.
      if (this.paramHeaders.needsList(message)) await this.listTools(target, message, version).catch(() => undefined);
      const res = await this.postOne(target, message, version, signal);
      if (res.status === 202 || (!(res.headers.get('content-type') ?? '').includes('json') && !res.ok)) {
        await res.body?.cancel();
        if (res.status !== 202) this.fail(message, `The broker answered HTTP ${res.status}`);
        return;
      }
      for (const reply of await this.readReplies(res)) {
        if (message.method === 'tools/list' && reply.id === message.id) this.paramHeaders.learn(reply.result);
        this.write(reply);
      }
    } catch (err) {
      if (signal?.aborted) return; // the client cancelled it: it expects no answer
      if (retry && !this.closing) {
        this.target = undefined;
        return this.postStateless(message, version, false);
      }
      this.fail(message, `The broker is not reachable: ${(err as Error).message}`);
    } finally {
      if (message.id !== undefined) this.stateless.end(message.id);
    }
  }

  /** One 2026-07-28 POST with the headers the revision mirrors from its body. */
  private postOne(target: BridgeTarget, message: Message, version: string, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${target.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...statelessHeaders(message, version),
      ...this.paramHeaders.headers(message),
    };
    return fetch(target.url, { method: 'POST', headers, body: JSON.stringify(message), signal });
  }

  /** The bridge's own tools/list (every page), in the envelope of the call that needs it. */
  private async listTools(target: BridgeTarget, call: Message, version: string): Promise<void> {
    let cursor: unknown;
    for (let page = 0; page < 100; page++) {
      const params = { _meta: envelopeOf(call), ...(typeof cursor === 'string' ? { cursor } : {}) };
      const list: Message = { jsonrpc: '2.0', id: `bridge-list-${page}`, method: 'tools/list', params };
      const res = await this.postOne(target, list, version);
      const reply = (await this.readReplies(res)).find((r) => r.id === list.id);
      this.paramHeaders.learn(reply?.result);
      cursor = (reply?.result as { nextCursor?: unknown } | undefined)?.nextCursor;
      if (typeof cursor !== 'string' || !cursor) return;
    }
  }

  private fail(message: Message, text: string): void {
    if (message.id !== undefined && message.method)
      this.write({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCodes.UpstreamUnavailable, message: text } });
  }

  private reconnect(why: string): Promise<void> {
    // One reconnect for all the requests that noticed at the same time.
    this.reconnecting ??= (async () => {
      this.opts.log(`${why}; reconnecting`);
      this.stream?.abort();
      const deadline = Date.now() + 60_000;
      for (let attempt = 0; ; attempt++) {
        try {
          await this.open(this.initialize!, false);
          break;
        } catch (err) {
          if (err instanceof BridgeRefused) {
            this.refused = err;
            this.opts.log(err.message);
            throw err;
          }
          if (Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, reconnectDelayMs(attempt)));
        }
      }
      // What the broker serves may differ after a restart: let the client list again.
      this.write({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      this.write({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' });
      this.write({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
      this.opts.log('reconnected');
    })().finally(() => {
      this.reconnecting = undefined;
    });
    return this.reconnecting;
  }

  private async readReplies(res: Response): Promise<Message[]> {
    const type = res.headers.get('content-type') ?? '';
    if (type.includes('text/event-stream')) {
      const out: Message[] = [];
      await readSseMessages(res, (raw) => {
        const m = raw as Message;
        // Progress and other notifications of this request go to the client as they arrive.
        if (m.id !== undefined && (m.result !== undefined || m.error !== undefined)) out.push(m);
        else this.write(m);
      });
      return out;
    }
    const text = await res.text();
    if (!text) return [];
    const parsed = JSON.parse(text) as Message | Message[];
    return Array.isArray(parsed) ? parsed : [parsed];
  }

  /** The GET stream carries the broker's own notifications (list_changed, resource updates). */
  private openStream(): void {
    const controller = new AbortController();
    this.stream = controller;
    const target = this.target!;
    const headers: Record<string, string> = {
      authorization: `Bearer ${target.token}`,
      accept: 'text/event-stream',
      'mcp-session-id': this.sessionId ?? '',
    };
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion ?? PROTOCOL_FALLBACK;
    void fetch(target.url, { method: 'GET', headers, signal: controller.signal })
      .then((res) => (res.ok ? readSseMessages(res, (m) => this.write(m as Message)) : res.body?.cancel()))
      .then(() => new Promise((r) => setTimeout(r, 300)))
      .catch(() => undefined)
      .finally(() => {
        // The stream ended on its own (broker stopped): the next request reconnects, or we do now.
        if (!controller.signal.aborted && !this.closing && !this.refused && this.initialize) {
          if (this.stream === controller && this.inFlight === 0)
            void this.reconnect('notification stream closed').catch(() => undefined);
        }
      });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.stream?.abort();
    if (this.target && this.sessionId) {
      await fetch(this.target.url, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${this.target.token}`, 'mcp-session-id': this.sessionId },
        signal: AbortSignal.timeout(2000),
      })
        .then((r) => r.body?.cancel())
        .catch(() => undefined);
    }
  }
}

/** The broker's reason for refusing a token (its JSON-RPC error message), with what to do about it. */
async function refusal(res: Response): Promise<string> {
  let reason = `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { error?: { message?: string } };
    if (body.error?.message) reason = body.error.message;
  } catch {
    /* no JSON body: the status says it */
  }
  return `The broker refused this bridge: ${reason}`;
}
