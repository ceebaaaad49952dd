// Finding or starting the broker of a workspace root: the one launch path of the editor and of
// `switchboard connect`. A started broker runs detached (it is shared, and outlives its starter),
// with the broker's Node flags and environment, its output in broker.log; it is up once its
// discovery record answers. A failed launch says why: the spawn error, or the log's last lines.
import { EDITOR_TELEMETRY_ENV } from '../telemetry/settings';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { brokerLogFile, openBrokerLog, readTail } from './brokerLog';
import { liveRecord } from './discovery';
import { BROKER_NODE_FLAGS, brokerEnvironment, isProcessAlive } from './runtime';
import { runtimePaths } from '../shared/userState';
import type { BrokerRecord } from './runtime';
import type { RuntimePaths } from '../shared/userState';

export interface LauncherLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface LaunchOptions {
  /** Absolute registry root. */
  root: string;
  /** The broker bundle to run (`dist/broker.js`; the CLI passes its own script). */
  script: string;
  /** Runs the script as Node: default `process.execPath`; the extension host's may be Electron. */
  execPath?: string;
  env?: NodeJS.ProcessEnv;
  /** Restricted Mode: the broker reads the registry but spawns nothing from it. */
  untrusted?: boolean;
  /** The broker exits after this many seconds in which nobody used it. */
  idleExitSeconds: number;
  startTimeoutMs?: number;
  log?: LauncherLog;
  /** Called once the broker's output file is open, with where this launch's output starts. */
  onOutput?(file: string, offset: number): void;
}

/** What a launch runs; pure, so the flags and the environment are unit tested. */
export interface LaunchPlan {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export const DEFAULT_START_TIMEOUT_MS = 30_000;

const quiet: LauncherLog = { info: () => undefined, warn: () => undefined };

export function launchPlan(opts: LaunchOptions): LaunchPlan {
  const serve = ['serve', '--root', opts.root, '--port', '0', '--json', '--idle-exit', String(opts.idleExitSeconds)];
  const args = [...BROKER_NODE_FLAGS, opts.script, ...serve];
  if (opts.untrusted) args.push('--untrusted');
  // ELECTRON_RUN_AS_NODE makes an editor's Electron binary behave as plain Node; Node ignores it.
  const env = { ...brokerEnvironment(opts.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' };
  return { command: opts.execPath ?? process.execPath, args, cwd: opts.root, env };
}

/** The running broker for the root, or a newly started one; `started` says which. */
export async function findOrLaunchBroker(opts: LaunchOptions): Promise<{ record: BrokerRecord; started: boolean }> {
  const record = await liveRecord(runtimePaths(opts.root, opts.env ?? process.env), opts.root);
  if (record) return { record, started: false };
  return { record: await launchBroker(opts), started: true };
}

/** Starts the broker detached and resolves with its discovery record once it answers. */
export async function launchBroker(opts: LaunchOptions): Promise<BrokerRecord> {
  const log = opts.log ?? quiet;
  if (!fs.existsSync(opts.script))
    throw new Error(`the broker bundle is missing (${opts.script}); run 'npm run build'`);
  const paths = runtimePaths(opts.root, opts.env ?? process.env);
  const plan = launchPlan(opts);
  const logFile = brokerLogFile(paths);
  const { fd, startOffset } = openBrokerLog(logFile);
  const restricted = opts.untrusted ? ' in Restricted Mode (it starts no server)' : '';
  const telemetry = plan.env[EDITOR_TELEMETRY_ENV] === '1' ? ', with telemetry (the editor setting)' : '';
  log.info(`Starting the broker for ${opts.root}${restricted}${telemetry}.`);
  // Output in a file rather than a pipe: a pipe would die with this process, the broker must not.
  const child = spawn(plan.command, plan.args, {
    cwd: plan.cwd,
    detached: true,
    stdio: ['ignore', fd, fd],
    env: plan.env,
    windowsHide: true,
  });
  fs.closeSync(fd);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  child.on('error', (err) => {
    spawnError = err;
  });
  child.unref();
  opts.onOutput?.(logFile, startOffset);

  const timeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`cannot run ${plan.command}: ${spawnError.message}`);
    const record = await liveRecord(paths, opts.root);
    if (record) {
      log.info(`Broker ready: pid ${record.pid}, ${record.url}.`);
      return record;
    }
    // Exit 0 means another starter won the race and the broker it started is coming up.
    if (exited && exited.code !== 0) {
      const tail = readTail(logFile, startOffset);
      const how = exited.signal ? `on ${exited.signal}` : `with code ${exited.code}`;
      throw new Error(`the broker exited ${how} before it was ready${tail ? `: ${tail}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the broker did not become ready within ${Math.round(timeoutMs / 1000)} s (log: ${logFile})`);
}

/** Ends a broker process: SIGTERM, then SIGKILL after 10 s; its discovery record goes with it. */
export async function stopBroker(pid: number, paths: RuntimePaths, log: LauncherLog = quiet): Promise<void> {
  if (!isProcessAlive(pid)) return;
  log.info(`Stopping the broker (pid ${pid}).`);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && isProcessAlive(pid)) await new Promise((r) => setTimeout(r, 100));
  if (isProcessAlive(pid)) {
    log.warn(`The broker (pid ${pid}) did not stop within 10 s; killing it.`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  try {
    fs.unlinkSync(paths.recordFile);
  } catch {
    /* the broker removed it */
  }
}
