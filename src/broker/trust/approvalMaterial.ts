// What an approval binds: a server definition normalised to everything that decides what runs and
// what it gets, one digest per field (so a refusal can say which field changed), and one hash.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServerDef } from '../../registry/schema';

/**
 * The env file's state as hashed: not set, absent, not a regular file of at most 1 MiB (a FIFO or
 * /dev/zero must not hang or fill the broker before anyone approved it), or the digest of its bytes.
 */
export type EnvFileDigest = null | 'missing' | 'unreadable' | `sha256:${string}`;

const ENV_FILE_LIMIT = 1024 * 1024;

/**
 * The normalised definition: every field that decides what runs, what it gets, who answers what it
 * asks and what is held back of it. Presentation and timing fields (description, enabled,
 * lifecycle, idleStopMs, restart, timeouts) are left out on purpose: they change none of these
 * (docs/trust-and-sandbox.md "What an approval covers" lists every field either way).
 */
export interface ApprovalMaterial {
  trust: ServerDef['trust'];
  transport: ServerDef['transport'];
  command: string | null;
  args: string[];
  cwd: string;
  env: [string, string][];
  envFile: string | null;
  envFileContents: EnvFileDigest;
  url: string | null;
  headers: [string, string][];
  grants: string[];
  allowedTools: string[] | null;
  excludeTools: string[] | null;
  /**
   * The sign-in settings: what the authorization server sees, and the file whose contents the
   * broker sends it as the client secret (never a token; the path only, and only when set, so an
   * approval given before it was bound still holds for a definition without one).
   */
  auth:
    | {
        type: 'oauth';
        clientId: string | null;
        scopes: string[] | null;
        clientMetadataUrl: string | null;
        clientSecretFile?: string;
      }
    | { type: 'vscode'; provider: string; scopes: string[] }
    | null;
  /** Who answers its elicitation and sampling requests; null while both are the default (caller). */
  clientFeatures: { elicitation: string; sampling: string } | null;
  /** What is held back when its tools change; null for the default (quarantine-tools). */
  onToolChange: 'quarantine-server' | null;
  /** How the operator is asked for the secrets it gets: per input, its description and whether it is hidden. */
  inputs: [string, { description: string | null; password: boolean }][] | null;
  /** Guardrails: false when its results are not redacted (null: the default, redacted). */
  redactResults: false | null;
  /** Guardrails: true when tools the scanner flags are held back (null: the default, shown with findings). */
  holdFlaggedTools: true | null;
  /** Resource pins: 'strict' when new resource URIs are held back (null: the default, first use). */
  pinResources: 'strict' | null;
}

export type ApprovalField = keyof ApprovalMaterial;

/** How each field is named to a person reading "its … changed". */
export const FIELD_LABELS: Record<ApprovalField, string> = {
  trust: 'trust tier',
  transport: 'transport',
  command: 'command',
  args: 'arguments',
  cwd: 'working directory',
  env: 'environment variables',
  envFile: 'env file path',
  envFileContents: 'env file contents',
  url: 'url',
  headers: 'HTTP headers',
  grants: 'grants',
  allowedTools: 'allowed tools',
  excludeTools: 'excluded tools',
  auth: 'sign-in settings',
  clientFeatures: 'who answers its elicitation and sampling requests',
  onToolChange: 'tool-change policy (onToolChange)',
  inputs: 'secret prompts (inputs)',
  redactResults: 'redaction of its results (redactResults)',
  holdFlaggedTools: 'holding of flagged tools (holdFlaggedTools)',
  pinResources: 'resource pinning (pins.resources)',
};

/**
 * Fields added after approvals were first recorded: while unset they take no part in the hash, so
 * an approval given before the field existed still holds for a definition that does not use it.
 */
const OPTIONAL_FIELDS: ReadonlySet<ApprovalField> = new Set([
  'auth',
  'clientFeatures',
  'onToolChange',
  'inputs',
  'redactResults',
  'holdFlaggedTools',
  'pinResources',
]);

/** A path as the registry root sees it: relative, '/'-separated, '.' for the root itself. */
export function relativeToRoot(root: string, p: string): string {
  const rel = path.relative(path.resolve(root), path.resolve(root, p));
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

export function isOutsideRoot(relative: string): boolean {
  return relative === '..' || relative.startsWith('../') || path.isAbsolute(relative);
}

const byKey = (record: Record<string, string>): [string, string][] =>
  Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const sorted = (list: readonly string[] | undefined): string[] | null => (list ? [...list].sort() : null);

/** Pure: the definition normalised for hashing, given the env file's digest (see readEnvFileDigest). */
export function normalizeForApproval(def: ServerDef, root: string, envFileContents: EnvFileDigest): ApprovalMaterial {
  return {
    trust: def.trust,
    transport: def.transport,
    command: def.command ?? null,
    args: [...def.args],
    cwd: relativeToRoot(root, def.cwd ?? '.'),
    env: byKey(def.env),
    envFile: def.envFile !== undefined ? relativeToRoot(root, def.envFile) : null,
    envFileContents: def.envFile !== undefined ? envFileContents : null,
    url: def.url ?? null,
    headers: byKey(def.headers),
    grants: [...[...def.grants].sort(), ...grantScope(def)],
    allowedTools: sorted(def.allowedTools),
    excludeTools: sorted(def.excludeTools),
    auth:
      def.auth?.type === 'vscode'
        ? { type: 'vscode', provider: def.auth.provider, scopes: [...def.auth.scopes].sort() }
        : def.auth
          ? {
              type: def.auth.type,
              clientId: def.auth.clientId ?? null,
              scopes: sorted(def.auth.scopes),
              clientMetadataUrl: def.auth.clientMetadataUrl ?? null,
              ...(def.auth.clientSecretFile !== undefined ? { clientSecretFile: def.auth.clientSecretFile } : {}),
            }
          : null,
    clientFeatures:
      def.clientFeatures.elicitation === 'caller' && def.clientFeatures.sampling === 'caller'
        ? null
        : { elicitation: def.clientFeatures.elicitation, sampling: def.clientFeatures.sampling },
    onToolChange: def.onToolChange === 'quarantine-server' ? 'quarantine-server' : null,
    inputs:
      def.inputs && Object.keys(def.inputs).length
        ? Object.entries(def.inputs)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([name, input]) => [name, { description: input.description ?? null, password: input.password }])
        : null,
    redactResults: def.redactResults === false ? false : null,
    holdFlaggedTools: def.holdFlaggedTools === true ? true : null,
    pinResources: def.pins?.resources === 'strict' ? 'strict' : null,
  };
}

/**
 * What the filesystem and network grants cover, as `filesystem.read=<path>` entries after the grant
 * names: a definition without these keys hashes exactly as before they existed (no re-approval).
 */
function grantScope(def: ServerDef): string[] {
  const out: string[] = [];
  for (const p of [...(def.filesystem?.read ?? [])].sort()) out.push(`filesystem.read=${p}`);
  for (const p of [...(def.filesystem?.write ?? [])].sort()) out.push(`filesystem.write=${p}`);
  if (def.filesystem && out.length === 0) out.push('filesystem=(no paths)');
  for (const h of [...(def.network?.allow ?? [])].sort()) out.push(`network.allow=${h.toLowerCase()}`);
  return out;
}

/** Reads the env file the way a start would (relative to the root) and digests its bytes. */
export function readEnvFileDigest(root: string, envFile: string | undefined): EnvFileDigest {
  if (envFile === undefined) return null;
  const file = path.resolve(root, envFile);
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > ENV_FILE_LIMIT) return 'unreadable';
    return `sha256:${sha256(fs.readFileSync(file))}`;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
}

function sha256(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/**
 * One digest per field: stored with an approval so "changed" can name the fields, never values.
 * With the per-user `key` they are HMACs: the hash is shown to read-scoped agents, and a plain
 * digest would let one test guesses of a low-entropy env value or env file offline.
 */
export function fieldDigests(material: ApprovalMaterial, key = ''): Record<ApprovalField, string> {
  const out = {} as Record<ApprovalField, string>;
  for (const field of Object.keys(FIELD_LABELS) as ApprovalField[]) {
    if (OPTIONAL_FIELDS.has(field) && material[field] === null) {
      out[field] = '';
      continue;
    }
    const text = JSON.stringify(material[field]);
    out[field] = key ? crypto.createHmac('sha256', key).update(text).digest('hex') : sha256(text);
  }
  return out;
}

/** The approval hash: over the per-field digests in a fixed order. */
export function hashOfDigests(digests: Record<ApprovalField, string>): string {
  const fields = (Object.keys(FIELD_LABELS) as ApprovalField[]).filter((f) => digests[f] !== '');
  return sha256(fields.map((f) => `${f}=${digests[f]}`).join('\n'));
}

export function hashMaterial(material: ApprovalMaterial, key = ''): string {
  return hashOfDigests(fieldDigests(material, key));
}

/** Fields whose digests differ; every field when the old digests are unknown. */
export function changedFields(
  before: Partial<Record<ApprovalField, string>> | undefined,
  after: Record<ApprovalField, string>,
): ApprovalField[] {
  return (Object.keys(FIELD_LABELS) as ApprovalField[]).filter(
    (f) => !before || (before[f] ?? (OPTIONAL_FIELDS.has(f) ? '' : undefined)) !== after[f],
  );
}

/** "its command and env file contents changed", or with the env file alone "the env file changed". */
export function describeChange(fields: readonly ApprovalField[]): string {
  if (fields.length === 1 && fields[0] === 'envFileContents') return 'the env file changed';
  const labels = fields.map((f) => FIELD_LABELS[f]);
  const list =
    labels.length <= 1 ? labels.join('') : `${labels.slice(0, -1).join(', ')} and ${labels[labels.length - 1]}`;
  return `its ${list} changed`;
}
