// `switchboard search`: find servers in the MCP Registry (or the registries configured), as a table.
import { registryClients } from '../../control/registryClient/registries';
import { searchRegistries } from '../../control/registryClient/registryClient';
import { type Command, firstLine, parseNumber, print, printError, printJson, table } from '../command';

export const searchCommand: Command = {
  summary: 'find servers in the MCP Registry (or your registries) by words',
  usage: `switchboard search <words...> [--registry <url> ...] [--limit <n>] [--cursor <c>] [--json]

  Asks the MCP Registry's v0 API (GET /v0/servers?search=…&version=latest) and prints one row per
  server: its registry name, description, latest version, transport, the package or remote URL it
  runs, and whether it needs secrets. Add one with 'switchboard add <name>[@version]'.

  --registry <url>  a registry to ask (repeatable; default: SWITCHBOARD_REGISTRIES, else
                    ${'https://registry.modelcontextprotocol.io'})
  --limit <n>       servers per page from each registry (default 20, at most 100)
  --cursor <c>      the next page, as the previous search printed it
  --json            print the servers, problems and next cursor as JSON`,
  options: {
    registry: { type: 'string', multiple: true },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(values, positionals) {
    const words = positionals.join(' ').trim();
    const clients = registryClients(values.registry as unknown as string[] | undefined);
    const limit = parseNumber(values.limit, 'limit', 20);
    const result = await searchRegistries(clients, {
      search: words || undefined,
      limit,
      cursor: values.cursor as string | undefined,
    });
    if (values.json) {
      printJson(result);
      return 0;
    }
    for (const p of result.problems) printError(`⚠ ${p}\n`);
    if (!result.servers.length) {
      print(`No servers match '${words}'.\n`);
      return 0;
    }
    const several = clients.length > 1;
    const rows = result.servers.map((s) => [
      s.name,
      firstLine(s.description, 50),
      s.version,
      s.transport,
      firstLine(s.runs, 50),
      s.needsSecrets ? 'yes' : 'no',
      ...(several ? [s.registry] : []),
    ]);
    const head = [
      'NAME',
      'DESCRIPTION',
      'VERSION',
      'TRANSPORT',
      'PACKAGE OR REMOTE',
      'SECRETS',
      ...(several ? ['REGISTRY'] : []),
    ];
    print(table([head, ...rows]) + '\n');
    if (result.nextCursor) {
      const again = ['switchboard search', ...(words ? [JSON.stringify(words)] : []), '--cursor', result.nextCursor];
      print(`\nMore: ${again.join(' ')}\n`);
    }
    print(`Add one: switchboard add <name>[@version]\n`);
    return 0;
  },
};
