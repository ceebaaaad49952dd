// `switchboard` command line: serve, connect (the stdio bridge), and the operator's commands, which
// run control operations on the running broker.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import * as readline from 'node:readline';
import {
  addAgent,
  AGENT_IDS,
  AGENTS,
  listAgents,
  removeAgent,
  type AgentClientOptions,
  type Scope,
} from './agentClients';
import { approvalSummaryBlock } from '../trust/approvalSummary';
import { Bridge } from './bridge';
import { ClientTokens } from '../trust/clientTokens';
import { serveOrReuse, type RunningBroker } from '../daemon/daemon';
import { liveRecord } from '../daemon/discovery';
import { launchBroker } from '../daemon/brokerLauncher';
import { findBroker, OperatorClient } from '../daemon/operatorClient';
import { parseLogRate } from '../http/logRateLimit';
import { pinCommands } from './pinCommands';
import { runtimePaths, switchboardHome } from '../shared/userState';
import type { BrokerRecord } from '../daemon/runtime';
import { openBrowser } from '../auth/browserOpener';
import { SecretStore } from '../auth/secretStore';
import { KIND_DIRS } from '../../registry/schema';
import { webAddressProblem } from '../../registry/webAddress';
import { serverJsonChoices, parseServerJson, serverJsonToDefinition } from '../../registry/serverJson';
import { RegistryValidationError, RegistryWriter } from '../../registry/writer';
import { COUNT_TOKENS_COMMAND, countTokensFromStdin } from '../catalog/tokenCounts';
import { isSettling } from '../supervision/upstreamStates';

interface Command {
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number | undefined>;
}

const rootOption = { root: { type: 'string' as const, short: 'r' } };

/** A broker the bridge starts outlives it, and exits once no agent has used it for this long. */
const BRIDGE_IDLE_EXIT_SECONDS = 600;

const commands: Record<string, Command> = {
  serve: {
    summary: 'run the broker for a workspace registry (or reuse the one already running)',
    usage: `switchboard serve [--root <dir>] [--port <n>] [--untrusted] [--accept-workspace-trust]
                 [--idle-exit <s>] [--json]

Runs the broker on the registry in <dir> (default: the current directory), which holds
mcp-servers.d/, prompts.d/ and clients.d/. Serves MCP Streamable HTTP on 127.0.0.1 only.
If a broker already serves <dir>, prints its endpoint and exits (one broker per workspace).

  --root <dir>        registry root (default: .)
  --port <n>          port to listen on; 0 picks a free one (default: 0)
  --untrusted         read the registry but start no server from it (untrusted workspace)
  --accept-workspace-trust
                      start the servers the workspace marks trusted or builtin without asking
                      (for scripts; on a terminal serve lists them and asks once, and the answer
                      is remembered for you per definition)
  --idle-exit <s>     exit after <s> seconds in which no client held a stream or sent a request
  --max-body <bytes>  largest request body accepted (default: 4194304)
  --log-rate <n>[/<burst>]
                      log messages per second from one server that reach the agents, after a
                      burst (default: 50/100); what is over it is dropped and counted
  --session-idle <s>  close a session after <s> seconds without a request or stream (default: 1800)
  --json              print one JSON line when ready instead of the human summary`,
    options: {
      'session-idle': { type: 'string' },
      ...rootOption,
      port: { type: 'string', short: 'p' },
      untrusted: { type: 'boolean' },
      'accept-workspace-trust': { type: 'boolean' },
      'idle-exit': { type: 'string' },
      'max-body': { type: 'string' },
      'log-rate': { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(values) {
      const root = path.resolve(String(values.root ?? '.'));
      const port = parseNumber(values.port, 'port', 0);
      const json = values.json === true;
      const idleExit = values['idle-exit'] !== undefined ? parseNumber(values['idle-exit'], 'idle-exit', 0) : undefined;
      const log = (line: string): void => {
        process.stderr.write(`[switchboard] ${line}\n`);
      };
      const outcome = await serveOrReuse({
        root,
        port,
        untrusted: values.untrusted === true,
        acceptWorkspaceTrust: acceptsWorkspaceTrust(values['accept-workspace-trust'] === true),
        maxBodyBytes: values['max-body'] ? parseNumber(values['max-body'], 'max-body', 0) : undefined,
        logRate: values['log-rate'] !== undefined ? parseLogRate(String(values['log-rate'])) : undefined,
        idleSessionMs: values['session-idle']
          ? parseNumber(values['session-idle'], 'session-idle', 0) * 1000
          : undefined,
        log,
      });
      if ('reused' in outcome) {
        const r = outcome.reused;
        if (json)
          process.stdout.write(
            JSON.stringify({
              event: 'ready',
              reused: true,
              url: r.url,
              port: r.port,
              pid: r.pid,
              root,
              tokenFile: r.operatorTokenFile,
            }) + '\n',
          );
        else
          process.stdout.write(
            `A broker already serves ${root} (pid ${r.pid}): ${r.url}\n  token file  ${r.operatorTokenFile}\n`,
          );
        return 0;
      }
      const running = outcome.started;
      const { url, paths } = running;
      if (json) {
        process.stdout.write(
          JSON.stringify({
            event: 'ready',
            url,
            port: running.port,
            pid: process.pid,
            root,
            tokenFile: paths.operatorTokenFile,
          }) + '\n',
        );
      } else {
        const cliPath = path.relative(process.cwd(), process.argv[1]) || process.argv[1];
        process.stdout.write(
          [
            `MCP Switchboard is serving ${root}`,
            `  endpoint    ${url}`,
            `  token file  ${paths.operatorTokenFile}  (operator token; keep it private)`,
            '',
            'The port is picked at random on each start (--port <n> fixes it). Connect any MCP client over',
            'Streamable HTTP with the token as a bearer header; e.g. the MCP Inspector (it needs Node >= 22.19;',
            "'-p node@24' brings one from npm on an older Node):",
            `  npx -y -p node@24 -p @modelcontextprotocol/inspector@2 -- mcp-inspector --cli ${url} ` +
              `--transport http --method tools/list --header "Authorization: Bearer $(cat ${paths.operatorTokenFile})"`,
            `or bridge a stdio-only agent:  node ${cliPath} connect --root ${root} --client terminal`,
            `Status of the servers:         node ${cliPath} status --root ${root}`,
            '',
            'Press Ctrl+C to stop.',
            '',
          ].join('\n'),
        );
      }
      let stopping = false;
      const shutdown = (why: string): void => {
        if (stopping) return;
        stopping = true;
        log(`${why}: stopping upstreams`);
        void running.stop().then(() => process.exit(0));
      };
      process.on('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGHUP', () => shutdown('SIGHUP'));
      if (idleExit !== undefined) {
        setInterval(
          () => {
            if (running.broker.endpoint.idleMs() >= idleExit * 1000)
              shutdown(`idle for ${idleExit} s: no client holds the broker`);
          },
          Math.min(1000, Math.max(100, idleExit * 250)),
        ).unref();
      }
      if (!json && process.stdin.isTTY) await askWorkspaceTrust(running, () => shutdown('SIGINT'));
      return undefined;
    },
  },
  connect: {
    summary: 'bridge stdio to the workspace broker (for terminal agents), starting it if needed',
    usage: `switchboard connect [--root <dir>] [--client <name>] [--no-start]

Speaks MCP over stdin/stdout and forwards everything to the broker serving <dir>, so a
stdio-only agent (Claude Code, Codex, ...) shares the workspace's one broker. With --client
the bridge calls as that client from clients.d/ (its scopes apply; the token is created on
first use); without it, as the operator. If no broker runs, one is started in the background
(it exits after 10 idle minutes). Survives broker restarts; stdin EOF ends the session.

Example (Claude Code):
  claude mcp add switchboard -- node /path/to/dist/broker.js connect --root /path/to/registry --client terminal

  --root <dir>     registry root (default: .)
  --client <name>  call as this declared client
  --no-start       fail instead of starting a broker`,
    options: { ...rootOption, client: { type: 'string', short: 'c' }, 'no-start': { type: 'boolean' } },
    async run(values) {
      const root = path.resolve(String(values.root ?? '.'));
      const paths = runtimePaths(root);
      const client = values.client as string | undefined;
      const log = (line: string): void => {
        process.stderr.write(`[switchboard connect] ${line}\n`);
      };
      let token: string | undefined;
      if (client) {
        const refused = undeclaredClient(root, client);
        if (refused) {
          process.stderr.write(`switchboard connect: ${refused}\n`);
          return 2;
        }
        const tokens = new ClientTokens(paths.tokensDir);
        token = tokens.tokenFor(client).token;
      }
      const discover = async () => {
        let record = await liveRecord(paths, root);
        if (!record && values['no-start'] !== true) {
          const script = process.argv[1];
          record = await launchBroker({
            root,
            script,
            idleExitSeconds: BRIDGE_IDLE_EXIT_SECONDS,
            log: { info: log, warn: log },
          });
          // A broker started just now has its servers still starting: give them a moment, so the
          // agent's first tools/list has their tools rather than only the broker's own.
          await untilServersSettle(record, STARTING_WAIT_MS, log);
        }
        if (!record) throw new Error(`no broker is running for ${root}`);
        return { url: record.url, token: token ?? fs.readFileSync(record.operatorTokenFile, 'utf8').trim() };
      };
      const bridge = new Bridge({ discover, input: process.stdin, output: process.stdout, log });
      await bridge.run();
      return 0;
    },
  },
  status: {
    summary: 'show the servers of the running broker and their state',
    usage: `switchboard status [--root <dir>] [--json]

  --root <dir>  registry root (default: .)
  --json        print the full state as JSON`,
    options: { ...rootOption, json: { type: 'boolean' } },
    async run(values) {
      const root = path.resolve(String(values.root ?? '.'));
      return withOperator(root, async (client, record) => {
        const { servers } = await client.call('list_servers', {});
        const { problems } = await client.call('registry_problems', {});
        const { clients } = await client.call('list_clients', {});
        if (values.json) {
          process.stdout.write(JSON.stringify({ broker: record, servers, clients, problems }, null, 2) + '\n');
          return 0;
        }
        process.stdout.write(
          `Broker pid ${record.pid} at ${record.url}\n  operator token: ${record.operatorTokenFile}\n\n`,
        );
        const rows = servers.map((s) => [
          s.name,
          s.state,
          s.trust,
          s.pid ? String(s.pid) : '-',
          String(s.tools.length),
          s.toolTokens === undefined ? '-' : String(s.toolTokens),
          String(s.restarts),
          firstLine(s.lastError ?? ''),
        ]);
        process.stdout.write(
          table([['SERVER', 'STATE', 'TRUST', 'PID', 'TOOLS', 'TOKENS', 'RESTARTS', 'LAST ERROR'], ...rows]) + '\n',
        );
        // A table cell holds one line; an error with more (a process's last output) follows in full.
        const long = servers.filter((s) => s.lastError && firstLine(s.lastError) !== s.lastError);
        for (const s of long) process.stdout.write(`\n${s.name}: ${s.lastError!.replace(/\n/g, '\n    ')}\n`);
        // What each client's profile costs per request when it lists all its tools (toolMode all).
        const costs = clients
          .filter((c) => c.toolTokens !== undefined)
          .map((c) => {
            const note = c.toolMode === 'search' ? ' if it listed them all (toolMode search)' : '';
            return `  ${c.name}: ${c.toolTokens}${note}`;
          });
        if (costs.length) {
          process.stdout.write(`\nTool-definition tokens per client profile (cl100k_base):\n${costs.join('\n')}\n`);
        }
        if (problems.length)
          process.stdout.write(`\nRegistry problems:\n${problems.map((p) => `  ${p.text}`).join('\n')}\n`);
        return 0;
      });
    },
  },
  approve: {
    summary: 'approve a community server, or accept one the workspace marks trusted, as it is now (operator)',
    usage: `switchboard approve <server> [--root <dir>] [--revoke]

Shows everything the approval covers (command and arguments or URL, working directory, env
variables with secret-looking values masked, env file, header names, grants, tool filters;
paths outside the registry root are flagged) and records the approval of exactly that, for this
user, outside the workspace. If the definition changes between showing and approving, nothing is
approved. A later change to any of those fields (or to the env file's contents) needs a new approval.

  --revoke  withdraw the approval instead`,
    options: { ...rootOption, revoke: { type: 'boolean' } },
    async run(values, positionals) {
      const name = positionals[0];
      if (!name) throw new Error('name the server to approve: switchboard approve <server>');
      const root = path.resolve(String(values.root ?? '.'));
      return withOperator(root, async (client) => {
        if (values.revoke) {
          const status = await client.call('revoke_approval', { name });
          process.stdout.write(`Approval of '${name}' withdrawn; it is now ${status.state}.\n`);
          return 0;
        }
        const before = await client.call('server_status', { name });
        if (before.approval === 'not-needed') {
          const tier = before.trust;
          process.stdout.write(
            `'${name}' is ${tier} and this broker accepts the workspace's ${tier} servers: nothing to approve.\n`,
          );
          return 0;
        }
        process.stdout.write(`Approving '${name}':\n${approvalSummaryBlock(before.approvalItems, '  ')}\n`);
        // The hash of what was just printed: the broker refuses if the definition is no longer that.
        const args = { name, hash: before.approvalHash };
        const status = await client.call('approve_server', args);
        const error = status.lastError ? ` (${status.lastError})` : '';
        process.stdout.write(`Approved. '${name}' is now ${status.state}${error}.\n`);
        return 0;
      });
    },
  },
  logs: {
    summary: "print a server's recent log lines",
    usage: `switchboard logs <server> [--root <dir>] [--lines <n>]`,
    options: { ...rootOption, lines: { type: 'string', short: 'n' } },
    async run(values, positionals) {
      const name = positionals[0];
      if (!name) throw new Error('name the server: switchboard logs <server>');
      const root = path.resolve(String(values.root ?? '.'));
      return withOperator(root, async (client) => {
        const { lines } = await client.call('tail_logs', { name, lines: parseNumber(values.lines, 'lines', 50) });
        for (const l of lines) process.stdout.write(`${l.at} ${l.stream.padEnd(6)} ${l.text}\n`);
        return 0;
      });
    },
  },
  login: {
    summary: 'sign in to a remote server (OAuth): prints the URL, opens a browser, waits for it',
    usage: `switchboard login <server> [--root <dir>] [--no-browser]

Starts signing in to a remote server whose definition has 'auth: { type: oauth }'. Prints the
authorization URL and opens it in a browser where one exists (xdg-open, open or rundll32). The
browser returns to the broker on 127.0.0.1; the broker keeps the tokens for this user (OS
keychain, else a 0600 file under ~/.switchboard) and every client of the broker can use the
server. Waits until the sign-in completes (at most 10 minutes). Only an https: page (or http:
on this computer) is printed or opened. The URL is this sign-in's secret: whoever completes it
signs the broker in as their account, so do not share it.

  --no-browser  only print the URL (open it on any machine whose browser reaches this one)`,
    options: { ...rootOption, 'no-browser': { type: 'boolean' } },
    async run(values, positionals) {
      const name = positionals[0];
      if (!name) throw new Error('name the server to sign in to: switchboard login <server>');
      const root = path.resolve(String(values.root ?? '.'));
      return withOperator(root, async (client) => {
        const { url } = await client.call('begin_sign_in', { name });
        const refused = webAddressProblem(url);
        if (refused) {
          process.stderr.write(
            `The sign-in to '${name}' cannot go on: the broker gave an address that is not opened (${refused}).\n`,
          );
          return 1;
        }
        process.stdout.write(`To sign in to '${name}', open:\n\n  ${url}\n\n`);
        if (values['no-browser'] !== true && process.env.SWITCHBOARD_NO_BROWSER !== '1') openBrowser(url);
        process.stdout.write('Waiting for the sign-in to complete (Ctrl+C to stop waiting)...\n');
        const deadline = Date.now() + 10 * 60_000;
        while (Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 300));
          const status = await client.call('server_status', { name });
          if (status.auth?.inProgress) continue;
          if (status.auth?.lastError) {
            process.stderr.write(`Sign-in to '${name}' failed: ${status.auth.lastError}\n`);
            return 1;
          }
          if (!status.auth?.signedIn) continue;
          const settled = await settledStatus(client, name, deadline);
          const tools = settled.state === 'running' ? ` with ${settled.tools.length} tools` : '';
          const error = settled.lastError && settled.state !== 'running' ? ` (${settled.lastError})` : '';
          process.stdout.write(`Signed in. '${name}' is ${settled.state}${tools}${error}.\n`);
          return settled.state === 'running' ? 0 : 1;
        }
        process.stderr.write(`The sign-in to '${name}' was not completed in time; run switchboard login again.\n`);
        return 1;
      });
    },
  },
  logout: {
    summary: "sign out of a remote server: delete the broker's tokens for it",
    usage: `switchboard logout <server> [--root <dir>]

Deletes the tokens the broker keeps for the server; it then waits for a new sign-in.`,
    options: { ...rootOption },
    async run(values, positionals) {
      const name = positionals[0];
      if (!name) throw new Error('name the server to sign out of: switchboard logout <server>');
      const root = path.resolve(String(values.root ?? '.'));
      return withOperator(root, async (client) => {
        const status = await client.call('sign_out', { name });
        process.stdout.write(`Signed out of '${name}'; its tokens are deleted and it is now ${status.state}.\n`);
        return 0;
      });
    },
  },
  secret: {
    summary: 'set, unset or list the secrets ${input:NAME} refers to (per user)',
    usage: `switchboard secret set <NAME> [--root <dir>]
switchboard secret unset <NAME> [--root <dir>]
switchboard secret list

Keeps the value of \${input:NAME} (used in a server's env or headers) in your per-user store:
the OS keychain where one works, else a 0600 file under ~/.switchboard/secrets. 'set' reads
the value from a hidden prompt, or from stdin when it is not a terminal (never from the
command line). A running broker of the workspace (--root, default .) starts the servers that
waited for it. Values reach only servers with the 'secrets' grant.`,
    options: { ...rootOption },
    async run(values, positionals) {
      const [action, name] = positionals;
      const store = SecretStore.open(switchboardHome());
      if (action === 'list') {
        const names = store.list();
        if (names.length === 0) process.stdout.write(`No secrets stored (${store.kind}).\n`);
        for (const n of names) process.stdout.write(`${n}\n`);
        return 0;
      }
      if ((action !== 'set' && action !== 'unset') || !name)
        throw new Error('usage: switchboard secret set|unset <NAME>, or switchboard secret list');
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
        throw new Error(`'${name}' is not an input name (letters, digits, _, . or -)`);
      if (action === 'set') {
        const value = await readSecretValue(`Value of ${name} (hidden): `);
        if (!value) throw new Error(`no value given for ${name}; nothing stored`);
        store.set(name, value);
        process.stdout.write(`Stored ${name} (${store.kind === 'keychain' ? 'OS keychain' : 'private file'}).\n`);
      } else {
        const had = store.unset(name);
        process.stdout.write(had ? `Removed ${name}.\n` : `${name} was not stored.\n`);
      }
      const root = path.resolve(String(values.root ?? '.'));
      const record = await liveRecord(runtimePaths(root), root);
      if (record) {
        const client = await OperatorClient.connect(record);
        try {
          const { servers } = await client.call('set_input', { name, reload: true });
          if (servers.length) process.stdout.write(`Servers using it: ${servers.join(', ')}.\n`);
        } finally {
          await client.close();
        }
      }
      return 0;
    },
  },
  token: {
    summary: "print where a client's token is (creating it), or rotate it",
    usage: `switchboard token <client> [--root <dir>] [--rotate]

Prints the endpoint and the token file of a client declared in clients.d/. The token is
created on first use (mode 0600, outside the workspace). --rotate replaces it.`,
    options: { ...rootOption, rotate: { type: 'boolean' } },
    async run(values, positionals) {
      const name = positionals[0];
      if (!name) throw new Error('name the client: switchboard token <client>');
      const root = path.resolve(String(values.root ?? '.'));
      return withOperator(root, async (client) => {
        const info = await client.call('client_connection', { name, rotate: values.rotate === true });
        process.stdout.write(
          `client      ${name}\nendpoint    ${info.url}\ntoken file  ${info.tokenFile}\nheader      ${info.header}\n`,
        );
        return 0;
      });
    },
  },
  clients: {
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
          process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
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
        process.stdout.write(
          table([['AGENT', 'NAME', 'FOUND', 'CONNECTED', 'SCOPES', 'CONFIGURATION FILE'], ...table_]) +
            `\n\nConnect one: node ${self} clients add <agent> --root ${opts.root}\n`,
        );
        return 0;
      }
      if (sub !== 'add' && sub !== 'remove')
        throw new Error(
          `unknown subcommand '${sub}': use 'clients', 'clients add <agent>' or 'clients remove <agent>'`,
        );
      if (!agent)
        throw new Error(`name the agent: switchboard clients ${sub} <agent> (one of ${AGENT_IDS.join(', ')})`);
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
        process.stdout.write(
          sub === 'add'
            ? `${agent} already runs this broker's bridge as '${report.client}' (${report.file}): nothing changed.\n`
            : `${agent} has no Switchboard entry in ${report.file}: nothing to remove.\n`,
        );
        return 0;
      }
      for (const c of report.changes) process.stdout.write(`- ${c}\n`);
      const label = AGENTS.find((a) => a.id === agent)?.label ?? agent;
      if (sub === 'add')
        process.stdout.write(
          `Restart ${label} (or reload its MCP servers) to connect; it calls as '${report.client}'.\n`,
        );
      return 0;
    },
  },
  import: {
    summary: 'add a server from an MCP Registry server.json (file or - for stdin), as a community server',
    usage: `switchboard import <file.json|-> [--root <dir>] [--package <n> | --remote <n>] [--name <name>]
                   [--value NAME=VALUE ...]

Reads a server.json in the official MCP Registry format and writes mcp-servers.d/<name>.yaml:
npm packages run with npx, pypi with uvx, oci images with docker run, nuget with dnx, remotes
as http or sse. Secret environment variables and headers become \${input:NAME} references (the
value comes from your per-user secret store, never from the YAML). The server is community: it
runs only after you approve it (switchboard approve <name>).

  --package <n>    which of packages[] to run (0 is the first), when there are several
  --remote <n>     which of remotes[] to connect to instead
  --name <name>    the registry name (default: the last part of the server.json name)
  --value N=V      a required, non-secret value that has no default (repeatable)`,
    options: {
      ...rootOption,
      package: { type: 'string' },
      remote: { type: 'string' },
      name: { type: 'string' },
      value: { type: 'string', multiple: true },
    },
    async run(values, positionals) {
      const source = positionals[0];
      if (!source) throw new Error('name the server.json: switchboard import <file.json> (or - to read stdin)');
      const root = path.resolve(String(values.root ?? '.'));
      const text = source === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(source, 'utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new Error(`${source === '-' ? 'stdin' : source} is not JSON: ${(err as Error).message}`, { cause: err });
      }
      if (values.package !== undefined && values.remote !== undefined)
        throw new Error('give --package or --remote, not both');
      const choice =
        values.package !== undefined
          ? { kind: 'package' as const, index: parseNumber(values.package, 'package', 0) }
          : values.remote !== undefined
            ? { kind: 'remote' as const, index: parseNumber(values.remote, 'remote', 0) }
            : undefined;
      const given: Record<string, string> = {};
      for (const pair of (values.value as unknown as string[] | undefined) ?? []) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new Error(`--value takes NAME=VALUE, got '${pair}'`);
        given[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      let imported;
      try {
        imported = serverJsonToDefinition(json, { choice, values: given, name: values.name as string | undefined });
      } catch (err) {
        const doc = (() => {
          try {
            return parseServerJson(json);
          } catch {
            return undefined;
          }
        })();
        const hint =
          doc && !choice && serverJsonChoices(doc).length > 1 ? '\nPick one with --package <n> or --remote <n>.' : '';
        throw new Error(`${(err as Error).message}${hint}`, { cause: err });
      }
      const name = String(imported.definition.name);
      if (['.yaml', '.yml'].some((ext) => fs.existsSync(path.join(root, KIND_DIRS.server, name + ext))))
        throw new Error(
          `${KIND_DIRS.server}/${name}.yaml already exists; import under another name with --name <name>`,
        );
      if (!fs.existsSync(path.join(root, KIND_DIRS.server)))
        throw new Error(`${root} has no ${KIND_DIRS.server}/: is --root the folder that holds the registry?`);
      let written;
      try {
        written = await new RegistryWriter(root).upsert('server', imported.definition);
      } catch (err) {
        if (err instanceof RegistryValidationError) throw new Error(err.message, { cause: err });
        throw err;
      }
      process.stdout.write(`Wrote ${path.relative(process.cwd(), written.path) || written.path}\n`);
      for (const n of imported.notes) process.stdout.write(`- ${n}\n`);
      process.stdout.write(`Approve it to run it: switchboard approve ${name} --root ${root}\n`);
      return 0;
    },
  },
  // review, lock and verify: the tool pins (pinCommands.ts).
  ...pinCommands,
};

/** Where `clients` looks and what the bridge it writes runs: this node and this bundle. */
function agentClientOptions(values: Record<string, string | boolean | undefined>): AgentClientOptions {
  const home = values.home as string | undefined;
  return {
    root: path.resolve(String(values.root ?? '.')),
    // --home puts every agent's file under it; the agents' own variables would point elsewhere.
    agentEnv: home
      ? { home: path.resolve(home), platform: process.platform, env: {} }
      : { home: os.homedir(), platform: process.platform, env: process.env },
    node: process.execPath,
    script: __filename,
    entryName: values.name as string | undefined,
  };
}

/** A secret from a hidden terminal prompt, or the whole of stdin (one trailing newline dropped). */
async function readSecretValue(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (err?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (data: Buffer): void => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new Error('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The flag, or SWITCHBOARD_ACCEPT_WORKSPACE_TRUST=1 in the environment of whoever starts the broker. */
function acceptsWorkspaceTrust(flag: boolean): boolean {
  return flag || process.env.SWITCHBOARD_ACCEPT_WORKSPACE_TRUST === '1';
}

/**
 * On a terminal: lists the servers the workspace marks trusted/builtin that this user has not
 * accepted as they are, and accepts them on "y" (remembered per user, per definition).
 */
async function askWorkspaceTrust(running: RunningBroker, interrupted: () => void): Promise<void> {
  const ops = running.control.operations;
  const waiting = ops
    .listServers()
    .filter((s) => s.trust !== 'community' && ['required', 'changed'].includes(s.approval));
  if (!waiting.length) return;
  const n = waiting.length;
  const them = n === 1 ? 'it does' : 'they do';
  process.stdout.write(
    `This workspace marks ${n} server${n === 1 ? '' : 's'} trusted; ${them} not start until you accept:\n`,
  );
  for (const s of waiting) {
    const why = s.approval === 'changed' ? ` (${s.lastError ?? 'changed since you accepted it'})` : '';
    process.stdout.write(`\n  ${s.name}${why}\n${approvalSummaryBlock(s.approvalItems, '    ')}\n`);
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  // readline takes Ctrl+C from the terminal while it asks: it still means stop.
  rl.on('SIGINT', interrupted);
  const question = `\nStart these ${n} servers this workspace trusts? [y/N] `;
  const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) {
    process.stdout.write(
      `Not started. Accept one later with: switchboard approve <server> --root ${running.broker.root}\n\n`,
    );
    return;
  }
  for (const s of waiting) {
    try {
      const status = await ops.approve(s.name, s.approvalHash);
      // Accepted in-process, not through the facade: audit it as the facade's approvals are.
      running.broker.audit.write({
        client: 'operator',
        event: 'accept-workspace-trust',
        server: s.name,
        trust: s.trust,
      });
      process.stdout.write(`  ${s.name}: ${status.state}${status.lastError ? ` (${status.lastError})` : ''}\n`);
    } catch (err) {
      process.stdout.write(`  ${s.name}: not accepted: ${(err as Error).message}\n`);
    }
  }
  process.stdout.write('\n');
}

/** The server's status once a reconnect after sign-in has settled (running, failed, ...). */
async function settledStatus(client: OperatorClient, name: string, deadline: number) {
  // The reconnect starts just after the tokens are stored: the old state may still show for a moment.
  const until = Math.min(deadline, Date.now() + 30_000);
  for (;;) {
    const status = await client.call('server_status', { name });
    if (!isSettling(status.state) || Date.now() > until) return status;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs `fn` with an operator session on the broker serving `root`, and closes it after. */
async function withOperator(
  root: string,
  fn: (client: OperatorClient, record: BrokerRecord) => Promise<number>,
): Promise<number> {
  const record = await findBroker(root);
  const client = await OperatorClient.connect(record);
  try {
    return await fn(client, record);
  } finally {
    await client.close();
  }
}

/** Why `--client name` cannot work for `root` (no clients.d/<name>.yaml), with the fix; undefined if it can. */
export function undeclaredClient(root: string, name: string): string | undefined {
  const dir = path.join(root, KIND_DIRS.client);
  if (['.yaml', '.yml'].some((ext) => fs.existsSync(path.join(dir, `${name}${ext}`)))) return undefined;
  const noRegistry = !fs.existsSync(path.join(root, KIND_DIRS.server));
  return (
    `client '${name}' is not declared in ${root}: there is no ${KIND_DIRS.client}/${name}.yaml. ` +
    `Create it (for example with the line 'mcp_allow: [read]'), or leave out --client to connect as the operator.` +
    (noRegistry ? ` ${root} has no ${KIND_DIRS.server}/ either: is --root the folder that holds the registry?` : '')
  );
}

const STARTING_WAIT_MS = 8000;

/** Waits (at most `ms`) until no server of a fresh broker is still starting. */
async function untilServersSettle(record: BrokerRecord, ms: number, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + ms;
  let client: OperatorClient | undefined;
  try {
    client = await OperatorClient.connect(record);
    for (;;) {
      const { servers } = await client.call('list_servers', {});
      const starting = servers.filter((s) => s.state === 'starting').map((s) => s.name);
      if (starting.length === 0) return;
      if (Date.now() > deadline) {
        log(`still starting: ${starting.join(', ')}; their tools appear when they are up (tools/list_changed)`);
        return;
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  } catch (err) {
    log(`could not read the broker's state (${(err as Error).message}); continuing`);
  } finally {
    await client?.close().catch(() => undefined);
  }
}

/** The first line of `text`, cut to a width a terminal row can hold; '…' says there is more. */
function firstLine(text: string, width = 80): string {
  const line = text.split(/\r?\n/, 1)[0].replace(/[;:]\s*$/, '');
  if (line === text && line.length <= width) return text;
  return line.length > width - 2 ? `${line.slice(0, width - 1)}…` : `${line} …`;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n');
}

function parseNumber(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} must be a non-negative integer, got '${String(value)}'`);
  return n;
}

function mainHelp(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `MCP Switchboard: one local broker for every MCP server in a workspace.

Usage: switchboard <command> [options]

Commands:
${lines.join('\n')}

Run 'switchboard <command> --help' for a command's options.
`;
}

export async function runCli(argv: string[]): Promise<number | undefined> {
  const [name, ...rest] = argv;
  // Not a user command: the broker runs itself this way to count tokens out of its own heap.
  if (name === COUNT_TOKENS_COMMAND) return countTokensFromStdin();
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(mainHelp());
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`switchboard: unknown command '${name}'\n\n${mainHelp()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.usage + '\n');
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`switchboard ${name}: ${(err as Error).message}\n\n${command.usage}\n`);
    return 2;
  }
  return command.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
}
