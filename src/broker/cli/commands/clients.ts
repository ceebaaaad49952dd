// `switchboard clients`: list the coding agents it can connect; connect one to this broker (add) or undo that (remove).
import * as os from 'node:os';
import * as path from 'node:path';
import {
  addAgent,
  AGENT_IDS,
  AGENTS,
  listAgents,
  removeAgent,
  type AgentClientOptions,
  type Scope,
} from '../agentClients';
import { type Command, rootOption, rootOf, table, print, printJson } from '../command';

export const clientsCommand: Command = {
  summary: 'list the coding agents it can connect; connect one to this broker (add) or undo that (remove)',
  usage: `switchboard clients [--root <dir>] [--home <dir>] [--json]
  switchboard clients add <agent> [--root <dir>] [--scope read|write] [--name <entry>] [--home <dir>]
  switchboard clients remove <agent> [--root <dir>] [--name <entry>] [--home <dir>]

  Without a subcommand: each agent, its configuration file, and whether that file already runs
  this workspace's broker. add writes the agent's own MCP configuration so that it starts the stdio
  bridge (node .../dist/broker.js connect --root <dir> --client <agent>), declares the agent as a
  client of its own (clients.d/<agent>.yaml) and creates its token (per user, outside the workspace).
  Running it again changes nothing. remove undoes what add did and leaves the rest of the file as it was.

  Agents: ${AGENT_IDS.join(', ')}

  --root <dir>     registry root (default: .)
  --scope <s>      read (default for a new client) or write (may also enable, restart, upsert...)
  --name <entry>   the server's name in the agent's configuration (default: switchboard)
  --home <dir>     look for the agents' files under <dir> instead of your home directory
                   (CODEX_HOME, COPILOT_HOME and the like are then ignored)
  --json           print the list as JSON`,
  options: {
    ...rootOption,
    home: { type: 'string' },
    scope: { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(values, positionals) {
    const [sub, agent, ...extra] = positionals;
    const opts = agentClientOptions(values);
    if (sub === undefined || sub === 'list') {
      const rows = await listAgents(opts);
      if (values.json) {
        printJson(rows);
        return 0;
      }
      const table_ = rows.map((r) => [
        r.id,
        r.label,
        r.installed ? 'yes' : 'no',
        r.configured === 'yes' ? 'yes' : r.configured === 'other' ? 'no (the name runs something else)' : 'no',
        r.scopes ? r.scopes.join(', ') : '-',
        r.file,
      ]);
      // The command as this one was run (`node dist/broker.js …`): a plain `switchboard` is not on PATH.
      const self = path.relative(process.cwd(), process.argv[1]) || process.argv[1];
      print(
        table([['AGENT', 'NAME', 'FOUND', 'CONNECTED', 'SCOPES', 'CONFIGURATION FILE'], ...table_]) +
          `\n\nConnect one: node ${self} clients add <agent> --root ${opts.root}\n`,
      );
      return 0;
    }
    if (sub !== 'add' && sub !== 'remove')
      throw new Error(`unknown subcommand '${sub}': use 'clients', 'clients add <agent>' or 'clients remove <agent>'`);
    if (!agent) throw new Error(`name the agent: switchboard clients ${sub} <agent> (one of ${AGENT_IDS.join(', ')})`);
    if (extra.length) throw new Error(`unexpected argument '${extra[0]}'`);
    const scope = values.scope as string | undefined;
    if (scope !== undefined && scope !== 'read' && scope !== 'write')
      throw new Error(`--scope must be read or write, got '${scope}'`);
    if (sub === 'remove' && scope !== undefined) throw new Error('--scope is for add');
    const report =
      sub === 'add'
        ? await addAgent(agent, { ...opts, scope: scope as Scope | undefined })
        : await removeAgent(agent, opts);
    if (report.changes.length === 0) {
      print(
        sub === 'add'
          ? `${agent} already runs this broker's bridge as '${report.client}' (${report.file}): nothing changed.\n`
          : `${agent} has no Switchboard entry in ${report.file}: nothing to remove.\n`,
      );
      return 0;
    }
    for (const c of report.changes) print(`- ${c}\n`);
    const label = AGENTS.find((a) => a.id === agent)?.label ?? agent;
    if (sub === 'add')
      print(`Restart ${label} (or reload its MCP servers) to connect; it calls as '${report.client}'.\n`);
    return 0;
  },
};

/** Where `clients` looks and what the bridge it writes runs: this node and this bundle. */
function agentClientOptions(values: Record<string, string | boolean | undefined>): AgentClientOptions {
  const home = values.home as string | undefined;
  return {
    root: rootOf(values),
    // --home puts every agent's file under it; the agents' own variables would point elsewhere.
    agentEnv: home
      ? { home: path.resolve(home), platform: process.platform, env: {} }
      : { home: os.homedir(), platform: process.platform, env: process.env },
    node: process.execPath,
    script: __filename,
    entryName: values.name as string | undefined,
  };
}
