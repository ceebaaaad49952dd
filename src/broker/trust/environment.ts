// What a stdio upstream's process receives as its environment. Only a small allow-list of the
// broker's own variables passes, so a server never inherits credentials it was not granted.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import { INPUT_REFERENCE } from '../../registry/schema';

const PASSED_THROUGH = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TMPDIR',
  'TMP',
  'TEMP',
  'TZ',
  'XDG_RUNTIME_DIR',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'SYSTEMROOT',
  'SystemRoot',
  'COMSPEC',
  'PATHEXT',
  'WINDIR',
  'APPDATA',
  'LOCALAPPDATA',
  'USERPROFILE',
  'PROGRAMFILES',
  'npm_config_cache',
  'NPM_CONFIG_CACHE',
];

/**
 * TLS trust settings pass only to servers with the `network` grant: nothing else can reach a TLS
 * peer, and Node parses every certificate NODE_EXTRA_CA_CERTS names before it runs a line of the
 * server (~140 ms of each start where it names the system bundle).
 */
const PASSED_WITH_NETWORK = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];

const SECRET_LOOKING = /(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

const REFERENCE = /\$\{(env|input):([A-Za-z0-9_.-]+)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function looksSecret(name: string): boolean {
  return SECRET_LOOKING.test(name);
}

/**
 * Parses a dotenv file with Node's own parser (`util.parseEnv`, Node >= 20.12): `KEY=value`, quotes,
 * `#` comments, `export ` prefixes and multi-line double-quoted values, as `node --env-file` reads them.
 */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(util.parseEnv(text))) if (value !== undefined) out[name] = value;
  return out;
}

/** The broker's variables a server with these grants inherits as they are. */
function inheritedNames(grants: readonly string[]): readonly string[] {
  return grants.includes('network') ? [...PASSED_THROUGH, ...PASSED_WITH_NETWORK] : PASSED_THROUGH;
}

export interface EnvironmentInput {
  root: string;
  env: Record<string, string>;
  envFile?: string;
  /** The server's grants: `secrets` and `network` decide what of the environment it gets. */
  grants: readonly string[];
  parentEnv?: NodeJS.ProcessEnv;
  /** The value of `${input:NAME}` (entered once in VS Code or with `switchboard secret set`), if any. */
  input?: (name: string) => string | undefined;
}

export interface BuiltEnvironment {
  env: Record<string, string>;
  /** Names (never values) of variables withheld for want of the `secrets` grant. */
  withheld: string[];
  /** Values that must never be written anywhere: the broker redacts them from logs. */
  secretValues: string[];
  /** Inputs the server is granted but nobody has entered yet: it cannot start without them. */
  missingInputs: string[];
}

/**
 * Replaces `${input:NAME}` in one value. Without the `secrets` grant an input is withheld (it
 * becomes empty, and `input:NAME` is listed); with it, a value nobody entered yet is listed missing.
 */
export function resolveInputs(
  template: string,
  secretsGranted: boolean,
  input: ((name: string) => string | undefined) | undefined,
  out: { withheld: string[]; secretValues: string[]; missingInputs: string[] },
): string {
  return template.replace(INPUT_REFERENCE, (_, name: string) => {
    if (!secretsGranted) {
      if (!out.withheld.includes(`input:${name}`)) out.withheld.push(`input:${name}`);
      return '';
    }
    const value = input?.(name);
    if (value === undefined) {
      if (!out.missingInputs.includes(name)) out.missingInputs.push(name);
      return '';
    }
    if (value) out.secretValues.push(value);
    return value;
  });
}

/**
 * `env` values in the registry may reference the broker's environment as `${env:NAME}`. Without
 * the `secrets` grant only the inherited allow-list resolves (whatever a name looks like: a
 * DATABASE_URL carries a password as well as any *_TOKEN does); the rest resolve to nothing and are
 * listed as withheld. Every value a reference resolves to outside the allow-list is a secret value.
 */
export function buildEnvironment(input: EnvironmentInput): BuiltEnvironment {
  const secretsGranted = input.grants.includes('secrets');
  const parent = input.parentEnv ?? process.env;
  const inherited = inheritedNames(input.grants);
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  const secretValues: string[] = [];
  const missingInputs: string[] = [];
  const collected = { withheld, secretValues, missingInputs };
  for (const name of inherited) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, raw] of Object.entries(input.env)) {
    // One pass over both kinds of reference: a value that contains `${env:…}` text is not expanded again.
    env[name] = raw.replace(REFERENCE, (whole: string, kind: string, ref: string) => {
      if (kind === 'input') return resolveInputs(whole, secretsGranted, input.input, collected);
      if (!ENV_NAME.test(ref)) return whole;
      const allowListed = inherited.includes(ref);
      if (!allowListed && !secretsGranted) {
        if (!withheld.includes(ref)) withheld.push(ref);
        return '';
      }
      const value = parent[ref] ?? '';
      // The allow-list (PATH, HOME, ...) reaches the server anyway; redacting it would only garble logs.
      if (!allowListed && value) secretValues.push(value);
      return value;
    });
  }
  if (input.envFile) {
    const file = path.resolve(input.root, input.envFile);
    let values: Record<string, string>;
    try {
      values = parseEnvFile(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      const fix = 'fix the path in the server definition or create the file';
      throw new Error(`cannot read envFile ${input.envFile}: ${why}; ${fix}`, { cause: err });
    }
    for (const [name, value] of Object.entries(values)) {
      if (secretsGranted) {
        env[name] = value;
        if (value) secretValues.push(value);
      } else {
        withheld.push(name);
      }
    }
  }
  return { env, withheld, secretValues, missingInputs };
}
