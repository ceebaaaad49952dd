// Entry point: builds the context, registers views, commands, the MCP provider, diagnostics, the
// status bar and the terminal environment. Everything here is wiring; behaviour lives in the broker.
import * as vscode from 'vscode';
import * as commands from './commands';
import { ClientsProvider } from './clients';
import { CONSOLE_VIEW_TYPE, ConsolePanel } from './consolePanel';
import { Ctx } from './ctx';
import { EditorClient } from './editorClient';
import { EditorSecrets } from './editorSecrets';
import { RegistryDiagnostics } from './diagnostics';
import { McpProvider, PROVIDER_ID } from './mcpProvider';
import { stateLabel } from './presentation';
import { PromptsProvider } from './prompts';
import { enableQuickInputHooks, onDidShowQuickInput, type ShownQuickInput } from './quickInput';
import { RegistryQuickFixes } from './quickFixes';
import { ServersProvider, type ServerNode } from './servers';
import { BrokerStatusBar } from './statusBar';
import { TerminalEnvironment } from './terminalEnv';
import type { ConsoleState } from '../../webview/protocol';
import { needsAttention } from '../broker/supervision/upstreamStates';

/** What the extension exports, for tests and for other extensions that want the broker. */
export interface SwitchboardApi {
  ctx: Ctx;
  servers: ServersProvider;
  serversView: vscode.TreeView<ServerNode>;
  prompts: PromptsProvider;
  clients: ClientsProvider;
  mcp: McpProvider;
  diagnostics: RegistryDiagnostics;
  statusBar: BrokerStatusBar;
  /** The window as the brokers' fallback client (elicitation, sampling) for callers that cannot. */
  editorClient: EditorClient;
  /** Entered `${input:NAME}` values and VS Code account tokens handed to the brokers. */
  secrets: EditorSecrets;
  /** Each pick or input box of a multi-step command as it is shown (only under the VS Code test suite). */
  onDidShowQuickInput: vscode.Event<ShownQuickInput>;
}

let current: Ctx | undefined;

const COMMANDS: Record<string, commands.Cmd> = {
  addServer: commands.addServer,
  editServer: commands.editServer,
  removeServer: commands.removeServer,
  enableServer: commands.enableServer,
  disableServer: commands.disableServer,
  restartServer: commands.restartServer,
  approveServer: commands.approveServer,
  reviewToolChanges: commands.reviewToolChanges,
  revokeApproval: commands.revokeApproval,
  approvePolicy: commands.approvePolicy,
  probeServer: commands.probeServer,
  showServerLogs: commands.showServerLogs,
  openDefinition: commands.openDefinition,
  openRegistryFolder: commands.openRegistryFolder,
  importServers: commands.importServers,
  importServerJson: commands.importServerJson,
  addServerFromRegistry: commands.addServerFromRegistry,
  copyConnection: commands.copyConnection,
  connectAgent: commands.connectAgent,
  rotateClientToken: commands.rotateClientToken,
  removePrompt: commands.removePrompt,
  openConsole: commands.openConsole,
  tryTool: commands.tryTool,
  showAudit: commands.showAudit,
  startBroker: commands.startBroker,
  stopBroker: commands.stopBroker,
  restartBroker: commands.restartBroker,
  showBrokerLog: commands.showBrokerLog,
  signIn: commands.signIn,
  signOut: commands.signOut,
  enterSecret: commands.enterSecret,
  forgetSecret: commands.forgetSecret,
};

export function activate(context: vscode.ExtensionContext): SwitchboardApi {
  const ctx = new Ctx(context);
  current = ctx;
  // Its test hook (each input as shown) is on only under the VS Code test suite.
  const editorClient = new EditorClient(context.workspaceState, ctx.output, !!process.env.SWITCHBOARD_TEST_RESULT);
  ctx.editorRole = editorClient;
  const secrets = new EditorSecrets(ctx, context.secrets, !!process.env.SWITCHBOARD_TEST_RESULT);
  ctx.secrets = secrets;
  if (process.env.SWITCHBOARD_TEST_RESULT) context.subscriptions.push(enableQuickInputHooks());
  context.subscriptions.push(
    editorClient,
    secrets,
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      for (const entry of ctx.entries()) {
        entry.conn.editorRootsChanged().catch((err: Error) => ctx.output.warn(`Roots not updated: ${err.message}`));
      }
    }),
  );
  ctx.output.info(
    `MCP Switchboard ${context.extension.packageJSON.version as string} activated` +
      `${vscode.workspace.isTrusted ? '' : ' in Restricted Mode: nothing from the registry will be started'}.`,
  );

  for (const [name, factory] of Object.entries(COMMANDS)) {
    const handler = factory(ctx);
    context.subscriptions.push(
      vscode.commands.registerCommand(`switchboard.${name}`, async (...args: unknown[]) => {
        try {
          return await handler(...args);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          ctx.output.error(`${name}: ${message}`);
          void vscode.window.showErrorMessage(message);
          return undefined;
        }
      }),
    );
  }

  const servers = new ServersProvider(ctx);
  const prompts = new PromptsProvider(ctx);
  const clients = new ClientsProvider(ctx);
  const serversView = vscode.window.createTreeView('switchboard.servers', {
    treeDataProvider: servers,
    showCollapseAll: true,
  });
  const promptsView = vscode.window.createTreeView('switchboard.prompts', { treeDataProvider: prompts });
  const clientsView = vscode.window.createTreeView('switchboard.clients', { treeDataProvider: clients });
  context.subscriptions.push(serversView, promptsView, clientsView);
  // Not in the palette: the console selects what it just saved (see revealServer).
  context.subscriptions.push(
    vscode.commands.registerCommand('switchboard.revealServer', (folderKey: string, name: string) =>
      revealServer(ctx, servers, serversView, folderKey, name),
    ),
  );

  const mcp = new McpProvider(ctx);
  context.subscriptions.push(mcp, vscode.lm.registerMcpServerDefinitionProvider(PROVIDER_ID, mcp));

  const diagnostics = new RegistryDiagnostics(ctx);
  context.subscriptions.push(RegistryQuickFixes.register(ctx, diagnostics));
  const statusBar = new BrokerStatusBar(ctx, mcp);
  const terminalEnv = new TerminalEnvironment(ctx);
  context.subscriptions.push(
    diagnostics,
    statusBar,
    terminalEnv,
    commands.watchWorkspaceTrust(ctx),
    commands.watchPolicies(ctx),
  );
  context.subscriptions.push(commands.watchSignIns(ctx));
  context.subscriptions.push(commands.registerToolDiffDocuments());

  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(CONSOLE_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel, state: ConsoleState | undefined) => ConsolePanel.revive(ctx, panel, state),
    }),
  );

  const updateViews = (): void => {
    const phase = aggregatePhase(ctx);
    void vscode.commands.executeCommand('setContext', 'switchboard.phase', phase);
    serversView.message = serversMessage(ctx);
    const attention = ctx
      .entries()
      .flatMap((e) => e.state?.servers ?? [])
      .filter((s) => needsAttention(s.state));
    serversView.badge = attention.length
      ? {
          value: attention.length,
          tooltip: attention.map((s) => `${s.name}: ${stateLabel(s.state)}`).join('\n'),
        }
      : undefined;
  };
  context.subscriptions.push(ctx.onDidChange(updateViews));
  updateViews();

  ctx.init();
  updateViews();
  return {
    ctx,
    servers,
    serversView,
    prompts,
    clients,
    mcp,
    diagnostics,
    statusBar,
    editorClient,
    secrets,
    onDidShowQuickInput,
  };
}

/**
 * Selects a server in the Servers view (showing the view), once the broker's state lists it: a
 * server just saved may arrive with the next state update. Resolves whether it was selected.
 */
async function revealServer(
  ctx: Ctx,
  servers: ServersProvider,
  view: vscode.TreeView<ServerNode>,
  folderKey: string,
  name: string,
): Promise<boolean> {
  const entry = ctx.entries().find((e) => e.key === folderKey);
  if (!entry) return false;
  const deadline = Date.now() + 10_000;
  while (!entry.server(name) && Date.now() < deadline) {
    await new Promise<void>((resolve) => {
      const sub = ctx.onDidChange(() => {
        sub.dispose();
        clearTimeout(timer);
        resolve();
      });
      const timer = setTimeout(() => {
        sub.dispose();
        resolve();
      }, 1000);
    });
  }
  const node = servers.nodeOf(entry, name);
  if (!node) return false;
  await view.reveal(node, { select: true, focus: false, expand: true });
  return true;
}

/** The welcome views key on this: loading | stopped | failed | empty | ready. */
function aggregatePhase(ctx: Ctx): string {
  const entries = ctx.entries();
  if (entries.length === 0) return 'none';
  const phases = entries.map((e) => (e.phase === 'idle' && !e.hasRegistry() ? 'empty' : e.phase));
  const anyServers = entries.some((e) => (e.state?.servers.length ?? 0) > 0);
  if (anyServers) return 'ready';
  if (phases.some((p) => p === 'starting' || p === 'idle')) return 'loading';
  if (phases.some((p) => p === 'connected' || p === 'reconnecting' || p === 'empty')) return 'empty';
  if (phases.some((p) => p === 'failed')) return 'failed';
  return 'stopped';
}

function serversMessage(ctx: Ctx): string | undefined {
  const parts: string[] = [];
  const entries = ctx.entries();
  if (!vscode.workspace.isTrusted && entries.some((e) => e.state)) {
    parts.push(
      'Restricted Mode: Switchboard shows this registry but starts none of its servers. Trust the workspace to start them.',
    );
  } else if (entries.some((e) => e.state?.broker.untrusted)) {
    parts.push('The broker was started in Restricted Mode; it is being restarted.');
  }
  for (const e of entries) {
    const label = entries.length > 1 ? `${e.name}: ` : '';
    if (e.phase === 'reconnecting')
      parts.push(
        `${label}the broker stopped unexpectedly (${e.conn.lastError ?? 'no reason given'}); reconnecting. The list may be out of date.`,
      );
    if (e.phase === 'stopped' && e.state === undefined && entries.length > 1) parts.push(`${label}broker stopped.`);
    const problems = e.state?.problems.filter((p) => p.severity === 'error') ?? [];
    if (problems.length) {
      const files = new Set(problems.map((p) => p.file)).size;
      parts.push(
        `${label}${files} registry file${files === 1 ? ' has' : 's have'} errors (see the Problems panel); ` +
          'the last good version stays live.',
      );
    }
  }
  return parts.length ? parts.join(' ') : undefined;
}

export async function deactivate(): Promise<void> {
  await current?.dispose();
  current = undefined;
}
