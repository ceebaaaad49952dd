// `switchboard lock`: starts every enabled server once and writes its tool, prompt and template pins to mcp-servers.lock,
// the file a team commits so every clone is held to the same tools.
import * as path from 'node:path';
import { type Command, print, rootOption, rootOf } from '../command';
import { lockEntry, readLockfile, writeLockfile, LOCKFILE_NAME, type LockedServers } from '../../trust/lockfile';
import { listEveryServer } from '../probeEvery';

export const lockCommand: Command = {
  summary: `start every enabled server once and write its tool and prompt pins to ${LOCKFILE_NAME}`,
  usage: `switchboard lock [--root <dir>]

Starts each enabled server of the registry (as the broker would launch it), lists its tools and
prompts and writes ${LOCKFILE_NAME} in the registry root: per server the hash of its definition
(env and header values left out), the hash of its tool set and one digest per tool, and the same
for its prompts and resource templates (resources are not locked: their set changes in ordinary
use). Commit the file: the broker then holds every clone to these pins, and
\`switchboard verify\` checks them in CI.
A disabled server keeps the entry it had. Exit 0 when written; 1 when a server could not be
started (the file is still written, keeping that server's old entry).`,
  options: rootOption,
  async run(values) {
    const root = rootOf(values);
    const previous = readLockfile(root);
    const old: LockedServers = previous.state === 'read' ? previous.servers : {};
    const { servers, listed } = await listEveryServer(root);
    const next: LockedServers = {};
    let failed = 0;
    for (const [name, def] of servers) {
      const tools = listed.get(name);
      if (tools?.ok) next[name] = lockEntry(def, root, tools.digests, tools.promptDigests, tools.templateDigests);
      else if (old[name]) next[name] = old[name];
      if (tools && !tools.ok) {
        failed++;
        const kept = old[name] ? 'its old entry is kept' : 'not locked';
        print(`  ${name}: could not be started (${tools.error}); ${kept}\n`);
      }
    }
    const file = writeLockfile(root, next);
    print(`Wrote ${path.relative(process.cwd(), file) || file}: ${Object.keys(next).length} server(s) pinned.\n`);
    return failed ? 1 : 0;
  },
};
