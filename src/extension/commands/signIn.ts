// Sign-in commands for remote servers with `auth`: Sign In asks the broker to start the browser
// step and opens its URL with the editor's browser (or, for a VS Code account, asks VS Code for a
// session and hands its token to the broker); Sign Out deletes the broker's tokens; and a
// notification offers Sign In when a server starts waiting for it.
import * as vscode from 'vscode';
import { webAddressProblem } from '../../registry/webAddress';
import type { Ctx } from '../ctx';
import { resolveServer, withProgress, type Cmd, type NoPrompt } from './shared';

/** `{ url }` is returned for tests and other extensions; `openBrowser: false` leaves opening it to them. */
export const signIn: Cmd = (ctx) => async (arg?: unknown, opts?: { openBrowser?: boolean }) => {
  const ref = await resolveServer(
    ctx,
    arg,
    'Sign in to which server?',
    (s) => s.auth !== undefined || s.account !== undefined,
  );
  if (!ref) return undefined;
  const status = ref.entry.server(ref.name);
  // `auth: { type: vscode }`: the editor's own account (VS Code asks the person), no browser step here.
  if (status?.account) {
    if (!ctx.secrets) throw new Error('VS Code accounts are not available in this window.');
    const secrets = ctx.secrets;
    const s = await withProgress(`Switchboard: signing '${ref.name}' in with ${status.account.provider}`, () =>
      secrets.handOverAccount(ref.entry, status, true),
    );
    if (s)
      vscode.window.setStatusBarMessage(`$(check) '${ref.name}' uses ${s.account?.account ?? 'your account'}`, 4000);
    return s;
  }
  const begun = await withProgress(`Switchboard: starting the sign-in to '${ref.name}'`, () =>
    ref.entry.conn.call('begin_sign_in', { name: ref.name }),
  );
  if (!begun) return undefined;
  // The broker refuses such an address already; the editor checks again before a browser sees it.
  const refused = webAddressProblem(begun.url);
  if (refused) throw new Error(`The sign-in page of '${ref.name}' is not opened: ${refused}.`);
  ctx.output.info(`Sign-in to '${ref.name}' started; waiting for the browser to come back.`);
  if (opts?.openBrowser !== false) {
    const opened = await vscode.env.openExternal(vscode.Uri.parse(begun.url, true));
    if (!opened) {
      const pick = await vscode.window.showWarningMessage(
        `The browser could not be opened for the sign-in to '${ref.name}'. Copy the link and open it yourself.`,
        'Copy Link',
      );
      if (pick) await vscode.env.clipboard.writeText(begun.url);
    }
  }
  return begun;
};

export const signOut: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const ref = await resolveServer(ctx, arg, 'Sign out of which server?', (s) => s.auth?.signedIn === true);
  if (!ref) return undefined;
  if (!opts?.skipConfirmation) {
    const pick = await vscode.window.showWarningMessage(
      `Sign out of '${ref.name}'?`,
      { modal: true, detail: 'The broker deletes its tokens; every agent loses the server until you sign in again.' },
      'Sign Out',
    );
    if (pick !== 'Sign Out') return undefined;
  }
  const s = await withProgress(`Switchboard: signing out of '${ref.name}'`, () =>
    ref.entry.conn.call('sign_out', { name: ref.name }),
  );
  if (s) vscode.window.setStatusBarMessage(`$(check) Signed out of '${ref.name}'`, 4000);
  return s;
};

/** Offers "Sign In" once each time a server starts waiting for a sign-in. */
export function watchSignIns(ctx: Ctx): vscode.Disposable {
  const waiting = new Set<string>();
  return ctx.onDidChange(() => {
    const now = new Set<string>();
    for (const entry of ctx.activeEntries()) {
      for (const s of entry.state?.servers ?? []) {
        if (s.state !== 'needs-sign-in') continue;
        const key = `${entry.key}/${s.name}`;
        now.add(key);
        if (waiting.has(key) || s.auth?.inProgress) continue;
        const how = s.account ? ` with your ${s.account.provider} account` : '';
        const why = s.signIn?.scope ? ` (it asks for more access: ${s.signIn.scope})` : '';
        void vscode.window
          .showWarningMessage(`'${s.name}' needs you to sign in${how}${why}.`, 'Sign In')
          .then((pick) => {
            if (pick) void vscode.commands.executeCommand('switchboard.signIn', s.name);
          });
      }
    }
    waiting.clear();
    for (const key of now) waiting.add(key);
  });
}
