// `switchboard verify`: starts every enabled server once and checks its tools and prompts against
// mcp-servers.lock; the exit code is for CI.
import type { ServerDef } from '../../../registry/schema';
import { type Command, print, printError, rootOption, rootOf } from '../command';
import { lockDefinitionHash, readLockfile, LOCKFILE_NAME, type LockedServers } from '../../trust/lockfile';
import { listEveryServer, type ListedTools } from '../probeEvery';
import type { ToolDigests } from '../../trust/toolDigest';

/** One server's verdict against the lockfile. */
function verdict(
  name: string,
  def: ServerDef | undefined,
  tools: ListedTools | undefined,
  entry: LockedServers[string] | undefined,
  root: string,
): [string, string] {
  if (!def) return ['STALE', `in ${LOCKFILE_NAME} but not in the registry`];
  if (!def.enabled) return ['skipped', 'disabled'];
  if (!tools || !tools.ok) return ['FAILED', `could not be started: ${tools?.error ?? 'not listed'}`];
  if (!entry) return ['MISSING', `not in ${LOCKFILE_NAME}`];
  const problems: string[] = [];
  if (entry.definition !== lockDefinitionHash(def, root)) problems.push('its definition changed');
  problems.push(...differences('tool', entry.toolDigests, tools.digests));
  // An entry written before prompts were locked has none to compare: `switchboard lock` adds them.
  if (entry.promptDigests) problems.push(...differences('prompt', entry.promptDigests, tools.promptDigests));
  if (entry.templateDigests)
    problems.push(...differences('resource template', entry.templateDigests, tools.templateDigests));
  const t = Object.keys(tools.digests).length;
  const p = Object.keys(tools.promptDigests).length;
  const r = Object.keys(tools.templateDigests).length;
  const templates = entry.templateDigests && r ? `, ${r} resource templates` : '';
  const matched = entry.promptDigests
    ? `${t} tools${templates} and ${p} prompts match`
    : `${t} tools match (prompts not locked)`;
  return problems.length ? ['MISMATCH', problems.join('; ')] : ['ok', matched];
}

/** What differs between locked digests and the ones listed now, one phrase per name. */
function differences(kind: string, locked: ToolDigests, now: ToolDigests): string[] {
  const out: string[] = [];
  for (const name of [...new Set([...Object.keys(locked), ...Object.keys(now)])].sort()) {
    const was = locked[name];
    const is = now[name];
    if (was !== is)
      out.push(`${kind} '${name}' ${was === undefined ? 'is new' : is === undefined ? 'was removed' : 'changed'}`);
  }
  return out;
}

export const verifyCommand: Command = {
  summary: `start every enabled server once and check its tools and prompts against ${LOCKFILE_NAME} (for CI)`,
  usage: `switchboard verify [--root <dir>]

Starts each enabled server of the registry (as \`lock\` does), lists its tools and prompts and
compares the definition hash and every tool, prompt and resource template digest with ${LOCKFILE_NAME}. Prints one
line per server.

Exit codes:
  0  every enabled server matches its entry
  1  a mismatch: a changed, new or removed tool, prompt or resource template, a changed definition, a server missing from
     the lockfile or one that could not be started, or an entry for a server that is gone
  2  no readable ${LOCKFILE_NAME} (run \`switchboard lock\` and commit it), or bad arguments`,
  options: rootOption,
  async run(values) {
    const root = rootOf(values);
    const read = readLockfile(root);
    if (read.state !== 'read') {
      const why = read.state === 'absent' ? `there is no ${LOCKFILE_NAME} in ${root}` : read.error;
      printError(`switchboard verify: ${why}. Write one with: switchboard lock --root ${root}\n`);
      return 2;
    }
    const { servers, listed } = await listEveryServer(root);
    const names = [...new Set([...servers.keys(), ...Object.keys(read.servers)])].sort();
    let bad = 0;
    const width = Math.max(4, ...names.map((n) => n.length));
    for (const name of names) {
      const [label, detail] = verdict(name, servers.get(name), listed.get(name), read.servers[name], root);
      if (label !== 'ok' && label !== 'skipped') bad++;
      print(`  ${label.padEnd(8)}  ${name.padEnd(width)}  ${detail}\n`);
    }
    print(
      bad
        ? `\n${bad} server(s) do not match ${LOCKFILE_NAME}. Review the changes; if they are intended, ` +
            'run `switchboard lock` and commit the file.\n'
        : `\nEvery server matches ${LOCKFILE_NAME}.\n`,
    );
    return bad ? 1 : 0;
  },
};
