// `switchboard status`: show the servers of the running broker and their state.
import { type Command, rootOption, rootOf, withOperator, table, firstLine, print, printJson } from '../command';

export const statusCommand: Command = {
  summary: 'show the servers of the running broker and their state',
  usage: `switchboard status [--root <dir>] [--json]

  --root <dir>  registry root (default: .)
  --json        print the full state as JSON`,
  options: { ...rootOption, json: { type: 'boolean' } },
  async run(values) {
    const root = rootOf(values);
    return withOperator(root, async (client, record) => {
      const { servers } = await client.call('list_servers', {});
      const { problems } = await client.call('registry_problems', {});
      const { clients } = await client.call('list_clients', {});
      if (values.json) {
        printJson({ broker: record, servers, clients, problems });
        return 0;
      }
      print(`Broker pid ${record.pid} at ${record.url}\n  operator token: ${record.operatorTokenFile}\n\n`);
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
      print(table([['SERVER', 'STATE', 'TRUST', 'PID', 'TOOLS', 'TOKENS', 'RESTARTS', 'LAST ERROR'], ...rows]) + '\n');
      // A table cell holds one line; an error with more (a process's last output) follows in full.
      const long = servers.filter((s) => s.lastError && firstLine(s.lastError) !== s.lastError);
      for (const s of long) print(`\n${s.name}: ${s.lastError!.replace(/\n/g, '\n    ')}\n`);
      // What each client's profile costs per request when it lists all its tools (toolMode all).
      const costs = clients
        .filter((c) => c.toolTokens !== undefined)
        .map((c) => {
          const note = c.toolMode === 'search' ? ' if it listed them all (toolMode search)' : '';
          return `  ${c.name}: ${c.toolTokens}${note}`;
        });
      if (costs.length) {
        print(`\nTool-definition tokens per client profile (cl100k_base):\n${costs.join('\n')}\n`);
      }
      if (problems.length) print(`\nRegistry problems:\n${problems.map((p) => `  ${p.text}`).join('\n')}\n`);
      return 0;
    });
  },
};
