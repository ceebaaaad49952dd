// `switchboard add`: add a server from an MCP Registry by its registry name, through the same import
// as `switchboard import` (a community server), asking for its secrets and showing what approval covers.
import * as path from 'node:path';
import { parseServerRef } from '../../../registry/registryApi';
import { SecretStore } from '../../connection/auth/secretStore';
import { liveRecord } from '../../daemon/discovery';
import { OperatorClient } from '../../daemon/operatorClient';
import { registryClients } from '../../control/registryClient/registries';
import type { RegistryServer } from '../../../registry/registryApi';
import { approvalLines, approvalSummaryBlock } from '../../trust/approvalSummary';
import { runtimePaths, switchboardHome } from '../../shared/userState';
import { type Command, print, readSecretValue, rootOption, rootOf } from '../command';
import { SERVER_JSON_OPTIONS_HELP, serverJsonOptions, writeServerJson } from '../serverJsonWrite';

export const addCommand: Command = {
  summary: 'add a server from the MCP Registry by name (name[@version]), as a community server',
  usage: `switchboard add <name>[@version] [--root <dir>] [--registry <url> ...] [--no-secrets]
                [--package <n> | --remote <n>] [--name <name>] [--value NAME=VALUE ...]

  Fetches the server's server.json from the registry (its latest version unless @version pins one)
  and writes mcp-servers.d/<name>.yaml exactly as 'switchboard import' does: a community server that
  runs only after you approve it. Then asks for each secret it needs that you have not stored yet
  (a hidden prompt; or one per line on stdin when stdin is not a terminal) and shows what approving
  it covers.

  --registry <url>  a registry to ask (repeatable; default: SWITCHBOARD_REGISTRIES, else the official one)
  --no-secrets      do not ask for secrets now ('switchboard secret set NAME' later)
${SERVER_JSON_OPTIONS_HELP}`,
  options: {
    ...rootOption,
    ...serverJsonOptions,
    registry: { type: 'string', multiple: true },
    'no-secrets': { type: 'boolean' },
  },
  async run(values, positionals) {
    const ref = positionals[0];
    if (!ref) throw new Error('name the server: switchboard add <name>[@version] (find one with switchboard search)');
    const { name, version } = parseServerRef(ref);
    const root = rootOf(values);
    const found = await fetchServer(registryClients(values.registry as unknown as string[] | undefined), name, version);
    const written = await writeServerJson(found.entry.server, root, values);
    const file = path.relative(process.cwd(), written.path) || written.path;
    print(`Wrote ${file} from ${name}@${found.entry.server.version} (${found.registry})\n`);
    for (const n of written.notes) print(`- ${n}\n`);
    if (written.inputs.length && !values['no-secrets']) await askSecrets(written.inputs, root);
    print(
      `\nApproving '${written.name}' would cover:\n${approvalSummaryBlock(approvalLines(written.def, root), '  ')}\n` +
        `Approve it to run it: switchboard approve ${written.name} --root ${root}\n`,
    );
    return 0;
  },
};

/** The server from the first registry that has it; when none does, every registry's reason. */
async function fetchServer(
  clients: ReturnType<typeof registryClients>,
  name: string,
  version: string,
): Promise<{ entry: RegistryServer; registry: string }> {
  const reasons: string[] = [];
  for (const client of clients) {
    try {
      return { entry: await client.server(name, version), registry: client.base };
    } catch (err) {
      reasons.push((err as Error).message);
    }
  }
  throw new Error(reasons.join('\n'));
}

/** Asks for each secret not stored yet: a hidden prompt on a terminal, else one line of stdin each. */
async function askSecrets(inputs: readonly string[], root: string): Promise<void> {
  const store = SecretStore.open(switchboardHome());
  const stored = new Set(store.list());
  const missing = inputs.filter((i) => !stored.has(i));
  if (!missing.length) {
    print(`Its secrets are already stored: ${inputs.join(', ')}.\n`);
    return;
  }
  let lines: string[] = [];
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    lines = Buffer.concat(chunks).toString('utf8').split(/\r?\n/);
  }
  const set: string[] = [];
  for (const [i, input] of missing.entries()) {
    const value = process.stdin.isTTY ? await readSecretValue(`Value of ${input} (hidden; empty to skip): `) : lines[i];
    if (!value) continue;
    store.set(input, value);
    set.push(input);
  }
  const later = missing.filter((m) => !set.includes(m));
  if (set.length) print(`Stored ${set.join(', ')} (${store.kind === 'keychain' ? 'OS keychain' : 'private file'}).\n`);
  if (later.length) print(`Not stored yet: ${later.join(', ')}; set each with 'switchboard secret set NAME'.\n`);
  const record = set.length ? await liveRecord(runtimePaths(root), root) : undefined;
  if (record) {
    const client = await OperatorClient.connect(record);
    try {
      for (const input of set) await client.call('set_input', { name: input, reload: true });
    } finally {
      await client.close();
    }
  }
}
