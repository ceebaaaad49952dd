// Server commands: add, edit, remove, enable, disable, restart, probe, show logs, open the definition
// and the registry folder. Each sends one control operation to the broker and reports the outcome.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ServerStatus } from '../../broker/control/controlApi';
import { parseDefinition } from '../../registry/parse';
import type { Kind } from '../../registry/schema';
import { toMinimalObject } from '../../registry/serialize';
import { ConsolePanel } from '../consolePanel';
import type { FolderEntry } from '../ctx';
import { ServerLogTerminal } from '../serverLog';
import {
  errorText,
  isNode,
  reportState,
  resolveServer,
  withProgress,
  type Cmd,
  type NoPrompt,
  type ServerRef,
} from './shared';

async function readDefinition(entry: FolderEntry, name: string): Promise<Record<string, unknown>> {
  const file = entry.server(name)?.file ?? entry.fileOf('server', name);
  const text = await fs.promises.readFile(file, 'utf8');
  const parsed = parseDefinition('server', file, text);
  if (!parsed.def) {
    const first = parsed.problems.find((p) => p.severity === 'error');
    throw new Error(
      `${path.basename(file)} has errors${first ? ` (line ${first.line}: ${first.message})` : ''}; fix them in the file first.`,
    );
  }
  return toMinimalObject('server', parsed.def);
}

export const addServer: Cmd = (ctx) => async (arg?: { definition?: Record<string, unknown>; folder?: vscode.Uri }) => {
  const entry = arg?.folder
    ? ctx.entryFor(arg.folder)
    : await ctx.pickEntry("Add the server to which folder's registry?", false);
  if (!entry) return undefined;
  if (arg?.definition) {
    await ctx.ensureConnected(entry);
    const written = await withProgress(`Switchboard: adding '${String(arg.definition.name)}'`, () =>
      entry.conn.call('upsert_server', { definition: arg.definition! }),
    );
    if (written)
      reportState(
        ctx,
        { entry, name: written.name },
        written.status,
        `Added '${written.name}' (${path.relative(entry.root, written.file)})`,
      );
    return written;
  }
  return ConsolePanel.show(ctx, entry, { mode: 'new' });
};

export const editServer: Cmd = (ctx) => async (arg?: unknown) => {
  const ref = await resolveServer(ctx, arg, 'Edit which server?');
  if (!ref) return;
  try {
    const definition = await readDefinition(ref.entry, ref.name);
    return ConsolePanel.show(ctx, ref.entry, { mode: 'edit', definition });
  } catch (err) {
    const pick = await vscode.window.showErrorMessage(errorText(err), 'Open File');
    if (pick) await openFile(ref.entry.fileOf('server', ref.name));
  }
};

export const removeServer: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const ref = await resolveServer(ctx, arg, 'Remove which server?');
  if (!ref) return;
  const s = ref.entry.server(ref.name);
  if (!opts?.skipConfirmation) {
    const file = path.relative(ref.entry.folder.uri.fsPath, s?.file ?? ref.entry.fileOf('server', ref.name));
    const pick = await vscode.window.showWarningMessage(
      `Remove the server '${ref.name}'?`,
      { modal: true, detail: `This deletes ${file} and stops the server for every agent using this broker.` },
      'Remove',
    );
    if (pick !== 'Remove') return;
  }
  const done = await withProgress(`Switchboard: removing '${ref.name}'`, () =>
    ref.entry.conn.call('remove_server', { name: ref.name }),
  );
  if (done) vscode.window.setStatusBarMessage(`$(check) Removed '${ref.name}'`, 4000);
  return done;
};

const setEnabled =
  (enabled: boolean): Cmd =>
  (ctx) =>
  async (arg?: unknown) => {
    const ref = await resolveServer(
      ctx,
      arg,
      enabled ? 'Enable which server?' : 'Disable which server?',
      (s) => s.enabled !== enabled,
    );
    if (!ref) return;
    const s = await withProgress(`Switchboard: ${enabled ? 'enabling' : 'disabling'} '${ref.name}'`, async () => {
      const status = await ref.entry.conn.call(enabled ? 'enable_server' : 'disable_server', { name: ref.name });
      if (enabled) await waitSettled(ref, status);
      return ref.entry.server(ref.name) ?? status;
    });
    reportState(ctx, ref, s, `${enabled ? 'Enabled' : 'Disabled'} '${ref.name}'`);
    return s;
  };

export const enableServer = setEnabled(true);
export const disableServer = setEnabled(false);

/** After enabling, wait (briefly) until the server leaves 'starting', so the report is true. */
async function waitSettled(ref: ServerRef, initial: ServerStatus, timeoutMs = 30_000): Promise<void> {
  const settled = (s?: ServerStatus): boolean => !!s && s.state !== 'starting' && s.state !== 'stopped';
  if (settled(initial) && initial.state !== 'running') return;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const s = ref.entry.server(ref.name);
    if (settled(s)) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 1000);
      ref.entry.conn.once('state', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

export const restartServer: Cmd = (ctx) => async (arg?: unknown) => {
  const ref = await resolveServer(ctx, arg, 'Restart which server?', (s) => s.enabled);
  if (!ref) return;
  const s = await withProgress(`Switchboard: restarting '${ref.name}'`, () =>
    ref.entry.conn.call('restart_server', { name: ref.name }),
  );
  reportState(ctx, ref, s, `Restarted '${ref.name}'`);
  return s;
};

/** Probes the saved definition: opens the console on it and runs the probe (or, headless, returns the result). */
export const probeServer: Cmd = (ctx) => async (arg?: unknown, opts?: { show?: boolean }) => {
  const ref = await resolveServer(ctx, arg, 'Probe which server?');
  if (!ref) return;
  let definition: Record<string, unknown>;
  try {
    definition = await readDefinition(ref.entry, ref.name);
  } catch (err) {
    void vscode.window.showErrorMessage(errorText(err));
    return;
  }
  if (opts?.show === false) {
    return withProgress(`Switchboard: probing '${ref.name}'`, () =>
      ref.entry.conn.call('probe_server', { definition }, 60_000),
    );
  }
  const panel = ConsolePanel.show(ctx, ref.entry, { mode: 'edit', definition });
  return panel.probe();
};

/** Opens (or shows again) the server's live log: a terminal that follows its stderr as it is written. */
export const showServerLogs: Cmd = (ctx) => async (arg?: unknown) => {
  const ref = await resolveServer(ctx, arg, 'Show the logs of which server?');
  if (!ref) return;
  return ServerLogTerminal.show(ref.entry, ref.name, ctx.activeEntries().length > 1);
};

async function openFile(file: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  await vscode.window.showTextDocument(doc, { preview: false });
}

export const openDefinition: Cmd = (ctx) => async (arg?: unknown) => {
  let file: string | undefined;
  if (isNode(arg)) {
    const kind: Kind | undefined = arg.status ? 'server' : arg.prompt ? 'prompt' : arg.client ? 'client' : undefined;
    const name = arg.status?.name ?? arg.prompt?.name ?? arg.client?.name;
    if (kind && name) file = arg.status?.file ?? arg.entry.fileOf(kind, name);
  } else {
    const ref = await resolveServer(ctx, arg, 'Open the definition of which server?');
    if (ref) file = ref.entry.server(ref.name)?.file ?? ref.entry.fileOf('server', ref.name);
  }
  if (file) await openFile(file);
};

export const openRegistryFolder: Cmd = (ctx) => async () => {
  const entry = await ctx.pickEntry('Open the registry of which folder?', false);
  if (!entry) return;
  const dir = path.join(entry.root, 'mcp-servers.d');
  const target = fs.existsSync(dir) ? dir : entry.root;
  const uri = vscode.Uri.file(target);
  if (vscode.workspace.getWorkspaceFolder(uri)) {
    await vscode.commands.executeCommand('revealInExplorer', uri);
    await vscode.commands.executeCommand('workbench.view.explorer');
  } else {
    await vscode.commands.executeCommand('revealFileInOS', uri);
  }
};
