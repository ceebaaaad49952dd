// `switchboard` command line: parses the command and its options and runs it. Each command is a file
// in commands/ (serve, connect, the operator's commands on the running broker, the tool-pin ones).
import { printError } from './command';
import { parseArgs } from 'node:util';
import { COUNT_TOKENS_COMMAND, countTokensFromStdin } from '../catalog/tokenCounts';
import type { Command } from './command';
import { addCommand } from './commands/add';
import { approveCommand } from './commands/approve';
import { clientsCommand } from './commands/clients';
import { connectCommand } from './commands/connect';
import { importCommand } from './commands/import';
import { lockCommand } from './commands/lock';
import { loginCommand } from './commands/login';
import { logoutCommand } from './commands/logout';
import { logsCommand } from './commands/logs';
import { policiesCommand } from './commands/policies';
import { reviewCommand } from './commands/review';
import { searchCommand } from './commands/search';
import { secretCommand } from './commands/secret';
import { serveCommand } from './commands/serve';
import { statusCommand } from './commands/status';
import { tokenCommand } from './commands/token';
import { verifyCommand } from './commands/verify';

/** Every command, in the order `switchboard --help` lists them. */
const commands: Record<string, Command> = {
  serve: serveCommand,
  connect: connectCommand,
  status: statusCommand,
  approve: approveCommand,
  policies: policiesCommand,
  logs: logsCommand,
  login: loginCommand,
  logout: logoutCommand,
  secret: secretCommand,
  token: tokenCommand,
  clients: clientsCommand,
  import: importCommand,
  search: searchCommand,
  add: addCommand,
  review: reviewCommand,
  lock: lockCommand,
  verify: verifyCommand,
};

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
  if (name === COUNT_TOKENS_COMMAND) return countTokensFromStdin(rest[0]);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(mainHelp());
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    printError(`switchboard: unknown command '${name}'\n\n${mainHelp()}`);
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
    printError(`switchboard ${name}: ${(err as Error).message}\n\n${command.usage}\n`);
    return 2;
  }
  return command.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
}
