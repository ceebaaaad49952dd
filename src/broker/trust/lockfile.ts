// `mcp-servers.lock`: the registry's tool pins in a file a team commits. One entry per server: a
// hash of its definition (without env or header values), the hash of its tool set and one digest per
// tool, and the same for its prompts and its resource templates (by uriTemplate). Resources are not
// locked: their set changes in ordinary use, and their metadata is pinned per user (resourcePins.ts).
// It pins; it never approves: the broker only holds back what differs from it. An entry written
// before prompts (or templates) were locked has no such fields: it then binds the rest only, and the
// operator's pin takes the first list seen.
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
  /** promptSetHash of `promptDigests` (absent in an entry from before prompts were locked). */
  prompts?: string;
  promptDigests?: ToolDigests;
  /** toolSetHash of `templateDigests`, per uriTemplate (absent in an entry from before templates were locked). */
  resourceTemplates?: string;
  templateDigests?: ToolDigests;
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

function sortedDigests(digests: ToolDigests): ToolDigests {
  const sorted: ToolDigests = {};
  for (const name of Object.keys(digests).sort()) sorted[name] = digests[name];
  return sorted;
}

export function lockEntry(
  def: ServerDef,
  root: string,
  toolDigests: ToolDigests,
  promptDigests?: ToolDigests,
  templateDigests?: ToolDigests,
): LockEntry {
  const sorted = sortedDigests(toolDigests);
  const prompts = promptDigests && sortedDigests(promptDigests);
  const templates = templateDigests && sortedDigests(templateDigests);
  return {
    definition: lockDefinitionHash(def, root),
    tools: toolSetHash(sorted),
    toolDigests: sorted,
    ...(prompts ? { prompts: toolSetHash(prompts), promptDigests: prompts } : {}),
    ...(templates ? { resourceTemplates: toolSetHash(templates), templateDigests: templates } : {}),
  };
}

const isDigests = (value: unknown): value is ToolDigests =>
  !!value &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  Object.values(value).every((d) => typeof d === 'string');

function isEntry(value: unknown): value is LockEntry {
  const e = value as LockEntry | undefined;
  if (!e || typeof e !== 'object' || typeof e.definition !== 'string' || typeof e.tools !== 'string') return false;
  if (!isDigests(e.toolDigests)) return false;
  const templates =
    (e.resourceTemplates === undefined && e.templateDigests === undefined) ||
    (typeof e.resourceTemplates === 'string' && isDigests(e.templateDigests));
  if (!templates) return false;
  if (e.prompts === undefined && e.promptDigests === undefined) return true;
  return typeof e.prompts === 'string' && isDigests(e.promptDigests);
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
    comment:
      'Tool and prompt pins of this registry, written by `switchboard lock`; check them with `switchboard verify`.',
    servers: ordered,
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function writeLockfile(root: string, servers: LockedServers): string {
  const file = lockfilePath(root);
  writeFileAtomicSync(file, lockfileText(servers));
  return file;
}
