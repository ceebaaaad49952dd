// The status bar item: broker state across folders; the tooltip has one line per folder.
import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import type { McpProvider } from './mcpProvider';
import { statusSummary, vscodeClientLine } from './presentation';

export class BrokerStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('switchboard.status', vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [this.item];
  private ticker?: NodeJS.Timeout;
  /** The tooltip as plain text (for tests). */
  tooltipText = '';

  constructor(
    private readonly ctx: Ctx,
    private readonly mcp: McpProvider,
  ) {
    this.item.name = 'Switchboard';
    this.item.command = 'switchboard.servers.focus';
    this.disposables.push(
      ctx.onDidChange(() => this.update()),
      mcp.onDidStart(() => this.update()),
    );
    this.update();
  }

  update(): void {
    const entries = this.ctx.entries();
    if (entries.length === 0) {
      this.item.hide();
      return;
    }
    const summary = statusSummary(
      entries.map((e) => ({
        folder: e.name,
        phase: e.phase === 'idle' && !e.hasRegistry() ? 'none' : e.phase,
        state: e.state,
        lastError: e.conn.lastError,
        retryInMs: e.conn.retryAt !== undefined ? Math.max(0, e.conn.retryAt - Date.now()) : undefined,
        untrusted: e.conn.isUntrusted,
      })),
    );
    this.item.text = summary.text;
    const escape = (l: string): string => l.replace(/[\\`*_[\]<>]/g, (c) => `\\${c}`);
    const running = entries.flatMap((e) => e.state?.servers ?? []).filter((s) => s.state === 'running').length;
    const client = vscodeClientLine(this.mcp.offered(), running, this.mcp.startedAt);
    this.tooltipText = [summary.tooltip, client].filter(Boolean).join('\n\n');
    const tip = new vscode.MarkdownString(
      summary.tooltip
        .split('\n')
        .map((l) => `- ${escape(l)}`)
        .join('\n') +
        (client ? `\n\n${escape(client)}` : '') +
        '\n\nClick to show the Switchboard servers.',
      true,
    );
    this.item.tooltip = tip;
    this.item.backgroundColor =
      summary.severity === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : summary.severity === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.accessibilityInformation = { label: `Switchboard: ${summary.tooltip}` };
    this.item.show();
    // While a reconnect countdown is shown, tick once a second (only then).
    const reconnecting = entries.some((e) => e.phase === 'reconnecting');
    if (reconnecting && !this.ticker) this.ticker = setInterval(() => this.update(), 1000);
    if (!reconnecting && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  dispose(): void {
    if (this.ticker) clearInterval(this.ticker);
    for (const d of this.disposables) d.dispose();
  }
}
