// The extension's context: one broker connection per workspace folder (rust-analyzer's `Ctx`),
// the log channel, and one change event every view, the status bar and the MCP provider follow.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isInsideRoot } from '../registry/rootPaths';
import { KIND_DIRS } from '../registry/schema';
import { BrokerConnection, type EditorRole } from './brokerConnection';
import { brokerLineLevel } from './brokerLogLevel';
import type { EditorSecrets } from './editorSecrets';
import { readSettings, SECTION, settingId, type Settings } from './config';
import { EDITOR_TELEMETRY_ENV } from '../broker/telemetry/settings';
import { FolderEntry } from './folderEntry';
import { TelemetryExportPrompt } from './telemetryExportPrompt';

export { FolderEntry };

export class Ctx implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private readonly entriesByKey = new Map<string, FolderEntry>();
  private readonly emitter = new vscode.EventEmitter<FolderEntry | undefined>();
  /** Fires when any folder's broker phase or state changes (the argument says which, if one). */
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly watchers = new Map<string, vscode.Disposable>();
  /** Asks whether telemetry.yaml may export off this machine, when a folder's broker connects. */
  private readonly exportPrompt: TelemetryExportPrompt;
  /** The window as the brokers' fallback client (editorClient.ts); set before init(). */
  editorRole?: EditorRole;
  /** `${input:NAME}` values and VS Code account tokens handed to the brokers (editorSecrets.ts); set before init(). */
  secrets?: EditorSecrets;

  constructor(readonly extension: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('Switchboard', { log: true });
    this.exportPrompt = new TelemetryExportPrompt(this.output);
    this.disposables.push(this.output, this.emitter);
  }

  get brokerScript(): string {
    return path.join(this.extension.extensionPath, 'dist', 'broker.js');
  }

  /** The CLI a terminal agent runs (`node <this> connect ...`): the same bundle as the broker. */
  brokerCli(): string {
    return this.brokerScript;
  }

  get trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  entries(): FolderEntry[] {
    return [...this.entriesByKey.values()];
  }

  /** Folders that have a broker connection going (or a registry to start one for). */
  activeEntries(): FolderEntry[] {
    return this.entries().filter((e) => e.phase !== 'idle' || e.hasRegistry());
  }

  entryFor(uri: vscode.Uri): FolderEntry | undefined {
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (folder) return this.entriesByKey.get(folder.uri.toString());
    // A registry root outside its folder (registryRoot: ../shared): match by path.
    return this.entries().find((e) => isInside(e.root, uri.fsPath));
  }

  init(): void {
    for (const folder of vscode.workspace.workspaceFolders ?? []) this.addFolder(folder);
    this.changed(undefined);
    this.disposables.push(
      vscode.workspace.onDidChangeWorkspaceFolders((e) => {
        for (const f of e.removed) void this.removeFolder(f);
        for (const f of e.added) this.addFolder(f);
        this.changed(undefined);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        for (const entry of this.entries()) {
          if (e.affectsConfiguration(settingId('telemetry'), entry.folder.uri)) void this.telemetryChanged(entry);
          if (e.affectsConfiguration(settingId('registryRoot'), entry.folder.uri)) {
            void this.removeFolder(entry.folder).then(() => {
              this.addFolder(entry.folder);
              this.changed(undefined);
            });
          }
        }
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.output.info('Workspace trusted: starting what the registry declares.');
        for (const entry of this.entries()) {
          void entry.conn
            .setUntrusted(false)
            .then(() => this.autoStart(entry))
            .catch((err) => this.output.error(String(err)));
        }
        this.changed(undefined);
      }),
    );
  }

  /**
   * switchboard.telemetry.enabled changed: the running broker turns its telemetry on or off at once;
   * a broker that cannot (an older version) is offered a restart, which starts it with the setting.
   */
  private async telemetryChanged(entry: FolderEntry): Promise<void> {
    const enabled = this.settings(entry.folder).telemetry;
    try {
      const answer = await entry.conn.setTelemetry(enabled);
      if (answer?.note) this.output.info(`${entry.name}: ${answer.note}.`);
      else if (answer?.changed)
        this.output.info(`${entry.name}: telemetry ${answer.telemetry ? 'on' : 'off'} in the running broker.`);
    } catch (err) {
      this.output.warn(
        `${entry.name}: the running broker did not apply the telemetry setting: ${(err as Error).message}`,
      );
      const pick = await vscode.window.showInformationMessage(
        `Switchboard: telemetry ${enabled ? 'on' : 'off'} applies when the broker for ${entry.name} restarts.`,
        'Restart Broker',
      );
      if (pick === 'Restart Broker') await entry.conn.restart();
    }
  }

  /** The folder's `switchboard.*` settings as they are now. */
  settings(folder: vscode.WorkspaceFolder): Settings {
    return readSettings(vscode.workspace.getConfiguration(SECTION, folder.uri));
  }

  private addFolder(folder: vscode.WorkspaceFolder): void {
    if (folder.uri.scheme !== 'file') {
      this.output.warn(`${folder.name}: only folders on disk can have a registry (this one is ${folder.uri.scheme}:).`);
      return;
    }
    const settings = this.settings(folder);
    const root = path.resolve(folder.uri.fsPath, settings.registryRoot);
    const log = this.output;
    const prefix = (vscode.workspace.workspaceFolders?.length ?? 1) > 1 ? `[${folder.name}] ` : '';
    const conn = new BrokerConnection({
      root,
      brokerScript: this.brokerScript,
      execPath: process.execPath,
      env: settings.telemetry ? { ...process.env, [EDITOR_TELEMETRY_ENV]: '1' } : process.env,
      untrusted: !vscode.workspace.isTrusted,
      idleExitSeconds: settings.idleExitSeconds,
      editor: this.editorRole,
      log: {
        info: (m) => log.info(prefix + m),
        warn: (m) => log.warn(prefix + m),
        error: (m) => log.error(prefix + m),
        broker: (line) => log[brokerLineLevel(line)](`${prefix}[broker] ${line.replace(/^\[switchboard\] /, '')}`),
      },
    });
    const entry = new FolderEntry(folder, root, conn);
    conn.on('change', () => {
      this.changed(entry);
      if (conn.phase === 'connected') void this.exportPrompt.check(entry);
    });
    conn.on('state', () => this.changed(entry));
    this.entriesByKey.set(entry.key, entry);
    this.watchRegistry(entry);
    this.autoStart(entry);
  }

  /** Starts the broker of a folder that has a registry, if the settings want that. */
  private autoStart(entry: FolderEntry): void {
    if (!entry.hasRegistry() || !this.settings(entry.folder).autoStart) return;
    if (entry.phase === 'connected' || entry.phase === 'starting' || entry.phase === 'stopped') return;
    entry.conn.start().catch(() => undefined /* logged and shown by the connection */);
  }

  /** A registry that appears later (Add Server, git checkout) gets its broker then. */
  private watchRegistry(entry: FolderEntry): void {
    const pattern = new vscode.RelativePattern(
      vscode.Uri.file(entry.root),
      `{${Object.values(KIND_DIRS).join(',')}}/*`,
    );
    const watcher = vscode.workspace.createFileSystemWatcher(pattern, false, true, true);
    watcher.onDidCreate(() => {
      if (entry.phase === 'idle') this.autoStart(entry);
    });
    this.watchers.set(entry.key, watcher);
  }

  private async removeFolder(folder: vscode.WorkspaceFolder): Promise<void> {
    const key = folder.uri.toString();
    const entry = this.entriesByKey.get(key);
    this.entriesByKey.delete(key);
    this.watchers.get(key)?.dispose();
    this.watchers.delete(key);
    if (entry) await entry.conn.dispose();
  }

  private changed(entry: FolderEntry | undefined): void {
    this.emitter.fire(entry);
  }

  /**
   * The folder a command acts on: the only one, or the one the user picks. With `requireRegistry`
   * false, a folder without a registry yet is offered too (Add Server creates it).
   */
  async pickEntry(placeHolder: string, requireRegistry = true): Promise<FolderEntry | undefined> {
    const all = this.entries();
    const candidates = requireRegistry ? all.filter((e) => e.phase !== 'idle' || e.hasRegistry()) : all;
    if (candidates.length === 0) {
      if (all.length === 0)
        void vscode.window.showInformationMessage(
          'Open a folder first: Switchboard keeps its registry in a workspace folder.',
        );
      else
        void vscode.window.showInformationMessage(
          'No workspace folder has a Switchboard registry yet. Run "Switchboard: Add Server…" to create one.',
        );
      return undefined;
    }
    if (candidates.length === 1) return candidates[0];
    const picked = await vscode.window.showQuickPick(
      candidates.map((e) => ({
        label: e.name,
        description: path.relative(e.folder.uri.fsPath, e.root) || undefined,
        detail: e.root,
        entry: e,
      })),
      { placeHolder },
    );
    return picked?.entry;
  }

  /** Connects the folder's broker (starting it if needed), with progress for a slow start. */
  async ensureConnected(entry: FolderEntry): Promise<void> {
    if (entry.phase === 'connected') return;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Switchboard: starting the broker for ${entry.name}` },
      () => entry.conn.start(),
    );
  }

  async dispose(): Promise<void> {
    for (const w of this.watchers.values()) w.dispose();
    await Promise.all(this.entries().map((e) => e.conn.dispose()));
    this.entriesByKey.clear();
    for (const d of this.disposables) d.dispose();
  }
}

/** By this OS's rules (case, drives, UNC shares): the registry's own containment check. */
export function isInside(dir: string, file: string): boolean {
  return isInsideRoot(dir, file, process.platform);
}
