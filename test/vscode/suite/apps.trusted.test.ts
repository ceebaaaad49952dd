// MCP Apps in a real VS Code: a server written with ext-apps' server helpers shows an Apps node in
// the Servers view, and Try a tool on a tool with an app opens the App preview beside the console,
// the page rendered there through the broker (the runner's screenshot shows it connected, with the
// tool's input delivered by the preview's host).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { ConsolePanel } from '../../../src/extension/consolePanel';
import type { ServerNode } from '../../../src/extension/servers';
import { api, connectedEntry, NODE, REPO, run, screenshot, sleep, until, waitFor } from './switchboard.helpers';

describe('MCP Apps in the editor (issue 31)', function () {
  this.timeout(120_000);
  const name = 'apps';
  let file: string;

  before(async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    file = path.join(entry.root, 'mcp-servers.d', `${name}.yaml`);
    const fixture = path.join(REPO, 'test', 'fixtures', 'apps.mjs');
    fs.writeFileSync(
      file,
      `name: ${name}\ntrust: builtin\ncommand: ${JSON.stringify(NODE)}\nargs: [${JSON.stringify(fixture)}, --label, vscode]\n`,
    );
    await waitFor(a, () => entry.server(name)?.apps?.length === 2, 'the apps server and its two apps', 60_000);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (file && fs.existsSync(file)) fs.rmSync(file);
  });

  it('the server’s node has its apps; Try a tool on a tool with an app opens its App preview', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const status = entry.server(name)!;
    assert.deepStrictEqual(
      status.apps!.map((app) => [app.uri, app.tools]),
      [
        ['ui://clock/view.html', ['show_clock']],
        ['ui://counter/view.html', ['show_counter', 'increment']],
      ],
    );
    const server = (a.servers.getChildren() as ServerNode[]).find(
      (n) => n.kind === 'server' && n.status.name === name,
    )!;
    const appsNode = a.servers.getChildren(server).find((n) => n.kind === 'apps')!;
    assert.ok(appsNode, 'an Apps node');
    assert.strictEqual(a.servers.getTreeItem(appsNode).label, 'Apps (2)');
    const lines = a.servers.getChildren(appsNode).map((n) => a.servers.getTreeItem(n));
    assert.deepStrictEqual(
      lines.map((l) => [l.label, l.description]),
      [
        ['Clock', 'opened by show_clock'],
        ['Counter', 'opened by show_counter; its page calls increment'],
      ],
    );

    const panel = await run<ConsolePanel>('tryTool', `${name}__show_counter`);
    await panel.callTool(`${name}__show_counter`, {});
    const preview = await until(
      () =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .find(
            (t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('switchboard.appPreview'),
          ),
      'the App preview tab',
    );
    assert.strictEqual(preview.label, `App: ${name}__show_counter`);
    await sleep(4000); // the page renders in the webview after the tab opens
    await screenshot('mcp-app-console-preview.png');
  });
});
