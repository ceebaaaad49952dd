// Reading other tools' MCP configurations (VS Code's .vscode/mcp.json, Claude Desktop, Cursor,
// Claude Code's .mcp.json) into registry definitions. Pure: text in, definitions and notes out;
// the command writes them through the broker. No `vscode` import.
import * as path from 'node:path';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { commandWarnings } from './commandRisks';
import { looksSecret } from './secretNames';
import { INPUT_NAME } from './schema';

export type ImportSource = 'vscode' | 'claude-desktop' | 'cursor' | 'claude-code' | 'file';

export const SOURCE_LABELS: Record<ImportSource, string> = {
  vscode: 'VS Code (.vscode/mcp.json)',
  'claude-desktop': 'Claude Desktop',
  cursor: 'Cursor',
  'claude-code': 'Claude Code (.mcp.json)',
  file: 'MCP configuration file',
};

export interface ImportedServer {
  /** Registry name (sanitized). */
  name: string;
  /** Name in the source file. */
  originalName: string;
  /** A server definition for `upsert_server` (without `trust`; the operator picks it). */
  definition: Record<string, unknown>;
  /** Things the operator should know: what changed, what needs a value. */
  notes: string[];
}

export interface ImportResult {
  servers: ImportedServer[];
  /** Entries that could not be imported, and why. */
  skipped: { name: string; reason: string }[];
}

export interface ImportContext {
  /** Absolute workspace folder (what `${workspaceFolder}` means). */
  workspaceFolder?: string;
  /** Absolute registry root (relative paths in the registry are relative to it). */
  registryRoot: string;
  /** Absolute home directory (`${userHome}`, `~`). */
  home: string;
  /** Names already in the registry: imports get another name rather than replacing them silently. */
  existing?: ReadonlySet<string>;
  /** The file's own `inputs` declarations (read from the file by parseMcpConfig). */
  inputs?: ReadonlyMap<string, DeclaredInput>;
}

/** How a VS Code input asks for its value. */
interface DeclaredInput {
  description?: string;
  password?: boolean;
}

/**
 * Where each tool keeps its configuration, for the import picker. Paths are joined the way `platform`
 * writes them (a Windows profile's paths on Windows), whatever OS this runs on.
 */
export function candidateFiles(opts: {
  platform: NodeJS.Platform;
  home: string;
  appData?: string;
  folders: string[];
}): { source: ImportSource; file: string; scope: string }[] {
  const p = opts.platform === 'win32' ? path.win32 : path.posix;
  const out: { source: ImportSource; file: string; scope: string }[] = [];
  for (const folder of opts.folders) {
    out.push({ source: 'vscode', file: p.join(folder, '.vscode', 'mcp.json'), scope: p.basename(folder) });
    out.push({ source: 'cursor', file: p.join(folder, '.cursor', 'mcp.json'), scope: p.basename(folder) });
    out.push({ source: 'claude-code', file: p.join(folder, '.mcp.json'), scope: p.basename(folder) });
  }
  const claudeDir =
    opts.platform === 'darwin'
      ? p.join(opts.home, 'Library', 'Application Support', 'Claude')
      : opts.platform === 'win32'
        ? p.join(opts.appData ?? p.join(opts.home, 'AppData', 'Roaming'), 'Claude')
        : p.join(opts.home, '.config', 'Claude');
  out.push({ source: 'claude-desktop', file: p.join(claudeDir, 'claude_desktop_config.json'), scope: 'user' });
  out.push({ source: 'cursor', file: p.join(opts.home, '.cursor', 'mcp.json'), scope: 'user' });
  return out;
}

/** What each of jsonc-parser's error codes means, in words. */
const JSONC_ERRORS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'malformed number',
  PropertyNameExpected: 'a property name in double quotes was expected',
  ValueExpected: 'a value was expected',
  ColonExpected: "':' was expected",
  CommaExpected: "',' was expected",
  CloseBraceExpected: "'}' was expected",
  CloseBracketExpected: "']' was expected",
  EndOfFileExpected: 'nothing may follow the end of the document',
  InvalidCommentToken: 'malformed comment',
  UnexpectedEndOfComment: "a block comment is not closed ('*/' is missing)",
  UnexpectedEndOfString: "a string is not closed ('\"' is missing)",
  UnexpectedEndOfNumber: 'a number ends too early',
  InvalidUnicode: 'malformed \\u escape',
  InvalidEscapeCharacter: 'malformed escape sequence',
  InvalidCharacter: 'a control character in a string',
};

/** 1-based line and column of an offset. */
function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

/** JSON with comments and trailing commas (VS Code's mcp.json is JSONC); throws at the first error. */
export function parseJsonc(text: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first) {
    const { line, column } = position(text, first.offset);
    const what = JSONC_ERRORS[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error);
    throw new Error(`line ${line}, column ${column}: ${what}`);
  }
  return value;
}

const PACKAGE_RUNNERS = new Set(['npx', 'uvx', 'bunx', 'pnpx', 'docker', 'podman', 'pipx']);

/** A registry name from any server key: `GitHub MCP` → `github-mcp`. */
export function toRegistryName(raw: string, taken: ReadonlySet<string> = new Set()): string {
  let name = raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '');
  if (!name) name = 'server';
  if (name === 'switchboard') name = 'switchboard-upstream';
  name = name.slice(0, 31).replace(/-+$/, '');
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) {
    const suffix = `-${i}`;
    const candidate = `${name.slice(0, 31 - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The server map of any of the supported formats. */
function serverMap(doc: unknown): Json | undefined {
  if (!isObject(doc)) return undefined;
  if (isObject(doc.servers)) return doc.servers; // VS Code
  if (isObject(doc.mcpServers)) return doc.mcpServers; // Claude Desktop, Cursor, Claude Code, Windsurf
  if (isObject(doc.mcp) && isObject((doc.mcp as Json).servers)) return (doc.mcp as Json).servers as Json; // settings.json "mcp"
  return undefined;
}

export function parseMcpConfig(text: string, ctx: ImportContext): ImportResult {
  let doc: unknown;
  try {
    doc = parseJsonc(text);
  } catch (err) {
    throw new Error(`the file is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const map = serverMap(doc);
  if (!map)
    throw new Error(
      'no MCP servers found: expected a "servers" (VS Code) or "mcpServers" (Claude Desktop, Cursor) object',
    );
  const taken = new Set(ctx.existing ?? []);
  const result: ImportResult = { servers: [], skipped: [] };
  ctx = { ...ctx, inputs: declaredInputs(doc) };
  for (const [key, raw] of Object.entries(map)) {
    if (!isObject(raw)) {
      result.skipped.push({ name: key, reason: 'the entry is not an object' });
      continue;
    }
    try {
      const server = convert(key, raw, ctx, taken);
      taken.add(server.name);
      result.servers.push(server);
    } catch (err) {
      result.skipped.push({ name: key, reason: (err as Error).message });
    }
  }
  return result;
}

/** VS Code's top-level `inputs` (promptString ones): how each asks for its value. */
function declaredInputs(doc: unknown): Map<string, DeclaredInput> {
  const out = new Map<string, DeclaredInput>();
  const list = isObject(doc) && Array.isArray(doc.inputs) ? (doc.inputs as unknown[]) : [];
  for (const i of list) {
    if (!isObject(i) || typeof i.id !== 'string') continue;
    out.set(i.id, {
      description: typeof i.description === 'string' ? i.description : undefined,
      password: typeof i.password === 'boolean' ? i.password : undefined,
    });
  }
  return out;
}

function stringArray(v: unknown, what: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' && typeof x !== 'number'))
    throw new Error(`'${what}' must be a list of strings`);
  return v.map(String);
}

function stringRecord(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new Error(`'${what}' must be an object`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (val === null || val === undefined) continue;
    out[k] = String(val);
  }
  return out;
}

function convert(key: string, raw: Json, ctx: ImportContext, taken: ReadonlySet<string>): ImportedServer {
  const notes: string[] = [];
  const name = toRegistryName(key, taken);
  const plain = toRegistryName(key);
  if (name !== plain) notes.push(`named '${name}' because '${plain}' is already taken`);
  else if (name !== key) notes.push(`named '${name}' (registry names are lowercase letters, digits and '-')`);

  const rel = (abs: string): string => {
    const r = path.relative(ctx.registryRoot, abs);
    return r === '' ? '.' : r.split(path.sep).join('/');
  };
  const inputs = new Set<string>();
  /** The inputs kept as `${input:NAME}` (env and header values): the registry asks for them once. */
  const kept = new Set<string>();
  /** Substitutes VS Code's variables; `where` decides what `${env:X}` may stay as. */
  const subst = (value: string, where: 'path' | 'arg' | 'env' | 'header'): string => {
    let v = value.replace(/\$\{(workspaceFolder|workspaceRoot)\}/g, () => {
      if (!ctx.workspaceFolder) throw new Error('uses ${workspaceFolder} but no workspace folder is open');
      return where === 'path' ? rel(ctx.workspaceFolder) : ctx.workspaceFolder;
    });
    v = v.replace(/\$\{userHome\}/g, ctx.home);
    if (where !== 'env') v = v.replace(/^~(?=\/|$)/, ctx.home);
    v = v.replace(/\$\{input:([^}]+)\}/g, (whole: string, id: string) => {
      // The registry resolves inputs in env and header values only; elsewhere one stays to be filled by hand.
      if ((where === 'env' || where === 'header') && INPUT_NAME.test(id)) {
        kept.add(id);
        return whole;
      }
      inputs.add(id);
      return `<${id}>`;
    });
    if (where !== 'env' && /\$\{env:[^}]+\}/.test(v))
      notes.push(
        `'${value}' refers to an environment variable; the registry expands \${env:...} only in 'env' values, so set it there`,
      );
    return v;
  };

  const type = typeof raw.type === 'string' ? raw.type : typeof raw.transport === 'string' ? raw.transport : undefined;
  const url = typeof raw.url === 'string' ? raw.url : typeof raw.serverUrl === 'string' ? raw.serverUrl : undefined;
  const def: Json = { name };
  if (typeof raw.description === 'string') def.description = raw.description;
  const isRemote =
    url !== undefined || type === 'http' || type === 'sse' || type === 'streamable-http' || type === 'streamableHttp';

  if (isRemote) {
    if (!url) throw new Error(`a ${type} server needs a 'url'`);
    def.transport = type === 'sse' ? 'sse' : 'http';
    def.url = subst(url, 'arg');
    const headers = stringRecord(raw.headers, 'headers');
    const outHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      const value = subst(v, 'header');
      if (!/\$\{input:[^}]+\}/.test(value) && (looksSecret(k) || /^bearer\s/i.test(value))) {
        notes.push(
          `header '${k}' holds a credential: it is written to the registry file as it was; ` +
            'keep that file out of version control or replace the value',
        );
      }
      outHeaders[k] = value;
    }
    if (Object.keys(outHeaders).length) def.headers = outHeaders;
  } else {
    if (typeof raw.command !== 'string' || !raw.command)
      throw new Error("neither a 'command' (stdio) nor a 'url' (remote)");
    def.transport = 'stdio';
    def.command = subst(raw.command, 'arg');
    const args = stringArray(raw.args, 'args').map((a) => subst(a, 'arg'));
    if (args.length) def.args = args;
    if (typeof raw.cwd === 'string') def.cwd = subst(raw.cwd, 'path');
    if (typeof raw.envFile === 'string') {
      def.envFile = subst(raw.envFile, 'path');
      notes.push("its env file is passed only with the 'secrets' grant");
    }
    const env = stringRecord(raw.env, 'env');
    const outEnv: Record<string, string> = {};
    const grants = new Set<string>();
    if (def.envFile) grants.add('secrets');
    for (const [k, v] of Object.entries(env)) {
      const value = subst(v, 'env');
      if (/\$\{input:[^}]+\}/.test(value)) {
        outEnv[k] = value;
      } else if (looksSecret(k) && !/^\$\{env:[^}]+\}$/.test(value)) {
        // Never copy a credential into the workspace, where it would be committed.
        outEnv[k] = `\${env:${k}}`;
        grants.add('secrets');
        notes.push(
          `the value of ${k} was not copied into the workspace: set ${k} in the environment the broker starts in (or use an envFile)`,
        );
      } else {
        outEnv[k] = value;
        if (/\$\{env:[^}]+\}/.test(value) && looksSecret(value)) grants.add('secrets');
      }
    }
    if (Object.keys(outEnv).length) def.env = outEnv;
    const program = path.basename(String(def.command)).replace(/\.(cmd|exe)$/i, '');
    if (PACKAGE_RUNNERS.has(program)) {
      grants.add('network');
      notes.push(`${program} downloads and runs a package, so it gets the 'network' grant`);
    }
    for (const warning of commandWarnings(String(def.command), (def.args as string[] | undefined) ?? []))
      notes.push(`⚠ ${warning}`);
    if (kept.size) grants.add('secrets');
    if (grants.size) def.grants = ['network', 'secrets', 'filesystem'].filter((g) => grants.has(g));
  }
  if (kept.size) {
    // Entered secrets reach a server only with the secrets grant (a stdio server's grants are set above).
    if (isRemote) def.grants = ['secrets'];
    def.inputs = Object.fromEntries(
      [...kept].map((id) => {
        const declared = ctx.inputs?.get(id);
        return [
          id,
          {
            ...(declared?.description ? { description: declared.description } : {}),
            password: declared?.password ?? true,
          },
        ];
      }),
    );
    notes.push(
      `it asks for ${[...kept].map((i) => `'${i}'`).join(', ')} once: enter ${kept.size > 1 ? 'them' : 'it'} with ` +
        "'Switchboard: Enter Secret' or 'switchboard secret set NAME' (kept per user, never in the workspace)",
    );
  }
  if (raw.disabled === true) {
    def.enabled = false;
    notes.push('it was disabled there, so it is imported disabled');
  }
  if (
    Array.isArray(raw.disabledTools) &&
    raw.disabledTools.every((t) => typeof t === 'string') &&
    raw.disabledTools.length
  )
    def.excludeTools = raw.disabledTools;
  if (inputs.size)
    notes.push(
      `it prompted for ${[...inputs].map((i) => `'${i}'`).join(', ')} outside env and headers, where the registry ` +
        'cannot ask for it: replace the <placeholder> before it can run',
    );
  return { name, originalName: key, definition: def, notes };
}

/** One line describing what a definition runs, for pickers: `npx -y @scope/pkg` or `http https://...`. */
export function describeTarget(def: Record<string, unknown>): string {
  if (def.transport === 'stdio' || def.command)
    return [def.command, ...((def.args as string[] | undefined) ?? [])].join(' ');
  return `${def.transport} ${def.url}`;
}
