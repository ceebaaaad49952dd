import * as path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { startBroker } from './daemon';

interface Command {
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number | undefined>;
}

const rootOption = { root: { type: 'string' as const, short: 'r' } };

const commands: Record<string, Command> = {
  serve: {
    summary: 'run the broker for a workspace registry',
    usage: `switchboard serve [--root <dir>] [--port <n>] [--untrusted] [--json]

Runs the broker on the registry in <dir> (default: the current directory), which holds
mcp-servers.d/, prompts.d/ and clients.d/. Serves MCP Streamable HTTP on 127.0.0.1 only.

  --root <dir>        registry root (default: .)
  --port <n>          port to listen on; 0 picks a free one (default: 0)
  --untrusted         read the registry but start no server from it (untrusted workspace)
  --idle-exit <s>     exit after <s> seconds with no session and no holder
  --max-body <bytes>  largest request body accepted (default: 4194304)
  --json              print one JSON line when ready instead of the human summary`,
    options: {
      ...rootOption,
      port: { type: 'string', short: 'p' },
      untrusted: { type: 'boolean' },
      'idle-exit': { type: 'string' },
      'max-body': { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(values) {
      const root = path.resolve(String(values.root ?? '.'));
      const port = parseNumber(values.port, 'port', 0);
      const json = values.json === true;
      const log = (line: string): void => { process.stderr.write(`[switchboard] ${line}\n`); };
      const running = await startBroker({
        root,
        port,
        untrusted: values.untrusted === true,
        maxBodyBytes: values['max-body'] ? parseNumber(values['max-body'], 'max-body', 0) : undefined,
        log,
      });
      const { url, paths } = running;
      if (json) {
        process.stdout.write(JSON.stringify({ event: 'ready', url, port: running.port, pid: process.pid, root, tokenFile: paths.operatorTokenFile }) + '\n');
      } else {
        process.stdout.write([
          `MCP Switchboard is serving ${root}`,
          `  endpoint    ${url}`,
          `  token file  ${paths.operatorTokenFile}  (operator token; keep it private)`,
          '',
          'Connect any MCP client over Streamable HTTP with the token as a bearer header, e.g.:',
          `  npx @modelcontextprotocol/inspector --transport http --server-url ${url} --header "Authorization: Bearer $(cat ${paths.operatorTokenFile})"`,
          'or bridge a stdio-only agent with:  switchboard connect --root ' + root,
          '',
          'Press Ctrl+C to stop.',
          '',
        ].join('\n'));
      }
      let stopping = false;
      const shutdown = (signal: string): void => {
        if (stopping) return;
        stopping = true;
        log(`${signal}: stopping upstreams`);
        void running.stop().then(() => process.exit(0));
      };
      process.on('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      running.broker.on('state', () => undefined);
      return undefined;
    },
  },
};

function parseNumber(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got '${String(value)}'`);
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
