// Newline-delimited JSON-RPC over a child's stdio, with the direct call path: forwarded calls skip
// the SDK's protocol layer (one timer, matched by id), large results pass on as the upstream's bytes.
// This file is one concern (the hot path of every stdio call); it is kept whole on purpose.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { LogRing } from '../shared/logRing';
import { ErrorCodes, type JsonObject } from '../shared/mcpTypes';
import { spawnTarget } from '../shared/platform/spawnTarget';
import { windowsEnvValue } from '../shared/platform/windowsCommand';
import { findExecutable, killProcessGroup } from '../shared/platform/processGroup';
import { containTree, endTree } from '../shared/platform/windowsJob';
import type { CallCancel } from '../shared/callCancel';
import { rawResult, splitResponseLine } from '../shared/rawJson';
import { CallTimer } from './callTimer';
import type { CallOptions, StdioLaunch } from './connection';
import { ConnectionError } from './connectionError';
import { holdTimers, oneCallerPerSession, traceOfSession, type ServerRequestCaller } from './serverRequests';
import { telemetry, type TraceParent } from '../telemetry/telemetry';
import { merged } from '../shared/objects';

/** PATH of a launch's env; on Windows the variable is often spelled `Path`. */
function pathOf(env: NodeJS.ProcessEnv): string | undefined {
  return process.platform === 'win32' ? windowsEnvValue(env, 'PATH') : env.PATH;
}

/** Lines on a stdio server's stdout longer than this are not MCP traffic; the server is stopped. */
const MAX_STDOUT_LINE = 32 * 1024 * 1024;

/**
 * Forwarded calls use ids from here up, far above the ones the SDK client counts up from 0 for
 * the handshake and lists, so a response finds its call without the SDK's protocol layer. Within
 * 32 bits, for servers that keep request ids in an int.
 */
const DIRECT_ID_BASE = 1_000_000_000;
/**
 * Lines shorter than this cannot be a response with a result (`{"result":{},"jsonrpc":"2.0","id":N}`
 * is longer): they are parsed without looking for one.
 */
const RAW_RESULT_MIN = 34;

interface DirectCall {
  resolve(result: JsonObject): void;
  reject(error: Error): void;
  timer: CallTimer;
  resetOnProgress: boolean;
  forward: boolean;
  onprogress?: CallOptions['onprogress'];
  /** Where the caller's cancellation reaches it: a CallCancel's hook, or an AbortSignal's listener. */
  cancel?: CallCancel;
  signal?: AbortSignal;
  onAbort?: () => void;
  caller?: ServerRequestCaller;
  /** While telemetry is on: the call's trace, the parent of a request the server sends about it. */
  trace?: TraceParent;
}

/**
 * Newline-delimited JSON over a child's stdio. The SDK's own stdio transport cannot put the child
 * in its own process group (needed so `npx` grandchildren die with it), nor bound a runaway line.
 */
export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  child?: ChildProcess;
  exitDescription?: string;
  /** Set when the command does not exist: a failure no restart can fix. */
  notFound = false;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closed = false;
  private overflowed = false;
  private readonly calls = new Map<number, DirectCall>();
  private nextId = DIRECT_ID_BASE;
  /** Whether stdin is corked until the end of this turn of the event loop (writeBatched). */
  private corked = false;

  /** Where this launch's lines begin in the server's log, so a start error quotes only its own output. */
  readonly launchMark: number;

  constructor(
    private readonly launch: StdioLaunch,
    private readonly logs: LogRing,
  ) {
    this.launchMark = logs.mark();
  }

  start(): Promise<void> {
    // Behind a wrapper (or cmd.exe on Windows), ENOENT would only show up as its exit code: look first.
    const { command, args, wrapper } = this.launch;
    const win32 = process.platform === 'win32';
    const resolved = wrapper || win32 ? findExecutable(command, pathOf(this.launch.env), this.launch.cwd) : undefined;
    if ((wrapper || win32) && !resolved) {
      this.exitDescription = `command not found: ${command}`;
      this.notFound = true;
      this.logs.push(this.exitDescription);
      return Promise.reject(new ConnectionError('not-found', this.exitDescription));
    }
    const target = spawnTarget(process.platform, { command, args, wrapper, resolved, comspec: process.env.ComSpec });
    const companion = this.launch.companion;
    if (!companion) return this.spawnChild(target);
    return companion.open().then(
      () => this.spawnChild(target),
      (err: Error) => {
        this.exitDescription = `could not start ${command}: its sandbox's network proxy failed: ${err.message}`;
        this.logs.push(this.exitDescription);
        this.finish();
        throw new ConnectionError('start-failed', this.exitDescription);
      },
    );
  }

  private spawnChild(target: ReturnType<typeof spawnTarget>): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(target.file, target.args, {
        cwd: this.launch.cwd,
        env: this.launch.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true, // own process group: stop() kills the whole tree
        windowsHide: true,
        windowsVerbatimArguments: target.windowsVerbatimArguments,
      });
      this.child = child;
      // Windows: the tree goes in a Job Object at once, before the leader has started anything.
      const contained = containTree(child);
      if (contained.note) this.logs.push(contained.note);
      child.once('error', (err) => {
        this.notFound = (err as NodeJS.ErrnoException).code === 'ENOENT';
        this.exitDescription = this.notFound
          ? `command not found: ${this.launch.command}`
          : `could not start ${this.launch.command}: ${err.message}`;
        this.logs.push(this.exitDescription);
        reject(new ConnectionError(this.notFound ? 'not-found' : 'start-failed', this.exitDescription));
        this.finish();
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        // A reason set before the exit (the broker stopped it for a runaway line) stays the reason.
        this.exitDescription ??= signal ? `exited on signal ${signal}` : `exited with code ${code}`;
        // What the leader left running goes with it (Windows, in a job; elsewhere nothing to do).
        endTree(child);
        this.finish();
      });
      child.stdout!.on('data', (chunk: Buffer) => this.onStdout(chunk));
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => this.logs.appendChunk(chunk, 'stderr'));
      child.stdin!.on('error', () => {
        /* EPIPE when the child died; reported through exit */
      });
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
    if (!stdin || this.closed || stdin.destroyed)
      return Promise.reject(new ConnectionError('connection-lost', 'upstream process is not running'));
    // The per-call path passes a CallCancel (no AbortSignal made); other callers a signal.
    const cancel = opts.signal ? undefined : opts.cancel;
    const signal = opts.signal;
    if (cancel?.aborted) return Promise.reject(cancel.reason);
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('cancelled'));
    const id = this.nextId++;
    let sent = params;
    if (opts.onprogress)
      sent = merged(params, { _meta: merged(params._meta as JsonObject | undefined, { progressToken: id }) });
    return new Promise<JsonObject>((resolve, reject) => {
      const call: DirectCall = {
        resolve,
        reject,
        resetOnProgress: opts.onprogress !== undefined,
        forward: opts.forward === true,
        onprogress: opts.onprogress,
        cancel,
        signal,
        caller: opts.caller,
        trace: opts.trace ?? telemetry()?.currentTrace(),
        timer: new CallTimer(opts.timeoutMs, () => {
          this.endCall(id, call);
          this.cancelUpstream(id, 'timed out');
          reject(new ConnectionError('timeout', 'Request timed out'));
        }),
      };
      if (cancel) {
        call.onAbort = () => {
          this.endCall(id, call);
          this.cancelUpstream(id, String(cancel.reason));
          reject(cancel.reason);
        };
        cancel.onAbort(call.onAbort);
      } else if (signal) {
        call.onAbort = () => {
          this.endCall(id, call);
          this.cancelUpstream(id, String(signal.reason ?? 'cancelled'));
          reject(signal.reason ?? new Error('cancelled'));
        };
        signal.addEventListener('abort', call.onAbort, { once: true });
      }
      this.calls.set(id, call);
      // A full pipe queues the write in the stream; the answer still finds its call by id.
      this.writeBatched(stdin, JSON.stringify({ jsonrpc: '2.0', id, method, params: sent }) + '\n');
    });
  }

  /**
   * Writes a forwarded call's line with the others of the same turn of the event loop: stdin is
   * corked until the loop's check phase, so calls that arrived on several connections together
   * reach the server in one system call (and wake it once). A lone call waits only for the end of
   * the I/O callbacks it arrived with. Lines keep their order with the SDK's own writes (one stream).
   */
  private writeBatched(stdin: NonNullable<ChildProcess['stdin']>, line: string): void {
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      setImmediate(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    stdin.write(line);
  }

  /**
   * One caller per session with a call in flight: a stdio server does not say which call a
   * request it sends belongs to, so these are the candidates.
   */
  callersInFlight(): ServerRequestCaller[] {
    return oneCallerPerSession([...this.calls.values()].map((call) => call.caller));
  }

  /** While telemetry is on: the trace of this caller's session's call in flight. */
  traceOf(caller: ServerRequestCaller): TraceParent | undefined {
    return traceOfSession(this.calls.values(), caller);
  }

  /** Pauses the time limit of these callers' sessions' calls while a person answers them. */
  holdCalls(callers: ServerRequestCaller[]): () => void {
    return holdTimers(this.calls.values(), callers);
  }

  private endCall(id: number, call: DirectCall): void {
    this.calls.delete(id);
    call.timer.clear();
    if (!call.onAbort) return;
    if (call.cancel) call.cancel.offAbort(call.onAbort);
    else call.signal!.removeEventListener('abort', call.onAbort);
  }

  private cancelUpstream(id: number, reason: string): void {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || stdin.destroyed) return;
    stdin.write(
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }) + '\n',
    );
  }

  /**
   * An answer to a call that only forwards its result, of any size: passed on as bytes, never
   * decoded, parsed or serialized again (a small echo result costs a parse and a stringify otherwise).
   */
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
      const code = typeof error.code === 'number' ? error.code : ErrorCodes.InternalError;
      const text = typeof error.message === 'string' ? error.message : 'error without a message';
      call.reject(new ConnectionError('upstream-error', text, code, error.data));
    }
    return true;
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    // Marked as a lost connection: the process died and its exit is not processed yet.
    if (!stdin || this.closed || stdin.destroyed)
      return Promise.reject(new ConnectionError('connection-lost', 'upstream process is not running'));
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
    void this.launch.companion?.close().catch(() => undefined);
    this.chunks = []; // a partial line may be megabytes; the transport object may outlive the child
    this.buffered = 0;
    for (const [id, call] of [...this.calls]) {
      this.endCall(id, call);
      call.reject(new ConnectionError('connection-lost', 'Connection closed'));
    }
    this.onclose?.();
  }
}
