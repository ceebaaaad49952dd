// `mcp-servers.lock`: the registry's tool pins in a file a team commits. One entry per server: a
// hash of its definition (without env or header values), the hash of its tool set and one digest per
// tool. It pins; it never approves: the broker only holds back tools that differ from it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServerDef } from '../../registry/schema';
import { hashMaterial, normalizeForApproval } from './approvalMaterial';
import { toolSetHash, type ToolDigests } from './toolDigest';
import { writeFileAtomicSync } from '../../registry/atomicWrite';

export const LOCKFILE_NAME = 'mcp-servers.lock';
const LOCKFILE_VERSION = 1;

export interface LockEntry {
  /** Over what runs (command, args, cwd, url, trust, grants, tool filters) and env/header names, never values. */
  definition: string;
  /** toolSetHash of `toolDigests`. */
  tools: string;
  toolDigests: ToolDigests;
}

export type LockedServers = Record<string, LockEntry>;

export type LockfileRead =
  { state: 'absent' } | { state: 'invalid'; error: string } | { state: 'read'; servers: LockedServers };

export function lockfilePath(root: string): string {
  return path.join(root, LOCKFILE_NAME);
}

/**
 * The definition as a team shares it: env and header values and the env file's contents are left
 * out (they are per machine, and a digest of a short secret could be guessed offline).
 */
export function lockDefinitionHash(def: ServerDef, root: string): string {
  const material = normalizeForApproval(def, root, null);
  material.env = material.env.map(([name]) => [name, '']);
  material.headers = material.headers.map(([name]) => [name, '']);
  return `sha256:${hashMaterial(material)}`;
}

export function lockEntry(def: ServerDef, root: string, toolDigests: ToolDigests): LockEntry {
  const sorted: ToolDigests = {};
  for (const name of Object.keys(toolDigests).sort()) sorted[name] = toolDigests[name];
  return { definition: lockDefinitionHash(def, root), tools: toolSetHash(sorted), toolDigests: sorted };
}

function isEntry(value: unknown): value is LockEntry {
  const e = value as LockEntry | undefined;
  if (!e || typeof e !== 'object' || typeof e.definition !== 'string' || typeof e.tools !== 'string') return false;
  const digests = e.toolDigests as unknown;
  if (!digests || typeof digests !== 'object' || Array.isArray(digests)) return false;
  return Object.values(digests).every((d) => typeof d === 'string');
}

export function parseLockfile(text: string): LockfileRead {
  let parsed: { lockfileVersion?: unknown; servers?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (err) {
    return { state: 'invalid', error: `${LOCKFILE_NAME} is not JSON: ${(err as Error).message}` };
  }
  if (parsed?.lockfileVersion !== LOCKFILE_VERSION)
    return { state: 'invalid', error: `${LOCKFILE_NAME} has no lockfileVersion ${LOCKFILE_VERSION}` };
  const servers = parsed.servers;
  if (!servers || typeof servers !== 'object' || Array.isArray(servers))
    return { state: 'invalid', error: `${LOCKFILE_NAME} has no 'servers' object` };
  for (const [name, entry] of Object.entries(servers)) {
    if (!isEntry(entry)) return { state: 'invalid', error: `${LOCKFILE_NAME}: the entry of '${name}' is malformed` };
  }
  return { state: 'read', servers: servers as LockedServers };
}

export function readLockfile(root: string): LockfileRead {
  let text: string;
  try {
    text = fs.readFileSync(lockfilePath(root), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
    return { state: 'invalid', error: `${LOCKFILE_NAME} cannot be read: ${(err as Error).message}` };
  }
  return parseLockfile(text);
}

/** The file's text: servers and tools in name order, so the same pins always give the same bytes. */
export function lockfileText(servers: LockedServers): string {
  const ordered: LockedServers = {};
  for (const name of Object.keys(servers).sort()) ordered[name] = servers[name];
  const doc = {
    lockfileVersion: LOCKFILE_VERSION,
    comment: 'Tool pins of this registry, written by `switchboard lock`; check them with `switchboard verify`.',
    servers: ordered,
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function writeLockfile(root: string, servers: LockedServers): string {
  const file = lockfilePath(root);
  writeFileAtomicSync(file, lockfileText(servers));
  return file;
}
