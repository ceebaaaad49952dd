// What `switchboard lock` and `verify` share: every enabled server of a registry started once, as
// the broker would launch it, and the digests of the tools it lists (and of its MCP App pages), of its
// prompts and of its resource templates.
import * as path from 'node:path';
import { RegistryLoader } from '../../registry/loader';
import type { ServerDef } from '../../registry/schema';
import { printError } from './command';
import { probeServer } from '../supervision/probe';
import { digestsOf, type ToolDigests } from '../trust/toolDigest';
import { gateInput } from '../catalog/catalog';
import { promptDigestsOf } from '../trust/promptPins';
import { templateDigestsOf } from '../trust/resourcePins';

export type ListedTools =
  | { ok: true; digests: ToolDigests; promptDigests: ToolDigests; templateDigests: ToolDigests }
  | { ok: false; error: string };

/** Starts each enabled server of the registry once, as the broker would, and digests its tools. */
export async function listEveryServer(
  root: string,
): Promise<{ servers: Map<string, ServerDef>; listed: Map<string, ListedTools> }> {
  const snapshot = new RegistryLoader(root).load();
  for (const p of snapshot.problems) {
    printError(`${path.relative(root, p.file)}:${p.line}: ${p.message}\n`);
  }
  const servers = new Map(snapshot.servers);
  const listed = new Map<string, ListedTools>();
  for (const def of [...servers.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!def.enabled) continue;
    const probe = await probeServer(def, root);
    const tools: ListedTools = probe.ok
      ? {
          ok: true,
          digests: digestsOf(gateInput({ tools: probe.tools, appPages: probe.appPages })),
          promptDigests: promptDigestsOf(probe.prompts).digests,
          templateDigests: templateDigestsOf(probe.resourceTemplates).digests,
        }
      : { ok: false, error: probe.error ?? 'failed' };
    listed.set(def.name, tools);
  }
  return { servers, listed };
}
