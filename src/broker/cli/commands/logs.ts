// `switchboard logs`: print a server's recent log lines (operator).
import { type Command, rootOption, rootOf, withOperator, parseNumber, print } from '../command';

export const logsCommand: Command = {
  summary: "print a server's recent log lines",
  usage: `switchboard logs <server> [--root <dir>] [--lines <n>]`,
  options: { ...rootOption, lines: { type: 'string', short: 'n' } },
  async run(values, positionals) {
    const name = positionals[0];
    if (!name) throw new Error('name the server: switchboard logs <server>');
    const root = rootOf(values);
    return withOperator(root, async (client) => {
      const { lines } = await client.call('tail_logs', { name, lines: parseNumber(values.lines, 'lines', 50) });
      for (const l of lines) print(`${l.at} ${l.stream.padEnd(6)} ${l.text}\n`);
      return 0;
    });
  },
};
