// Offers the broker to VS Code's own MCP client (and so to Copilot agent mode): the aggregated
// endpoint as the editor client declared in `switchboard.editorClient`, or one definition per
// upstream (`/servers/<name>/mcp`). Each upstream still runs once, in the broker.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { settingId } from './config';
import type { Ctx, FolderEntry } from './ctx';
import { planDefinitions, type PlannedDefinition } from './mcpPlan';

export const PROVIDER_ID = 'switchboard.broker';

export class McpProvider
  implements vscode.McpServerDefinitionProvider<vscode.McpHttpServerDefinition>, vscode.Disposable
{
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeMcpServerDefinitions = this.emitter.event;
  private readonly startedEmitter = new vscode.EventEmitter<void>();
  /** Fires when VS Code's MCP client starts one of the definitions (it connects on first use, not before). */
  readonly onDidStart = this.startedEmitter.event;
  /** When VS Code's client first started a definition of this window, if it has. */
  startedAt?: Date;
  private signature = '';
  private readonly disposables: vscode.Disposable[] = [this.emitter, this.startedEmitter];
  /** Which entry and plan each handed-out definition came from, for resolve. */
  private readonly origin = new WeakMap<
    vscode.McpHttpServerDefinition,
    { entry: FolderEntry; plan: PlannedDefinition }
  >();

  constructor(private readonly ctx: Ctx) {
    this.disposables.push(
      ctx.onDidChange(() => this.maybeChanged()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (
          e.affectsConfiguration(settingId('editorClient')) ||
          e.affectsConfiguration(settingId('perServer')) ||
          e.affectsConfiguration(settingId('appServers'))
        )
          this.maybeChanged(true);
      }),
    );
  }

  /** How many definitions VS Code is offered now (none in Restricted Mode). */
  offered(): number {
    return this.plans().length;
  }

  private plans(): { entry: FolderEntry; plan: PlannedDefinition }[] {
    if (!this.ctx.trusted) return [];
    const entries = this.ctx.activeEntries().filter((e) => e.state && !e.state.broker.untrusted);
    return entries.flatMap((entry) => {
      const { editorClient, perServer, appServers } = this.ctx.settings(entry.folder);
      return planDefinitions(entry.state!, {
        editorClient,
        perServer,
        appServers,
        folderLabel: entries.length > 1 ? entry.name : undefined,
      }).map((plan) => ({ entry, plan }));
    });
  }

  /** Fires the change event only when what VS Code would be given actually differs. */
  private maybeChanged(force = false): void {
    const sig = JSON.stringify(this.plans().map(({ plan }) => [plan.label, plan.url, plan.version, plan.client]));
    if (!force && sig === this.signature) return;
    this.signature = sig;
    this.emitter.fire();
  }

  async provideMcpServerDefinitions(token: vscode.CancellationToken): Promise<vscode.McpHttpServerDefinition[]> {
    // Called eagerly at startup: give the broker a moment to come up rather than answer "none".
    const pending = this.ctx.activeEntries().filter((e) => e.phase === 'starting');
    if (pending.length && this.ctx.trusted) {
      await Promise.race([
        Promise.all(pending.map((e) => e.conn.whenConnected(20_000))),
        new Promise((r) => token.onCancellationRequested(r)),
      ]);
    }
    const out: vscode.McpHttpServerDefinition[] = [];
    for (const { entry, plan } of this.plans()) {
      const def = new vscode.McpHttpServerDefinition(plan.label, vscode.Uri.parse(plan.url), {}, plan.version);
      this.origin.set(def, { entry, plan });
      out.push(def);
    }
    this.signature = JSON.stringify(this.plans().map(({ plan }) => [plan.label, plan.url, plan.version, plan.client]));
    return out;
  }

  /** When VS Code starts a server: make sure the broker runs, and attach the current token and port. */
  async resolveMcpServerDefinition(
    def: vscode.McpHttpServerDefinition,
  ): Promise<vscode.McpHttpServerDefinition | undefined> {
    if (!this.ctx.trusted) throw new Error('Switchboard starts nothing in Restricted Mode; trust the workspace first.');
    const origin = this.origin.get(def) ?? this.findByLabel(def.label);
    if (!origin) throw new Error(`Switchboard no longer offers '${def.label}'.`);
    const { entry, plan } = origin;
    await this.ctx.ensureConnected(entry);
    const record = entry.conn.record;
    if (!record) throw new Error('The Switchboard broker is not running.');
    let token: string;
    if (plan.client) {
      const info = await entry.conn.call('client_connection', { name: plan.client });
      token = fs.readFileSync(info.tokenFile, 'utf8').trim();
    } else {
      token = fs.readFileSync(record.operatorTokenFile, 'utf8').trim();
    }
    const base = new URL(record.url);
    def.uri = vscode.Uri.parse(`${base.origin}${plan.path}`);
    def.headers = { ...def.headers, Authorization: `Bearer ${token}` };
    this.ctx.output.info(
      `VS Code's MCP client connects to ${def.uri.toString()} as ` +
        `${plan.client ? `the client '${plan.client}'` : 'a per-server endpoint (no control tools)'}.`,
    );
    if (!this.startedAt) {
      this.startedAt = new Date();
      this.startedEmitter.fire();
    }
    return def;
  }

  private findByLabel(label: string): { entry: FolderEntry; plan: PlannedDefinition } | undefined {
    return this.plans().find((p) => p.plan.label === label);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
