// Per-user runtime state: where tokens, discovery records, approvals and audit logs live.
// Nothing here is ever written inside the workspace.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { rootKey } from '../../registry/rootPaths';
import { perUserHome } from '../platform/userFiles';
import { writePrivateFile } from '../trust/privateFiles';

export { ensurePrivateDir, writePrivateFile } from '../trust/privateFiles';

/** `SWITCHBOARD_HOME` overrides the per-user directory (tests point it at a temp dir). */
export function switchboardHome(env: NodeJS.ProcessEnv = process.env): string {
  return perUserHome(process.platform, env, os.homedir());
}

/** A stable short id for a workspace root, so one root maps to one broker and one set of tokens. */
export function rootId(root: string): string {
  const canonical = fs.existsSync(root) ? fs.realpathSync(root) : path.resolve(root);
  // Where case is ignored, `C:\Work` and `c:\work` are one root and must find one broker.
  return crypto.createHash('sha256').update(rootKey(canonical, process.platform)).digest('hex').slice(0, 16);
}

export interface RuntimePaths {
  home: string;
  /** Discovery record of the broker serving this root. */
  recordFile: string;
  /** Lock used so that two starters for one root agree on a single broker. */
  lockFile: string;
  workspaceDir: string;
  tokensDir: string;
  operatorTokenFile: string;
  auditFile: string;
  approvalsFile: string;
  /** The persisted catalog (catalogCache.ts) and the key its definition hashes are made with. */
  catalogFile: string;
  catalogKeyFile: string;
}

export function runtimePaths(root: string, env: NodeJS.ProcessEnv = process.env): RuntimePaths {
  const home = switchboardHome(env);
  const id = rootId(root);
  const workspaceDir = path.join(home, 'workspaces', id);
  const tokensDir = path.join(workspaceDir, 'tokens');
  return {
    home,
    recordFile: path.join(home, 'brokers', `${id}.json`),
    lockFile: path.join(home, 'brokers', `${id}.lock`),
    workspaceDir,
    tokensDir,
    operatorTokenFile: path.join(tokensDir, 'operator.token'),
    auditFile: path.join(workspaceDir, 'audit.jsonl'),
    approvalsFile: path.join(home, 'approvals.json'),
    catalogFile: path.join(workspaceDir, 'catalog.json'),
    catalogKeyFile: path.join(workspaceDir, 'catalog.key'),
  };
}

export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Reads a token file, creating it (mode 0600) with a fresh token when missing. */
export function readOrCreateToken(file: string): string {
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing) return existing;
  } catch {
    /* created below */
  }
  const token = newToken();
  writePrivateFile(file, token + '\n');
  return token;
}

export interface BrokerRecord {
  pid: number;
  port: number;
  url: string;
  root: string;
  operatorTokenFile: string;
  startedAt: string;
  version: string;
}

export function readRecord(file: string): BrokerRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as BrokerRecord;
  } catch {
    return undefined;
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Node flags of every broker launch (the extension's, the CLI's background start, `npm start`,
 * the benchmarks). A busy broker otherwise grows V8's young generation to 2 × 8 MB and keeps it:
 * 1 MB semi-spaces make it ~5 MB smaller just after start and ~10 MB after a burst of calls, at
 * a price: ~10% more broker CPU per call under 8 concurrent sessions (interleaved A/B after 3,000
 * warm-up calls: 454-465 vs 404-410 µs), from objects promoted to the old generation sooner.
 * --expose-gc lets the IdleCollector return a burst's garbage once the broker goes quiet.
 */
export const BROKER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--expose-gc'];

/**
 * Environment the launches add (a value the user set wins). glibc gives each thread that calls
 * malloc an arena of its own and keeps what was freed in it: V8's compiler threads left ~9 MB
 * behind after a burst of calls. One arena costs nothing measurable here (a handful of threads,
 * the main one does nearly all the work). Upstream servers do not inherit it (environment.ts).
 */
export const BROKER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '1' };

/** `env` with BROKER_ENV added where it does not already say otherwise. */
export function brokerEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...BROKER_ENV, ...env };
}
