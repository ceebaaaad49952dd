// A multi-root window (run.mjs --multiroot: folders alpha and beta, each a copy of workspace/):
// one broker per folder, each serving only its own registry, both offered to VS Code's MCP client
// and both in the Servers view.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SwitchboardApi } from '../../../src/extension/extension';
import type { FolderEntry } from '../../../src/extension/ctx';
import { api, echoServerYaml, waitFor } from './switchboard.helpers';

async function connectedPair(a: SwitchboardApi): Promise<[FolderEntry, FolderEntry]> {
  return waitFor(
    a,
    () => {
      const byName = (n: string) => a.ctx.entries().find((e) => e.name === n && e.phase === 'connected' && e.state);
      const alpha = byName('alpha');
      const beta = byName('beta');
      return alpha && beta ? ([alpha, beta] as [FolderEntry, FolderEntry]) : undefined;
    },
    'both folders to have a connected broker',
    60_000,
  );
}

describe('multi-root workspace', function () {
  this.timeout(120_000);

  it('opens two folders, and starts one broker per folder, each serving its own root', async () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.deepStrictEqual(
      folders.map((f) => f.name),
      ['alpha', 'beta'],
    );
    const a = await api();
    const [alpha, beta] = await connectedPair(a);
    assert.strictEqual(alpha.root, folders[0].uri.fsPath);
    assert.strictEqual(beta.root, folders[1].uri.fsPath);
    assert.strictEqual(alpha.state!.broker.root, alpha.root);
    assert.strictEqual(beta.state!.broker.root, beta.root);
    assert.notStrictEqual(alpha.state!.broker.pid, beta.state!.broker.pid, 'two broker processes');
    assert.notStrictEqual(alpha.state!.broker.url, beta.state!.broker.url, 'two endpoints');
  });

  it("a server added to one folder's registry starts in that folder's broker only", async () => {
    const a = await api();
    const [alpha, beta] = await connectedPair(a);
    fs.writeFileSync(path.join(beta.root, 'mcp-servers.d', 'only-beta.yaml'), echoServerYaml('only-beta'));
    await waitFor(a, () => beta.server('only-beta')?.state === 'running', 'only-beta to run in beta', 45_000);
    assert.strictEqual(alpha.server('only-beta'), undefined, "alpha's broker does not see beta's server");
    const running = await waitFor(
      a,
      () => beta.state!.servers.find((s) => s.name === 'only-beta' && s.tools.length > 0),
      'only-beta tools',
    );
    assert.ok(
      running.tools.some((t) => t.name === 'echo'),
      running.tools.map((t) => t.name).join(', '),
    );
  });

  it("offers both brokers to VS Code's MCP client, labelled by folder", async () => {
    const a = await api();
    const [alpha, beta] = await connectedPair(a);
    const defs = await a.mcp.provideMcpServerDefinitions(new vscode.CancellationTokenSource().token);
    const byLabel = new Map(defs.map((d) => [d.label, d.uri.toString()]));
    assert.strictEqual(byLabel.get('Switchboard (alpha)'), alpha.state!.broker.url, [...byLabel.keys()].join(', '));
    assert.strictEqual(byLabel.get('Switchboard (beta)'), beta.state!.broker.url, [...byLabel.keys()].join(', '));
    assert.strictEqual(defs.length, 2);
  });

  it('groups the Servers view by folder', async () => {
    const a = await api();
    const [, beta] = await connectedPair(a);
    await waitFor(a, () => beta.server('only-beta'), 'only-beta in the state');
    const top = a.servers.getChildren();
    assert.deepStrictEqual(
      top.map((n) => n.kind),
      ['folder', 'folder'],
    );
    const labels = top.map((n) => a.servers.getTreeItem(n).label);
    assert.deepStrictEqual(labels.map(String), ['alpha', 'beta']);
    const betaServers = a.servers.getChildren(top[1]).map((n) => ('status' in n ? n.status.name : ''));
    assert.ok(betaServers.includes('only-beta'), betaServers.join(', '));
    const alphaServers = a.servers.getChildren(top[0]).map((n) => ('status' in n ? n.status.name : ''));
    assert.ok(!alphaServers.includes('only-beta'), alphaServers.join(', '));
  });
});
