// Elicitation in a real VS Code: (a) VS Code's own MCP client calls, through the broker, an upstream
// tool that elicits and VS Code's UI shows it; (b) a plain SDK client without elicitation (a terminal
// agent) calls it, and the extension's own quick input answers for it, as the editor.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ShownInput } from '../../../src/extension/editorClient';
import { api, connectedEntry, NODE, REPO, waitFor } from './switchboard.helpers';

const ELICITS = path.join(REPO, 'test', 'fixtures', 'elicits.mjs');

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

/** The elicits fixture as a builtin server of the test workspace's registry, running. */
async function useElicits(a: Awaited<ReturnType<typeof api>>): Promise<void> {
  const entry = await connectedEntry(a);
  const file = path.join(entry.root, 'mcp-servers.d', 'elicits.yaml');
  const yaml =
    '# Written by the VS Code tests: a server whose tools ask their client for input.\n' +
    `name: elicits\ntrust: builtin\ncommand: ${JSON.stringify(NODE)}\nargs: [${JSON.stringify(ELICITS)}]\n`;
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== yaml) fs.writeFileSync(file, yaml);
  await waitFor(a, () => entry.server('elicits')?.state === 'running', 'elicits to run', 45_000);
}

describe('elicitation in VS Code', function () {
  it('the fallback: a client without elicitation calls a tool that elicits; the quick input answers', async () => {
    const a = await api();
    await useElicits(a);
    const entry = await connectedEntry(a);
    await waitFor(a, () => entry.state?.broker.editorConnected === true, 'this window to be the editor');
    const { tokenFile, url } = await entry.conn.call('client_connection', { name: 'terminal' });
    const token = fs.readFileSync(tokenFile, 'utf8').trim();
    const agent = new Client({ name: 'terminal-agent', version: '1.0.0' }, { capabilities: {} });
    const headers = { Authorization: `Bearer ${token}` };
    await agent.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    const shownInputs: ShownInput[] = [];
    const answered = new Promise<void>((resolve, reject) => {
      const sub = a.editorClient.onDidShowInput(async (shown) => {
        shownInputs.push(shown);
        try {
          // The prompt as a person sees it, for the README (the runner writes it; wait until it has).
          const shot = path.join(REPO, 'docs', 'screenshots', 'editor-elicitation.png');
          const before = fs.existsSync(shot) ? fs.statSync(shot).mtimeMs : 0;
          shown.input.value = 'Switchboard demo';
          console.log('[screenshot] docs/screenshots/editor-elicitation.png');
          const deadline = Date.now() + 20_000;
          while ((fs.existsSync(shot) ? fs.statSync(shot).mtimeMs : 0) === before && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 200));
          }
          // Accept it the way Enter does, through the workbench's own quick input.
          await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
          sub.dispose();
          resolve();
        } catch (e) {
          reject(e as Error);
        }
      });
    });
    try {
      const result = await agent.callTool({ name: 'elicits__ask-name', arguments: {} });
      await answered;
      assert.strictEqual(result.isError, undefined, textOf(result));
      assert.deepStrictEqual(JSON.parse(textOf(result)), { action: 'accept', content: { name: 'Switchboard demo' } });
      assert.strictEqual(shownInputs.length, 1);
      const { input, step } = shownInputs[0];
      assert.strictEqual(step.key, 'name');
      assert.strictEqual(input.title, 'elicits (◆ builtin) asks: Project name');
      const prompt = (input as vscode.InputBox).prompt ?? '';
      assert.match(prompt, /What should the new project be called\? — \(for client 'terminal'\)/);
    } finally {
      await agent.close();
    }
  });

  it("VS Code's own MCP client: the tool's elicitation shows in VS Code's UI and is answered there", async function () {
    this.timeout(120_000);
    const a = await api();
    await useElicits(a);
    // VS Code connects as the client `copilot` (it declares elicitation): the request is the caller's own.
    let tool: vscode.LanguageModelToolInformation | undefined;
    const deadline = Date.now() + 45_000;
    while (!(tool = vscode.lm.tools.find((t) => t.name.endsWith('elicits__choose'))) && Date.now() < deadline) {
      await vscode.commands
        .executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true, autoTrustChanges: true })
        .then(undefined, () => undefined);
      if (!vscode.lm.tools.some((t) => t.name.endsWith('elicits__choose'))) {
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    assert.ok(tool, `elicits__choose in vscode.lm.tools (${vscode.lm.tools.map((t) => t.name).join(', ')})`);
    const shownByUs: ShownInput[] = [];
    const sub = a.editorClient.onDidShowInput((shown) => shownByUs.push(shown));
    let settled = false;
    const invoked = Promise.resolve(vscode.lm.invokeTool(tool.name, { input: {}, toolInvocationToken: undefined }));
    void invoked.then(
      () => (settled = true),
      () => (settled = true),
    );
    try {
      // Outside a chat, VS Code's MCP client shows an elicitation as a notification ("Respond" / "Cancel");
      // Respond opens its own quick input, the default (teal) preselected. Press them as a person would.
      const until = Date.now() + 40_000;
      const run = (id: string): Thenable<unknown> =>
        vscode.commands.executeCommand(id).then(undefined, () => undefined);
      while (!settled && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 1000));
        if (settled) break;
        await run('notifications.focusToasts');
        await run('notification.acceptPrimaryAction');
        await new Promise((r) => setTimeout(r, 500));
        await run('workbench.action.acceptSelectedQuickOpenItem');
      }
      assert.ok(settled, "VS Code's elicitation was not answered through its notification and quick input");
      const result = await invoked;
      const text = result.content
        .map((p: unknown) => (p instanceof vscode.LanguageModelTextPart ? p.value : JSON.stringify(p)))
        .join('\n');
      assert.deepStrictEqual(JSON.parse(text), { action: 'accept', content: { colour: 'teal' } });
      assert.strictEqual(shownByUs.length, 0, "VS Code's client answered it itself, not the fallback");
    } finally {
      sub.dispose();
    }
  });
});
