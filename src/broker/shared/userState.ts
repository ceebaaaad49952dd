// Where a user's Switchboard state lives (SWITCHBOARD_HOME: tokens, approvals, pins, catalog cache,
// audit) and the per-workspace paths inside it. Nothing here is ever written inside the workspace.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { rootKey } from '../../registry/rootPaths';
import { perUserHome } from './platform/userFiles';
import { writePrivateFile } from './privateFiles';

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
