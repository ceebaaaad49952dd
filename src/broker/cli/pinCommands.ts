// The command line's tool-pin commands: `review` (the operator reviews and accepts a server's tool
// changes on the running broker), `lock` (writes mcp-servers.lock) and `verify` (checks it, for CI).
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { ParseArgsConfig } from 'node:util';
import { RegistryLoader } from '../../registry/loader';
import type { ServerDef } from '../../registry/schema';
import {
  lockDefinitionHash,
  lockEntry,
  readLockfile,
  writeLockfile,
  LOCKFILE_NAME,
  type LockedServers,
} from '../trust/lockfile';
import { findBroker, OperatorClient } from '../daemon/operatorClient';
import type { ToolChange } from '../trust/pins';
import { probeServer } from '../supervision/probe';
import { digestsOf, type PinnedTool, type ToolDigests } from '../trust/toolDigest';

export interface PinCommand {
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number | undefined>;
}

const rootOption = { root: { type: 'string' as const, short: 'r' } };
const out = (text: string): void => void process.stdout.write(text);

/** The lines of a pinned definition as the diff shows them. */
function definitionLines(def: PinnedTool | undefined): string[] {
  return def ? JSON.stringify(def, null, 2).split('\n') : [];
}

/** A line diff (longest common subsequence): definitions are short, so the quadratic table is fine. */
export function lineDiff(before: string[], after: string[]): string[] {
  const n = before.length;
  const m = after.length;
  const lcs = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = before[i] === after[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const lines: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      lines.push(`  ${before[i++]}`);
      j++;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) lines.push(`- ${before[i++]}`);
    else lines.push(`+ ${after[j++]}`);
  }
  return lines;
}

function describeToolChange(c: ToolChange): string {
  const against = c.differsFrom.map((d) => (d === 'approval' ? 'your pin' : LOCKFILE_NAME)).join(' and ');
  const what = c.change === 'added' ? 'new' : c.change === 'removed' ? 'removed' : 'changed';
  const unknown = c.change !== 'added' && !c.before ? ` (only its digest is in ${LOCKFILE_NAME})` : '';
  return `${c.tool}: ${what}, differs from ${against}${unknown}`;
}

async function ask(question: string): Promise<boolean> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

const review: PinCommand = {
  summary: "show how a server's tools differ from their pins, and accept them (operator)",
  usage: `switchboard review <server> [--root <dir>] [--yes]

Shows, tool by tool, how the tools a running server lists now differ from the ones pinned when
it was approved (or from ${LOCKFILE_NAME}). Changed and new tools are quarantined (not listed,
calls refused) until you accept them. Accepting pins exactly the tool set shown: if the server
changes its tools again in between, nothing is accepted.

  --yes  accept without asking (otherwise asks on a terminal, and only shows elsewhere)`,
  options: { ...rootOption, yes: { type: 'boolean', short: 'y' } },
  async run(values, positionals) {
    const name = positionals[0];
    if (!name) throw new Error('name the server to review: switchboard review <server>');
    const record = await findBroker(path.resolve(String(values.root ?? '.')));
    const client = await OperatorClient.connect(record);
    try {
      const diff = await client.call('tool_changes', { name });
      if (!diff.changes.length) {
        out(`The tools of '${name}' match their pins: nothing to review.\n`);
        return 0;
      }
      out(`Tool changes of '${name}' (policy ${diff.policy}):\n`);
      for (const change of diff.changes) {
        out(`\n  ${describeToolChange(change)}\n`);
        for (const line of lineDiff(definitionLines(change.before), definitionLines(change.after)))
          out(`    ${line}\n`);
      }
      const n = diff.changes.length;
      const question = `\nAccept changes to ${n} tool${n === 1 ? '' : 's'} of '${name}'? [y/N] `;
      const accept = values.yes === true || (process.stdin.isTTY === true && (await ask(question)));
      if (!accept) {
        out(`\nNot accepted; the changed tools stay quarantined. Accept with: switchboard review ${name} --yes\n`);
        return 0;
      }
      const status = await client.call('accept_tool_changes', { name, hash: diff.toolsHash });
      out(`Accepted: '${name}' is pinned to its ${status.accepted} tools as they are now.\n`);
      return 0;
    } finally {
      await client.close();
    }
  },
};

type ListedTools = { ok: true; digests: ToolDigests } | { ok: false; error: string };

/** Starts each enabled server of the registry once, as the broker would, and digests its tools. */
async function listEveryServer(
  root: string,
): Promise<{ servers: Map<string, ServerDef>; listed: Map<string, ListedTools> }> {
  const snapshot = new RegistryLoader(root).load();
  for (const p of snapshot.problems) {
    process.stderr.write(`${path.relative(root, p.file)}:${p.line}: ${p.message}\n`);
  }
  const servers = new Map(snapshot.servers);
  const listed = new Map<string, ListedTools>();
  for (const def of [...servers.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!def.enabled) continue;
    const probe = await probeServer(def, root);
    const tools: ListedTools = probe.ok
      ? { ok: true, digests: digestsOf(probe.tools) }
      : { ok: false, error: probe.error ?? 'failed' };
    listed.set(def.name, tools);
  }
  return { servers, listed };
}

const lock: PinCommand = {
  summary: `start every enabled server once and write its tool pins to ${LOCKFILE_NAME}`,
  usage: `switchboard lock [--root <dir>]

Starts each enabled server of the registry (as the broker would launch it), lists its tools and
writes ${LOCKFILE_NAME} in the registry root: per server the hash of its definition (env and
header values left out), the hash of its tool set and one digest per tool. Commit the file: the
broker then holds every clone to these pins, and \`switchboard verify\` checks them in CI.
A disabled server keeps the entry it had. Exit 0 when written; 1 when a server could not be
started (the file is still written, keeping that server's old entry).`,
  options: rootOption,
  async run(values) {
    const root = path.resolve(String(values.root ?? '.'));
    const previous = readLockfile(root);
    const old: LockedServers = previous.state === 'read' ? previous.servers : {};
    const { servers, listed } = await listEveryServer(root);
    const next: LockedServers = {};
    let failed = 0;
    for (const [name, def] of servers) {
      const tools = listed.get(name);
      if (tools?.ok) next[name] = lockEntry(def, root, tools.digests);
      else if (old[name]) next[name] = old[name];
      if (tools && !tools.ok) {
        failed++;
        const kept = old[name] ? 'its old entry is kept' : 'not locked';
        out(`  ${name}: could not be started (${tools.error}); ${kept}\n`);
      }
    }
    const file = writeLockfile(root, next);
    out(`Wrote ${path.relative(process.cwd(), file) || file}: ${Object.keys(next).length} server(s) pinned.\n`);
    return failed ? 1 : 0;
  },
};

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
  const names = new Set([...Object.keys(entry.toolDigests), ...Object.keys(tools.digests)]);
  for (const tool of [...names].sort()) {
    const was = entry.toolDigests[tool];
    const now = tools.digests[tool];
    if (was === now) continue;
    problems.push(`tool '${tool}' ${was === undefined ? 'is new' : now === undefined ? 'was removed' : 'changed'}`);
  }
  return problems.length
    ? ['MISMATCH', problems.join('; ')]
    : ['ok', `${Object.keys(tools.digests).length} tools match`];
}

const verify: PinCommand = {
  summary: `start every enabled server once and check its tools against ${LOCKFILE_NAME} (for CI)`,
  usage: `switchboard verify [--root <dir>]

Starts each enabled server of the registry (as \`lock\` does), lists its tools and compares the
definition hash and every tool digest with ${LOCKFILE_NAME}. Prints one line per server.

Exit codes:
  0  every enabled server matches its entry
  1  a mismatch: a changed, new or removed tool, a changed definition, a server missing from
     the lockfile or one that could not be started, or an entry for a server that is gone
  2  no readable ${LOCKFILE_NAME} (run \`switchboard lock\` and commit it), or bad arguments`,
  options: rootOption,
  async run(values) {
    const root = path.resolve(String(values.root ?? '.'));
    const read = readLockfile(root);
    if (read.state !== 'read') {
      const why = read.state === 'absent' ? `there is no ${LOCKFILE_NAME} in ${root}` : read.error;
      process.stderr.write(`switchboard verify: ${why}. Write one with: switchboard lock --root ${root}\n`);
      return 2;
    }
    const { servers, listed } = await listEveryServer(root);
    const names = [...new Set([...servers.keys(), ...Object.keys(read.servers)])].sort();
    let bad = 0;
    const width = Math.max(4, ...names.map((n) => n.length));
    for (const name of names) {
      const [label, detail] = verdict(name, servers.get(name), listed.get(name), read.servers[name], root);
      if (label !== 'ok' && label !== 'skipped') bad++;
      out(`  ${label.padEnd(8)}  ${name.padEnd(width)}  ${detail}\n`);
    }
    out(
      bad
        ? `\n${bad} server(s) do not match ${LOCKFILE_NAME}. Review the changes; if they are intended, ` +
            'run `switchboard lock` and commit the file.\n'
        : `\nEvery server matches ${LOCKFILE_NAME}.\n`,
    );
    return bad ? 1 : 0;
  },
};

export const pinCommands: Record<string, PinCommand> = { review, lock, verify };
