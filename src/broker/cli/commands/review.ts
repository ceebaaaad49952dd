// `switchboard review <server>`: the operator reviews, tool by tool, how a running server's tools
// differ from their pins (a line diff of each definition), and accepts exactly the set shown.
import * as readline from 'node:readline';
import { type Command, rootOption, rootOf, withOperator } from '../command';
import { LOCKFILE_NAME } from '../../trust/lockfile';
import type { ToolChange } from '../../trust/pins';
import type { PinnedTool } from '../../trust/toolDigest';

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

export const reviewCommand: Command = {
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
    return withOperator(rootOf(values), async (client) => {
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
    });
  },
};
