// `switchboard connect`: bridge stdio to the workspace broker (for terminal agents), starting it if needed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Bridge } from '../bridge';
import { ClientTokens } from '../../trust/clientTokens';
import { liveRecord } from '../../daemon/discovery';
import { launchBroker } from '../../daemon/brokerLauncher';
import { OperatorClient } from '../../daemon/operatorClient';
import { runtimePaths } from '../../shared/userState';
import type { BrokerRecord } from '../../daemon/runtime';
import { KIND_DIRS } from '../../../registry/schema';
import { pollUntil, rootOf, rootOption, type Command, printError } from '../command';

/** A broker the bridge starts outlives it, and exits once no agent has used it for this long. */
const BRIDGE_IDLE_EXIT_SECONDS = 600;
const STARTING_WAIT_MS = 8000;

export const connectCommand: Command = {
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
    const root = rootOf(values);
    const paths = runtimePaths(root);
    const client = values.client as string | undefined;
    const log = (line: string): void => {
      printError(`[switchboard connect] ${line}\n`);
    };
    let token: string | undefined;
    if (client) {
      const refused = undeclaredClient(root, client);
      if (refused) {
        printError(`switchboard connect: ${refused}\n`);
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
};

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

/** Waits (at most `ms`) until no server of a fresh broker is still starting. */
async function untilServersSettle(record: BrokerRecord, ms: number, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + ms;
  let client: OperatorClient | undefined;
  try {
    const operator = await OperatorClient.connect(record);
    client = operator;
    let starting: string[] = [];
    const settled = await pollUntil(
      async () => {
        const { servers } = await operator.call('list_servers', {});
        starting = servers.filter((s) => s.state === 'starting').map((s) => s.name);
        return starting.length === 0 ? true : undefined;
      },
      deadline,
      150,
    );
    if (!settled)
      log(`still starting: ${starting.join(', ')}; their tools appear when they are up (tools/list_changed)`);
  } catch (err) {
    log(`could not read the broker's state (${(err as Error).message}); continuing`);
  } finally {
    await client?.close().catch(() => undefined);
  }
}
