// `switchboard review <server>`: the operator reviews, tool by tool and prompt by prompt, how a
// running server's tools and prompts differ from their pins (a line diff of each definition), and
// accepts exactly the set shown.
import * as readline from 'node:readline';
import { type Command, print, rootOption, rootOf, withOperator } from '../command';
import { LOCKFILE_NAME } from '../../trust/lockfile';
import type { ToolChange } from '../../trust/pins';
import type { PromptChange } from '../../trust/promptPins';
import type { ResourceChange } from '../../trust/resourcePins';
import type { PinnedTool } from '../../trust/toolDigest';

/** The lines of a server's instructions as the diff shows them (none: one line saying so). */
function instructionLines(text: string | null): string[] {
  return text === null ? ['(no instructions)'] : text.split(/\r?\n/);
}

/** The lines of a pinned definition (or of every definition of a duplicated name) as the diff shows them. */
function definitionLines(def: PinnedTool | PinnedTool[] | undefined): string[] {
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
  if (c.change === 'duplicated') {
    const n = c.duplicates?.length ?? 2;
    return `${c.tool}: listed ${n} times, held back until the server lists it once (accepting cannot take it)`;
  }
  const against = c.differsFrom.map((d) => (d === 'approval' ? 'your pin' : LOCKFILE_NAME)).join(' and ');
  const what = c.change === 'added' ? 'new' : c.change === 'removed' ? 'removed' : 'changed';
  const unknown = c.change !== 'added' && !c.before ? ` (only its digest is in ${LOCKFILE_NAME})` : '';
  return `${c.tool}: ${what}, differs from ${against}${unknown}`;
}

function describePromptChange(c: PromptChange): string {
  if (c.change === 'duplicated') {
    const n = c.duplicates?.length ?? 2;
    return `prompt ${c.prompt}: listed ${n} times, held back until the server lists it once (accepting cannot take it)`;
  }
  if (c.change === 'oversized') return `prompt ${c.prompt}: too large to pin, held back (accepting cannot take it)`;
  return `prompt ${describeToolChange({ ...c, tool: c.prompt, change: c.change })}`;
}

/** A template (`kind` 'resource template', by uriTemplate) or a resource (by URI) in the review. */
function describeResourceChange(kind: string, c: ResourceChange): string {
  if (c.change === 'duplicated')
    return `${kind} ${c.uri}: listed more than once, held back until the server lists it once (accepting cannot take it)`;
  if (c.change === 'oversized') return `${kind} ${c.uri}: too large to pin, held back (accepting cannot take it)`;
  return `${kind} ${describeToolChange({ ...c, tool: c.uri, change: c.change })}`;
}

async function ask(question: string): Promise<boolean> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

export const reviewCommand: Command = {
  summary: "show how a server's tools, prompts and resources differ from their pins, and accept them (operator)",
  usage: `switchboard review <server> [--root <dir>] [--yes]

Shows, tool by tool and prompt by prompt, how the tools and prompts a running server lists now
differ from the ones pinned when it was approved (or from ${LOCKFILE_NAME}), and its instructions
if they changed. Changed and new tools and prompts are quarantined (not listed, calls and
prompts/get refused) and changed instructions are not given to clients until you accept them.
Accepting pins exactly what is shown: if the server changes again in between, nothing is
accepted. A name the server lists twice (or a prompt too large to pin) is never accepted.
Resource templates are reviewed like prompts (by uriTemplate); of its resources, only those whose
pinned name or description changed (and new ones under pins.resources: strict) are shown: a new
resource URI is otherwise listed and recorded as it is first seen.

  --yes  accept without asking (otherwise asks on a terminal, and only shows elsewhere)`,
  options: { ...rootOption, yes: { type: 'boolean', short: 'y' } },
  async run(values, positionals) {
    const name = positionals[0];
    if (!name) throw new Error('name the server to review: switchboard review <server>');
    return withOperator(rootOf(values), async (client) => {
      const diff = await client.call('tool_changes', { name });
      const prompts = diff.prompts ?? [];
      const lists = [
        ...(diff.resourceTemplates ?? []).map((c) => ['resource template', c] as const),
        ...(diff.resources ?? []).map((c) => ['resource', c] as const),
      ];
      if (!diff.changes.length && !prompts.length && !lists.length && !diff.instructions) {
        print(`The tools, prompts and resources of '${name}' match their pins: nothing to review.\n`);
        return 0;
      }
      print(`Tool and prompt changes of '${name}' (policy ${diff.policy}):\n`);
      for (const change of diff.changes) {
        print(`\n  ${describeToolChange(change)}\n`);
        const after = change.change === 'duplicated' ? change.duplicates : change.after;
        for (const line of lineDiff(definitionLines(change.before), definitionLines(after))) print(`    ${line}\n`);
      }
      for (const change of prompts) {
        print(`\n  ${describePromptChange(change)}\n`);
        const after = change.change === 'duplicated' ? change.duplicates : change.after;
        for (const line of lineDiff(definitionLines(change.before), definitionLines(after))) print(`    ${line}\n`);
      }
      for (const [kind, change] of lists) {
        print(`\n  ${describeResourceChange(kind, change)}\n`);
        for (const line of lineDiff(definitionLines(change.before), definitionLines(change.after)))
          print(`    ${line}\n`);
      }
      if (diff.instructions) {
        const { before, after } = diff.instructions;
        print(`\n  instructions: changed, not given to clients until accepted\n`);
        const was = before === undefined ? ['(pinned, but only as a digest)'] : instructionLines(before);
        for (const line of lineDiff(was, instructionLines(after))) print(`    ${line}\n`);
      }
      const n = diff.changes.length;
      const p = prompts.length;
      const what = [
        ...(n ? [`${n} tool${n === 1 ? '' : 's'}`] : []),
        ...(p ? [`${p} prompt${p === 1 ? '' : 's'}`] : []),
        ...(lists.length ? [`${lists.length} resource${lists.length === 1 ? '' : 's'} or template(s)`] : []),
        ...(diff.instructions ? ['the instructions'] : []),
      ].join(' and ');
      const question = `\nAccept changes to ${what} of '${name}'? [y/N] `;
      const accept = values.yes === true || (process.stdin.isTTY === true && (await ask(question)));
      if (!accept) {
        const held = `the changed tools${lists.length ? ', prompts and resources' : ' and prompts'} stay quarantined`;
        print(`\nNot accepted; ${held}. Accept with: switchboard review ${name} --yes\n`);
        return 0;
      }
      const status = await client.call('accept_tool_changes', { name, hash: diff.toolsHash });
      const promptCount = status.acceptedPrompts ?? 0;
      print(
        `Accepted: '${name}' is pinned to its ${status.accepted} tools and ${promptCount} prompts as they are now.\n`,
      );
      const held = [
        ...diff.changes.filter((c) => c.change === 'duplicated').map((c) => c.tool),
        ...prompts.filter((c) => c.change === 'duplicated').map((c) => `prompt ${c.prompt}`),
      ];
      if (held.length) print(`Still held back, listed more than once by the server: ${held.join(', ')}.\n`);
      const big = [
        ...prompts.filter((c) => c.change === 'oversized').map((c) => `prompt ${c.prompt}`),
        ...lists
          .filter(([, c]) => c.change === 'oversized' || c.change === 'duplicated')
          .map(([k, c]) => `${k} ${c.uri}`),
      ];
      if (big.length) print(`Still held back, too large to pin or listed twice: ${big.join(', ')}.\n`);
      return 0;
    });
  },
};
