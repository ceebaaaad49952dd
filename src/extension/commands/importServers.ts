// Import Servers from Other Tools: pick a configuration (VS Code, Claude Desktop, Cursor, or any file),
// the servers in it and a trust tier, then write each one to the registry through the broker.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  candidateFiles,
  describeTarget,
  parseMcpConfig,
  SOURCE_LABELS,
  type ImportSource,
} from '../../registry/importConfig';
import {
  MissingValuesError,
  serverJsonChoices,
  parseServerJson,
  serverJsonToDefinition,
} from '../../registry/serverJson';
import type { Ctx, FolderEntry } from '../ctx';
import { inputText, pickOne } from '../quickInput';
import { errorText, type Cmd } from './shared';

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

/**
 * Import from server.json…: an MCP Registry server.json (a file, the clipboard or pasted text) into
 * the registry as a community server. Its secrets become ${input:NAME} in the YAML and their values,
 * asked for right after in a password box, go to VS Code's secret storage (and the broker's memory),
 * never to the workspace. The new server is selected in the Servers view, with "Approve now".
 */
export const importServerJson: Cmd =
  (ctx) =>
  async (
    source?: string,
    opts?: { text?: string; choice?: { kind: 'package' | 'remote'; index: number }; values?: Record<string, string> },
  ) => {
    const entry = await ctx.pickEntry("Import into which folder's registry?", false);
    if (!entry) return;
    const title = 'Import from server.json';
    let text = opts?.text ?? (source ? await fs.promises.readFile(source, 'utf8') : undefined);
    if (text === undefined) {
      const how = await pickOne(
        [
          { label: '$(folder-opened) Choose a server.json file…', how: 'file' as const },
          { label: '$(clippy) Use the JSON on the clipboard', how: 'clipboard' as const },
          { label: '$(edit) Paste the JSON…', how: 'paste' as const },
        ],
        { title, placeHolder: 'Where is the server.json (the MCP Registry format)?' },
      );
      if (!how) return;
      if (how.how === 'file') {
        const uris = await vscode.window.showOpenDialog({ filters: { 'server.json': ['json'] }, openLabel: 'Import' });
        if (!uris?.length) return;
        text = await fs.promises.readFile(uris[0].fsPath, 'utf8');
      } else if (how.how === 'clipboard') text = await vscode.env.clipboard.readText();
      else
        text = await inputText({
          title,
          prompt: 'Paste the whole server.json (one JSON object), then press Enter.',
          validate: (v) => jsonProblem(v),
        });
      if (!text) return;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      void vscode.window.showErrorMessage(`Cannot import: ${jsonProblem(text) ?? 'not JSON'}.`);
      return undefined;
    }
    try {
      const doc = parseServerJson(json);
      let choice = opts?.choice;
      const choices = serverJsonChoices(doc);
      if (!choice && choices.length > 1) {
        const pick = await pickOne(
          choices.map((c) => ({ label: c.label, description: c.field, c })),
          { title, placeHolder: `${doc.title ?? doc.name} can run in ${choices.length} ways; which one?` },
        );
        if (!pick) return;
        choice = { kind: pick.c.kind, index: pick.c.index };
      }
      const values = { ...(opts?.values ?? {}) };
      const taken = new Set(entry.state?.servers.map((s) => s.name) ?? []);
      for (;;) {
        try {
          const imported = serverJsonToDefinition(json, { choice, values });
          const name = String(imported.definition.name);
          if (taken.has(name)) throw new Error(`a server named '${name}' already exists in this registry`);
          await ctx.ensureConnected(entry);
          await entry.conn.call('upsert_server', { definition: imported.definition });
          for (const n of imported.notes) ctx.output.info(`Import '${name}': ${n}`);
          const entered = await enterImportedSecrets(ctx, entry, name, imported.definition);
          const skipped = imported.inputs.filter((i) => !entered.includes(i));
          void vscode.commands
            .executeCommand('switchboard.revealServer', entry.key, name)
            .then(undefined, () => undefined);
          void vscode.window
            .showInformationMessage(
              `Imported '${name}' as a community server: it runs once you approve it.` +
                (entered.length
                  ? ` ${listOf(entered)} ${entered.length === 1 ? 'is' : 'are'} in VS Code's secret storage, not in the YAML.`
                  : '') +
                (skipped.length
                  ? ` Enter ${listOf(skipped)} with "Switchboard: Enter Secret…" before it can start.`
                  : ''),
              APPROVE_NOW,
            )
            .then((p) => {
              if (p === APPROVE_NOW) void vscode.commands.executeCommand('switchboard.approveServer', name);
            });
          return { ...imported, entered };
        } catch (err) {
          if (!(err instanceof MissingValuesError)) throw err;
          for (const m of err.missing) {
            const v = await inputText({
              title: `${title}: ${m.name}`,
              prompt: `${m.description ?? m.name} (required by ${m.field})`,
              validate: (x) =>
                x.trim() === '' ? 'A value is required; press Escape to cancel the import.' : undefined,
            });
            if (v === undefined) return;
            values[m.name] = v;
          }
        }
      }
    } catch (err) {
      void vscode.window.showErrorMessage(`Cannot import this server.json: ${errorText(err)}`);
      return undefined;
    }
  };

const APPROVE_NOW = 'Approve now';

const listOf = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** Where a text is not JSON ("Unexpected token … at position 12"), or undefined when it is. */
function jsonProblem(text: string): string | undefined {
  if (text.trim() === '') return 'Paste the JSON, or press Escape to cancel.';
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return `This is not JSON: ${(err as Error).message}`;
  }
}

/**
 * Asks for each secret of the imported definition that VS Code does not hold yet, in a password box,
 * and stores it (secret storage, then the broker's memory). Escape skips one: it can be entered
 * later. Returns the names now held.
 */
async function enterImportedSecrets(
  ctx: Ctx,
  entry: FolderEntry,
  server: string,
  definition: Record<string, unknown>,
): Promise<string[]> {
  const secrets = ctx.secrets;
  if (!secrets) return [];
  const inputs = (definition.inputs ?? {}) as Record<string, { description?: string; password?: boolean }>;
  const held: string[] = [];
  for (const [name, input] of Object.entries(inputs)) {
    if (await secrets.has(name)) {
      ctx.output.info(`Import '${server}': the secret '${name}' is already in VS Code's secret storage.`);
      held.push(name);
      continue;
    }
    const value = await secrets.ask(server, { name, description: input.description, password: input.password ?? true });
    if (value === undefined) continue;
    await secrets.enter(entry, name, value);
    held.push(name);
  }
  return held;
}
