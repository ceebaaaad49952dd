// A workspace's telemetry.yaml that names an export endpoint off this machine sends nothing there
// until the person allows it (trust/telemetryExport.ts in the broker). This asks them, once per
// window and endpoint, when the folder's broker connects; "Allow" approves that endpoint for the
// workspace (per user) and the running broker exports there at once.
import * as vscode from 'vscode';
import type { FolderEntry } from './folderEntry';

export const ALLOW_EXPORT = 'Allow';
export const NOT_NOW = 'Not Now';

export class TelemetryExportPrompt {
  private readonly asked = new Set<string>();

  constructor(private readonly output: vscode.LogOutputChannel) {}

  async check(entry: FolderEntry): Promise<void> {
    const state = await entry.conn.telemetryExport();
    if (state?.status !== 'awaiting-approval' || !state.endpoint) return;
    const key = `${entry.key}\0${state.endpoint}`;
    if (this.asked.has(key)) return;
    this.asked.add(key);
    const before = state.approvedOther
      ? ` (you allowed ${state.approvedOther} before; the file now names another)`
      : '';
    const pick = await vscode.window.showWarningMessage(
      `Switchboard: the telemetry.yaml of ${entry.name} asks to send the broker's traces and metrics to ` +
        `${state.endpoint}, off this machine${before}. They hold tool, prompt and server names, resource URIs, ` +
        'client names and timings, never arguments, results or secrets. Allow it for this workspace?',
      ALLOW_EXPORT,
      NOT_NOW,
    );
    if (pick !== ALLOW_EXPORT) {
      this.output.info(
        `${entry.name}: telemetry is not exported to ${state.endpoint}; allow it later with ` +
          `'switchboard approve --telemetry --root ${entry.root}' (or reload the window to be asked again).`,
      );
      return;
    }
    try {
      await entry.conn.approveTelemetryExport(state.endpoint);
      this.output.info(`${entry.name}: telemetry is exported to ${state.endpoint} from now on.`);
    } catch (err) {
      this.output.error(`${entry.name}: the endpoint was not approved: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(`Switchboard: ${(err as Error).message}`);
    }
  }
}
