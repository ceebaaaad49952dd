// The Prompts view: fleet prompts from prompts.d/, as the broker serves them.
import * as vscode from 'vscode';
import type { BrokerState } from '../broker/control/controlApi';
import type { Ctx, FolderEntry } from './ctx';
import { firstLine } from './presentation';

type Prompt = BrokerState['prompts'][number];

export type PromptNode =
  | { kind: 'folder'; entry: FolderEntry }
  | { kind: 'prompt'; entry: FolderEntry; prompt: Prompt }
  | { kind: 'argument'; entry: FolderEntry; prompt: Prompt; arg: Prompt['arguments'][number] };

export class PromptsProvider implements vscode.TreeDataProvider<PromptNode> {
  private readonly emitter = new vscode.EventEmitter<PromptNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly ctx: Ctx) {
    ctx.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(node?: PromptNode): PromptNode[] {
    if (!node) {
      const folders = this.ctx.activeEntries().filter((e) => e.state);
      const withPrompts = folders.filter((e) => e.state!.prompts.length);
      if (folders.length > 1 && withPrompts.length) return withPrompts.map((entry) => ({ kind: 'folder', entry }));
      return folders.flatMap((entry) => this.promptsOf(entry));
    }
    if (node.kind === 'folder') return this.promptsOf(node.entry);
    if (node.kind === 'prompt')
      return node.prompt.arguments.map((arg) => ({ kind: 'argument', entry: node.entry, prompt: node.prompt, arg }));
    return [];
  }

  private promptsOf(entry: FolderEntry): PromptNode[] {
    return (entry.state?.prompts ?? []).map((prompt) => ({ kind: 'prompt', entry, prompt }));
  }

  getTreeItem(node: PromptNode): vscode.TreeItem {
    switch (node.kind) {
      case 'folder': {
        const item = new vscode.TreeItem(node.entry.name, vscode.TreeItemCollapsibleState.Expanded);
        item.iconPath = vscode.ThemeIcon.Folder;
        item.id = `${node.entry.key}/prompts`;
        return item;
      }
      case 'prompt': {
        const p = node.prompt;
        const item = new vscode.TreeItem(
          p.name,
          p.arguments.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `${node.entry.key}/prompt/${p.name}`;
        item.description = firstLine(p.description) || `${p.arguments.length} arguments`;
        item.tooltip = new vscode.MarkdownString(
          `**${p.exposedAs}**${p.description ? `\n\n${p.description}` : ''}\n\nServed to every client as the prompt \`${p.exposedAs}\`.`,
        );
        item.iconPath = new vscode.ThemeIcon('comment-discussion');
        item.contextValue = 'prompt';
        item.command = { command: 'switchboard.openDefinition', title: 'Open Definition', arguments: [node] };
        return item;
      }
      case 'argument': {
        const a = node.arg;
        const item = new vscode.TreeItem(a.name, vscode.TreeItemCollapsibleState.None);
        item.id = `${node.entry.key}/prompt/${node.prompt.name}/arg/${a.name}`;
        item.description = `${a.required ? 'required' : 'optional'}${a.description ? ` · ${firstLine(a.description)}` : ''}`;
        item.iconPath = new vscode.ThemeIcon('symbol-parameter');
        item.contextValue = 'promptArgument';
        return item;
      }
    }
  }
}
