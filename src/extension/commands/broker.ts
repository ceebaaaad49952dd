// Console and broker commands: open the console, start, stop and restart a folder's broker, show its log.
import * as vscode from 'vscode';
import { ConsolePanel } from '../consolePanel';
import type { Ctx, FolderEntry } from '../ctx';
import { isNode, withProgress, type Cmd, type NoPrompt } from './shared';

export const openConsole: Cmd = (ctx) => async () => {
  const entry = await ctx.pickEntry('Open the console for which folder?', false);
  if (!entry) return;
  return ConsolePanel.show(ctx, entry, { mode: 'new', resume: true });
};

async function pickBroker(ctx: Ctx, placeHolder: string, arg?: unknown): Promise<FolderEntry | undefined> {
  if (arg instanceof vscode.Uri) return ctx.entryFor(arg);
  return ctx.pickEntry(placeHolder, false);
}

export const startBroker: Cmd = (ctx) => async (arg?: unknown) => {
  const entry = await pickBroker(ctx, 'Start the broker of which folder?', arg);
  if (!entry) return;
  await withProgress(`Switchboard: starting the broker for ${entry.name}`, () => entry.conn.start());
  if (entry.phase === 'connected')
    vscode.window.setStatusBarMessage(`$(check) Broker running: ${entry.state?.broker.url}`, 4000);
};

export const stopBroker: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const entry = await pickBroker(ctx, 'Stop the broker of which folder?', arg);
  if (!entry) return;
  const others = Math.max(0, (entry.state?.broker.sessions ?? 1) - 1);
  if (!opts?.skipConfirmation) {
    const pick = await vscode.window.showWarningMessage(
      `Stop the Switchboard broker for ${entry.name}?`,
      {
        modal: true,
        detail:
          'All of its MCP servers stop' +
          (others
            ? `, and ${others} other session${others === 1 ? '' : 's'} ` +
              "(other windows, terminal agents, VS Code's MCP client) lose their connection"
            : '') +
          '. Nothing starts again until you run "Switchboard: Start Broker".',
      },
      'Stop Broker',
    );
    if (pick !== 'Stop Broker') return;
  }
  await withProgress(`Switchboard: stopping the broker for ${entry.name}`, () => entry.conn.stop());
};

export const restartBroker: Cmd = (ctx) => async (arg?: unknown) => {
  const entry = await pickBroker(ctx, 'Restart the broker of which folder?', arg);
  if (!entry) return;
  await withProgress(`Switchboard: restarting the broker for ${entry.name}`, () => entry.conn.restart());
};

export const showBrokerLog: Cmd = (ctx) => () => {
  ctx.output.show(true);
};

/** Try a tool: a tool node of the Servers tree, a namespaced tool name, or a pick of every tool. */
export const tryTool: Cmd = (ctx) => async (arg?: unknown) => {
  let entry: FolderEntry | undefined;
  let name: string | undefined;
  if (isNode(arg) && arg.kind === 'tool') {
    entry = arg.entry;
    name = (arg as unknown as { tool: { exposedAs: string } }).tool.exposedAs;
  } else if (typeof arg === 'string') {
    entry = await ctx.pickEntry('Try a tool of which folder?', false);
    name = arg;
  } else {
    entry = await ctx.pickEntry('Try a tool of which folder?', false);
    if (!entry) return;
    const picked = await vscode.window.showQuickPick(
      (entry.state?.servers ?? []).flatMap((s) =>
        s.tools.map((t) => ({ label: t.exposedAs, description: s.name, detail: t.description })),
      ),
      { placeHolder: 'Try which tool?', matchOnDescription: true, matchOnDetail: true },
    );
    name = picked?.label;
  }
  if (!entry || !name) return;
  const panel = ConsolePanel.open(ctx, entry);
  await panel.tryTool(name);
  return panel;
};

/** Recent calls from the audit log, in the console; from a client node, that client's. */
export const showAudit: Cmd = (ctx) => async (arg?: unknown) => {
  const entry = isNode(arg) ? arg.entry : await ctx.pickEntry('Show the recent calls of which folder?', false);
  if (!entry) return;
  const panel = ConsolePanel.open(ctx, entry);
  panel.showAudit(isNode(arg) && arg.kind === 'client' ? arg.client?.name : undefined);
  return panel;
};
