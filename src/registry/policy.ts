// The administrator's policy: one machine-wide YAML file outside every workspace
// (/etc/switchboard/policy.yaml; /Library/Application Support/Switchboard/policy.yaml on macOS;
// %ProgramData%\Switchboard\policy.yaml on Windows; SWITCHBOARD_POLICY names another, for tests).
// It says which registries may be asked, which servers (names, commands, packages, remote hosts) may
// run, whether a workspace's `trusted` is honoured, and the most grants any server may have. The
// broker asks it on every start, reload, approval, import and probe; what it refuses names the
// file, the line and the rule, so the person blocked knows whom to ask and what to ask for.
//
// A policy file with errors refuses everything until it is fixed: an administrator's typo must not
// quietly allow what the file meant to stop. No file: no policy.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { packageRunnerOf, programName } from './packageRunner';
import { positionOf } from './positions';
import type { ServerDef } from './schema';

export const POLICY_ENV = 'SWITCHBOARD_POLICY';

const GRANTS = ['network', 'secrets', 'filesystem'] as const;
const Lists = z.strictObject({
  allow: z.array(z.string().min(1)).optional(),
  deny: z.array(z.string().min(1)).optional(),
});
const PolicySchema = z.strictObject({
  registries: Lists.optional(),
  servers: Lists.optional(),
  commands: Lists.optional(),
  packages: Lists.optional(),
  remoteHosts: Lists.optional(),
  honourWorkspaceTrusted: z.boolean().optional(),
  maxGrants: z.array(z.enum(GRANTS)).optional(),
});
type PolicyData = z.output<typeof PolicySchema>;
type ListKey = 'registries' | 'servers' | 'commands' | 'packages' | 'remoteHosts';

/** The policy file of this machine: SWITCHBOARD_POLICY if set (empty: none), else the platform's place. */
export function policyFile(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const given = env[POLICY_ENV];
  if (given !== undefined) return given;
  if (platform === 'darwin') return '/Library/Application Support/Switchboard/policy.yaml';
  if (platform === 'win32')
    return path.win32.join(env.ProgramData ?? env.PROGRAMDATA ?? 'C:\\ProgramData', 'Switchboard', 'policy.yaml');
  return '/etc/switchboard/policy.yaml';
}

/** A refusal: the rule that made it, where it is written, and a sentence for the person refused. */
export interface PolicyBlock {
  file: string;
  line: number;
  rule: string;
  message: string;
}

export interface Policy {
  file: string;
  /** The file's own errors, each with its line; while there are any, everything is refused. */
  errors: { line: number; message: string }[];
  data: PolicyData;
  lineOf(dataPath: readonly PropertyKey[]): number;
}

/** `*` any run of characters, `?` one; everything else literal. */
function globMatches(glob: string, text: string, caseless = false): boolean {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, caseless ? 'i' : '').test(text);
}

export function parsePolicy(text: string, file: string): Policy {
  const lc = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const lineOf = (p: readonly PropertyKey[]): number => positionOf(doc, lc, p, 'value').line;
  const errors = doc.errors.map((e) => ({ line: e.linePos?.[0].line ?? 1, message: e.message.split('\n')[0] }));
  if (errors.length) return { file, errors, data: {}, lineOf };
  const raw: unknown = doc.toJS() ?? {};
  const r = PolicySchema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => ({
      // An unknown key is reported on its parent; the line is the key's own.
      line:
        i.code === 'unrecognized_keys'
          ? positionOf(doc, lc, [...i.path, i.keys[0]], 'key').line
          : positionOf(doc, lc, i.path, 'value').line,
      message: `${i.path.join('.') || '(top level)'}: ${i.message}`,
    }));
    return { file, errors: issues, data: {}, lineOf };
  }
  return { file, errors: [], data: r.data, lineOf };
}

let cached: { file: string; stamp: string; policy: Policy | undefined } | undefined;

/**
 * The policy in force now, read again whenever the file changed (its size, time or inode); undefined
 * when there is no file. A file that cannot be read is a policy with an error (everything refused).
 */
export function currentPolicy(file: string = policyFile()): Policy | undefined {
  if (!file) return undefined;
  let stamp: string;
  try {
    const st = fs.statSync(file);
    stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { file, errors: [{ line: 1, message: (err as Error).message }], data: {}, lineOf: () => 1 };
  }
  if (cached?.file === file && cached.stamp === stamp) return cached.policy;
  let policy: Policy;
  try {
    policy = parsePolicy(fs.readFileSync(file, 'utf8'), file);
  } catch (err) {
    policy = { file, errors: [{ line: 1, message: (err as Error).message }], data: {}, lineOf: () => 1 };
  }
  cached = { file, stamp, policy };
  return policy;
}

function brokenBlock(policy: Policy): PolicyBlock {
  const first = policy.errors[0];
  return {
    file: policy.file,
    line: first.line,
    rule: 'policy file',
    message:
      `the administrator's policy ${policy.file} has errors (line ${first.line}: ${first.message}); ` +
      'nothing it governs is allowed until it is fixed',
  };
}

/** The first rule of `key` that refuses `values` (any of them matching a deny; none matching an allow). */
function listBlock(
  policy: Policy,
  key: ListKey,
  what: string,
  values: readonly string[],
  caseless = false,
): PolicyBlock | undefined {
  const lists = policy.data[key];
  if (!lists) return undefined;
  const shown = values[0];
  const deny = lists.deny ?? [];
  for (const [i, glob] of deny.entries()) {
    if (values.some((v) => globMatches(glob, v, caseless))) {
      const line = policy.lineOf([key, 'deny', i]);
      return {
        file: policy.file,
        line,
        rule: `${key}.deny`,
        message: `the administrator's policy denies ${what} '${shown}' (${policy.file}:${line}, ${key}.deny: '${glob}')`,
      };
    }
  }
  if (lists.allow && !lists.allow.some((glob) => values.some((v) => globMatches(glob, v, caseless)))) {
    const line = policy.lineOf([key, 'allow']);
    return {
      file: policy.file,
      line,
      rule: `${key}.allow`,
      message:
        `the administrator's policy does not allow ${what} '${shown}' ` +
        `(${policy.file}:${line}, ${key}.allow: ${lists.allow.map((g) => `'${g}'`).join(', ')})`,
    };
  }
  return undefined;
}

/** `@scope/pkg@1.2.0` → `@scope/pkg`; `pkg==1.0` → `pkg`; `img:tag` / `img@sha256:…` → `img`. */
function withoutVersion(target: string): string {
  return target
    .replace(/^(@?[^@]+)@.*$/, '$1')
    .replace(/(===?|~=|>=|<=).*$/, '')
    .replace(/:[^/:]*$/, '');
}

/** Why `def` may not run (or be added, approved or probed) on this machine, or undefined. */
export function serverBlock(policy: Policy | undefined, def: ServerDef): PolicyBlock | undefined {
  if (!policy) return undefined;
  if (policy.errors.length) return brokenBlock(policy);
  const named = listBlock(policy, 'servers', 'server', [def.name]);
  if (named) return named;
  if (def.transport === 'stdio' && def.command) {
    const cmd = listBlock(policy, 'commands', 'command', [programName(def.command), def.command]);
    if (cmd) return cmd;
    const runner = packageRunnerOf(def.command, def.args);
    if (runner) {
      const pkg = listBlock(policy, 'packages', 'package', [runner.target, withoutVersion(runner.target)]);
      if (pkg) return pkg;
    }
  }
  if (def.transport !== 'stdio' && def.url) {
    let host = def.url;
    try {
      host = new URL(def.url).hostname;
    } catch {
      /* the schema checks URLs; a broken one is matched as written */
    }
    const remote = listBlock(policy, 'remoteHosts', 'remote host', [host], true);
    if (remote) return remote;
  }
  const max = policy.data.maxGrants;
  if (max) {
    const over = def.grants.filter((g) => !max.includes(g));
    if (over.length) {
      const line = policy.lineOf(['maxGrants']);
      return {
        file: policy.file,
        line,
        rule: 'maxGrants',
        message:
          `the administrator's policy allows at most the grants [${max.join(', ')}]; '${def.name}' asks for ` +
          `${over.join(', ')} (${policy.file}:${line}, maxGrants)`,
      };
    }
  }
  return undefined;
}

/** Why the registry at `url` (normalized) may not be asked, or undefined. */
export function registryBlock(policy: Policy | undefined, url: string): PolicyBlock | undefined {
  if (!policy) return undefined;
  if (policy.errors.length) return brokenBlock(policy);
  return listBlock(policy, 'registries', 'registry', [url, url.replace(/\/+$/, '')], true);
}

/** Whether a workspace's `trusted`/`builtin` counts on this machine (default yes). */
export function honoursWorkspaceTrust(policy: Policy | undefined): boolean {
  if (!policy) return true;
  if (policy.errors.length) return false;
  return policy.data.honourWorkspaceTrusted ?? true;
}
