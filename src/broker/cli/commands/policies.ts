// `switchboard policies`: the guardrail policies (policies.d/) and where each stands, and
// `switchboard policies approve <name>`: the operator reads the policy in words and puts exactly
// that in force (approve_policy with the hash of what was shown: an edit in between is refused).
import * as path from 'node:path';
import * as readline from 'node:readline';
import { definitionPath } from '../../../registry/schema';
import type { PolicyStatus } from '../../control/controlApi';
import { policyChanges, policyInWords } from '../../trust/guardrails/policyInWords';
import { type Command, print, printJson, rootOption, rootOf, table, withOperator } from '../command';

/** Each approval state as the operator reads it in the list. */
const STATES: Record<PolicyStatus['status'], string> = {
  'in-force': 'in force',
  'awaiting-approval': 'proposed, not in force',
  changed: 'changed since approval (the approved version is in force)',
  removed: 'file removed (the approved version is in force until revoked)',
};

/** One answer from stdin, a terminal or a pipe; stdin closed before a line is a no. */
async function confirm(question: string): Promise<boolean> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: false });
  print(question);
  const answer = await new Promise<string>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(''));
  });
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

function listPolicies(policies: PolicyStatus[], root: string): void {
  if (policies.length === 0) {
    print(`No guardrail policies: none in ${path.join(root, 'policies.d')} and none in force.\n`);
    return;
  }
  const rows = policies.map((p) => [
    p.name,
    STATES[p.status],
    p.hash ?? '-',
    p.written ? definitionPath('policy', p.name) : '-',
  ]);
  print(table([['POLICY', 'STATE', 'HASH', 'FILE'], ...rows]) + '\n');
  const waiting = policies.filter((p) => p.status === 'awaiting-approval' || p.status === 'changed');
  if (waiting.length)
    print(
      `\nReview and approve with: switchboard policies approve <name> (${waiting.map((p) => p.name).join(', ')})\n`,
    );
}

export const policiesCommand: Command = {
  summary: 'list the guardrail policies and where each stands; approve or revoke one (operator)',
  usage: `switchboard policies [--root <dir>] [--json]
switchboard policies approve <name> [--root <dir>] [--yes]
switchboard policies revoke <name> [--root <dir>]

  Lists each policy in policies.d/ (and each one in force whose file is gone) with its state:
  in force, proposed (never approved: nothing of it applies), or changed since approval (the
  approved version still applies), and the hash of the file as written now.

  approve shows the policy's rules and limits in words, and what changed against the version in
  force, then asks before putting it in force. If the file is edited between showing and
  approving, nothing is approved.

  --yes   approve without asking (what is approved is still printed first)
  --json  the list as JSON (rules and limits as written and as in force)`,
  options: { ...rootOption, json: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } },
  async run(values, positionals) {
    const [action, name] = positionals;
    const root = rootOf(values);
    if (action !== undefined && action !== 'approve' && action !== 'revoke')
      throw new Error(`unknown action '${action}': switchboard policies [approve|revoke <name>]`);
    if (action && !name) throw new Error(`name the policy: switchboard policies ${action} <name>`);
    return withOperator(root, async (client) => {
      const { policies } = await client.call('list_policies', {});
      if (!action) {
        if (values.json) printJson({ policies });
        else listPolicies(policies, root);
        return 0;
      }
      const found = policies.find((p) => p.name === name);
      if (action === 'revoke') {
        if (!found?.inForce) throw new Error(`policy '${name}' is not in force: nothing to revoke`);
        await client.call('revoke_policy', { name });
        print(`Policy '${name}' is no longer in force.\n`);
        return 0;
      }
      if (!found) throw new Error(`no policy named '${name}' in ${path.join(root, 'policies.d')}`);
      if (!found.written || !found.hash)
        throw new Error(
          `policy '${name}' has no file any more; take it out of force with: switchboard policies revoke ${name}`,
        );
      if (found.status === 'in-force') {
        print(`Policy '${name}' is already in force as written (hash ${found.hash}).\n`);
        return 0;
      }
      print(`Approving policy '${name}' (${definitionPath('policy', name)}, hash ${found.hash}):\n`);
      if (found.written.description) print(`  ${found.written.description}\n`);
      const sentences = policyInWords(found.written);
      for (const line of sentences.length ? sentences : ['no rules and no limits']) print(`  - ${line}\n`);
      if (found.inForce) {
        const changes = policyChanges(found.inForce, found.written);
        print(`Against the version in force now: ${changes.join(', ') || 'no difference'}.\n`);
      }
      print(
        'Rules are checked in file-name order of the policies, then in the order above; the first that applies decides.\n',
      );
      if (values.yes !== true && !(await confirm(`Put policy '${name}' in force as shown? [y/N] `))) {
        print(`Not approved; nothing changed.\n`);
        return 1;
      }
      // The hash of what was just printed: the broker refuses if the file is no longer that.
      const status = await client.call('approve_policy', { name, hash: found.hash });
      print(`Approved: policy '${name}' is ${STATES[status.status]}.\n`);
      return 0;
    });
  },
};
