// `switchboard clients add|remove <agent>`: point a coding agent's own MCP configuration at this
// workspace's broker, as a client of its own (clients.d/<agent>.yaml, its own token and scope).
// Shared by the CLI and the extension's "Connect an Agent…"; no vscode import.
//
// The agent runs the stdio bridge (`node …/dist/broker.js connect --root <root> --client <agent>`),
// not the broker's HTTP URL: the port is picked at random on each start and the token is a per-user
// secret, so an HTTP entry would break on the next start and put the token in the agent's file. The
// bridge finds the current port, reads the token from the per-user token file, and starts the
// broker if none runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { KIND_DIRS } from '../../registry/schema';
import { RegistryWriter, writeFileAtomic } from '../../registry/writer';
import {
  agentSpec,
  AGENTS,
  loadFormats,
  readEntry,
  withEntry,
  withoutEntry,
  type AgentEnv,
  type AgentId,
  type BridgeCommand,
} from './agentFormats';
import { ClientTokens } from '../trust/clientTokens';
import { runtimePaths } from '../shared/userState';
import { writePrivateFile } from '../shared/privateFiles';

export { AGENT_IDS, AGENTS, type AgentEnv, type AgentId } from './agentFormats';

/** The entry's name in the agent's file unless the caller picks another. */
export const DEFAULT_ENTRY = 'switchboard';

export interface AgentClientOptions {
  /** Absolute registry root (the folder that holds mcp-servers.d/). */
  root: string;
  /** Where the agents' files are (home directory, platform, variables such as CODEX_HOME). */
  agentEnv: AgentEnv;
  /** The node executable and the broker bundle (dist/broker.js) the bridge runs. */
  node: string;
  script: string;
  /** The entry's name in the agent's configuration (default 'switchboard'). */
  entryName?: string;
  /** The environment that decides the per-user Switchboard directory (SWITCHBOARD_HOME), for tokens. */
  env?: NodeJS.ProcessEnv;
}

export type Scope = 'read' | 'write';

export interface AgentStatus {
  id: AgentId;
  label: string;
  /** The client it connects as (clients.d/<client>.yaml). */
  client: string;
  file: string;
  /** The agent's configuration directory exists. */
  installed: boolean;
  /** yes: its file has this bridge; other: an entry of that name that runs something else; no. */
  configured: 'yes' | 'other' | 'no';
  /** What the entry of that name runs, when there is one. */
  runs?: string;
  /** The client's scopes when clients.d/ declares it. */
  scopes?: string[];
  /** Where the format is documented. */
  docs: string;
}

/** The client name of an agent: its id (`claude-code`, `codex`, ...). */
export const clientOf = (id: AgentId): string => id;

const ADDED_BY = "connected by 'switchboard clients add'";

export function bridgeCommand(opts: AgentClientOptions, client: string): BridgeCommand {
  return { command: opts.node, args: [opts.script, 'connect', '--root', opts.root, '--client', client] };
}

/** The bridge for this root and client, whatever node and script path it names (they move with upgrades). */
function isOurBridge(entry: Record<string, unknown> | undefined, opts: AgentClientOptions, client: string): boolean {
  const args = entry?.args;
  if (!Array.isArray(args)) return false;
  const tail = ['connect', '--root', opts.root, '--client', client];
  return args.length >= tail.length && tail.every((a, i) => args[args.length - tail.length + i] === a);
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/**
 * The file an edit reads and replaces: the agent's file, or what it links to. Dotfile managers keep
 * ~/.claude.json and friends as symbolic links into a repository; replacing the link by a file (the
 * atomic rename would) would silently fork the person's configuration from it.
 */
function editedFile(file: string): string {
  let link: fs.Stats;
  try {
    link = fs.lstatSync(file);
  } catch {
    return file; // not there yet: created as a file
  }
  if (!link.isSymbolicLink()) return file;
  try {
    return fs.realpathSync(file);
  } catch {
    throw new Error(`${file} is a symbolic link to ${fs.readlinkSync(file)}, which does not exist; fix the link first`);
  }
}

function clientFile(root: string, client: string): string | undefined {
  const dir = path.join(root, KIND_DIRS.client);
  return ['.yaml', '.yml'].map((ext) => path.join(dir, client + ext)).find((f) => fs.existsSync(f));
}

function declaredClient(root: string, client: string): { description?: string; mcp_allow?: string[] } | undefined {
  const file = clientFile(root, client);
  if (!file) return undefined;
  const value: unknown = parseYaml(readText(file));
  return typeof value === 'object' && value !== null ? (value as { description?: string; mcp_allow?: string[] }) : {};
}

const describe = (entry: Record<string, unknown>): string =>
  [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].map(String).join(' ');

export async function listAgents(opts: AgentClientOptions): Promise<AgentStatus[]> {
  await loadFormats();
  const name = opts.entryName ?? DEFAULT_ENTRY;
  return AGENTS.map((spec) => {
    const file = spec.file(opts.agentEnv);
    const client = clientOf(spec.id);
    let configured: AgentStatus['configured'] = 'no';
    let runs: string | undefined;
    try {
      const { entry } = readEntry(spec, readText(file), name, file);
      if (entry) {
        configured = isOurBridge(entry, opts, client) ? 'yes' : 'other';
        runs = describe(entry);
      }
    } catch {
      configured = 'no'; // an unreadable file: `add` says why
    }
    const declared = declaredClient(opts.root, client);
    return {
      id: spec.id,
      label: spec.label,
      client,
      file,
      installed: fs.existsSync(spec.marker(opts.agentEnv)),
      configured,
      runs,
      scopes: declared ? (declared.mcp_allow ?? ['read']) : undefined,
      docs: spec.docs,
    };
  });
}

export interface ChangeReport {
  /** One sentence per change made; empty when there was nothing to do. */
  changes: string[];
  /** The agent's configuration file. */
  file: string;
  client: string;
}

/**
 * The agents' files that `add` created (per user, beside the workspace's tokens), so that `remove`
 * deletes such a file again but never one that was there before, even if it held nothing else.
 */
function createdFiles(opts: AgentClientOptions) {
  const file = path.join(runtimePaths(opts.root, opts.env ?? process.env).workspaceDir, 'agent-files.json');
  let created: string[] = [];
  try {
    const value: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (Array.isArray(value)) created = value.filter((v): v is string => typeof v === 'string');
  } catch {
    /* none yet */
  }
  const save = () => writePrivateFile(file, JSON.stringify(created) + '\n');
  return {
    has: (f: string) => created.includes(f),
    add(f: string) {
      if (!created.includes(f)) created.push(f);
      save();
    },
    delete(f: string) {
      created = created.filter((c) => c !== f);
      save();
    },
  };
}

function assertRegistry(root: string): void {
  if (!fs.existsSync(path.join(root, KIND_DIRS.server)))
    throw new Error(`${root} has no ${KIND_DIRS.server}/: is --root the folder that holds the registry?`);
}

/** Writes the agent's entry and declares its client; running it twice changes nothing the second time. */
export async function addAgent(id: string, opts: AgentClientOptions & { scope?: Scope }): Promise<ChangeReport> {
  await loadFormats();
  const spec = agentSpec(id);
  const client = clientOf(spec.id);
  const name = opts.entryName ?? DEFAULT_ENTRY;
  assertRegistry(opts.root);
  const file = spec.file(opts.agentEnv);
  const target = editedFile(file);
  const text = readText(target);
  const wanted = spec.entry(bridgeCommand(opts, client));
  const { entry: existing } = readEntry(spec, text, name, file);
  if (existing && !isOurBridge(existing, opts, client)) {
    throw new Error(
      `${file} already has an MCP server named '${name}' that runs something else (${describe(existing)}); ` +
        `pick another name with --name, or remove that entry first`,
    );
  }
  // Computed (and checked) before anything is written, so a file that cannot be edited changes nothing.
  const same = existing !== undefined && isDeepStrictEqual(existing, wanted);
  const next = same ? text : withEntry(spec, text, name, wanted, `${spec.label} -> ${JSON.stringify(opts.root)}`);

  const changes: string[] = [];
  const declared = declaredClient(opts.root, client);
  const scopes = opts.scope === 'write' ? ['read', 'write'] : ['read'];
  const writer = new RegistryWriter(opts.root);
  if (!declared) {
    await writer.upsert('client', { name: client, description: `${spec.label}, ${ADDED_BY}`, mcp_allow: scopes });
    changes.push(`declared the client '${client}' (${KIND_DIRS.client}/${client}.yaml, scopes: ${scopes.join(', ')})`);
  } else if (opts.scope && !isDeepStrictEqual(declared.mcp_allow ?? ['read'], scopes)) {
    await writer.upsert('client', { ...declared, name: client, mcp_allow: scopes });
    changes.push(`changed the scopes of '${client}' to ${scopes.join(', ')}`);
  }
  const tokens = new ClientTokens(runtimePaths(opts.root, opts.env ?? process.env).tokensDir);
  const hadToken = fs.existsSync(tokens.fileOf(client));
  const token = tokens.tokenFor(client);
  if (!hadToken) changes.push(`created the token of '${client}' (${token.file}, readable only by you)`);
  if (!same) {
    if (!fs.existsSync(file)) createdFiles(opts).add(file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    await writeFileAtomic(target, next);
    changes.push(`${existing ? 'updated' : 'added'} the MCP server '${name}' in ${file}`);
  }
  return { changes, file, client };
}

/** Undoes what `addAgent` did: the entry, and the client and its token if `add` declared it. */
export async function removeAgent(id: string, opts: AgentClientOptions): Promise<ChangeReport> {
  await loadFormats();
  const spec = agentSpec(id);
  const client = clientOf(spec.id);
  const name = opts.entryName ?? DEFAULT_ENTRY;
  const file = spec.file(opts.agentEnv);
  const target = editedFile(file);
  const text = readText(target);
  const { entry } = readEntry(spec, text, name, file);
  if (entry && !isOurBridge(entry, opts, client)) {
    throw new Error(
      `the MCP server '${name}' in ${file} is not the bridge to ${opts.root} as '${client}' (it runs ${describe(entry)}); left as it is`,
    );
  }
  const changes: string[] = [];
  if (entry) {
    const next = withoutEntry(spec, text, name);
    const created = createdFiles(opts);
    if (next.empty && created.has(file)) {
      fs.rmSync(file);
      created.delete(file);
      changes.push(`removed ${file} (add had created it for the '${name}' entry alone)`);
    } else {
      await writeFileAtomic(target, next.text);
      changes.push(`removed the MCP server '${name}' from ${file}`);
    }
  }
  const declared = declaredClient(opts.root, client);
  if (declared?.description?.endsWith(ADDED_BY)) {
    const tokens = new ClientTokens(runtimePaths(opts.root, opts.env ?? process.env).tokensDir);
    // A running broker deletes a removed client's token itself, maybe before the revoke below:
    // the report says what happened to the file, whoever deleted it.
    const tokenFile = tokens.fileOf(client);
    const hadToken = fs.existsSync(tokenFile);
    await new RegistryWriter(opts.root).remove('client', client);
    changes.push(`removed the client '${client}' (${KIND_DIRS.client}/${client}.yaml)`);
    tokens.revoke(client);
    if (hadToken && !fs.existsSync(tokenFile)) changes.push(`deleted the token of '${client}'`);
  }
  return { changes, file, client };
}
