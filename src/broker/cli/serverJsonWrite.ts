// What `switchboard import` and `switchboard add` share: a server.json (from a file or a registry)
// turned into mcp-servers.d/<name>.yaml through the one importer (src/registry/serverJson.ts), with
// the same options (--package, --remote, --name, --value) and the same refusals (a name that exists,
// a folder that is not a registry).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { currentPolicy, serverBlock } from '../../registry/policy';
import { KIND_DIRS, ServerDefSchema, type ServerDef } from '../../registry/schema';
import {
  serverJsonChoices,
  parseServerJson,
  serverJsonToDefinition,
  type ServerJsonImport,
} from '../../registry/serverJson';
import { RegistryValidationError, RegistryWriter } from '../../registry/writer';
import { parseNumber } from './command';

export const serverJsonOptions = {
  package: { type: 'string' as const },
  remote: { type: 'string' as const },
  name: { type: 'string' as const },
  value: { type: 'string' as const, multiple: true },
};

export const SERVER_JSON_OPTIONS_HELP = `  --package <n>    which of packages[] to run (0 is the first), when there are several
  --remote <n>     which of remotes[] to connect to instead
  --name <name>    the registry name (default: the last part of the server.json name)
  --value N=V      a required, non-secret value that has no default (repeatable)`;

export interface WrittenImport extends ServerJsonImport {
  name: string;
  path: string;
  def: ServerDef;
}

/** Writes the definition `json` describes, as the options choose; an error says what to change. */
export async function writeServerJson(
  json: unknown,
  root: string,
  values: Record<string, string | boolean | string[] | undefined>,
): Promise<WrittenImport> {
  if (values.package !== undefined && values.remote !== undefined)
    throw new Error('give --package or --remote, not both');
  const choice =
    values.package !== undefined
      ? { kind: 'package' as const, index: parseNumber(values.package, 'package', 0) }
      : values.remote !== undefined
        ? { kind: 'remote' as const, index: parseNumber(values.remote, 'remote', 0) }
        : undefined;
  const given: Record<string, string> = {};
  for (const pair of (values.value as string[] | undefined) ?? []) {
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
  const parsed = ServerDefSchema.safeParse(imported.definition);
  const block = parsed.success ? serverBlock(currentPolicy(), parsed.data) : undefined;
  if (block) throw new Error(`not added: ${block.message}`);
  try {
    const written = await new RegistryWriter(root).upsert('server', imported.definition);
    return { ...imported, name, path: written.path, def: written.def };
  } catch (err) {
    if (err instanceof RegistryValidationError) throw new Error(err.message, { cause: err });
    throw err;
  }
}
