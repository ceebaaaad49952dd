// The views, populated from the sample registry (a temp copy of workspace/) by the real broker.
import * as assert from 'assert';
import * as vscode from 'vscode';
import type { ServerNode } from '../../../src/extension/servers';
import { api, connectedEntry, useAbsoluteEcho, waitFor } from './switchboard.helpers';

describe('views (sample registry)', function () {
  it('Servers lists every server of the sample registry with state icon and trust badge', async () => {
    const a = await api();
    await useAbsoluteEcho(a);
    const roots = a.servers.getChildren() as ServerNode[];
    const names = roots.map((n) => (n.kind === 'server' ? n.status.name : '?'));
    for (const n of ['echo', 'everything', 'files', 'memory'])
      assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);

    const item = (name: string): vscode.TreeItem =>
      a.servers.getTreeItem(roots.find((n) => n.kind === 'server' && n.status.name === name)!);
    const echo = item('echo');
    assert.match(String(echo.description), /builtin · running · \d+ tools/);
    assert.strictEqual((echo.iconPath as vscode.ThemeIcon).id, 'pass-filled');
    assert.match(String(echo.contextValue), /^server enabled builtin restartable/);

    const memory = item('memory');
    assert.match(String(memory.description), /community · awaiting approval/);
    assert.strictEqual((memory.iconPath as vscode.ThemeIcon).id, 'shield');
    assert.match(String(memory.contextValue), /\bneedsApproval\b/);
    assert.match(String(item('files').description), /trusted/);
  });

  it('a server node has its tools (with descriptions), grants and details as children', async () => {
    const a = await api();
    await useAbsoluteEcho(a);
    const echoNode = (a.servers.getChildren() as ServerNode[]).find(
      (n) => n.kind === 'server' && n.status.name === 'echo',
    )!;
    const children = a.servers.getChildren(echoNode);
    const toolsNode = children.find((c) => c.kind === 'tools')!;
    assert.ok(toolsNode, `children: ${children.map((c) => c.kind).join(', ')}`);
    const tools = a.servers.getChildren(toolsNode).map((t) => a.servers.getTreeItem(t));
    const echoTool = tools.find((t) => t.label === 'echo');
    assert.ok(echoTool, `tools: ${tools.map((t) => t.label).join(', ')}`);
    assert.strictEqual(echoTool.description, 'Echo the text back');
    const grants = children.find((c) => c.kind === 'grants')!;
    assert.strictEqual(a.servers.getTreeItem(grants).description, 'none');
    const denied = a.servers.getChildren(grants).map((g) => String(a.servers.getTreeItem(g).label));
    assert.ok(denied.includes('no secrets'), denied.join(', '));

    const memoryNode = (a.servers.getChildren() as ServerNode[]).find(
      (n) => n.kind === 'server' && n.status.name === 'memory',
    )!;
    const memoryKids = a.servers.getChildren(memoryNode).map((c) => a.servers.getTreeItem(c));
    assert.ok(
      memoryKids.some((k) => k.label === 'Needs your approval to run'),
      memoryKids.map((k) => k.label).join(', '),
    );
  });

  it('Prompts and Clients show the fleet prompt and the declared clients', async () => {
    const a = await api();
    await connectedEntry(a);
    const prompts = a.prompts.getChildren();
    const review = prompts.find((p) => p.kind === 'prompt' && p.prompt.name === 'review');
    assert.ok(review, 'review prompt');
    assert.deepStrictEqual(
      a.prompts.getChildren(review).map((c) => a.prompts.getTreeItem(c).label),
      ['file', 'focus'],
    );
    const clients = a.clients.getChildren().map((c) => a.clients.getTreeItem(c));
    assert.deepStrictEqual(clients.map((c) => c.label).sort(), ['copilot', 'terminal']);
    assert.match(String(clients.find((c) => c.label === 'copilot')!.description), /scopes: read, write/);
  });

  it('terminals get SWITCHBOARD_URL for the running broker', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const env = a.ctx.extension.environmentVariableCollection;
    await waitFor(a, () => env.get('SWITCHBOARD_URL')?.value === entry.state?.broker.url, 'SWITCHBOARD_URL');
    assert.match(entry.state!.broker.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.strictEqual(env.get('SWITCHBOARD_ROOT')?.value, entry.root);
    assert.match(String(env.get('SWITCHBOARD_CLI')?.value), /dist[\\/]broker\.js$/);
  });

  it('the views refresh on broker state changes (disable → tree shows it)', async () => {
    const a = await api();
    await useAbsoluteEcho(a);
    let fired = 0;
    const sub = a.servers.onDidChangeTreeData(() => fired++);
    try {
      await vscode.commands.executeCommand('switchboard.disableServer', 'echo');
      const entry = await connectedEntry(a);
      await waitFor(a, () => entry.server('echo')?.state === 'disabled', 'echo disabled');
      const echo = (a.servers.getChildren() as ServerNode[]).find(
        (n) => n.kind === 'server' && n.status.name === 'echo',
      )!;
      assert.match(String(a.servers.getTreeItem(echo).description), /disabled/);
      assert.ok(fired > 0, 'the tree was told to refresh');
    } finally {
      sub.dispose();
      await vscode.commands.executeCommand('switchboard.enableServer', 'echo');
    }
    const entry = await connectedEntry(a);
    await waitFor(a, () => entry.server('echo')?.state === 'running', 'echo running again');
  });

  // Last in the suite (files run in name order): it kills the broker.
  it('a broker that dies is restarted with backoff and the views come back', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const pid = entry.state!.broker.pid;
    const phases: string[] = [];
    const sub = a.ctx.onDidChange(() => phases.push(entry.phase));
    try {
      process.kill(pid, 'SIGKILL');
      await waitFor(
        a,
        () => entry.phase === 'connected' && entry.state && entry.state.broker.pid !== pid,
        'a new broker',
        45_000,
      );
    } finally {
      sub.dispose();
    }
    assert.ok(phases.includes('reconnecting'), `phases: ${[...new Set(phases)].join(', ')}`);
    await waitFor(a, () => entry.server('echo')?.state === 'running', 'echo running under the new broker', 45_000);
    const names = (a.servers.getChildren() as ServerNode[]).map((n) => (n.kind === 'server' ? n.status.name : '?'));
    assert.ok(names.includes('memory'), names.join(', '));
    assert.strictEqual(
      a.ctx.extension.environmentVariableCollection.get('SWITCHBOARD_URL')?.value,
      entry.state!.broker.url,
      'terminals get the new URL',
    );
  });
});
