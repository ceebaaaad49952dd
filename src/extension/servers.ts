// The Servers view: reads only the brokers' state (from Ctx), refreshed by its change event.
import * as vscode from 'vscode';
import type { ServerStatus } from '../broker/control/controlApi';
import type { Ctx, FolderEntry } from './ctx';
import { guardrailRows } from './guardrailRows';
import {
  enforcementLines,
  firstLine,
  grantLabel,
  serverContextValue,
  serverDescription,
  serverIcon,
  scanFindingLines,
  scanLabel,
  serverTooltip,
  showsError,
  toolChangeLabel,
  toolScanLabel,
  TOOLS_CHANGED_ICON,
  type IconSpec,
} from './presentation';
import { appLines } from './appsPresentation';

export type ServerNode =
  | { kind: 'folder'; entry: FolderEntry }
  | { kind: 'server'; entry: FolderEntry; status: ServerStatus }
  | { kind: 'tools'; entry: FolderEntry; status: ServerStatus }
  | { kind: 'tool'; entry: FolderEntry; status: ServerStatus; tool: ServerStatus['tools'][number] }
  | {
      kind: 'hiddenTool';
      entry: FolderEntry;
      status: ServerStatus;
      tool: NonNullable<ServerStatus['hiddenTools']>[number];
    }
  | { kind: 'grants'; entry: FolderEntry; status: ServerStatus }
  | { kind: 'apps'; entry: FolderEntry; status: ServerStatus }
  | {
      kind: 'info';
      entry: FolderEntry;
      status: ServerStatus;
      id: string;
      label: string;
      description?: string;
      tooltip?: string;
      icon: IconSpec;
    };

export function themeIcon(icon: IconSpec): vscode.ThemeIcon {
  return new vscode.ThemeIcon(icon.id, icon.color ? new vscode.ThemeColor(icon.color) : undefined);
}

export class ServersProvider implements vscode.TreeDataProvider<ServerNode> {
  private readonly emitter = new vscode.EventEmitter<ServerNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly ctx: Ctx) {
    ctx.onDidChange(() => this.emitter.fire(undefined));
  }

  /** Folders shown as top-level nodes only in a multi-root workspace with more than one registry. */
  private folders(): FolderEntry[] {
    return this.ctx.activeEntries().filter((e) => e.state);
  }

  getChildren(node?: ServerNode): ServerNode[] {
    if (!node) {
      const folders = this.folders();
      if (folders.length > 1) return folders.map((entry) => ({ kind: 'folder', entry }));
      return folders.flatMap((entry) => this.serversOf(entry));
    }
    switch (node.kind) {
      case 'folder':
        return this.serversOf(node.entry);
      case 'server':
        return this.detailsOf(node.entry, node.status);
      case 'tools':
        return [
          ...node.status.tools.map((tool): ServerNode => ({
            kind: 'tool',
            entry: node.entry,
            status: node.status,
            tool,
          })),
          ...this.quarantinedOf(node.entry, node.status),
          // Shown after the served ones, greyed, so a missing tool is explained rather than absent.
          ...(node.status.hiddenTools ?? []).map((tool) => ({
            kind: 'hiddenTool' as const,
            entry: node.entry,
            status: node.status,
            tool,
          })),
        ];
      case 'grants':
        return this.grantsOf(node.entry, node.status);
      case 'apps':
        return appLines(node.status).map((line) => ({
          kind: 'info',
          entry: node.entry,
          status: node.status,
          ...line,
          icon: line.held ? TOOLS_CHANGED_ICON : { id: 'window' },
        }));
      default:
        return [];
    }
  }

  /** The server's node as the view shows it now, if the broker lists it. */
  nodeOf(entry: FolderEntry, name: string): ServerNode | undefined {
    const status = entry.server(name);
    return status && { kind: 'server', entry, status };
  }

  private serversOf(entry: FolderEntry): ServerNode[] {
    return (entry.state?.servers ?? []).map((status) => ({ kind: 'server', entry, status }));
  }

  private detailsOf(entry: FolderEntry, s: ServerStatus): ServerNode[] {
    const out: ServerNode[] = [];
    const info = (id: string, label: string, icon: IconSpec, description?: string, tooltip?: string): void => {
      out.push({ kind: 'info', entry, status: s, id, label, icon, description, tooltip });
    };
    if (s.approval === 'required' || s.approval === 'changed') {
      info(
        'approval',
        s.approval === 'changed' ? 'Changed since you approved it' : 'Needs your approval to run',
        { id: 'shield', color: 'list.warningForeground' },
        'Approve… shows exactly what runs',
        s.approvalSummary,
      );
    }
    const held = toolChangeLabel(s);
    if (held) {
      info('toolChanges', `Changed since pinned: ${held}`, TOOLS_CHANGED_ICON, 'Review Tool Changes… shows the diff');
    }
    const flagged = scanLabel(s);
    if (flagged) {
      const tip = scanFindingLines(s.scan?.findings ?? []).join('\n');
      info('scan', `Scanner: ${flagged}`, TOOLS_CHANGED_ICON, 'read these descriptions before you trust them', tip);
    }
    if (s.lastError && showsError(s))
      info(
        'error',
        firstLine(s.lastError, 200),
        { id: 'error', color: 'list.errorForeground' },
        undefined,
        s.lastError,
      );
    info(
      'target',
      s.target || '(no command)',
      { id: s.transport === 'stdio' ? 'terminal' : 'globe' },
      s.transport === 'stdio' ? 'command' : s.transport,
    );
    if (s.withheldEnv.length)
      info('withheld', `Withheld: ${s.withheldEnv.join(', ')}`, { id: 'eye-closed' }, 'needs the secrets grant');
    out.push({ kind: 'grants', entry, status: s });
    for (const row of guardrailRows(s)) info(row.id, row.label, row.icon, row.description, row.tooltip);
    const hasTools = s.tools.length || s.hiddenTools?.length || s.pins?.quarantined.length || s.state === 'running';
    if (hasTools) out.push({ kind: 'tools', entry, status: s });
    if (s.apps?.length) out.push({ kind: 'apps', entry, status: s });
    return out;
  }

  /** Tools held back after a change: listed under Tools with the warning, each opening the review. */
  private quarantinedOf(entry: FolderEntry, s: ServerStatus): ServerNode[] {
    return (s.pins?.quarantined ?? []).map((name) => ({
      kind: 'info',
      entry,
      status: s,
      id: `quarantined-${name}`,
      label: name,
      description: s.pins?.duplicated?.includes(name)
        ? 'quarantined: listed more than once'
        : 'quarantined: changed since approval',
      tooltip: s.pins?.duplicated?.includes(name)
        ? 'The server lists this name more than once: not listed to agents and refused when called until it lists it once.'
        : 'Not listed to agents and refused when called until you review and accept the change.',
      icon: TOOLS_CHANGED_ICON,
    }));
  }

  private grantsOf(entry: FolderEntry, s: ServerStatus): ServerNode[] {
    const out: ServerNode[] = s.grants.map((g) => {
      const gl = grantLabel(g);
      return {
        kind: 'info',
        entry,
        status: s,
        id: `grant-${g}`,
        label: gl.label,
        description: gl.description,
        icon: { id: gl.icon },
      };
    });
    for (const line of enforcementLines(s)) {
      const [what, how] = line.split(': ');
      out.push({
        kind: 'info',
        entry,
        status: s,
        id: `deny-${what}`,
        label: `no ${what}`,
        description: how,
        icon: { id: 'circle-slash', color: 'disabledForeground' },
      });
    }
    return out;
  }

  getTreeItem(node: ServerNode): vscode.TreeItem {
    const base = node.entry.key;
    switch (node.kind) {
      case 'folder': {
        const item = new vscode.TreeItem(node.entry.name, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `${base}`;
        item.iconPath = vscode.ThemeIcon.Folder;
        const servers = node.entry.state?.servers ?? [];
        item.description = `${servers.filter((s) => s.state === 'running').length}/${servers.length} running`;
        item.tooltip = node.entry.root;
        item.contextValue = 'folder';
        return item;
      }
      case 'server': {
        const s = node.status;
        const item = new vscode.TreeItem(s.name, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${base}/server/${s.name}`;
        item.description = serverDescription(s);
        item.iconPath = themeIcon(serverIcon(s));
        const tip = new vscode.MarkdownString(serverTooltip(s), true);
        tip.supportThemeIcons = true;
        item.tooltip = tip;
        item.contextValue = serverContextValue(s);
        item.resourceUri = undefined;
        item.accessibilityInformation = {
          label: `${s.name}, ${item.description}${s.description ? `. ${s.description}` : ''}`,
        };
        return item;
      }
      case 'tools': {
        const n = node.status.tools.length + (node.status.pins?.quarantined.length ?? 0);
        const hidden = node.status.hiddenTools?.length ?? 0;
        const item = new vscode.TreeItem(
          n ? `Tools (${n})` : 'Tools',
          n + hidden ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `${base}/server/${node.status.name}/tools`;
        item.iconPath = new vscode.ThemeIcon('tools');
        if (hidden) item.description = `${hidden} hidden by the definition`;
        else if (!n) item.description = 'none offered';
        item.contextValue = 'tools';
        return item;
      }
      case 'tool': {
        const t = node.tool;
        const item = new vscode.TreeItem(t.name, vscode.TreeItemCollapsibleState.None);
        item.id = `${base}/server/${node.status.name}/tool/${t.name}`;
        // A tool the scanner flags says so first, with the warning icon (toolScanner.ts).
        const flaggedAs = toolScanLabel(node.status, t.name);
        item.description = flaggedAs ? `⚠ ${flaggedAs}` : firstLine(t.description);
        item.tooltip = new vscode.MarkdownString(`**${t.exposedAs}**${t.description ? `\n\n${t.description}` : ''}`);
        item.iconPath = flaggedAs
          ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
          : new vscode.ThemeIcon('symbol-method');
        item.contextValue = 'tool';
        item.command = { command: 'switchboard.tryTool', title: 'Try Tool', arguments: [node] };
        return item;
      }
      case 'hiddenTool': {
        const t = node.tool;
        const item = new vscode.TreeItem(t.name, vscode.TreeItemCollapsibleState.None);
        item.id = `${base}/server/${node.status.name}/hidden-tool/${t.name}`;
        item.description = t.why;
        item.tooltip = new vscode.MarkdownString(
          `**${t.name}** is not served to any client: ${t.why}.${t.description ? `\n\n${t.description}` : ''}`,
        );
        // The disabled foreground greys the icon; the description says why.
        item.iconPath = new vscode.ThemeIcon('circle-slash', new vscode.ThemeColor('disabledForeground'));
        item.contextValue = 'hiddenTool';
        return item;
      }
      case 'apps': {
        const apps = node.status.apps ?? [];
        const item = new vscode.TreeItem(`Apps (${apps.length})`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${base}/server/${node.status.name}/apps`;
        item.iconPath = new vscode.ThemeIcon('window');
        item.description = 'MCP Apps: pages its tools open';
        item.contextValue = 'apps';
        return item;
      }
      case 'grants': {
        const g = node.status.grants;
        const item = new vscode.TreeItem('Grants', vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${base}/server/${node.status.name}/grants`;
        item.description = g.length ? g.join(', ') : 'none';
        item.iconPath = new vscode.ThemeIcon('key');
        item.contextValue = 'grants';
        return item;
      }
      case 'info': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = `${base}/server/${node.status.name}/${node.id}`;
        item.description = node.description;
        item.tooltip = node.tooltip;
        item.iconPath = themeIcon(node.icon);
        item.contextValue = `info-${node.id.replace(/-.*/, '')}`;
        if (node.id === 'approval')
          item.command = {
            command: 'switchboard.approveServer',
            title: 'Approve',
            arguments: [{ kind: 'server', entry: node.entry, status: node.status }],
          };
        if (
          node.id === 'toolChanges' ||
          node.id.startsWith('quarantined-') ||
          (node.id.startsWith('app-') && node.status.apps?.some((a) => a.held && `app-${a.uri}` === node.id))
        )
          item.command = {
            command: 'switchboard.reviewToolChanges',
            title: 'Review Tool Changes',
            arguments: [{ kind: 'server', entry: node.entry, status: node.status }],
          };
        if (node.id === 'error')
          item.command = {
            command: 'switchboard.showServerLogs',
            title: 'Show Logs',
            arguments: [{ kind: 'server', entry: node.entry, status: node.status }],
          };
        return item;
      }
    }
  }

  getParent(node: ServerNode): ServerNode | undefined {
    const multi = this.folders().length > 1;
    switch (node.kind) {
      case 'folder':
        return undefined;
      case 'server':
        return multi ? { kind: 'folder', entry: node.entry } : undefined;
      default:
        return { kind: 'server', entry: node.entry, status: node.status };
    }
  }
}
