// A `server.json` of the official MCP Registry into a registry definition.
//
// The format is the registry's ServerDetail schema
// (https://github.com/modelcontextprotocol/registry, docs/reference/server-json/server.schema.json
// and generic-server-json.md): name, description, version, packages[] (registryType, identifier,
// version, runtimeHint, transport, runtimeArguments, packageArguments, environmentVariables) and
// remotes[] (streamable-http or sse, url, headers, variables). One package or remote becomes one
// definition: npm → npx, pypi → uvx, oci → docker run, nuget → dnx, remotes → http or sse.
//
// A secret (isSecret) never gets a value here: it becomes `${input:NAME}`, resolved per user from
// the secret store when the server starts; the YAML only names it. A value that is required, not
// secret and has no default must be given by the caller (`values`), or the import stops and names it.
// A new definition is `community`: it runs only after the operator approves what it runs.
// Package identifiers, versions and runtime hints are checked per registry type (packageNames.ts):
// a server.json cannot slip an option or a shell into the runner's command line as a "package".
import { z } from 'zod';
import { commandWarnings } from './commandRisks';
import { packageNameProblem, packageVersionProblem, registryBaseUrlProblem, runtimeHintProblem } from './packageNames';
import { packageRunnerOf } from './packageRunner';

const InputSchema = z.looseObject({
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  format: z.string().optional(),
  default: z.string().optional(),
  value: z.string().optional(),
  placeholder: z.string().optional(),
  choices: z.array(z.string()).optional(),
});
const VariablesSchema = z.record(z.string(), InputSchema).optional();
const WithVariables = InputSchema.extend({ variables: VariablesSchema });
const KeyValueSchema = WithVariables.extend({ name: z.string().min(1) });
const ArgumentSchema = z.discriminatedUnion('type', [
  WithVariables.extend({
    type: z.literal('positional'),
    valueHint: z.string().optional(),
    isRepeated: z.boolean().optional(),
  }),
  WithVariables.extend({ type: z.literal('named'), name: z.string().min(1), isRepeated: z.boolean().optional() }),
]);
const TransportSchema = z.looseObject({
  type: z.enum(['stdio', 'streamable-http', 'sse']),
  url: z.string().optional(),
  headers: z.array(KeyValueSchema).optional(),
});
const PackageSchema = z.looseObject({
  registryType: z.string().min(1),
  registryBaseUrl: z.string().optional(),
  identifier: z.string().min(1),
  version: z.string().min(1).optional(),
  runtimeHint: z.string().min(1).optional(),
  transport: TransportSchema,
  runtimeArguments: z.array(ArgumentSchema).optional(),
  packageArguments: z.array(ArgumentSchema).optional(),
  environmentVariables: z.array(KeyValueSchema).optional(),
});
const RemoteSchema = z.looseObject({
  type: z.enum(['streamable-http', 'sse']),
  url: z.string().min(1),
  headers: z.array(KeyValueSchema).optional(),
  variables: VariablesSchema,
});
export const ServerJsonSchema = z.looseObject({
  name: z.string().regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/, {
    error: "must be reverse-DNS with one '/', e.g. io.github.user/weather",
  }),
  description: z.string().min(1),
  version: z.string().min(1),
  title: z.string().optional(),
  packages: z.array(PackageSchema).optional(),
  remotes: z.array(RemoteSchema).optional(),
});

export type ServerJson = z.output<typeof ServerJsonSchema>;
type Input = z.output<typeof InputSchema> & { variables?: Record<string, z.output<typeof InputSchema>> };
type Argument = z.output<typeof ArgumentSchema>;
type KeyValue = z.output<typeof KeyValueSchema>;

/** `packages[1].transport.type` from a zod path. */
function fieldOf(p: readonly PropertyKey[]): string {
  return p.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${String(k)}` : String(k)), '');
}

/** The server.json, validated; the error names each wrong field. */
export function parseServerJson(value: unknown): ServerJson {
  const r = ServerJsonSchema.safeParse(value);
  if (r.success) {
    if (!r.data.packages?.length && !r.data.remotes?.length)
      throw new Error("server.json has neither 'packages' nor 'remotes': nothing says how to run it");
    return r.data;
  }
  const lines = r.error.issues.map((i) => `${fieldOf(i.path) || '(top level)'}: ${i.message}`);
  throw new Error(`not a valid server.json:\n  - ${lines.join('\n  - ')}`);
}

/** One way to run the server, for a picker: `packages[0]` or `remotes[1]` and a line saying what. */
export interface ServerJsonChoice {
  field: string;
  kind: 'package' | 'remote';
  index: number;
  label: string;
}

export function serverJsonChoices(doc: ServerJson): ServerJsonChoice[] {
  const out: ServerJsonChoice[] = [];
  (doc.packages ?? []).forEach((p, i) =>
    out.push({
      field: `packages[${i}]`,
      kind: 'package',
      index: i,
      label: `${p.registryType} ${p.identifier}${p.version ? `@${p.version}` : ''}`,
    }),
  );
  (doc.remotes ?? []).forEach((r, i) =>
    out.push({ field: `remotes[${i}]`, kind: 'remote', index: i, label: `${r.type} ${r.url}` }),
  );
  return out;
}

/** The values a definition needs from the caller: required, not secret, without a default. */
export interface NeededValue {
  field: string;
  name: string;
  description?: string;
}

/** Thrown when required, non-secret values have no default: `missing` says which, so a UI can ask. */
export class MissingValuesError extends Error {
  constructor(readonly missing: readonly NeededValue[]) {
    const list = missing.map((m) => `${m.field} (${m.name}${m.description ? `: ${m.description}` : ''})`);
    super(`these values are required and have no default; give each one: ${list.join('; ')}`);
    this.name = 'MissingValuesError';
  }
}

export interface ServerJsonImport {
  /** A server definition for the writer (`trust: community`). */
  definition: Record<string, unknown>;
  /** The `${input:NAME}` references it holds (secrets and values to enter per user). */
  inputs: string[];
  /** What the operator should know. */
  notes: string[];
}

export interface ServerJsonOptions {
  /** Which entry: `packages[i]` or `remotes[i]`; needed when there are several. */
  choice?: { kind: 'package' | 'remote'; index: number };
  /** Values for required non-secret inputs, by name (env var, header, valueHint, flag or variable). */
  values?: Readonly<Record<string, string>>;
  /** Registry name to use instead of the one derived from `name`. */
  name?: string;
}

/** A registry name from `io.github.user/weather-server`: `weather-server`. */
export function registryNameOf(serverJsonName: string): string {
  const last = serverJsonName.split('/').pop() ?? serverJsonName;
  const name = last
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 31)
    .replace(/-+$/, '');
  return !name || name === 'switchboard' ? `${name || 'server'}-upstream`.replace(/^-/, '') : name;
}

/** `X-API-Key` → `X_API_KEY`: an input's name in `${input:…}`. */
const inputName = (raw: string): string => raw.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '') || 'VALUE';

class Resolver {
  readonly inputs = new Set<string>();
  /** What each input is, from its server.json description: shown when the value is asked for. */
  readonly described = new Map<string, string>();
  readonly notes: string[] = [];
  readonly missing: NeededValue[] = [];

  constructor(private readonly values: Readonly<Record<string, string>>) {}

  /**
   * The string an input stands for: a secret → `${input:NAME}`; else its fixed value (variables
   * substituted), a caller's value, its default; required with none of those → missing (reported).
   * undefined: optional and unset, leave it out.
   */
  resolve(input: Input, name: string, field: string): string | undefined {
    if (input.value !== undefined) return this.substitute(input.value, input.variables ?? {}, field);
    if (input.isSecret) {
      const id = inputName(name);
      this.inputs.add(id);
      if (input.description && !this.described.has(id)) this.described.set(id, input.description);
      return `\${input:${id}}`;
    }
    const given = this.values[name];
    if (given !== undefined) return given;
    if (input.default !== undefined) return input.default;
    if (input.isRequired) {
      this.missing.push({ field, name, description: input.description });
      return `<${name}>`;
    }
    return undefined;
  }

  /** `Bearer {token}` with `variables.token`: each `{x}` resolved as an input of its own. */
  substitute(template: string, variables: Record<string, Input>, field: string): string {
    return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, v: string) => {
      const def = variables[v];
      if (!def) return this.values[v] ?? whole;
      return this.resolve(def, v, `${field}.variables.${v}`) ?? '';
    });
  }
}

function argumentsOf(args: readonly Argument[] | undefined, field: string, r: Resolver): string[] {
  const out: string[] = [];
  (args ?? []).forEach((a, i) => {
    const at = `${field}[${i}]`;
    if (a.type === 'positional') {
      const v = r.resolve(a, a.valueHint ?? `arg${i}`, at);
      if (v !== undefined) out.push(v);
      return;
    }
    const v = r.resolve(a, a.name.replace(/^-+/, ''), at);
    if (v !== undefined) out.push(a.name, v);
  });
  return out;
}

function headersOf(headers: readonly KeyValue[] | undefined, field: string, r: Resolver): Record<string, string> {
  const out: Record<string, string> = {};
  (headers ?? []).forEach((h, i) => {
    const v = r.resolve(h, h.name, `${field}[${i}]`);
    if (v !== undefined) out[h.name] = v;
  });
  return out;
}

/** A server.json entry as a registry definition, or an error naming the field that stops it. */
export function serverJsonToDefinition(value: unknown, opts: ServerJsonOptions = {}): ServerJsonImport {
  const doc = parseServerJson(value);
  const choices = serverJsonChoices(doc);
  let choice = opts.choice;
  if (!choice) {
    if (choices.length > 1) {
      throw new Error(
        `this server.json offers ${choices.length} ways to run it; choose one ` +
          `(${choices.map((c) => `${c.field}: ${c.label}`).join('; ')})`,
      );
    }
    choice = { kind: choices[0].kind, index: 0 };
  }
  const list = choice.kind === 'package' ? doc.packages : doc.remotes;
  if (!list?.[choice.index]) {
    throw new Error(
      `${choice.kind === 'package' ? 'packages' : 'remotes'}[${choice.index}] does not exist ` +
        `(this server.json has ${choices.map((c) => c.field).join(', ')})`,
    );
  }
  const r = new Resolver(opts.values ?? {});
  const def: Record<string, unknown> = {
    name: opts.name ?? registryNameOf(doc.name),
    description: doc.description,
    trust: 'community',
  };
  const grants = new Set<string>();
  if (choice.kind === 'remote') {
    const remote = doc.remotes![choice.index];
    const field = `remotes[${choice.index}]`;
    def.transport = remote.type === 'sse' ? 'sse' : 'http';
    def.url = r.substitute(remote.url, remote.variables ?? {}, `${field}.url`);
    const headers = headersOf(remote.headers, `${field}.headers`, r);
    if (Object.keys(headers).length) def.headers = headers;
  } else {
    Object.assign(def, packageCommand(doc.packages![choice.index], `packages[${choice.index}]`, r, grants));
  }
  if (r.missing.length) throw new MissingValuesError(r.missing);
  // Entered secrets reach a server (stdio env or remote headers) only with the secrets grant.
  if (r.inputs.size) grants.add('secrets');
  if (grants.size) def.grants = ['network', 'secrets', 'filesystem'].filter((g) => grants.has(g));
  if (r.inputs.size)
    def.inputs = Object.fromEntries(
      [...r.inputs].map((id) => {
        const description = r.described.get(id);
        return [id, { ...(description ? { description } : {}), password: true }];
      }),
    );
  const notes = [...r.notes];
  if (r.inputs.size) {
    notes.push(
      `its secrets are not in the YAML: ${[...r.inputs].map((i) => `\${input:${i}}`).join(', ')} ` +
        "are entered once (Switchboard: Enter Secret, or 'switchboard secret set NAME') and kept per user",
    );
  }
  notes.push('it is a community server: it runs only after you approve exactly what it runs');
  return { definition: def, inputs: [...r.inputs], notes };
}

type Package = z.output<typeof PackageSchema>;

function packageCommand(p: Package, field: string, r: Resolver, grants: Set<string>): Record<string, unknown> {
  if (p.transport.type !== 'stdio') {
    throw new Error(
      `${field}.transport.type is '${p.transport.type}': a package that serves HTTP itself needs its process and its URL ` +
        'managed together, which a registry definition cannot express; choose a stdio package or a remote',
    );
  }
  // Someone else's text becomes a command line: the package must be a package, the version one
  // version, the runner one whose argument order this code knows.
  const named = packageNameProblem(p.registryType, p.identifier);
  if (named) throw new Error(`${field}.identifier: ${named}`);
  const version = p.version === undefined ? undefined : packageVersionProblem(p.version);
  if (version) throw new Error(`${field}.version: ${version}`);
  const hint = p.runtimeHint === undefined ? undefined : runtimeHintProblem(p.registryType, p.runtimeHint);
  if (hint) throw new Error(`${field}.runtimeHint: ${hint}`);
  const base = p.registryBaseUrl === undefined ? undefined : registryBaseUrlProblem(p.registryType, p.registryBaseUrl);
  if (base) throw new Error(`${field}.registryBaseUrl: ${base}`);
  const runtime = argumentsOf(p.runtimeArguments, `${field}.runtimeArguments`, r);
  const args = argumentsOf(p.packageArguments, `${field}.packageArguments`, r);
  const env: Record<string, string> = {};
  (p.environmentVariables ?? []).forEach((e, i) => {
    const v = r.resolve(e, e.name, `${field}.environmentVariables[${i}]`);
    if (v !== undefined) env[e.name] = v;
  });
  const pinned = (sep: string) => (p.version ? `${p.identifier}${sep}${p.version}` : p.identifier);
  let command: string;
  let full: string[];
  switch (p.registryType) {
    case 'npm':
      command = p.runtimeHint ?? 'npx';
      full = [...(command === 'npx' ? ['-y'] : []), ...runtime, pinned('@'), ...args];
      break;
    case 'pypi':
      command = p.runtimeHint ?? 'uvx';
      full = [...runtime, pinned(command === 'uvx' ? '@' : '=='), ...args];
      break;
    case 'oci': {
      command = p.runtimeHint ?? 'docker';
      // The container sees only the variables passed in: one `-e NAME` each, valued from this env.
      const passEnv = Object.keys(env).flatMap((n) => ['-e', n]);
      const image = p.version && !/[:@][^/]*$/.test(p.identifier) ? `${p.identifier}:${p.version}` : p.identifier;
      full = ['run', '-i', '--rm', ...runtime, ...passEnv, image, ...args];
      break;
    }
    case 'nuget':
      command = p.runtimeHint ?? 'dnx';
      full = [...runtime, pinned('@'), '--yes', ...(args.length ? ['--', ...args] : [])];
      break;
    case 'mcpb':
      throw new Error(
        `${field}.registryType is 'mcpb': a bundle to download, check (fileSha256) and unpack; ` +
          'install it with an MCPB-aware host and import the command it runs, or choose another package',
      );
    default:
      throw new Error(
        `${field}.registryType '${p.registryType}' is not one this import can run (npm, pypi, oci, nuget)`,
      );
  }
  const runner = packageRunnerOf(command, full);
  if (runner) {
    grants.add('network');
    r.notes.push(
      `'${runner.runner}' downloads '${runner.target}' when it starts, so it has the 'network' grant ` +
        '(or install the package first and run it from there)',
    );
  }
  for (const warning of commandWarnings(command, full)) r.notes.push(`⚠ ${warning}`);
  const def: Record<string, unknown> = { transport: 'stdio', command, args: full };
  if (Object.keys(env).length) def.env = env;
  return def;
}
