// `switchboard` command line: serve, connect (the stdio bridge), and the operator's commands, which
// run control operations on the running broker.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import * as readline from 'node:readline';
import { approvalSummaryBlock } from './approvalSummary';
import { Bridge } from './bridge';
import { ClientTokens } from './clientTokens';
import { serveOrReuse, type RunningBroker } from './daemon';
import { liveRecord } from './discovery';
import { launchBroker } from './launcher';
import { findBroker, OperatorClient } from './operatorClient';
import { pinCommands } from './pinCommands';
import { runtimePaths, type BrokerRecord } from './runtime';

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
            'Connect any MCP client over Streamable HTTP with the token as a bearer header, e.g.:',
            `  npx @modelcontextprotocol/inspector --transport http --server-url ${url} ` +
              `--header "Authorization: Bearer $(cat ${paths.operatorTokenFile})"`,
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

Example (Claude Code):  claude mcp add switchboard -- npx switchboard connect --root . --client terminal

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
        if (values.json) {
          process.stdout.write(JSON.stringify({ broker: record, servers, problems }, null, 2) + '\n');
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
          String(s.restarts),
          s.lastError ?? '',
        ]);
        process.stdout.write(
          table([['SERVER', 'STATE', 'TRUST', 'PID', 'TOOLS', 'RESTARTS', 'LAST ERROR'], ...rows]) + '\n',
        );
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
  // review, lock and verify: the tool pins (pinCommands.ts).
  ...pinCommands,
};

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
