// Each coding agent's own MCP configuration file: where it is and how one server entry is written in
// it. Pure text in, text out (plus the path rules); agentClients.ts does the file system and the
// registry. Every edit keeps the rest of the file as it was: JSON and JSONC through jsonc-parser's
// edits, YAML through the yaml library's Document (comments survive), TOML by adding or cutting
// whole tables located by parsing (tomlTables.ts), with smol-toml parsing the file before and
// after. Whatever the format, the result is parsed back and must equal the original plus (or
// minus) exactly the one entry; otherwise nothing is written.
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import {
  applyEdits,
  findNodeAtLocation,
  modify,
  parse,
  parseTree,
  printParseErrorCode,
  type ParseError,
} from 'jsonc-parser';
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import { isMap, isSeq, parseDocument } from 'yaml';
import { tomlAdd, tomlRemove } from './tomlTables';

// smol-toml is an ES module to TypeScript (node16 resolution, CommonJS output), so it is loaded with
// import(), once, before the first TOML edit (the bundle inlines it either way).
let toml: typeof SmolToml | undefined;
export async function loadFormats(): Promise<void> {
  toml ??= await import('smol-toml');
}
function tomlLib(): typeof SmolToml {
  if (!toml) throw new Error('agent formats used before loadFormats()');
  return toml;
}

export type AgentId =
  'claude-code' | 'codex' | 'gemini-cli' | 'cursor' | 'copilot-cli' | 'windsurf' | 'continue' | 'cline';

/** What an agent runs to reach the broker: the stdio bridge (`switchboard connect`). */
export interface BridgeCommand {
  command: string;
  args: string[];
}

/** Where paths are resolved: the home directory, the platform, and the variables agents honour. */
export interface AgentEnv {
  home: string;
  platform: NodeJS.Platform;
  /** CODEX_HOME, COPILOT_HOME, APPDATA, XDG_CONFIG_HOME; leave out to put everything under `home`. */
  env: Readonly<Record<string, string | undefined>>;
}

export type Format = 'json' | 'toml' | 'yaml';

export interface AgentSpec {
  id: AgentId;
  label: string;
  format: Format;
  /** The agent's user-level configuration file. */
  file(e: AgentEnv): string;
  /** A directory whose presence says the agent is (or was) installed. */
  marker(e: AgentEnv): string;
  /** The entry as the agent's documented format wants it. */
  entry(cmd: BridgeCommand): Record<string, unknown>;
  /** Where the format is documented (the source this code follows). */
  docs: string;
}

const plain = (cmd: BridgeCommand) => ({ command: cmd.command, args: cmd.args });

/** VS Code's user data directory, where extensions such as Cline keep their global storage. */
function vscodeUserDir(e: AgentEnv): string {
  if (e.platform === 'darwin') return path.join(e.home, 'Library', 'Application Support', 'Code', 'User');
  if (e.platform === 'win32')
    return path.join(e.env.APPDATA ?? path.join(e.home, 'AppData', 'Roaming'), 'Code', 'User');
  return path.join(e.env.XDG_CONFIG_HOME ?? path.join(e.home, '.config'), 'Code', 'User');
}

const clineSettingsDir = (e: AgentEnv) =>
  path.join(vscodeUserDir(e), 'globalStorage', 'saoudrizwan.claude-dev', 'settings');

export const AGENTS: readonly AgentSpec[] = [
  {
    // User scope: the top-level "mcpServers" of ~/.claude.json (`claude mcp add --scope user`), so the
    // entry is private to this user and never in a project's .mcp.json. "type": "stdio" as claude writes it.
    id: 'claude-code',
    label: 'Claude Code',
    format: 'json',
    file: (e) => path.join(e.home, '.claude.json'),
    marker: (e) => path.join(e.home, '.claude'),
    entry: (cmd) => ({ type: 'stdio', ...plain(cmd), env: {} }),
    docs: 'https://code.claude.com/docs/en/mcp (scopes: user = ~/.claude.json "mcpServers")',
  },
  {
    // [mcp_servers.<name>] command / args in $CODEX_HOME/config.toml (default ~/.codex).
    id: 'codex',
    label: 'Codex CLI',
    format: 'toml',
    file: (e) => path.join(e.env.CODEX_HOME ?? path.join(e.home, '.codex'), 'config.toml'),
    marker: (e) => e.env.CODEX_HOME ?? path.join(e.home, '.codex'),
    entry: plain,
    docs: 'https://github.com/openai/codex/blob/main/docs/config.md (mcp_servers)',
  },
  {
    id: 'gemini-cli',
    label: 'Gemini CLI',
    format: 'json',
    file: (e) => path.join(e.home, '.gemini', 'settings.json'),
    marker: (e) => path.join(e.home, '.gemini'),
    entry: plain,
    docs: 'https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md (settings.json mcpServers)',
  },
  {
    id: 'cursor',
    label: 'Cursor',
    format: 'json',
    file: (e) => path.join(e.home, '.cursor', 'mcp.json'),
    marker: (e) => path.join(e.home, '.cursor'),
    entry: plain,
    docs: 'https://docs.cursor.com/context/model-context-protocol (~/.cursor/mcp.json mcpServers)',
  },
  {
    // "type": "local" with "tools": ["*"] (every tool), in $COPILOT_HOME/mcp-config.json (default ~/.copilot).
    id: 'copilot-cli',
    label: 'GitHub Copilot CLI',
    format: 'json',
    file: (e) => path.join(e.env.COPILOT_HOME ?? path.join(e.home, '.copilot'), 'mcp-config.json'),
    marker: (e) => e.env.COPILOT_HOME ?? path.join(e.home, '.copilot'),
    entry: (cmd) => ({ type: 'local', ...plain(cmd), tools: ['*'] }),
    docs: 'https://docs.github.com/copilot/how-tos/use-copilot-agents/use-copilot-cli (~/.copilot/mcp-config.json)',
  },
  {
    id: 'windsurf',
    label: 'Windsurf',
    format: 'json',
    file: (e) => path.join(e.home, '.codeium', 'windsurf', 'mcp_config.json'),
    marker: (e) => path.join(e.home, '.codeium', 'windsurf'),
    entry: plain,
    docs: 'https://docs.windsurf.com/windsurf/cascade/mcp (~/.codeium/windsurf/mcp_config.json mcpServers)',
  },
  {
    // config.yaml's "mcpServers" is a list of { name, command, args }.
    id: 'continue',
    label: 'Continue',
    format: 'yaml',
    file: (e) => path.join(e.home, '.continue', 'config.yaml'),
    marker: (e) => path.join(e.home, '.continue'),
    entry: plain,
    docs: 'https://docs.continue.dev/reference (config.yaml mcpServers)',
  },
  {
    // The VS Code extension's global storage (VS Code stable); "disabled": false as Cline writes it.
    id: 'cline',
    label: 'Cline',
    format: 'json',
    file: (e) => path.join(clineSettingsDir(e), 'cline_mcp_settings.json'),
    marker: (e) => path.dirname(clineSettingsDir(e)),
    entry: (cmd) => ({ ...plain(cmd), disabled: false }),
    docs: 'https://docs.cline.bot/mcp/configuring-mcp-servers (cline_mcp_settings.json mcpServers)',
  },
];

export const AGENT_IDS = AGENTS.map((a) => a.id);

export function agentSpec(id: string): AgentSpec {
  const spec = AGENTS.find((a) => a.id === id);
  if (!spec) throw new Error(`unknown agent '${id}'; the agents are: ${AGENT_IDS.join(', ')}`);
  return spec;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A format's document, parsed: the entry (if any) and the whole value, to compare before and after. */
interface Parsed {
  value: unknown;
  entry: Json | undefined;
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}

function parseJsonText(text: string, file: string): unknown {
  if (text.trim() === '') return {};
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length)
    throw new Error(
      `${file} is not valid JSON (line ${lineOf(text, errors[0].offset)}: ${printParseErrorCode(errors[0].error)}); fix it first`,
    );
  if (!isObject(value)) throw new Error(`${file} does not hold a JSON object; fix it first`);
  return value;
}

function parseYamlText(text: string, file: string) {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new Error(`${file} is not valid YAML: ${doc.errors[0].message}; fix it first`);
  if (doc.contents !== null && !isMap(doc.contents))
    throw new Error(`${file} does not hold a YAML mapping; fix it first`);
  return doc;
}

function parseTomlText(text: string, file: string): Json {
  try {
    // Plain objects (smol-toml builds tables without a prototype), so they compare like the others.
    return JSON.parse(JSON.stringify(tomlLib().parse(text))) as Json;
  } catch (err) {
    throw new Error(`${file} is not valid TOML: ${(err as Error).message.split('\n')[0]}; fix it first`, {
      cause: err,
    });
  }
}

/** The entry called `name` in the agent's file (undefined when there is none). */
export function readEntry(spec: AgentSpec, text: string, name: string, file: string = spec.id): Parsed {
  if (spec.format === 'json') {
    const value = parseJsonText(text, file) as Json;
    const servers = value.mcpServers;
    return { value, entry: isObject(servers) && isObject(servers[name]) ? servers[name] : undefined };
  }
  if (spec.format === 'toml') {
    const value = parseTomlText(text, file);
    const servers = value.mcp_servers;
    return { value, entry: isObject(servers) && isObject(servers[name]) ? (servers[name] as Json) : undefined };
  }
  const value = (parseYamlText(text, file).toJS() ?? {}) as Json;
  const list = value.mcpServers;
  const entry = Array.isArray(list) ? list.find((s): s is Json => isObject(s) && s.name === name) : undefined;
  if (!entry) return { value, entry: undefined };
  const { name: _drop, ...rest } = entry;
  return { value, entry: rest };
}

/** Indentation the file already uses (its first indented line), so an edit matches it. */
function indentOf(text: string): { insertSpaces: boolean; tabSize: number } {
  const m = /\n([ \t]+)\S/.exec(text);
  if (!m) return { insertSpaces: true, tabSize: 2 };
  return m[1].startsWith('\t') ? { insertSpaces: false, tabSize: 1 } : { insertSpaces: true, tabSize: m[1].length };
}

/**
 * Sets or deletes `mcpServers.<name>`. jsonc-parser computes the edit; the inserted JSON is laid out
 * here, indented like the file, because its own formatter re-lays the neighbouring lines too (a
 * one-line sibling entry would come back spread over several).
 */
function jsonSet(text: string, name: string, value: Json | undefined): string {
  const base = text.trim() === '' ? '{}\n' : text;
  const edits = modify(base, ['mcpServers', name], value, {});
  if (value === undefined) {
    const next = applyEdits(base, edits);
    // An object left empty is written `{}`, as it most likely was before the entry came.
    const servers = findNodeAtLocation(parseTree(next) ?? ({} as never), ['mcpServers']);
    if (servers?.type !== 'object' || servers.children?.length) return next;
    return next.slice(0, servers.offset) + '{}' + next.slice(servers.offset + servers.length);
  }
  const eol = base.includes('\r\n') ? '\r\n' : '\n';
  const { insertSpaces, tabSize } = indentOf(base);
  const unit = insertSpaces ? ' '.repeat(tabSize) : '\t';
  const pad = (depth: number) => unit.repeat(depth);
  const pretty = (v: unknown, depth: number) =>
    JSON.stringify(v, null, unit)
      .split('\n')
      .join(eol + pad(depth));
  const doc = parse(base) as Json;
  const servers = isObject(doc.mcpServers) ? doc.mcpServers : undefined;
  const laidOut = edits.map((e) => {
    if (servers && name in servers) return { ...e, content: pretty(value, 2) };
    const [key, v, depth] = servers ? [name, value, 2] : ['mcpServers', { [name]: value }, 1];
    const comma = e.content.startsWith(',') ? ',' : '';
    const closesEmpty = !comma && /^\s*\}/.test(base.slice(e.offset + e.length));
    const tail = closesEmpty ? eol + pad(depth - 1) : '';
    return { ...e, content: `${comma}${eol}${pad(depth)}${JSON.stringify(key)}: ${pretty(v, depth)}${tail}` };
  });
  return applyEdits(base, laidOut);
}

/** Flow lists as people write them (`[a, b]`), and no folding of long paths. */
const YAML_STYLE = { flowCollectionPadding: false, lineWidth: 0 } as const;

function yamlSet(text: string, name: string, entry: Json | undefined): string {
  const doc = parseYamlText(text, 'config.yaml');
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  const list = doc.get('mcpServers');
  if (entry === undefined) {
    if (!isSeq(list)) return text;
    const i = list.items.findIndex((it) => isMap(it) && it.get('name') === name);
    if (i >= 0) list.items.splice(i, 1);
    return doc.toString(YAML_STYLE);
  }
  const node = doc.createNode({ name, ...entry });
  if (isSeq(list)) list.items.push(node);
  else doc.set('mcpServers', doc.createNode([{ name, ...entry }]));
  return doc.toString(YAML_STYLE);
}

/** Continue refuses a config.yaml without these; a file this code creates starts with them. */
const CONTINUE_SKELETON = 'name: Local Config\nversion: 1.0.0\nschema: v1\n';

/** The text with the entry set (added or replaced); the caller decides whether it may replace. */
export function withEntry(spec: AgentSpec, text: string, name: string, entry: Json, note: string): string {
  const before = readEntry(spec, text, name);
  let next: string;
  if (spec.format === 'json') next = jsonSet(text, name, entry);
  else if (spec.format === 'toml')
    next = tomlAdd(tomlLib(), before.entry ? tomlRemove(tomlLib(), text, name) : text, name, entry, note);
  else
    next = yamlSet(
      before.entry ? yamlSet(text, name, undefined) : text.trim() === '' ? CONTINUE_SKELETON : text,
      name,
      entry,
    );
  checkOnlyEntryChanged(spec, text, next, name, entry);
  return next;
}

/** The text without the entry; `empty` when the file then holds nothing a person wrote. */
export function withoutEntry(spec: AgentSpec, text: string, name: string): { text: string; empty: boolean } {
  let next: string;
  if (spec.format === 'json') next = jsonSet(text, name, undefined);
  else if (spec.format === 'toml') next = tomlRemove(tomlLib(), text, name);
  else next = yamlSet(text, name, undefined);
  checkOnlyEntryChanged(spec, text, next, name, undefined);
  const value = readEntry(spec, next, name).value as Json;
  const leftovers = Object.entries(value).filter(
    ([k, v]) => !(isEmpty(v) && ['mcpServers', 'mcp_servers'].includes(k)),
  );
  const skeleton =
    spec.format === 'yaml' && isDeepStrictEqual(Object.fromEntries(leftovers), parseDocument(CONTINUE_SKELETON).toJS());
  return { text: next, empty: leftovers.length === 0 || skeleton };
}

function isEmpty(v: unknown): boolean {
  return (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

/** Drops the entry from a parsed document, for comparing the rest. */
function without(spec: AgentSpec, value: unknown, name: string): unknown {
  const copy = structuredClone(value) as Json;
  if (spec.format === 'yaml') {
    if (Array.isArray(copy.mcpServers))
      copy.mcpServers = copy.mcpServers.filter((s) => !(isObject(s) && s.name === name));
    if (isEmpty(copy.mcpServers)) delete copy.mcpServers;
    return copy;
  }
  const key = spec.format === 'toml' ? 'mcp_servers' : 'mcpServers';
  if (isObject(copy[key])) {
    delete (copy[key] as Json)[name];
    if (isEmpty(copy[key])) delete copy[key];
  }
  return copy;
}

/** Refuses an edit that changed anything but the one entry (the guard behind "the rest untouched"). */
function checkOnlyEntryChanged(
  spec: AgentSpec,
  before: string,
  after: string,
  name: string,
  entry: Json | undefined,
): void {
  const a = readEntry(spec, before, name);
  const refused = () =>
    new Error(
      `editing the ${spec.label} configuration would change more than the '${name}' entry ` +
        '(it may define that entry in a form this command does not edit); change it by hand',
    );
  let b: Parsed;
  try {
    b = readEntry(spec, after, name);
  } catch {
    throw refused(); // the edit, not the person's file, would be invalid
  }
  const rest =
    spec.format === 'yaml'
      ? (v: unknown) => without(spec, stripSkeleton(v), name)
      : (v: unknown) => without(spec, v, name);
  if (!isDeepStrictEqual(rest(a.value), rest(b.value)) || !isDeepStrictEqual(b.entry, entry)) throw refused();
}

/** A YAML file created from nothing gets the skeleton's keys: they are not a change to what was there. */
function stripSkeleton(v: unknown): unknown {
  if (!isObject(v)) return v;
  const skeleton = parseDocument(CONTINUE_SKELETON).toJS() as Json;
  const copy = { ...v };
  for (const [k, val] of Object.entries(skeleton)) if (copy[k] === val) delete copy[k];
  return copy;
}
