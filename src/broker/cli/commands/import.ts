// `switchboard import`: add a server from an MCP Registry server.json (file or - for stdin), as a community server.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Command, print, rootOption, rootOf } from '../command';
import { SERVER_JSON_OPTIONS_HELP, serverJsonOptions, writeServerJson } from '../serverJsonWrite';

export const importCommand: Command = {
  summary: 'add a server from an MCP Registry server.json (file or - for stdin), as a community server',
  usage: `switchboard import <file.json|-> [--root <dir>] [--package <n> | --remote <n>] [--name <name>]
                   [--value NAME=VALUE ...]

  Reads a server.json in the official MCP Registry format and writes mcp-servers.d/<name>.yaml:
  npm packages run with npx, pypi with uvx, oci images with docker run, nuget with dnx, remotes
  as http or sse. Secret environment variables and headers become \${input:NAME} references (the
  value comes from your per-user secret store, never from the YAML). The server is community: it
  runs only after you approve it (switchboard approve <name>).

${SERVER_JSON_OPTIONS_HELP}`,
  options: {
    ...rootOption,
    ...serverJsonOptions,
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
    const written = await writeServerJson(json, root, values);
    print(`Wrote ${path.relative(process.cwd(), written.path) || written.path}\n`);
    for (const n of written.notes) print(`- ${n}\n`);
    print(`Approve it to run it: switchboard approve ${written.name} --root ${root}\n`);
    return 0;
  },
};
