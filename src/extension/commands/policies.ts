// Guardrail policies (policies.d/): the operator reviews what a policy would put in force and
// approves it (or, for a deleted file, takes the version in force out). Agents can only propose.
import * as vscode from 'vscode';
import type { PolicyStatus } from '../../broker/control/controlApi';
import type { Ctx, FolderEntry } from '../ctx';
import { withProgress, type Cmd, type NoPrompt } from './shared';

const WAITING = new Set(['awaiting-approval', 'changed', 'removed']);

interface PolicyPick extends vscode.QuickPickItem {
  entry: FolderEntry;
  policy: PolicyStatus;
}

/** One line per rule and limit, as the operator reads them before approving. */
export function policyLines(def: NonNullable<PolicyStatus['written']>): string[] {
  const scope = (x: { clients?: string[]; servers?: string[]; tools?: string[] }): string =>
    [
      x.clients ? `clients ${x.clients.join(', ')}` : 'any client',
      x.servers ? `servers ${x.servers.join(', ')}` : 'any server',
      x.tools ? `tools ${x.tools.join(', ')}` : 'any tool',
    ].join(' · ');
  return [
    ...def.rules.map(
      (r) =>
        `${r.action.toUpperCase()} ${r.name}: ${scope(r)}${r.when ? ` · when ${r.when}` : ''}` +
        `${r.message ? ` · says "${r.message}"` : ''}`,
    ),
    ...def.limits.map(
      (l) =>
        `LIMIT ${l.name}: ${scope(l)} · per ${l.per}` +
        `${l.callsPerMinute !== undefined ? ` · ${l.callsPerMinute}/min` : ''}` +
        `${l.concurrent !== undefined ? ` · ${l.concurrent} at once` : ''}`,
    ),
  ];
}

function describe(p: PolicyStatus): string {
  if (p.status === 'removed') return 'file deleted; its approved version is still in force';
  if (p.status === 'changed') return 'edited since you approved it; the approved version is in force';
  return 'not in force until you approve it';
}

export const approvePolicy: Cmd = (ctx) => async (name?: unknown, opts?: NoPrompt) => {
  const picks: PolicyPick[] = ctx
    .activeEntries()
    .flatMap((entry) =>
      (entry.state?.policies ?? [])
        .filter((p) => WAITING.has(p.status) && (typeof name !== 'string' || p.name === name))
        .map((policy) => ({ entry, policy, label: policy.name, description: describe(policy) })),
    );
  if (!picks.length) {
    void vscode.window.showInformationMessage('No guardrail policy waits for your approval.');
    return;
  }
  const pick =
    picks.length === 1 ? picks[0] : await vscode.window.showQuickPick(picks, { title: 'Review which policy?' });
  if (!pick) return;
  const { entry, policy } = pick;
  if (policy.status === 'removed') {
    if (!opts?.skipConfirmation) {
      const detail = policyLines(policy.inForce!).join('\n');
      const action = 'Take It Out of Force';
      const answer = await vscode.window.showWarningMessage(
        `The file of policy '${policy.name}' was deleted. Take its rules out of force?`,
        { modal: true, detail },
        action,
      );
      if (answer !== action) return;
    }
    const done = await withProgress(`Switchboard: revoking policy '${policy.name}'`, () =>
      entry.conn.call('revoke_policy', { name: policy.name }),
    );
    if (done) ctx.output.info(`Policy '${policy.name}' is no longer in force.`);
    return done;
  }
  if (!opts?.skipConfirmation) {
    const lines = policyLines(policy.written!);
    const detail = `${policy.written!.description ?? ''}\n${lines.join('\n') || '(no rules or limits)'}`.trim();
    const action = 'Put in Force';
    const answer = await vscode.window.showWarningMessage(
      `Put the guardrail policy '${policy.name}' in force as written?`,
      { modal: true, detail },
      action,
    );
    if (answer !== action) return;
  }
  // The hash of what the dialog showed: the broker refuses if the file changed since.
  const approved = await withProgress(`Switchboard: approving policy '${policy.name}'`, () =>
    entry.conn.call('approve_policy', { name: policy.name, hash: policy.hash! }),
  );
  if (approved) ctx.output.info(`Policy '${policy.name}' is in force.`);
  return approved;
};

/** Says once per proposal (name and hash) that a guardrail policy waits for the operator. */
export function watchPolicies(ctx: Ctx): vscode.Disposable {
  const told = new Set<string>();
  return ctx.onDidChange(() => {
    for (const entry of ctx.activeEntries()) {
      for (const p of entry.state?.policies ?? []) {
        const key = `${entry.key}\0${p.name}\0${p.status}\0${p.hash ?? ''}`;
        if (!WAITING.has(p.status) || told.has(key)) continue;
        told.add(key);
        const review = 'Review…';
        void vscode.window
          .showInformationMessage(`Guardrail policy '${p.name}' (${entry.name}): ${describe(p)}.`, review)
          .then((answer) => {
            if (answer === review) void vscode.commands.executeCommand('switchboard.approvePolicy', p.name);
          });
      }
    }
  });
}
