// `switchboard import`: add a server from an MCP Registry server.json (file or - for stdin), as a community server.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KIND_DIRS } from '../../../registry/schema';
import { serverJsonChoices, parseServerJson, serverJsonToDefinition } from '../../../registry/serverJson';
import { RegistryValidationError, RegistryWriter } from '../../../registry/writer';
import { type Command, rootOption, rootOf, parseNumber, print } from '../command';

export const importCommand: Command = {
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
    const root = rootOf(values);
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
      throw new Error(`${KIND_DIRS.server}/${name}.yaml already exists; import under another name with --name <name>`);
    if (!fs.existsSync(path.join(root, KIND_DIRS.server)))
      throw new Error(`${root} has no ${KIND_DIRS.server}/: is --root the folder that holds the registry?`);
    let written;
    try {
      written = await new RegistryWriter(root).upsert('server', imported.definition);
    } catch (err) {
      if (err instanceof RegistryValidationError) throw new Error(err.message, { cause: err });
      throw err;
    }
    print(`Wrote ${path.relative(process.cwd(), written.path) || written.path}\n`);
    for (const n of imported.notes) print(`- ${n}\n`);
    print(`Approve it to run it: switchboard approve ${name} --root ${root}\n`);
    return 0;
  },
};
