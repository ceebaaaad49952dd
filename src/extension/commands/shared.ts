// What the command modules share: the `Cmd`/handler types, resolving the server a command acts on
// (a tree node, a name, or a pick), running a broker operation with progress, and reporting a server's state.
import * as vscode from 'vscode';
import type { ServerStatus } from '../../broker/control/controlApi';
import type { Ctx, FolderEntry } from '../ctx';
import { stateLabel } from '../presentation';

/**
 * A command handler: VS Code passes it whatever the caller gave `executeCommand`, and each handler
 * declares the arguments it understands. Declared as a method so its parameters are compared
 * bivariantly, which lets `(arg?: unknown, opts?: NoPrompt) => ...` be a handler without `any`.
 */
type Handler = { handle(...args: unknown[]): unknown }['handle'];

export type Cmd = (ctx: Ctx) => Handler;

export interface ServerRef {
  entry: FolderEntry;
  name: string;
}

/** Options tests and other extensions may pass; a person at the keyboard is always asked. */
export interface NoPrompt {
  skipConfirmation?: boolean;
}

export function isNode(arg: unknown): arg is {
  kind: string;
  entry: FolderEntry;
  status?: ServerStatus;
  prompt?: { name: string };
  client?: { name: string };
} {
  return typeof arg === 'object' && arg !== null && 'kind' in arg && 'entry' in arg;
}

export async function resolveServer(
  ctx: Ctx,
  arg: unknown,
  placeHolder: string,
  filter: (s: ServerStatus) => boolean = () => true,
): Promise<ServerRef | undefined> {
  if (isNode(arg) && arg.status) return { entry: arg.entry, name: arg.status.name };
  if (typeof arg === 'string') {
    for (const entry of ctx.activeEntries()) {
      if (entry.phase !== 'connected') await entry.conn.whenConnected(15_000);
      if (entry.server(arg)) return { entry, name: arg };
    }
    throw new Error(`No server named '${arg}' in the registry.`);
  }
  const items: (vscode.QuickPickItem & { ref: ServerRef })[] = [];
  const multi = ctx.activeEntries().length > 1;
  for (const entry of ctx.activeEntries()) {
    for (const s of entry.state?.servers ?? []) {
      if (!filter(s)) continue;
      items.push({
        label: s.name,
        description: `${s.trust} · ${stateLabel(s.state)}${multi ? ` · ${entry.name}` : ''}`,
        detail: s.description,
        ref: { entry, name: s.name },
      });
    }
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      ctx.activeEntries().some((e) => e.state?.servers.length)
        ? 'No server fits this command right now.'
        : 'The registry has no servers yet.',
    );
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true }))
    ?.ref;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs a broker operation with a progress notification; failures become an error message. */
export async function withProgress<T>(title: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: false },
      run,
    );
  } catch (err) {
    void vscode.window.showErrorMessage(errorText(err));
    return undefined;
  }
}

export function reportState(ctx: Ctx, ref: ServerRef, s: ServerStatus | undefined, done: string): void {
  if (!s) return;
  if (s.state === 'failed' || s.state === 'backoff') {
    void vscode.window
      .showErrorMessage(`'${s.name}' ${stateLabel(s.state)}: ${s.lastError ?? 'no error recorded'}`, 'Show Logs')
      .then((pick) => {
        if (pick) void vscode.commands.executeCommand('switchboard.showServerLogs', ref.name);
      });
  } else if (s.state === 'awaiting-approval') {
    const who = s.trust === 'community' ? 'a community server' : `marked ${s.trust} by the workspace`;
    const asked = vscode.window.showWarningMessage(`'${s.name}' is ${who}: it runs once you approve it.`, 'Approve…');
    void asked.then((pick) => {
      if (pick) void vscode.commands.executeCommand('switchboard.approveServer', ref.name);
    });
  } else {
    vscode.window.setStatusBarMessage(`$(check) ${done}`, 4000);
  }
  ctx.output.info(`${done} (now ${stateLabel(s.state)}).`);
}
