// Commands end to end, through the real broker: add → file written → tree shows it → enable →
// tools listed → probe → logs → restart → approve (community) → import → remove.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { ServerStatus } from '../../../src/broker/control/controlApi';
import type { ProbeResult } from '../../../src/broker/supervision/probe';
import type { ServerNode } from '../../../src/extension/servers';
import { api, connectedEntry, ECHO_FIXTURE, folder, NODE, waitFor } from './switchboard.helpers';

const run = <T = unknown>(id: string, ...args: unknown[]): Promise<T> =>
  vscode.commands.executeCommand<T>(`switchboard.${id}`, ...args) as Promise<T>;

function treeNames(a: Awaited<ReturnType<typeof api>>): string[] {
  return (a.servers.getChildren() as ServerNode[])
    .filter((n) => n.kind === 'server')
    .map((n) => (n as { status: ServerStatus }).status.name);
}

describe('commands (end to end)', function () {
  it('contributes every command under the Switchboard category', async () => {
    await api();
    const all = await vscode.commands.getCommands(true);
    for (const id of [
      'addServer',
      'editServer',
      'removeServer',
      'enableServer',
      'disableServer',
      'restartServer',
      'approveServer',
      'probeServer',
      'showServerLogs',
      'openRegistryFolder',
      'importServers',
      'copyConnection',
      'startBroker',
      'stopBroker',
      'restartBroker',
      'openConsole',
    ]) {
      assert.ok(all.includes(`switchboard.${id}`), `switchboard.${id} registered`);
    }
  });

  it('add → file written → tree shows it → enable → tools listed → probe → logs → restart → remove', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const file = path.join(entry.root, 'mcp-servers.d', 'added.yaml');
    if (fs.existsSync(file)) fs.unlinkSync(file);

    const written = await run<{ file: string; name: string }>('addServer', {
      definition: {
        name: 'added',
        description: 'Added by the VS Code test',
        trust: 'trusted',
        command: NODE,
        args: [ECHO_FIXTURE, '--name', 'added'],
        enabled: false,
      },
    });
    assert.strictEqual(written.file, file);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^name: added$/m);
    assert.match(text, /^enabled: false$/m);
    await waitFor(a, () => treeNames(a).includes('added'), 'the tree to show added');
    assert.strictEqual(entry.server('added')!.state, 'disabled');

    const enabled = await run<ServerStatus>('enableServer', 'added');
    assert.ok(enabled, 'enableServer returned a status');
    await waitFor(a, () => entry.server('added')?.state === 'running', 'added to run');
    const node = (a.servers.getChildren() as ServerNode[]).find(
      (n) => n.kind === 'server' && n.status.name === 'added',
    )!;
    const toolsNode = a.servers.getChildren(node).find((c) => c.kind === 'tools')!;
    const tools = a.servers.getChildren(toolsNode).map((t) => String(a.servers.getTreeItem(t).label));
    assert.ok(tools.includes('echo') && tools.includes('add'), `tools: ${tools.join(', ')}`);

    const probe = await run<ProbeResult>('probeServer', 'added', { show: false });
    assert.strictEqual(probe.ok, true, probe.error);
    const echoTool = probe.tools.find((t) => t.name === 'echo');
    assert.ok(echoTool, 'probe lists echo');
    assert.deepStrictEqual(Object.keys((echoTool.inputSchema as { properties: object }).properties), ['text']);
    assert.ok((probe.connectMs ?? -1) >= 0);

    const logs = await run<{ server: string; terminal: vscode.Terminal }>('showServerLogs', 'added');
    assert.strictEqual(logs.server, 'added');
    logs.terminal.dispose();

    const pid = entry.server('added')!.pid;
    await run('restartServer', 'added');
    await waitFor(
      a,
      () => entry.server('added')?.state === 'running' && entry.server('added')?.pid !== pid,
      'added to run with a new pid',
    );

    await run('disableServer', 'added');
    await waitFor(a, () => entry.server('added')?.state === 'disabled', 'added disabled');

    await run('removeServer', 'added', { skipConfirmation: true });
    assert.ok(!fs.existsSync(file), 'the file is deleted');
    await waitFor(a, () => !treeNames(a).includes('added'), 'the tree to drop added');
  });

  it('a community server waits for approval; approve starts it; revoke stops it', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    await run('addServer', {
      definition: {
        name: 'third-party',
        trust: 'community',
        command: NODE,
        args: [ECHO_FIXTURE, '--name', 'third-party'],
      },
    });
    try {
      await waitFor(
        a,
        () => entry.server('third-party')?.state === 'awaiting-approval',
        'third-party awaiting approval',
      );
      assert.strictEqual(entry.server('third-party')!.pid, undefined, 'nothing runs before approval');
      const approved = await run<ServerStatus & { approved: string }>('approveServer', 'third-party', {
        skipConfirmation: true,
      });
      assert.match(approved.approved, /Runs: .*echo\.mjs --name third-party \| Working directory: \. \| Grants: none/);
      // A community server is lazy by default: approved, it runs once to learn its tools, then rests
      // idle until a call needs it. Either way it is no longer held back.
      await waitFor(
        a,
        () => ['running', 'idle'].includes(entry.server('third-party')?.state ?? ''),
        'third-party running (or idle, being lazy) after approval',
      );
      await run('revokeApproval', 'third-party', { skipConfirmation: true });
      await waitFor(
        a,
        () => entry.server('third-party')?.state === 'awaiting-approval',
        'third-party stopped after revoke',
      );
    } finally {
      await run('removeServer', 'third-party', { skipConfirmation: true });
    }
  });

  it('imports servers from .vscode/mcp.json into registry files', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const dir = path.join(folder().uri.fsPath, '.vscode');
    fs.mkdirSync(dir, { recursive: true });
    const mcpJson = path.join(dir, 'mcp.json');
    fs.writeFileSync(
      mcpJson,
      `{
  // a comment, as VS Code allows
  "servers": {
    "Imported Echo": {
      "type": "stdio", "command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(ECHO_FIXTURE)}, "--name", "imported"],
      "env": { "GREETING_TOKEN": "do-not-copy-me" }
    },
  },
}`,
    );
    try {
      const result = await run<{ written: string[] }>('importServers', 'vscode', {
        file: mcpJson,
        trust: 'trusted',
        names: ['Imported Echo'],
      });
      assert.deepStrictEqual(result.written, ['imported-echo']);
      const yaml = fs.readFileSync(path.join(entry.root, 'mcp-servers.d', 'imported-echo.yaml'), 'utf8');
      assert.ok(!yaml.includes('do-not-copy-me'), 'a secret is never copied into the workspace');
      assert.match(yaml, /GREETING_TOKEN: \$\{env:GREETING_TOKEN\}/);
      await waitFor(a, () => entry.server('imported-echo')?.state === 'running', 'imported-echo running');
    } finally {
      await run('removeServer', 'imported-echo', { skipConfirmation: true });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('copies connection details for a client (URL and how to get the token, not the token)', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const info = await run<{ url: string; tokenFile: string }>('copyConnection', 'terminal');
    const text = await vscode.env.clipboard.readText();
    assert.ok(text.includes(entry.state!.broker.url), text);
    assert.ok(text.includes(info.tokenFile), text);
    assert.ok(text.includes('connect --root'), text);
    const token = fs.readFileSync(info.tokenFile, 'utf8').trim();
    assert.ok(token.length > 20 && !text.includes(token), 'the token itself is not copied');
  });

  it('the console opens as a webview panel', async () => {
    await api();
    await run('openConsole');
    await waitForTab('Switchboard: New Server');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});

async function waitForTab(label: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    if (tabs.some((t) => t.label === label)) return;
    if (Date.now() > deadline) throw new Error(`no tab '${label}'; tabs: ${tabs.map((t) => t.label).join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
