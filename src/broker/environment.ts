// What a stdio upstream's process receives as its environment. Only a small allow-list of the
// broker's own variables passes, so a server never inherits credentials it was not granted.
import * as fs from 'node:fs';
import * as path from 'node:path';

const PASSED_THROUGH = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TMPDIR', 'TMP', 'TEMP', 'TZ',
  'XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME',
  'SYSTEMROOT', 'SystemRoot', 'COMSPEC', 'PATHEXT', 'WINDIR', 'APPDATA', 'LOCALAPPDATA', 'USERPROFILE', 'PROGRAMFILES',
  'npm_config_cache', 'NPM_CONFIG_CACHE',
];

/**
 * TLS trust settings pass only to servers with the `network` grant: nothing else can reach a TLS
 * peer, and Node parses every certificate NODE_EXTRA_CA_CERTS names before it runs a line of the
 * server (~140 ms of each start where it names the system bundle).
 */
const PASSED_WITH_NETWORK = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];

const SECRET_LOOKING = /(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

export function looksSecret(name: string): boolean {
  return SECRET_LOOKING.test(name);
}

/** Parses a dotenv file: `KEY=value`, optional quotes, `#` comments, `export ` prefixes. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2];
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
      value = value.slice(1, -1);
      if (m[2].startsWith('"')) value = value.replace(/\\n/g, '\n');
    } else {
      value = value.replace(/\s+#.*$/, '');
    }
    out[m[1]] = value;
  }
  return out;
}

export interface EnvironmentInput {
  root: string;
  env: Record<string, string>;
  envFile?: string;
  /** The server's grants: `secrets` and `network` decide what of the environment it gets. */
  grants: readonly string[];
  parentEnv?: NodeJS.ProcessEnv;
}

export interface BuiltEnvironment {
  env: Record<string, string>;
  /** Names (never values) of variables withheld for want of the `secrets` grant. */
  withheld: string[];
  /** Values that must never be written anywhere: the broker redacts them from logs. */
  secretValues: string[];
}

/**
 * `env` values in the registry may reference the broker's environment as `${env:NAME}`; a
 * secret-looking reference resolves only with the `secrets` grant.
 */
export function buildEnvironment(input: EnvironmentInput): BuiltEnvironment {
  const secretsGranted = input.grants.includes('secrets');
  const parent = input.parentEnv ?? process.env;
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  const secretValues: string[] = [];
  for (const name of input.grants.includes('network') ? [...PASSED_THROUGH, ...PASSED_WITH_NETWORK] : PASSED_THROUGH) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, template] of Object.entries(input.env)) {
    env[name] = template.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, ref: string) => {
      if (looksSecret(ref) && !secretsGranted) {
        withheld.push(ref);
        return '';
      }
      const value = parent[ref] ?? '';
      if (looksSecret(ref) && value) secretValues.push(value);
      return value;
    });
  }
  if (input.envFile) {
    const file = path.resolve(input.root, input.envFile);
    let values: Record<string, string> = {};
    try {
      values = parseEnvFile(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`cannot read envFile ${input.envFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
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
  return { env, withheld, secretValues };
}
