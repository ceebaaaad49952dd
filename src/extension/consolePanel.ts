// The console webview's host side: HTML shell with a CSP nonce, and the message loop that turns
// the form's Probe and Save into the broker's probe_server and upsert_server.
import { previewTarget, showAppPreview } from './appPreview';
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ServerStatus } from '../broker/control/controlApi';
import type { JsonObject, Tool } from '../broker/shared/mcpTypes';
import type { ProbeResult } from '../broker/supervision/probe';
import { toMinimalObject } from '../registry/serialize';
import type {
  ConsoleState,
  ConsoleView,
  Definition,
  FromWebview,
  InitMessage,
  ToWebview,
} from '../../webview/protocol';
import type { Ctx, FolderEntry } from './ctx';
import { liveNumbersText } from './liveNumbers';
import { consoleTitle } from './consoleTitle';

export const CONSOLE_VIEW_TYPE = 'switchboard.console';
const APPROVE_NOW = 'Approve now';

/** What Save did: the file written, whether the Servers view selected it, the action offered. */
export interface SaveOutcome {
  name: string;
  file: string;
  selected: boolean;
  offered?: typeof APPROVE_NOW;
}

export interface ConsoleOptions {
  mode: 'new' | 'edit';
  definition?: Definition;
  probeNow?: boolean;
  /** Resume the folder's last draft (form and probe result) if there is one. */
  resume?: boolean;
}

const draftKey = (entry: FolderEntry): string => `switchboard.console.draft:${entry.key}`;

export class ConsolePanel {
  private static readonly panels = new Map<string, ConsolePanel>();
  private readonly disposables: vscode.Disposable[] = [];
  private pending?: InitMessage;
  private ready = false;
  /** The definitions of the tools shown in Try a tool (one with an MCP App opens its preview when called). */
  private readonly tried = new Map<string, Tool>();
  private savedName?: string;
  /** The tab shown and the tool last put in Try a tool: the panel's title names what is on screen. */
  private view: ConsoleView = 'server';
  private triedName?: string;
  private probeWaiters: ((r: ProbeResult | undefined) => void)[] = [];
  private early: ToWebview[] = [];

  private constructor(
    private readonly ctx: Ctx,
    private entry: FolderEntry,
    readonly panel: vscode.WebviewPanel,
  ) {
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(ctx.extension.extensionUri, 'dist', 'webview')],
    };
    panel.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, 'media', 'switchboard.svg');
    panel.webview.html = this.html();
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: FromWebview) => void this.onMessage(m)),
      panel.onDidDispose(() => this.dispose()),
      ctx.onDidChange((e) => {
        if (!e || e === this.entry) this.pushStatus();
      }),
    );
  }

  /** Opens (or reveals) the console of a folder and loads a definition into it. */
  static show(ctx: Ctx, entry: FolderEntry, opts: ConsoleOptions): ConsolePanel {
    let panel = ConsolePanel.panels.get(entry.key);
    if (panel) panel.panel.reveal(vscode.ViewColumn.Active);
    else {
      const webview = vscode.window.createWebviewPanel(
        CONSOLE_VIEW_TYPE,
        'Switchboard Console',
        vscode.ViewColumn.Active,
        {
          enableScripts: true,
          retainContextWhenHidden: false,
          localResourceRoots: [vscode.Uri.joinPath(ctx.extension.extensionUri, 'dist', 'webview')],
        },
      );
      panel = new ConsolePanel(ctx, entry, webview);
      ConsolePanel.panels.set(entry.key, panel);
    }
    panel.load(opts);
    return panel;
  }

  /** Reveals the folder's console as it is, or opens it on its last draft (for the other tabs). */
  static open(ctx: Ctx, entry: FolderEntry): ConsolePanel {
    const panel = ConsolePanel.panels.get(entry.key);
    if (!panel) return ConsolePanel.show(ctx, entry, { mode: 'new', resume: true });
    panel.panel.reveal(vscode.ViewColumn.Active);
    return panel;
  }

  /** Re-attaches a console restored by VS Code after a reload (its form state lives in the webview). */
  static revive(ctx: Ctx, webview: vscode.WebviewPanel, state: ConsoleState | undefined): void {
    const entry = ctx.entries().find((e) => e.key === state?.folder) ?? ctx.entries()[0];
    if (!entry) {
      webview.dispose();
      return;
    }
    const panel = new ConsolePanel(ctx, entry, webview);
    ConsolePanel.panels.get(entry.key)?.panel.dispose();
    ConsolePanel.panels.set(entry.key, panel);
    // The webview restores itself from its own state; when the workbench lost it (a browser
    // reload can), the extension's copy of the draft is sent instead.
    const kept = ctx.extension.workspaceState.get<ConsoleState>(draftKey(entry));
    const newer = kept && (!state || (kept.savedAt ?? 0) > (state.savedAt ?? 0)) ? kept : undefined;
    const shown = newer ?? state;
    panel.savedName = shown?.savedName;
    panel.title();
    if (newer) panel.load({ mode: newer.mode, resume: true });
  }

  private load(opts: ConsoleOptions): void {
    const draft = opts.resume ? this.ctx.extension.workspaceState.get<ConsoleState>(draftKey(this.entry)) : undefined;
    this.savedName = draft ? draft.savedName : opts.mode === 'edit' ? String(opts.definition?.name ?? '') : undefined;
    const msg: InitMessage = {
      type: 'init',
      mode: opts.mode,
      definition: opts.definition ?? { trust: 'community', transport: 'stdio', enabled: true },
      folder: this.entry.key,
      registryDir:
        path
          .relative(this.entry.folder.uri.fsPath, path.join(this.entry.root, 'mcp-servers.d'))
          .split(path.sep)
          .join('/') || 'mcp-servers.d',
      trusted: this.ctx.trusted,
      existingNames: this.entry.state?.servers.map((s) => s.name) ?? [],
      probeNow: opts.probeNow,
      restore: draft,
    };
    this.view = 'server';
    this.title();
    if (this.ready) this.post(msg);
    else this.pending = msg;
    this.pushStatus();
  }

  private title(): void {
    this.panel.title = consoleTitle(this.view, this.savedName, this.triedName);
  }

  /** Runs a probe in the console, as if Probe was pressed, and resolves with its result. */
  probe(): Promise<ProbeResult | undefined> {
    return new Promise((resolve) => {
      this.probeWaiters.push(resolve);
      if (this.pending) this.pending.probeNow = true;
      else this.post({ type: 'probeRequest' });
    });
  }

  /** Shows a tool (by its namespaced name) in the Try-a-tool tab, with its definition from tools/list. */
  async tryTool(name: string): Promise<void> {
    await this.ctx.ensureConnected(this.entry);
    const listed = await this.listTools();
    const tool = listed.find((t) => t.name === name);
    if (tool) this.tried.set(name, tool);
    this.triedName = name;
    this.view = 'tool';
    this.title();
    this.post({ type: 'tryTool', tool: tool ?? { name, inputSchema: { type: 'object' } }, listed: !!tool });
  }

  /** Shows the Recent calls tab (optionally one client's). */
  showAudit(client?: string): void {
    this.view = 'audit';
    this.title();
    this.post({ type: 'showAudit', client });
  }

  /** All of the operator's tools (every page of tools/list). */
  private async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = (await this.entry.conn.request('tools/list', cursor ? { cursor } : {})) as {
        tools?: Tool[];
        nextCursor?: string;
      };
      tools.push(...(page.tools ?? []));
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * A tool call from the console: a tools/call through the broker on the operator's session, routed
   * like any client's (pins, quarantine, audit); the editor answers any elicitation it causes.
   */
  async callTool(name: string, args: Record<string, unknown>): Promise<void> {
    const started = performance.now();
    try {
      await this.ctx.ensureConnected(this.entry);
      const result = await this.entry.conn.request('tools/call', { name, arguments: args } as JsonObject, 300_000);
      this.post({ type: 'toolResult', name, result, ms: performance.now() - started });
      // A tool with an MCP App: its page is shown beside the console, as an agent's host would show it.
      const tool = this.tried.get(name);
      if (tool && previewTarget(tool) && result.isError !== true) {
        showAppPreview(this.ctx, this.entry, tool, args as JsonObject, result).catch((err: Error) =>
          this.ctx.output.warn(`The App preview of ${name} could not be shown: ${err.message}`),
        );
      }
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      this.post({
        type: 'toolError',
        name,
        message: (err as Error).message,
        ...(typeof code === 'number' ? { code } : {}),
        ms: performance.now() - started,
      });
    }
  }

  private async readAudit(): Promise<void> {
    try {
      const tail = await this.entry.conn.call('read_audit', { limit: 500 });
      this.post({ type: 'audit', tail });
    } catch (err) {
      this.post({ type: 'audit', error: (err as Error).message });
    }
  }

  /** The Guardrails tab's reading: what applies to the server now (with counts) and the audit tail. */
  private async readGuardrails(name: string): Promise<void> {
    try {
      const [status, tail] = await Promise.all([
        this.entry.conn.call('server_status', { name }),
        this.entry.conn.call('read_audit', { limit: 500 }),
      ]);
      this.post({ type: 'guardrails', rules: status.guardrails ?? [], tail });
    } catch (err) {
      this.post({ type: 'guardrails', error: (err as Error).message });
    }
  }

  private post(msg: ToWebview): void {
    // A webview drops what arrives before its script listens: keep it until it says it is ready.
    if (!this.ready) this.early.push(msg);
    else void this.panel.webview.postMessage(msg);
  }

  private pushStatus(): void {
    if (!this.ready) return;
    const server: ServerStatus | undefined = this.savedName ? this.entry.server(this.savedName) : undefined;
    this.post({
      type: 'status',
      server,
      existingNames: this.entry.state?.servers.map((s) => s.name) ?? [],
      brokerUp: this.entry.phase === 'connected',
      ...(server?.live ? { liveText: liveNumbersText(server.live) } : {}),
    });
  }

  private async onMessage(m: FromWebview): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.ready = true;
        if (this.pending) {
          this.post(this.pending);
          this.pending = undefined;
        }
        for (const msg of this.early.splice(0)) this.post(msg);
        this.pushStatus();
        return;
      case 'view':
        this.view = m.view;
        this.title();
        return;
      case 'callTool':
        await this.callTool(m.name, m.arguments);
        return;
      case 'readAudit':
        await this.readAudit();
        return;
      case 'readGuardrails':
        await this.readGuardrails(m.name);
        return;
      case 'probe':
        await this.runProbe(m.definition);
        return;
      case 'save':
        await this.save(m.definition);
        return;
      case 'openFile': {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(this.entry.fileOf('server', m.name)));
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside });
        return;
      }
      case 'state':
        if (m.state.folder === this.entry.key)
          await this.ctx.extension.workspaceState.update(draftKey(this.entry), m.state);
        return;
    }
  }

  private async runProbe(definition: Definition): Promise<void> {
    const name = String(definition.name ?? 'server');
    let result: ProbeResult | undefined;
    try {
      await this.ctx.ensureConnected(this.entry);
      result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Switchboard: probing '${name}' (starting it once, listing its tools)`,
        },
        () => this.entry.conn.call('probe_server', { definition }, 60_000),
      );
      this.post({ type: 'probeResult', result, definition });
      this.ctx.output.info(
        `Probe of '${name}': ` +
          (result.ok
            ? `reachable, ${result.tools.length} tools, connect ${result.connectMs} ms, list ${result.listMs} ms`
            : `failed: ${result.error}`),
      );
    } catch (err) {
      this.post({ type: 'probeError', message: (err as Error).message });
    }
    for (const w of this.probeWaiters.splice(0)) w(result);
  }

  /**
   * What Save in the form does (also callable by tests): writes through the broker, selects the
   * server in the Servers view and, when it cannot run before the operator approves it, offers
   * "Approve now" (the approval modal, which shows what will run). Resolves with what it offered.
   */
  async save(definition: Definition): Promise<SaveOutcome | undefined> {
    const name = String(definition.name ?? '');
    this.post({ type: 'saving' });
    try {
      await this.ctx.ensureConnected(this.entry);
      const written = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Switchboard: saving '${name}'` },
        () => this.entry.conn.call('upsert_server', { definition }),
      );
      this.savedName = written.name;
      this.title();
      const rel = path.relative(this.entry.folder.uri.fsPath, written.file).split(path.sep).join('/');
      this.post({ type: 'saved', name: written.name, file: rel, definition: toMinimalObject('server', definition) });
      this.pushStatus();
      const selected = await vscode.commands
        .executeCommand<boolean>('switchboard.revealServer', this.entry.key, written.name)
        .then(undefined, () => false);
      const s = written.status;
      if (s.state === 'awaiting-approval') {
        const who = s.trust === 'community' ? 'a community server' : `${s.trust}, which you accept once`;
        const text = `Saved '${written.name}'. It is ${who}: it runs once you approve it.`;
        const asked = vscode.window.showInformationMessage(text, APPROVE_NOW);
        void asked.then((p) => {
          if (p === APPROVE_NOW) void vscode.commands.executeCommand('switchboard.approveServer', written.name);
        });
        return { name: written.name, file: rel, selected, offered: APPROVE_NOW };
      }
      vscode.window.setStatusBarMessage(`$(check) Saved ${rel}`, 4000);
      return { name: written.name, file: rel, selected };
    } catch (err) {
      this.post({ type: 'saveError', message: (err as Error).message });
      return undefined;
    }
  }

  private html(): string {
    const webview = this.panel.webview;
    const nonce = crypto.randomBytes(16).toString('base64');
    const base = vscode.Uri.joinPath(this.ctx.extension.extensionUri, 'dist', 'webview');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(base, 'console.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(base, 'console.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Switchboard Console</title>
</head>
<body>
<noscript>The Switchboard console needs scripts enabled.</noscript>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (ConsolePanel.panels.get(this.entry.key) === this) ConsolePanel.panels.delete(this.entry.key);
    for (const d of this.disposables) d.dispose();
    for (const w of this.probeWaiters.splice(0)) w(undefined);
  }
}
