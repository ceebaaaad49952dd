// Console and broker commands: open the console, start, stop and restart a folder's broker, show its log.
import * as vscode from 'vscode';
import { ConsolePanel } from '../consolePanel';
import type { Ctx, FolderEntry } from '../ctx';
import { withProgress, type Cmd, type NoPrompt } from './shared';

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
