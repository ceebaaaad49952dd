// Integrated terminals get SWITCHBOARD_URL (and where the registry and the CLI are), so a terminal
// agent finds the workspace's broker: `node "$SWITCHBOARD_CLI" connect --root "$SWITCHBOARD_ROOT"`.
import type * as vscode from 'vscode';
import type { Ctx } from './ctx';

export class TerminalEnvironment implements vscode.Disposable {
  private readonly disposable: vscode.Disposable;
  private last = '';

  constructor(private readonly ctx: Ctx) {
    this.disposable = ctx.onDidChange(() => this.update());
    const env = ctx.extension.environmentVariableCollection;
    env.description =
      "Tells agents in this terminal where the workspace's MCP Switchboard broker is (SWITCHBOARD_URL, SWITCHBOARD_ROOT, SWITCHBOARD_CLI).";
    env.persistent = false;
    this.update();
  }

  update(): void {
    const collection = this.ctx.extension.environmentVariableCollection;
    const entries = this.ctx.entries();
    const primary = entries.find((e) => e.state) ?? entries[0];
    const sig = JSON.stringify(entries.map((e) => [e.key, e.state?.broker.url, e.root]));
    if (sig === this.last) return;
    this.last = sig;
    const apply = (
      c: vscode.EnvironmentVariableCollection,
      url: string | undefined,
      root: string | undefined,
    ): void => {
      if (url) c.replace('SWITCHBOARD_URL', url);
      else c.delete('SWITCHBOARD_URL');
      if (root) c.replace('SWITCHBOARD_ROOT', root);
      else c.delete('SWITCHBOARD_ROOT');
      c.replace('SWITCHBOARD_CLI', this.ctx.brokerCli());
    };
    // The unscoped collection covers terminals of the first folder (and single-folder windows);
    // each folder's own terminals get its own broker in a multi-root workspace.
    apply(collection, primary?.state?.broker.url, primary?.state ? primary.root : undefined);
    if (entries.length > 1) {
      for (const e of entries) {
        apply(collection.getScoped({ workspaceFolder: e.folder }), e.state?.broker.url, e.state ? e.root : undefined);
      }
    }
  }

  dispose(): void {
    this.disposable.dispose();
  }
}
