// A new user's first steps, in a real VS Code: Save in the console selects the server and offers
// "Approve now"; Show Logs follows a server's stderr live (redacted) until its terminal is closed; a
// "did you mean" problem has a Quick Fix; the status bar explains what "MCP: List Servers" shows;
// the first-run walkthrough opens. Each asks the runner for the screenshot the README shows.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ConsolePanel } from '../../../src/extension/consolePanel';
import type { ServerLogTerminal } from '../../../src/extension/serverLog';
import {
  api,
  connectedEntry,
  ECHO_FIXTURE,
  NODE,
  REPO,
  run,
  screenshot,
  sleep,
  until,
  useAbsoluteEcho,
  waitFor,
} from './switchboard.helpers';

describe('first steps (issue 21)', function () {
  this.timeout(120_000);

  // The harness opens a temp copy of workspace/: give it this repository's node_modules and test/
  // next to it, as in the repository, so the sample's servers (npx --no-install …, ../test/fixtures)
  // run there too and the screenshots show the sample as a user sees it.
  before(async function () {
    this.timeout(180_000);
    const a = await api();
    const entry = await connectedEntry(a);
    const parent = path.dirname(entry.root);
    for (const dir of ['node_modules', 'test']) {
      const link = path.join(parent, dir);
      if (!fs.existsSync(link)) fs.symlinkSync(path.join(REPO, dir), link, 'dir');
    }
    await useAbsoluteEcho(a);
    const sample = ['echo', 'everything', 'files'];
    await Promise.all(
      sample
        .filter((n) => entry.server(n)?.state !== 'running')
        .map((n) => entry.conn.call('restart_server', { name: n }).catch(() => undefined)),
    );
    // Only the screenshots need them: a slow machine goes on without them rather than failing here.
    await waitFor(
      a,
      () => sample.every((n) => entry.server(n)?.state === 'running'),
      'the sample servers',
      90_000,
    ).catch((err: Error) => console.log(`[ux] ${err.message}`));
  });

  it('Save in the console selects the new server and offers "Approve now" for a community server', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const name = 'ux-community';
    const panel = await run<ConsolePanel>('addServer', { folder: entry.folder.uri });
    const outcome = await panel.save({
      name,
      description: 'Saved from the console in the VS Code test',
      trust: 'community',
      transport: 'stdio',
      command: NODE,
      args: [ECHO_FIXTURE, '--name', name],
    });
    try {
      assert.ok(outcome, 'the save went through');
      assert.strictEqual(outcome.offered, 'Approve now');
      assert.strictEqual(outcome.selected, true);
      // The view reports its selection back asynchronously.
      await until(() => {
        const selected = a.serversView.selection[0];
        return selected?.kind === 'server' && selected.status.name === name;
      }, 'the new server to be selected in the Servers view');
      assert.strictEqual(entry.server(name)?.state, 'awaiting-approval');
      // The notification with its button, over the console and the selected server.
      await vscode.commands.executeCommand('notifications.showList');
      await sleep(2000);
      await screenshot('console-approve-now.png');
      await vscode.commands.executeCommand('notifications.hideList');
      // "Approve now" runs the existing approval (the modal, which a test cannot press: skipped here).
      await run('approveServer', name, { skipConfirmation: true });
      await waitFor(a, () => entry.server(name)?.approval === 'approved', `${name} approved`);
    } finally {
      await run('removeServer', name, { skipConfirmation: true });
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });

  it("Show Logs follows the server's stderr as it is written, redacted, and stops when closed", async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const name = 'ux-logs';
    const canary = 'canary-ux-3b9f-secret';
    fs.writeFileSync(path.join(entry.root, 'ux-logs.env'), `UX_SECRET=${canary}\n`);
    const file = path.join(entry.root, 'mcp-servers.d', `${name}.yaml`);
    fs.writeFileSync(
      file,
      `name: ${name}\ntrust: builtin\ncommand: ${JSON.stringify(NODE)}\n` +
        `args: [${JSON.stringify(ECHO_FIXTURE)}, --name, ${name}, --stderr]\nenvFile: ux-logs.env\ngrants: [secrets]\n`,
    );
    const { tokenFile, url } = await entry.conn.call('client_connection', { name: 'terminal' });
    const agent = new Client({ name: 'ux-agent', version: '1.0.0' }, { capabilities: {} });
    let log: ServerLogTerminal | undefined;
    try {
      await waitFor(a, () => entry.server(name)?.state === 'running', `${name} to run`, 45_000);
      const headers = { Authorization: `Bearer ${fs.readFileSync(tokenFile, 'utf8').trim()}` };
      await agent.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
      log = await run<ServerLogTerminal>('showServerLogs', name);
      const follower = log;
      await until(() => vscode.window.activeTerminal?.name === `Log: ${name}`, 'the log terminal to be active');
      await until(() => follower.shown.some((l) => /Following its stderr/.test(l)), 'the log header');
      await until(() => follower.reads > 0, 'a first read');
      for (const text of ['first call', `second call with ${canary}`]) {
        await agent.callTool({ name: `${name}__echo`, arguments: { text } });
        const wanted = text.replace(canary, '[redacted]');
        await until(
          () => follower.shown.some((l) => l.endsWith(`echo called: ${wanted}`)),
          `'${wanted}' in the live log (shown: ${follower.shown.join(' | ')})`,
        );
      }
      assert.ok(!follower.shown.some((l) => l.includes(canary)), 'the secret is redacted');
      await screenshot('server-live-log.png');

      log.terminal.dispose();
      await until(() => !follower.following, 'the follower to stop when its terminal closes');
      const reads = follower.reads;
      const lines = follower.shown.length;
      await agent.callTool({ name: `${name}__echo`, arguments: { text: 'after closing' } });
      await sleep(1500); // several poll intervals: a follower still running would have read again
      assert.strictEqual(follower.reads, reads, 'no read after the terminal closed');
      assert.strictEqual(follower.shown.length, lines);
    } finally {
      log?.terminal.dispose();
      await agent.close();
      fs.rmSync(file, { force: true });
      fs.rmSync(path.join(entry.root, 'ux-logs.env'), { force: true });
    }
  });

  it('offers a Quick Fix for "did you mean" problems that renames the key', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const file = path.join(entry.root, 'mcp-servers.d', 'ux-typo.yaml');
    fs.writeFileSync(file, `name: ux-typo\ntrust: builtin\ncomand: ${JSON.stringify(NODE)}\nargs: [x.js]\n`);
    const uri = vscode.Uri.file(file);
    try {
      const doc = await vscode.workspace.openTextDocument(uri);
      const editor = await vscode.window.showTextDocument(doc);
      const diag = await waitFor(
        a,
        () => vscode.languages.getDiagnostics(uri).find((d) => /did you mean 'command'/.test(d.message)),
        'the did-you-mean problem',
      );
      assert.deepStrictEqual([diag.range.start.line, diag.range.start.character], [2, 0]);
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
        'vscode.executeCodeActionProvider',
        uri,
        diag.range,
        vscode.CodeActionKind.QuickFix.value,
      );
      const fix = actions.find((x) => x.title === "Change 'comand' to 'command'");
      assert.ok(fix?.edit, `a Quick Fix (offered: ${actions.map((x) => x.title).join(', ')})`);
      assert.strictEqual(fix.isPreferred, true);
      // The lightbulb menu as a person sees it (Ctrl+.), for the README.
      editor.selection = new vscode.Selection(diag.range.start, diag.range.start);
      await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
      await vscode.commands.executeCommand('editor.action.quickFix');
      await sleep(1500);
      await screenshot('quick-fix.png');
      await vscode.commands.executeCommand('hideCodeActionWidget');
      assert.ok(await vscode.workspace.applyEdit(fix.edit));
      assert.match(doc.getText(), /^command: /m);
      await doc.save();
      await waitFor(
        a,
        () => !vscode.languages.getDiagnostics(uri).some((d) => /did you mean/.test(d.message)),
        'the problem to go away',
      );
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      fs.rmSync(file, { force: true });
    }
  });

  it("the status bar explains VS Code's MCP client state, which MCP: List Servers shows", async () => {
    const a = await api();
    await connectedEntry(a);
    a.statusBar.update();
    if (a.mcp.startedAt) assert.match(a.statusBar.tooltipText, /VS Code's MCP client: connected to the broker since/);
    else {
      // Until Copilot or agent mode uses it, VS Code has not connected: List Servers says Stopped.
      assert.match(a.statusBar.tooltipText, /VS Code's MCP client: not connected yet — it connects on first use/);
      assert.match(a.statusBar.tooltipText, /the broker is running \d+ servers? meanwhile/);
      void vscode.commands.executeCommand('workbench.mcp.listServer');
      await sleep(1500);
      await screenshot('mcp-list-servers.png');
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    }
    const deadline = Date.now() + 45_000;
    while (!a.mcp.startedAt && Date.now() < deadline) {
      await vscode.commands
        .executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true, autoTrustChanges: true })
        .then(undefined, () => undefined);
      if (!a.mcp.startedAt) await sleep(1000);
    }
    assert.ok(a.mcp.startedAt, "VS Code's MCP client started the Switchboard definition");
    assert.match(a.statusBar.tooltipText, /VS Code's MCP client: connected to the broker since \d\d:\d\d/);
    void vscode.commands.executeCommand('workbench.mcp.listServer');
    await sleep(1500);
    await screenshot('mcp-list-servers-running.png');
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
  });

  it('the first-run walkthrough opens from "Welcome: Open Walkthrough"', async () => {
    await api();
    await vscode.commands.executeCommand(
      'workbench.action.openWalkthrough',
      'switchboard.mcp-switchboard#firstRun',
      false,
    );
    const tab = await until(
      () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => /Welcome|Walkthrough/.test(t.label)),
      'the walkthrough tab',
    );
    assert.ok(tab.isActive, `the walkthrough is the active tab (${tab.label})`);
    // Steps are checked off by their completion events (onCommand:…), which the workbench sees for commands
    // run through it (a button, the palette), not for executeCommand from an extension: use the palette.
    await vscode.commands.executeCommand('switchboard.servers.focus');
    const before = await vscode.env.clipboard.readText();
    await vscode.env.clipboard.writeText('');
    // The palette fills and filters asynchronously, and on a loaded CI machine 1.5 s was not always enough
    // (the accept then hit an unfiltered list): each attempt waits longer, and a miss closes the palette first.
    const copied = async () => (await vscode.env.clipboard.readText()).includes('connect --root');
    for (let attempt = 1; attempt <= 4 && !(await copied()); attempt++) {
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await vscode.commands.executeCommand('workbench.action.quickOpen', '>Switchboard: Copy Connection Details');
      await sleep(1500 * attempt);
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      await sleep(1500 * attempt); // then the pick of a client
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      await until(copied, 'the copied details', 5000 * attempt).catch(() => undefined);
    }
    assert.ok(await copied(), 'the palette copied the connection details');
    await vscode.env.clipboard.writeText(before);
    await sleep(4000); // its markdown is rendered in a webview after the tab opens
    await screenshot('walkthrough.png');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
