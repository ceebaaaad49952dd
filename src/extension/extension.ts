import * as vscode from 'vscode';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Switchboard', { log: true });
  context.subscriptions.push(output);
  output.info('MCP Switchboard activated');
}

export function deactivate(): void {}
