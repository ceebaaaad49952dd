// The Clients view: declared clients (clients.d/), their scopes and tool profiles.
import * as vscode from 'vscode';
import type { BrokerState } from '../broker/control/controlApi';
import type { Ctx, FolderEntry } from './ctx';

type Client = BrokerState['clients'][number];

export type ClientNode =
  | { kind: 'folder'; entry: FolderEntry }
  | { kind: 'client'; entry: FolderEntry; client: Client }
  | {
      kind: 'detail';
      entry: FolderEntry;
      client: Client;
      id: string;
      label: string;
      description: string;
      icon: string;
    };

export function scopeDescription(c: Client): string {
  const scopes = c.mcp_allow.length ? c.mcp_allow.join(', ') : 'no control tools';
  return `scopes: ${scopes}`;
}

export class ClientsProvider implements vscode.TreeDataProvider<ClientNode> {
  private readonly emitter = new vscode.EventEmitter<ClientNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly ctx: Ctx) {
    ctx.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(node?: ClientNode): ClientNode[] {
    if (!node) {
      const folders = this.ctx.activeEntries().filter((e) => e.state);
      const withClients = folders.filter((e) => e.state!.clients.length);
      if (folders.length > 1 && withClients.length) return withClients.map((entry) => ({ kind: 'folder', entry }));
      return folders.flatMap((entry) => this.clientsOf(entry));
    }
    if (node.kind === 'folder') return this.clientsOf(node.entry);
    if (node.kind === 'client') {
      const c = node.client;
      const out: ClientNode[] = [];
      const detail = (id: string, label: string, description: string, icon: string): void => {
        out.push({ kind: 'detail', entry: node.entry, client: c, id, label, description, icon });
      };
      detail('scopes', 'Control scopes', c.mcp_allow.length ? c.mcp_allow.join(', ') : 'none', 'shield');
      if (c.tools?.allow?.length) detail('allow', 'Only these tools', c.tools.allow.join(', '), 'filter');
      if (c.tools?.deny?.length) detail('deny', 'Hidden tools', c.tools.deny.join(', '), 'eye-closed');
      detail('token', 'Token file', c.tokenFile, 'key');
      return out;
    }
    return [];
  }

  private clientsOf(entry: FolderEntry): ClientNode[] {
    return (entry.state?.clients ?? []).map((client) => ({ kind: 'client', entry, client }));
  }

  getTreeItem(node: ClientNode): vscode.TreeItem {
    switch (node.kind) {
      case 'folder': {
        const item = new vscode.TreeItem(node.entry.name, vscode.TreeItemCollapsibleState.Expanded);
        item.iconPath = vscode.ThemeIcon.Folder;
        item.id = `${node.entry.key}/clients`;
        return item;
      }
      case 'client': {
        const c = node.client;
        const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${node.entry.key}/client/${c.name}`;
        item.description = [c.description, scopeDescription(c)].filter(Boolean).join(' · ');
        item.tooltip = new vscode.MarkdownString(
          `**${c.name}**${c.description ? ` — ${c.description}` : ''}\n\n` +
            `- May call the control tools for: ${c.mcp_allow.length ? c.mcp_allow.join(', ') : 'nothing'}\n` +
            (c.tools?.allow?.length ? `- Sees only: ${c.tools.allow.join(', ')}\n` : '') +
            (c.tools?.deny?.length ? `- Never sees: ${c.tools.deny.join(', ')}\n` : '') +
            `\nUse **Copy Connection Details** to connect an agent as this client.`,
        );
        item.iconPath = new vscode.ThemeIcon('account');
        item.contextValue = 'client';
        return item;
      }
      case 'detail': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = `${node.entry.key}/client/${node.client.name}/${node.id}`;
        item.description = node.description;
        item.iconPath = new vscode.ThemeIcon(node.icon);
        item.contextValue = `client-${node.id}`;
        return item;
      }
    }
  }
}
