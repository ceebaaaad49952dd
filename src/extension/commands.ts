// Commands as factories `(ctx) => handler` (rust-analyzer style). Each one resolves what it acts on
// (a tree node, a name, or a pick), sends one control operation to the broker, and reports the
// outcome in words. Business rules stay in the broker.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ServerStatus } from '../broker/controlApi';
import { parseDefinition } from '../registry/parse';
import type { Kind } from '../registry/schema';
import { toMinimalObject } from '../registry/serialize';
import { ConsolePanel } from './consolePanel';
import type { Ctx, FolderEntry } from './ctx';
import { candidateFiles, describeTarget, parseMcpConfig, SOURCE_LABELS, type ImportSource } from './importConfig';
import { approvalDetail, stateLabel } from './presentation';

/**
 * A command handler: VS Code passes it whatever the caller gave `executeCommand`, and each handler
 * declares the arguments it understands. Declared as a method so its parameters are compared
 * bivariantly, which lets `(arg?: unknown, opts?: NoPrompt) => ...` be a handler without `any`.
 */
type Handler = { handle(...args: unknown[]): unknown }['handle'];

export type Cmd = (ctx: Ctx) => Handler;

interface ServerRef {
  entry: FolderEntry;
  name: string;
}

/** Options tests and other extensions may pass; a person at the keyboard is always asked. */
interface NoPrompt {
  skipConfirmation?: boolean;
}

function isNode(arg: unknown): arg is {
  kind: string;
  entry: FolderEntry;
  status?: ServerStatus;
  prompt?: { name: string };
  client?: { name: string };
} {
  return typeof arg === 'object' && arg !== null && 'kind' in arg && 'entry' in arg;
}

async function resolveServer(
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

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs a broker operation with a progress notification; failures become an error message. */
async function withProgress<T>(title: string, run: () => Promise<T>): Promise<T | undefined> {
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

function reportState(ctx: Ctx, ref: ServerRef, s: ServerStatus | undefined, done: string): void {
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

// ---------------------------------------------------------------------------------------------
// Servers

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

const logChannels = new Map<string, vscode.OutputChannel>();

export const showServerLogs: Cmd = (ctx) => async (arg?: unknown) => {
  const ref = await resolveServer(ctx, arg, 'Show the logs of which server?');
  if (!ref) return;
  const key = `${ref.entry.key}/${ref.name}`;
  let channel = logChannels.get(key);
  if (!channel) {
    channel = vscode.window.createOutputChannel(
      `Switchboard: ${ref.name}${ctx.activeEntries().length > 1 ? ` (${ref.entry.name})` : ''}`,
      'log',
    );
    logChannels.set(key, channel);
    ctx.extension.subscriptions.push(channel);
  }
  const logs = await withProgress(`Switchboard: reading the logs of '${ref.name}'`, () =>
    ref.entry.conn.call('tail_logs', { name: ref.name, lines: 500 }),
  );
  if (!logs) return;
  channel.clear();
  const s = ref.entry.server(ref.name);
  channel.appendLine(
    `# ${ref.name}: ${s ? stateLabel(s.state) : 'unknown'}${s?.pid ? `, pid ${s.pid}` : ''} — ` +
      `last ${logs.lines.length} lines of stderr and lifecycle events (secrets redacted). Run the command again to refresh.`,
  );
  for (const l of logs.lines) channel.appendLine(`${l.at} [${l.stream}] ${l.text}`);
  if (logs.lines.length === 0) channel.appendLine('(nothing logged yet)');
  channel.show(true);
  return logs;
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

// ---------------------------------------------------------------------------------------------
// Import

export const importServers: Cmd =
  (ctx) =>
  async (
    source?: ImportSource | string,
    opts?: { file?: string; names?: string[]; trust?: 'community' | 'trusted' },
  ) => {
    const entry = await ctx.pickEntry("Import into which folder's registry?", false);
    if (!entry) return;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    let file = opts?.file;
    if (!file) {
      const all = candidateFiles({
        platform: process.platform,
        home: os.homedir(),
        appData: process.env.APPDATA,
        folders: [entry.folder.uri.fsPath, ...folders.filter((f) => f !== entry.folder.uri.fsPath)],
      });
      const existing = all.filter((c) => (!source || source === c.source) && fs.existsSync(c.file));
      const browse = {
        label: '$(folder-opened) Choose a file…',
        description: 'any JSON file with "servers" or "mcpServers"',
        file: '',
      };
      if (existing.length === 0 && source === 'vscode') {
        void vscode.window.showInformationMessage(
          `There is no .vscode/mcp.json in ${entry.name}. ` +
            'Servers from Claude Desktop, Cursor or another file can be imported with "Switchboard: Import Servers from Other Tools…".',
        );
        return;
      }
      const picked =
        existing.length === 1 && source
          ? { file: existing[0].file }
          : await vscode.window.showQuickPick(
              [
                ...existing.map((c) => ({
                  label: SOURCE_LABELS[c.source],
                  description: c.scope === 'user' ? 'your user configuration' : c.scope,
                  detail: c.file,
                  file: c.file,
                })),
                browse,
              ],
              {
                placeHolder: existing.length
                  ? 'Import MCP servers from which configuration?'
                  : 'No known MCP configuration found; choose a file',
              },
            );
      if (!picked) return;
      file = picked.file;
      if (!file) {
        const uris = await vscode.window.showOpenDialog({
          canSelectMany: false,
          filters: { 'MCP configuration': ['json', 'jsonc'] },
          openLabel: 'Import',
        });
        if (!uris?.length) return;
        file = uris[0].fsPath;
      }
    }
    await ctx.ensureConnected(entry);
    let parsed;
    try {
      parsed = parseMcpConfig(await fs.promises.readFile(file, 'utf8'), {
        workspaceFolder: entry.folder.uri.fsPath,
        registryRoot: entry.root,
        home: os.homedir(),
        existing: new Set(entry.state?.servers.map((s) => s.name) ?? []),
      });
    } catch (err) {
      void vscode.window.showErrorMessage(`Cannot import ${file}: ${errorText(err)}`);
      return;
    }
    for (const s of parsed.skipped) ctx.output.warn(`Import: skipped '${s.name}': ${s.reason}`);
    if (parsed.servers.length === 0) {
      void vscode.window.showWarningMessage(
        `No server in ${path.basename(file)} could be imported` +
          `${parsed.skipped.length ? `: ${parsed.skipped.map((s) => `${s.name} (${s.reason})`).join('; ')}` : ''}.`,
      );
      return;
    }
    let chosen = parsed.servers;
    if (opts?.names)
      chosen = chosen.filter((s) => opts.names!.includes(s.originalName) || opts.names!.includes(s.name));
    else {
      const picks = await vscode.window.showQuickPick(
        parsed.servers.map((s) => ({
          label: s.name,
          description: describeTarget(s.definition),
          detail: s.notes.length ? s.notes.join('; ') : undefined,
          picked: true,
          server: s,
        })),
        { canPickMany: true, placeHolder: `Import which servers from ${path.basename(file)}?` },
      );
      if (!picks?.length) return;
      chosen = picks.map((p) => p.server);
    }
    let trust = opts?.trust;
    if (!trust) {
      const t = await vscode.window.showQuickPick(
        [
          {
            label: 'community',
            description: 'recommended',
            detail: 'Each server runs only after you approve exactly what it runs (command, arguments, grants).',
            trust: 'community' as const,
          },
          {
            label: 'trusted',
            detail: 'They start right away, as they did in the other tool.',
            trust: 'trusted' as const,
          },
        ],
        { placeHolder: 'Trust tier for the imported servers' },
      );
      if (!t) return;
      trust = t.trust;
    }
    const written: string[] = [];
    const failed: string[] = [];
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Switchboard: importing servers', cancellable: true },
      async (progress, token) => {
        for (const s of chosen) {
          if (token.isCancellationRequested) break;
          progress.report({ message: s.name, increment: 100 / chosen.length });
          try {
            await entry.conn.call('upsert_server', { definition: { ...s.definition, trust } });
            written.push(s.name);
            for (const note of s.notes) ctx.output.info(`Import '${s.name}': ${note}`);
          } catch (err) {
            failed.push(`${s.name}: ${errorText(err)}`);
            ctx.output.error(`Import '${s.name}' failed: ${errorText(err)}`);
          }
        }
      },
    );
    const noted = chosen.filter((s) => s.notes.length && written.includes(s.name)).length;
    const into = path.relative(entry.folder.uri.fsPath, path.join(entry.root, 'mcp-servers.d')) || 'mcp-servers.d';
    const msg =
      `Imported ${written.length} server${written.length === 1 ? '' : 's'} into ${into}` +
      `${trust === 'community' ? ' as community servers (approve each one to run it)' : ''}.`;
    if (failed.length) void vscode.window.showErrorMessage(`${msg} ${failed.length} failed: ${failed.join('; ')}`);
    else
      void vscode.window
        .showInformationMessage(
          msg + (noted ? ` ${noted} of them need attention: see the Switchboard log.` : ''),
          ...(noted ? ['Show Log'] : []),
        )
        .then((p) => {
          if (p) ctx.output.show();
        });
    return { written, failed, skipped: parsed.skipped };
  };

// ---------------------------------------------------------------------------------------------
// Clients and prompts

function clientName(arg: unknown): string | undefined {
  if (isNode(arg) && arg.client) return arg.client.name;
  return typeof arg === 'string' ? arg : undefined;
}

async function resolveClient(
  ctx: Ctx,
  arg: unknown,
  placeHolder: string,
): Promise<{ entry: FolderEntry; name: string } | undefined> {
  if (isNode(arg) && arg.client) return { entry: arg.entry, name: arg.client.name };
  const name = clientName(arg);
  const entries = ctx.activeEntries();
  if (name) {
    const entry = entries.find((e) => e.state?.clients.some((c) => c.name === name));
    if (!entry) throw new Error(`No client named '${name}' in clients.d/.`);
    return { entry, name };
  }
  const items = entries.flatMap((entry) =>
    (entry.state?.clients ?? []).map((c) => ({
      label: c.name,
      description: `scopes: ${c.mcp_allow.join(', ') || 'none'}${entries.length > 1 ? ` · ${entry.name}` : ''}`,
      detail: c.description,
      ref: { entry, name: c.name },
    })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      'No clients are declared. ' +
        'Add a file to clients.d/ (for example terminal.yaml with "mcp_allow: [read]") to give an agent its own token.',
    );
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder }))?.ref;
}

export const copyConnection: Cmd = (ctx) => async (arg?: unknown) => {
  const ref = await resolveClient(ctx, arg, 'Copy the connection details of which client?');
  if (!ref) return;
  const info = await withProgress(`Switchboard: preparing the connection for '${ref.name}'`, () =>
    ref.entry.conn.call('client_connection', { name: ref.name }),
  );
  if (!info) return;
  const cli = ctx.brokerCli();
  const text = [
    `# MCP Switchboard — connection for the client '${ref.name}'`,
    `URL:        ${info.url}   (Streamable HTTP)`,
    `Header:     ${info.header}`,
    `Token file: ${info.tokenFile}   (readable only by you; the token is not in this text)`,
    '',
    '# stdio-only agents (Claude Code, Codex, ...) can use the bridge, which finds the broker and its current port itself:',
    `node "${cli}" connect --root "${ref.entry.root}" --client ${ref.name}`,
  ].join('\n');
  await vscode.env.clipboard.writeText(text);
  void vscode.window.showInformationMessage(
    `Copied the connection details for '${ref.name}': URL, header, and the bridge command. The token stays in ${info.tokenFile}.`,
  );
  return info;
};

export const rotateClientToken: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const ref = await resolveClient(ctx, arg, 'Rotate the token of which client?');
  if (!ref) return;
  if (!opts?.skipConfirmation) {
    const pick = await vscode.window.showWarningMessage(
      `Rotate the token of '${ref.name}'?`,
      {
        modal: true,
        detail: 'Agents connected as this client are disconnected now and need the new token to reconnect.',
      },
      'Rotate',
    );
    if (pick !== 'Rotate') return;
  }
  const info = await withProgress(`Switchboard: rotating the token of '${ref.name}'`, () =>
    ref.entry.conn.call('client_connection', { name: ref.name, rotate: true }),
  );
  if (info) void vscode.window.showInformationMessage(`New token for '${ref.name}' written to ${info.tokenFile}.`);
  return info;
};

export const removePrompt: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  let ref: { entry: FolderEntry; name: string } | undefined;
  if (isNode(arg) && arg.prompt) ref = { entry: arg.entry, name: arg.prompt.name };
  else {
    const items = ctx.activeEntries().flatMap((entry) =>
      (entry.state?.prompts ?? []).map((p) => ({
        label: p.name,
        detail: p.description,
        ref: { entry, name: p.name },
      })),
    );
    ref =
      typeof arg === 'string'
        ? items.find((i) => i.label === arg)?.ref
        : (await vscode.window.showQuickPick(items, { placeHolder: 'Remove which prompt?' }))?.ref;
  }
  if (!ref) return;
  if (!opts?.skipConfirmation) {
    const pick = await vscode.window.showWarningMessage(
      `Remove the prompt '${ref.name}'?`,
      { modal: true, detail: `This deletes prompts.d/${ref.name}.yaml; no client will be offered it any more.` },
      'Remove',
    );
    if (pick !== 'Remove') return;
  }
  const r = ref;
  return withProgress(`Switchboard: removing the prompt '${r.name}'`, () =>
    r.entry.conn.call('remove_prompt', { name: r.name }),
  );
};

// ---------------------------------------------------------------------------------------------
// Console and broker

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
