// Approval commands: approve a server, revoke an approval, and the one-time acceptance of servers a
// workspace marks trusted or builtin (watchWorkspaceTrust).
import * as vscode from 'vscode';
import type { ServerStatus } from '../../broker/control/controlApi';
import type { Ctx } from '../ctx';
import { approvalDetail } from '../presentation';
import { reportState, resolveServer, withProgress, type Cmd, type NoPrompt } from './shared';

export const approveServer: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const needsApproval = (s: ServerStatus): boolean => s.approval === 'required' || s.approval === 'changed';
  const ref = await resolveServer(ctx, arg, 'Approve which server?', needsApproval);
  if (!ref) return;
  const s = ref.entry.server(ref.name);
  if (!s) return;
  if (s.approval === 'not-needed') {
    void vscode.window.showInformationMessage(
      `'${s.name}' is ${s.trust} and accepted for this broker: nothing to approve.`,
    );
    return;
  }
  const workspace = s.trust !== 'community';
  if (!opts?.skipConfirmation) {
    const action = !s.enabled ? 'Approve' : workspace ? 'Accept and Start' : 'Approve and Start';
    const title = workspace
      ? `This workspace marks '${s.name}' ${s.trust}. Start it?`
      : `Approve the community server '${s.name}'?`;
    const pick = await vscode.window.showWarningMessage(title, { modal: true, detail: approvalDetail(s) }, action);
    if (pick !== action) return;
  }
  // The hash of what the dialog showed: the broker refuses if the definition changed since.
  const result = await withProgress(`Switchboard: approving '${s.name}'`, () =>
    ref.entry.conn.call('approve_server', { name: s.name, hash: s.approvalHash }),
  );
  if (result) {
    ctx.output.info(`Approved '${s.name}': ${result.approved}`);
    if (!result.enabled) {
      void vscode.window
        .showInformationMessage(`Approved '${s.name}'. It is disabled; enable it to run it.`, 'Enable')
        .then((p) => {
          if (p) void vscode.commands.executeCommand('switchboard.enableServer', s.name);
        });
    } else reportState(ctx, ref, result, `Approved '${s.name}'`);
  }
  return result;
};

/**
 * A workspace file can request the trusted/builtin tier, not grant it: when a folder's broker has
 * such servers that you have not accepted as they are, ask once (one modal listing them all) and
 * accept them with the hashes shown. The broker remembers the answer per user, per definition.
 */
export function watchWorkspaceTrust(ctx: Ctx): vscode.Disposable {
  const asked = new Set<string>();
  let open = false;
  const check = async (): Promise<void> => {
    if (open || !vscode.workspace.isTrusted) return;
    for (const entry of ctx.entries()) {
      const key = (s: ServerStatus): string => `${entry.key}\0${s.name}\0${s.approvalHash}`;
      const waiting = (entry.state?.servers ?? []).filter(
        (s) => s.trust !== 'community' && (s.approval === 'required' || s.approval === 'changed') && !asked.has(key(s)),
      );
      if (!waiting.length) continue;
      for (const s of waiting) asked.add(key(s));
      open = true;
      const n = waiting.length;
      const action = `Start ${n === 1 ? 'It' : `These ${n}`}`;
      const detail = waiting
        .map((s) => {
          const why = s.approval === 'changed' ? ` (${s.lastError ?? 'changed since you accepted it'})` : '';
          return `${s.name}${why}\n${approvalDetail(s)}`;
        })
        .join('\n\n');
      const what = n === 1 ? `'${waiting[0].name}'` : `${n} servers`;
      const title = `${entry.name} marks ${what} trusted. Start ${n === 1 ? 'it' : 'them'}?`;
      const pick = await vscode.window.showWarningMessage(title, { modal: true, detail }, action);
      open = false;
      if (pick !== action) {
        const names = waiting.map((s) => `'${s.name}'`).join(', ');
        ctx.output.info(`Not starting ${names}: use Approve Server… to accept later.`);
        continue;
      }
      for (const s of waiting) {
        const args = { name: s.name, hash: s.approvalHash };
        const result = await withProgress(`Switchboard: starting '${s.name}'`, () =>
          entry.conn.call('approve_server', args),
        );
        if (result) ctx.output.info(`Accepted '${s.name}' from ${entry.name}: ${result.approved}`);
      }
    }
  };
  return ctx.onDidChange(() => void check());
}

export const revokeApproval: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const ref = await resolveServer(ctx, arg, 'Revoke the approval of which server?', (s) => s.approval === 'approved');
  if (!ref) return;
  if (!opts?.skipConfirmation) {
    const pick = await vscode.window.showWarningMessage(
      `Revoke your approval of '${ref.name}'?`,
      { modal: true, detail: 'The server stops now and stays stopped until you approve it again.' },
      'Revoke',
    );
    if (pick !== 'Revoke') return;
  }
  const s = await withProgress(`Switchboard: revoking the approval of '${ref.name}'`, () =>
    ref.entry.conn.call('revoke_approval', { name: ref.name }),
  );
  if (s) vscode.window.setStatusBarMessage(`$(check) '${ref.name}' is no longer approved`, 4000);
  return s;
};
