// The one place that speaks MCP to upstream servers (the SDK's client side is imported here only).
// An SDK upgrade on the upstream side is a change to this file.
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  McpError,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { LogRing } from './logRing';
import { findExecutable, killProcessGroup } from './processGroup';
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from './mcpTypes';
import { rawResult, splitResponseLine } from './rawJson';
import { sharedSchemaValidator } from './schemaValidator';

export interface StdioLaunch {
  transport: 'stdio';
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** A command line the server runs under (e.g. `unshare --net --`), for OS-level grant enforcement. */
  wrapper?: string[];
}
export interface RemoteLaunch {
  transport: 'sse' | 'http';
  url: string;
  headers: Record<string, string>;
}
export type UpstreamLaunch = StdioLaunch | RemoteLaunch;

export interface UpstreamEvents {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
  log(params: JsonObject): void;
  /** The connection ended without `close()` being called: a crash or a dropped remote. */
  lost(reason: string): void;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * The result is only forwarded, never read: a large one may come back as a placeholder that
   * stands for the upstream's bytes (see rawJson.ts).
   */
  forward?: boolean;
}

/** Results are checked by the downstream client; re-validating them here would only cost time. */
const AnyResult = z.looseObject({});

/** Lines on a stdio server's stdout longer than this are not MCP traffic; the server is stopped. */
const MAX_STDOUT_LINE = 32 * 1024 * 1024;

/**
 * Forwarded calls use ids from here up, far above the ones the SDK client counts up from 0 for
 * the handshake and lists, so a response finds its call without the SDK's protocol layer. Within
 * 32 bits, for servers that keep request ids in an int.
 */
const DIRECT_ID_BASE = 1_000_000_000;
/** Results larger than this are forwarded as the upstream's own text instead of re-serialized. */
const RAW_RESULT_MIN = 8 * 1024;

/** An upstream's JSON-RPC error or a local failure of a call, shaped like the SDK's McpError. */
class CallError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown, readonly connectionLost = false) {
    super(message);
  }
}

interface DirectCall {
  resolve(result: JsonObject): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  resetOnProgress: boolean;
  forward: boolean;
  onprogress?: CallOptions['onprogress'];
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * Newline-delimited JSON over a child's stdio. The SDK's own stdio transport cannot put the child
 * in its own process group (needed so `npx` grandchildren die with it), nor bound a runaway line.
 */
class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  child?: ChildProcess;
  exitDescription?: string;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closed = false;
  private overflowed = false;
  private readonly calls = new Map<number, DirectCall>();
  private nextId = DIRECT_ID_BASE;

  constructor(private readonly launch: StdioLaunch, private readonly logs: LogRing) {}

  start(): Promise<void> {
    // Behind a wrapper, ENOENT would only show up as the wrapper's exit code: look first.
    const { command, args, wrapper } = this.launch;
    if (wrapper && !findExecutable(command, this.launch.env.PATH, this.launch.cwd)) {
      this.exitDescription = `command not found: ${command}`;
      this.logs.push(this.exitDescription);
      return Promise.reject(new Error(this.exitDescription));
    }
    return new Promise((resolve, reject) => {
      const child = spawn(wrapper ? wrapper[0] : command, wrapper ? [...wrapper.slice(1), command, ...args] : args, {
        cwd: this.launch.cwd,
        env: this.launch.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true, // own process group: stop() kills the whole tree
        windowsHide: true,
      });
      this.child = child;
      child.once('error', (err) => {
        const code = (err as NodeJS.ErrnoException).code;
        this.exitDescription = code === 'ENOENT'
          ? `command not found: ${this.launch.command}`
          : `could not start ${this.launch.command}: ${err.message}`;
        this.logs.push(this.exitDescription);
        reject(new Error(this.exitDescription));
        this.finish();
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        // A reason set before the exit (the broker stopped it for a runaway line) stays the reason.
        this.exitDescription ??= signal ? `exited on signal ${signal}` : `exited with code ${code}`;
        this.finish();
      });
      child.stdout!.on('data', (chunk: Buffer) => this.onStdout(chunk));
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => this.logs.appendChunk(chunk, 'stderr'));
      child.stdin!.on('error', () => { /* EPIPE when the child died; reported through exit */ });
    });
  }

  private onStdout(chunk: Buffer): void {
    if (this.closed || this.overflowed) return;
    let start = 0;
    let nl = chunk.indexOf(10, start);
    while (nl !== -1) {
      const piece = chunk.subarray(start, nl);
      if (this.buffered) {
        const bytes = Buffer.concat([...this.chunks, piece]);
        this.chunks = [];
        this.buffered = 0;
        if (!this.forwardRaw(bytes)) this.onLine(bytes.toString('utf8'));
      } else if (!this.forwardRaw(piece)) {
        this.onLine(piece.toString('utf8'));
      }
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.buffered += rest.length;
      if (this.buffered > MAX_STDOUT_LINE) {
        // Stop reading at once: the rest of the runaway line would otherwise be buffered again
        // while the process group is being killed, and the pipe would keep its writer going.
        this.overflowed = true;
        this.chunks = [];
        this.buffered = 0;
        this.child?.stdout?.destroy();
        const reason = `wrote a line of more than ${MAX_STDOUT_LINE / 1024 / 1024} MB to stdout, which is not MCP traffic; stopping it`;
        this.logs.push(reason);
        this.exitDescription = reason;
        void this.close();
        return;
      }
      this.chunks.push(rest);
    }
  }

  private onLine(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!line.trim()) return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.logs.push(`ignored non-JSON output on stdout: ${line.slice(0, 200)}`);
      return;
    }
    if (!message || typeof message !== 'object' || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      this.logs.push(`ignored a stdout line that is not JSON-RPC 2.0: ${line.slice(0, 200)}`);
      return;
    }
    if (this.calls.size > 0 && this.settleDirect(message as JsonObject)) return;
    this.onmessage?.(message as JSONRPCMessage);
  }

  /**
   * Sends a request on the direct path: no SDK protocol layer, one timer, the response matched
   * by id in `onLine`. The SDK client keeps the handshake, lists and notifications.
   */
  call(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || stdin.destroyed) return Promise.reject(new CallError(-32000, 'upstream process is not running', undefined, true));
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason ?? new Error('cancelled'));
    const id = this.nextId++;
    let sent = params;
    if (opts.onprogress) sent = { ...params, _meta: { ...(params._meta as JsonObject | undefined), progressToken: id } };
    return new Promise<JsonObject>((resolve, reject) => {
      const call: DirectCall = {
        resolve,
        reject,
        resetOnProgress: opts.onprogress !== undefined,
        forward: opts.forward === true,
        onprogress: opts.onprogress,
        signal: opts.signal,
        timer: setTimeout(() => {
          this.endCall(id, call);
          this.cancelUpstream(id, 'timed out');
          reject(new CallError(-32001, 'Request timed out'));
        }, opts.timeoutMs),
      };
      if (opts.signal) {
        call.onAbort = () => {
          this.endCall(id, call);
          this.cancelUpstream(id, String(opts.signal!.reason ?? 'cancelled'));
          reject(opts.signal!.reason ?? new Error('cancelled'));
        };
        opts.signal.addEventListener('abort', call.onAbort, { once: true });
      }
      this.calls.set(id, call);
      // A full pipe queues the write in the stream; the answer still finds its call by id.
      stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params: sent }) + '\n');
    });
  }

  private endCall(id: number, call: DirectCall): void {
    this.calls.delete(id);
    clearTimeout(call.timer);
    if (call.onAbort) call.signal!.removeEventListener('abort', call.onAbort);
  }

  private cancelUpstream(id: number, reason: string): void {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || stdin.destroyed) return;
    stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }) + '\n');
  }

  /** A large answer to a call that only forwards its result: passed on as bytes, never decoded. */
  private forwardRaw(bytes: Buffer): boolean {
    if (bytes.length < RAW_RESULT_MIN || this.calls.size === 0) return false;
    const split = splitResponseLine(bytes, (id) => this.calls.get(id)?.forward === true);
    const call = split && this.calls.get(split.id);
    if (!split || !call) return false;
    this.endCall(split.id, call);
    call.resolve(rawResult(split.result));
    return true;
  }

  /** Handles a response or progress notification that belongs to a direct call; false if not ours. */
  private settleDirect(message: JsonObject): boolean {
    if (message.method === 'notifications/progress') {
      const params = message.params as JsonObject | undefined;
      const call = typeof params?.progressToken === 'number' ? this.calls.get(params.progressToken) : undefined;
      if (!call?.onprogress) return false;
      if (call.resetOnProgress) call.timer.refresh();
      const { progress, total, message: text } = params as { progress: number; total?: number; message?: string };
      call.onprogress({ progress, total, message: text });
      return true;
    }
    if ('method' in message || typeof message.id !== 'number' || message.id < DIRECT_ID_BASE) return false;
    const call = this.calls.get(message.id);
    if (!call) return true; // answered after its timeout or cancellation: nobody waits for it
    this.endCall(message.id, call);
    if ('result' in message && message.result && typeof message.result === 'object') {
      call.resolve(message.result as JsonObject);
    } else {
      const error = (message.error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
      call.reject(new CallError(typeof error.code === 'number' ? error.code : -32603, typeof error.message === 'string' ? error.message : 'error without a message', error.data));
    }
    return true;
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    // Marked as a lost connection: the process died and its exit is not processed yet.
    if (!stdin || this.closed || stdin.destroyed) return Promise.reject(Object.assign(new Error('upstream process is not running'), { connectionLost: true }));
    const ok = stdin.write(JSON.stringify(message) + '\n');
    return ok ? Promise.resolve() : new Promise((resolve) => stdin.once('drain', () => resolve()));
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      await killProcessGroup(child);
    }
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.chunks = []; // a partial line may be megabytes; the transport object may outlive the child
    this.buffered = 0;
    for (const [id, call] of [...this.calls]) {
      this.endCall(id, call);
      call.reject(new CallError(-32000, 'Connection closed', undefined, true));
    }
    this.onclose?.();
  }
}

export interface ConnectedInfo {
  serverName?: string;
  serverVersion?: string;
  instructions?: string;
  capabilities: JsonObject;
}

export class UpstreamClient {
  private closing = false;
  /** Why a remote connection was given up (its session is gone or the server unreachable). */
  private lossReason?: string;
  private checking?: Promise<boolean>;

  private constructor(
    private readonly client: Client,
    private readonly transport: Transport,
    readonly info: ConnectedInfo,
  ) {}

  get pid(): number | undefined {
    return this.transport instanceof ChildStdioTransport ? this.transport.child?.pid : undefined;
  }

  static async connect(launch: UpstreamLaunch, events: UpstreamEvents, logs: LogRing, timeoutMs: number): Promise<UpstreamClient> {
    const client = new Client({ name: 'mcp-switchboard', version: '0.1.0' }, { capabilities: {}, jsonSchemaValidator: sharedSchemaValidator });
    let transport: Transport;
    /** Whether a transport error is a legacy SSE stream ending (the SDK's SseError). */
    let isSseStreamEnd = (_err: Error): boolean => false;
    if (launch.transport === 'stdio') {
      transport = new ChildStdioTransport(launch, logs);
    } else {
      // Loaded on first use: a registry of stdio servers never pays for the HTTP clients (their
      // OAuth and EventSource modules and schemas are a few MB of the broker's memory).
      const url = new URL(launch.url);
      const requestInit = { headers: launch.headers };
      if (launch.transport === 'http') {
        const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
        transport = new StreamableHTTPClientTransport(url, { requestInit });
      } else {
        const { SSEClientTransport, SseError } = await import('@modelcontextprotocol/sdk/client/sse.js');
        isSseStreamEnd = (err) => err instanceof SseError;
        transport = new SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...launch.headers } }) } });
      }
    }
    let upstream: UpstreamClient | undefined;
    client.onclose = () => {
      if (upstream && !upstream.closing) events.lost(upstream.lossReason ?? describeLoss(transport));
    };
    client.onerror = (err) => {
      logs.push(`transport error: ${err.message}`);
      // The SDK's remote transports report a dropped stream here and never close: the broker
      // decides. A legacy SSE session lives exactly as long as its stream; otherwise a ping tells.
      if (!upstream || upstream.closing || launch.transport === 'stdio') return;
      if (isSseStreamEnd(err)) void upstream.lose(`the SSE stream ended (${err.message})`);
      else void upstream.stillConnected(err.message);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => events.toolsChanged());
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => events.promptsChanged());
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => events.resourcesChanged());
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => events.resourceUpdated(n.params.uri));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => events.log(n.params as JsonObject));
    try {
      await client.connect(transport, { timeout: timeoutMs });
    } catch (err) {
      // Explained before close(): the exit that close() causes is not why the start failed.
      const explained = explainConnectFailure(err, transport, logs);
      await transport.close().catch(() => undefined);
      const status = launch.transport === 'stdio' ? undefined : await httpStatusOf(launch);
      throw new Error(explained + (status ? ` (${status})` : ''));
    }
    const version = client.getServerVersion();
    upstream = new UpstreamClient(client, transport, {
      serverName: version?.name,
      serverVersion: version?.version,
      instructions: client.getInstructions(),
      capabilities: (client.getServerCapabilities() ?? {}) as JsonObject,
    });
    return upstream;
  }

  private async listAll<T>(method: string, key: string, timeoutMs: number): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = (await this.client.request(
        { method, params: cursor ? { cursor } : {} } as never,
        AnyResult,
        { timeout: timeoutMs },
      )) as Record<string, unknown>;
      const list = page[key];
      if (Array.isArray(list)) items.push(...(list as T[]));
      cursor = typeof page.nextCursor === 'string' && page.nextCursor ? page.nextCursor : undefined;
      // A server that hands back a cursor it already gave would otherwise loop forever.
      if (cursor !== undefined) {
        if (seen.has(cursor)) break;
        seen.add(cursor);
      }
    } while (cursor !== undefined);
    return items;
  }

  listTools(timeoutMs: number): Promise<Tool[]> {
    return this.info.capabilities.tools ? this.listAll<Tool>('tools/list', 'tools', timeoutMs) : Promise.resolve([]);
  }
  listPrompts(timeoutMs: number): Promise<Prompt[]> {
    return this.info.capabilities.prompts ? this.listAll<Prompt>('prompts/list', 'prompts', timeoutMs) : Promise.resolve([]);
  }
  listResources(timeoutMs: number): Promise<Resource[]> {
    return this.info.capabilities.resources ? this.listAll<Resource>('resources/list', 'resources', timeoutMs) : Promise.resolve([]);
  }
  listResourceTemplates(timeoutMs: number): Promise<ResourceTemplate[]> {
    return this.info.capabilities.resources
      ? this.listAll<ResourceTemplate>('resources/templates/list', 'resourceTemplates', timeoutMs).catch(() => [])
      : Promise.resolve([]);
  }

  /** Sends one request upstream and returns the raw result object. */
  async request(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    if (this.transport instanceof ChildStdioTransport) return this.transport.call(method, params, opts);
    try {
      return (await this.client.request({ method, params } as never, AnyResult, {
        signal: opts.signal,
        timeout: opts.timeoutMs,
        resetTimeoutOnProgress: opts.onprogress !== undefined,
        onprogress: opts.onprogress,
      })) as JsonObject;
    } catch (err) {
      // Not an answer from the server (an HTTP 404 for a forgotten session, a refused connection):
      // if the session no longer answers a ping, the connection is lost and the call with it.
      if (this.transport instanceof ChildStdioTransport || err instanceof McpError || opts.signal?.aborted) throw err;
      if (await this.stillConnected((err as Error)?.message ?? String(err))) throw err;
      throw Object.assign(err as Error, { connectionLost: true });
    }
  }

  /** Pings a remote upstream after a transport error (one ping at a time); false once it is lost. */
  private stillConnected(why: string): Promise<boolean> {
    if (this.lossReason) return Promise.resolve(false);
    this.checking ??= this.client.ping({ timeout: 3000 }).then(
      () => { this.checking = undefined; return true; },
      async (err: Error) => {
        await this.lose(`the connection was lost (${why.slice(0, 200)}); a ping on the session failed: ${err.message.slice(0, 200)}`);
        return false;
      },
    );
    return this.checking;
  }

  /** Gives up a remote connection: closing it reports `lost`, and the restart policy reconnects. */
  private async lose(reason: string): Promise<void> {
    if (this.closing || this.lossReason) return;
    this.lossReason = reason;
    await this.client.close().catch(() => undefined);
  }

  notify(method: string, params: JsonObject): Promise<void> {
    return this.client.notification({ method, params } as never);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => undefined);
    await this.transport.close().catch(() => undefined);
  }
}

/** The SDK's errors do not always carry the HTTP status; one plain request tells the operator. */
async function httpStatusOf(launch: RemoteLaunch): Promise<string | undefined> {
  try {
    const res = await fetch(launch.url, {
      method: launch.transport === 'sse' ? 'GET' : 'POST',
      headers: { ...launch.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
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

function describeLoss(transport: Transport): string {
  if (transport instanceof ChildStdioTransport) return `process ${transport.exitDescription ?? 'ended'}`;
  return 'connection closed by the server';
}

function explainConnectFailure(err: unknown, transport: Transport, logs: LogRing): string {
  const message = err instanceof Error ? err.message : String(err);
  if (transport instanceof ChildStdioTransport) {
    const why = transport.exitDescription;
    const tail = logs.lastLines(5);
    if (why?.startsWith('command not found')) return why;
    const parts = [why ? `process ${why} before it finished the MCP handshake` : `handshake failed: ${message}`];
    if (tail) parts.push(`last output:\n${tail}`);
    return parts.join('; ');
  }
  if (/timed out/i.test(message)) return `no answer to the MCP handshake in time (${message})`;
  return `could not connect: ${message}`;
}
