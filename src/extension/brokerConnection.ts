// One workspace folder's broker, seen from the editor: find the running broker for the registry
// root or start the bundled one, hold an operator session to it, follow its state resource, and
// come back (with backoff) when it dies. Only the lifecycle lives here: finding, starting and
// stopping the process is the launcher's. No `vscode` import: the lifecycle is plain Node, so it is
// tested by ordinary mocha against the real broker, and the extension only wraps it in events.
import { EventEmitter } from 'node:events';
import * as path from 'node:path';
import { brokerLogFile, LogTail } from '../broker/daemon/brokerLog';
import type { BrokerState, ControlOperation, ParamsOf, ResultOf } from '../broker/control/controlApi';
import { liveRecord } from '../broker/daemon/discovery';
import { STATE_URI } from '../broker/control/facade';
import {
  findOrLaunchBroker,
  launchBroker,
  stopBroker,
  type LaunchOptions,
  type LauncherLog,
} from '../broker/daemon/brokerLauncher';
import type { JsonObject } from '../broker/shared/mcpTypes';
import type { ServerRequest } from '../broker/connection/serverRequests';
import type { Root } from '../broker/supervision/editorLink';
import { OperatorClient } from '../broker/daemon/operatorClient';
import { isProcessAlive, type BrokerRecord } from '../broker/daemon/runtime';
import { runtimePaths, type RuntimePaths } from '../broker/shared/userState';
import { EDITOR_TELEMETRY_ENV } from '../broker/telemetry/settings';

/**
 * - `idle`: nothing attempted yet (auto-start off, or no registry in the folder).
 * - `starting`: looking for the broker, starting it, or connecting.
 * - `connected`: a session is open and `state` is current.
 * - `reconnecting`: the broker went away; the next attempt is scheduled (`retryAt`).
 * - `stopped`: the operator stopped it; nothing happens until `start()`.
 * - `failed`: the first start failed; `lastError` says why (no automatic retry).
 */
export type Phase = 'idle' | 'starting' | 'connected' | 'reconnecting' | 'stopped' | 'failed';

export interface Logger extends LauncherLog {
  error(message: string): void;
  /** Lines the broker process itself wrote (its stderr/stdout), as they arrive. */
  broker?(line: string): void;
}

/** How often the state is re-read while telemetry is on, for the servers' live numbers. */
const LIVE_REFRESH_MS = 15_000;

export interface ConnectionOptions {
  /** Absolute registry root. */
  root: string;
  /** The bundled CLI (`dist/broker.js`). */
  brokerScript: string;
  /** Runs the script as Node: the extension host's `process.execPath` (Electron, or Node in a server). */
  execPath?: string;
  env?: NodeJS.ProcessEnv;
  /** Restricted Mode: the broker we start reads the registry but spawns nothing from it. */
  untrusted: boolean;
  idleExitSeconds?: number;
  log: Logger;
  /** How often the broker's pid is checked between events (a crash closes no HTTP stream we hold). */
  livenessMs?: number;
  /** Backoff of reconnect attempts: first delay, doubled each time up to the maximum. */
  backoffMs?: number;
  maxBackoffMs?: number;
  startTimeoutMs?: number;
  /** The editor's part: it answers for callers that cannot, and gives its folders as roots. */
  editor?: EditorRole;
}

/** What the window does as the broker's fallback client (editorClient.ts in the extension). */
export interface EditorRole {
  /** Answers an elicitation or sampling request an upstream sent (its `_meta` names the server). */
  answer(request: ServerRequest): Promise<JsonObject>;
  /** The window's workspace folders, as roots. */
  roots(): Root[];
}

interface ConnectionEvents {
  /** Phase, record or error changed. */
  change: [];
  /** A new state snapshot was read. */
  state: [BrokerState];
}

export class BrokerConnection extends EventEmitter<ConnectionEvents> {
  readonly root: string;
  readonly paths: RuntimePaths;
  phase: Phase = 'idle';
  state?: BrokerState;
  record?: BrokerRecord;
  lastError?: string;
  /** When the next reconnect attempt happens (epoch ms), while `reconnecting`. */
  retryAt?: number;
  /** Whether this window started the broker process (rather than reusing a running one). */
  startedHere = false;

  private client?: OperatorClient;
  private untrusted: boolean;
  private attempt = 0;
  private retryTimer?: NodeJS.Timeout;
  private liveness?: NodeJS.Timeout;
  private liveRefresh?: NodeJS.Timeout;
  private connecting?: Promise<void>;
  private refreshing = false;
  private refreshAgain = false;
  private disposed = false;
  private logTail?: LogTail;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly opts: ConnectionOptions) {
    super();
    this.root = path.resolve(opts.root);
    this.paths = runtimePaths(this.root, opts.env ?? process.env);
    this.untrusted = opts.untrusted;
  }

  get isUntrusted(): boolean {
    return this.untrusted;
  }

  get logFile(): string {
    return brokerLogFile(this.paths);
  }

  /** Connects, starting the broker if none serves the root. Resolves once connected; rejects with a readable reason. */
  start(): Promise<void> {
    if (this.disposed) return Promise.reject(new Error('this window is closing'));
    if (this.phase === 'connected' && this.client) return Promise.resolve();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.phase === 'stopped' || this.phase === 'failed' || this.phase === 'idle') this.attempt = 0;
    return this.connect();
  }

  /** Resolves when connected (or after `timeoutMs`, returning whether it is). */
  async whenConnected(timeoutMs: number): Promise<boolean> {
    if (this.phase === 'connected') return true;
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(this.phase === 'connected');
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }

  private connect(): Promise<void> {
    if (!this.connecting) {
      this.connecting = this.doConnect().finally(() => {
        this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  private async doConnect(): Promise<void> {
    this.setPhase('starting');
    try {
      const found = await findOrLaunchBroker(this.launchOptions());
      let record = found.record;
      this.startedHere = found.started;
      if (!found.started)
        this.opts.log.info(`Using the running broker for ${this.root} (pid ${record.pid}, ${record.url}).`);
      await this.open(record);
      let state = await this.readState();
      if (state.broker.untrusted && !this.untrusted) {
        // A broker started while the workspace was not trusted blocks every server: replace it.
        this.opts.log.info(
          'The running broker was started in Restricted Mode; restarting it now that the workspace is trusted.',
        );
        await this.closeClient();
        await stopBroker(record.pid, this.paths, this.opts.log);
        record = await launchBroker(this.launchOptions());
        this.startedHere = true;
        await this.open(record);
        state = await this.readState();
      }
      this.state = state;
      this.attempt = 0;
      this.lastError = undefined;
      this.retryAt = undefined;
      this.setPhase('connected');
      this.emit('state', state);
      this.watchLiveness();
    } catch (err) {
      await this.closeClient();
      const message = (err as Error).message;
      this.lastError = message;
      if (this.disposed) return;
      if (this.phase === 'stopped') throw err;
      // Never connected yet in this round: report it and let the operator decide.
      if (this.state === undefined) {
        this.opts.log.error(`Could not start the broker for ${this.root}: ${message}`);
        this.setPhase('failed');
        throw err;
      }
      this.scheduleReconnect(message);
      throw err;
    }
  }

  private async open(record: BrokerRecord): Promise<void> {
    this.record = record;
    const editor = this.opts.editor;
    const client = await OperatorClient.connect(record, {
      resourceUpdated: (uri) => {
        if (uri === STATE_URI) void this.refresh();
      },
      lost: (reason) => this.onLost(`the connection to the broker closed (${reason})`),
      answerAsEditor: editor && ((request) => editor.answer(request)),
    });
    this.client = client;
    await client.request('resources/subscribe', { uri: STATE_URI });
    if (editor) {
      // A broker of an older version has no such operation: the window still connects.
      await client.call('set_editor_roots', { roots: editor.roots() }).catch((err: Error) => {
        this.opts.log.warn(`The broker did not take the workspace folders as roots: ${err.message}`);
      });
    }
  }

  /**
   * The telemetry setting changed: a broker started from now on gets it, and the running one applies
   * it at once (set_editor_telemetry). Throws when the running broker cannot (an older version).
   */
  async setTelemetry(enabled: boolean): Promise<ResultOf<'set_editor_telemetry'> | undefined> {
    const { [EDITOR_TELEMETRY_ENV]: _was, ...env } = this.opts.env ?? process.env;
    this.opts.env = enabled ? { ...env, [EDITOR_TELEMETRY_ENV]: '1' } : env;
    if (!this.client || this.phase !== 'connected') return undefined;
    const answer = await this.client.call('set_editor_telemetry', { enabled });
    // The state says whether telemetry is on (the live numbers are polled while it is).
    void this.refresh();
    return answer;
  }

  /** Where telemetry.yaml's export endpoint stands; undefined when not connected or the broker is too old to say. */
  async telemetryExport(): Promise<ResultOf<'telemetry_export'> | undefined> {
    if (!this.client || this.phase !== 'connected') return undefined;
    return this.client.call('telemetry_export', {}).catch(() => undefined);
  }

  /** The person allowed telemetry.yaml's endpoint (as shown): the broker exports there from now on. */
  async approveTelemetryExport(endpoint: string): Promise<ResultOf<'approve_telemetry_export'>> {
    if (!this.client || this.phase !== 'connected') throw new Error('the broker is not connected');
    return this.client.call('approve_telemetry_export', { endpoint });
  }

  /** The window's folders changed: the broker tells its upstreams (their roots include them). */
  async editorRootsChanged(): Promise<void> {
    const editor = this.opts.editor;
    if (!editor || !this.client || this.phase !== 'connected') return;
    await this.client.call('set_editor_roots', { roots: editor.roots() });
  }

  private async readState(): Promise<BrokerState> {
    if (!this.client) throw new Error('not connected to the broker');
    const res = (await this.client.request('resources/read', { uri: STATE_URI })) as { contents?: { text?: string }[] };
    const text = res.contents?.[0]?.text;
    if (!text) throw new Error('the broker returned an empty state');
    return JSON.parse(text) as BrokerState;
  }

  /** Re-reads the state resource; coalesces bursts of updates into one read at a time. */
  async refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        if (!this.client || this.phase !== 'connected') return;
        try {
          this.state = await this.readState();
          this.emit('state', this.state);
        } catch (err) {
          if (!this.checkAlive()) return;
          this.opts.log.warn(`Could not read the broker state: ${(err as Error).message}`);
        }
      } while (this.refreshAgain);
    } finally {
      this.refreshing = false;
    }
  }

  /** Runs a control operation (`enable_server`, ...); a tool error throws with the broker's message. */
  async call<K extends ControlOperation>(operation: K, params: ParamsOf<K>, timeoutMs?: number): Promise<ResultOf<K>> {
    const client = await this.ready();
    try {
      return await client.call(operation, params, timeoutMs);
    } catch (err) {
      this.checkAlive();
      throw err;
    }
  }

  async request(method: string, params: JsonObject, timeoutMs?: number): Promise<JsonObject> {
    const client = await this.ready();
    return client.request(method, params, timeoutMs);
  }

  private async ready(): Promise<OperatorClient> {
    if (this.phase !== 'connected' || !this.client) {
      if (this.phase === 'stopped') throw new Error('The broker is stopped. Run "Switchboard: Start Broker" first.');
      await this.start();
    }
    if (!this.client) throw new Error('not connected to the broker');
    return this.client;
  }

  /** Stops the broker process (for every window and agent using it) and stays stopped. */
  async stop(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.stopLiveness();
    const pid = this.record?.pid ?? (await liveRecord(this.paths, this.root))?.pid;
    this.setPhase('stopped');
    await this.closeClient();
    if (pid !== undefined) await stopBroker(pid, this.paths, this.opts.log);
    this.state = undefined;
    this.emit('change');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Workspace Trust changed. Granting it replaces a Restricted Mode broker with a normal one. */
  async setUntrusted(untrusted: boolean): Promise<void> {
    if (this.untrusted === untrusted) return;
    this.untrusted = untrusted;
    if (!untrusted && this.phase === 'connected' && this.state?.broker.untrusted) {
      await this.closeClient();
      this.stopLiveness();
      const pid = this.record?.pid;
      if (pid !== undefined) await stopBroker(pid, this.paths, this.opts.log);
      this.state = undefined;
      await this.start();
    }
  }

  /** Closes this window's session; the broker keeps running for others and exits when idle. */
  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.retryTimer);
    this.stopLiveness();
    this.logTail?.close();
    await this.closeClient();
    this.removeAllListeners();
  }

  private onLost(reason: string): void {
    if (this.disposed || this.phase === 'stopped' || this.phase === 'reconnecting') return;
    if (this.phase !== 'connected') return; // a failed connect reports itself
    this.opts.log.warn(`Lost the broker: ${reason}.`);
    this.stopLiveness();
    void this.closeClient();
    this.scheduleReconnect(reason);
  }

  /** True while the broker process lives; on a dead one, starts the reconnect cycle. */
  private checkAlive(): boolean {
    const pid = this.record?.pid;
    if (pid !== undefined && !isProcessAlive(pid)) {
      this.onLost(`broker process ${pid} exited`);
      return false;
    }
    return true;
  }

  private watchLiveness(): void {
    this.stopLiveness();
    this.liveness = setInterval(() => this.checkAlive(), this.opts.livenessMs ?? 2000);
    this.liveness.unref();
    // Calls change a server's live numbers without a state event: re-read them now and then.
    this.liveRefresh = setInterval(() => {
      if (this.state?.broker.telemetry) void this.refresh();
    }, LIVE_REFRESH_MS);
    this.liveRefresh.unref();
  }

  private stopLiveness(): void {
    if (this.liveness) clearInterval(this.liveness);
    if (this.liveRefresh) clearInterval(this.liveRefresh);
    this.liveness = undefined;
    this.liveRefresh = undefined;
  }

  private scheduleReconnect(reason: string): void {
    if (this.disposed) return;
    const base = this.opts.backoffMs ?? 500;
    const max = this.opts.maxBackoffMs ?? 30_000;
    const delay = Math.min(max, base * 2 ** this.attempt);
    this.attempt++;
    this.lastError = reason;
    this.retryAt = Date.now() + delay;
    this.setPhase('reconnecting');
    this.opts.log.info(`Reconnecting to the broker in ${formatDelay(delay)} (attempt ${this.attempt}).`);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().catch(() => undefined);
    }, delay);
  }

  private launchOptions(): LaunchOptions {
    return {
      root: this.root,
      script: this.opts.brokerScript,
      execPath: this.opts.execPath,
      env: this.opts.env,
      untrusted: this.untrusted,
      idleExitSeconds: this.opts.idleExitSeconds ?? 300,
      startTimeoutMs: this.opts.startTimeoutMs,
      log: this.opts.log,
      onOutput: (file, offset) => this.followLog(file, offset),
    };
  }

  /** Hands the broker's output lines, from this launch on, to the log's `broker` sink. */
  private followLog(file: string, offset: number): void {
    const sink = this.opts.log.broker;
    if (!sink) return;
    this.logTail?.close();
    this.logTail = new LogTail(file, offset, sink);
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.close().catch(() => undefined);
  }

  private setPhase(phase: Phase): void {
    this.phase = phase;
    if (phase !== 'reconnecting') this.retryAt = undefined;
    this.emit('change');
    if (phase === 'connected' || phase === 'failed' || phase === 'stopped') for (const w of [...this.waiters]) w();
  }
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
