// VS Code's own MCP client (not ours) reaches the broker through the extension's
// McpServerDefinitionProvider, lists the broker's tools in vscode.lm.tools and calls an upstream.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, connectedEntry, useAbsoluteEcho, waitFor } from './switchboard.helpers';

function textOf(result: vscode.LanguageModelToolResult): string {
  return result.content
    .map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : JSON.stringify(p)))
    .join('\n');
}

/**
 * Starts every MCP server VS Code knows (ours among them) until `pred` finds the tool; VS Code needs a
 * few seconds to see a new provider.
 */
async function startUntil(
  pred: () => vscode.LanguageModelToolInformation | undefined,
  timeoutMs = 45_000,
): Promise<vscode.LanguageModelToolInformation> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    const found = pred();
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(
        `no such tool in vscode.lm.tools after ${timeoutMs} ms (${lastError}); ` +
          `tools: ${vscode.lm.tools.map((t) => t.name).join(', ') || 'none'}`,
      );
    try {
      await vscode.commands.executeCommand('workbench.mcp.startServer', '*', {
        waitForLiveTools: true,
        autoTrustChanges: true,
      });
    } catch (e) {
      lastError = (e as Error).message;
    }
    if (!pred()) await new Promise((r) => setTimeout(r, 1000));
  }
}

interface SessionAudit {
  event: string;
  client: string;
  protocol: string;
  requested?: string;
  clientName?: string;
  clientVersion?: string;
}

/** The sessions the broker audited (event `session`), from every workspace under the suite's SWITCHBOARD_HOME. */
function auditedSessions(): SessionAudit[] {
  const home = process.env.SWITCHBOARD_HOME;
  assert.ok(home, 'the suite runs with its own SWITCHBOARD_HOME');
  const dir = path.join(home, 'workspaces');
  const entries: SessionAudit[] = [];
  for (const id of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const file = path.join(dir, id, 'audit.jsonl');
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes('"session"') || !line.endsWith('}')) continue; // a line still being written
      const entry = JSON.parse(line) as SessionAudit;
      if (entry.event === 'session') entries.push(entry);
    }
  }
  return entries;
}

describe("VS Code's MCP client through the provider", function () {
  it('offers the broker endpoint as the editor client (copilot), versioned by the catalog', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const defs = await a.mcp.provideMcpServerDefinitions(new vscode.CancellationTokenSource().token);
    assert.strictEqual(defs.length, 1, defs.map((d) => d.label).join(', '));
    assert.strictEqual(defs[0].label, 'Switchboard');
    assert.strictEqual(defs[0].uri.toString(), entry.state!.broker.url);
    assert.strictEqual(defs[0].version, `${entry.state!.broker.pid}.${entry.state!.broker.catalogVersion}`);
    assert.strictEqual(defs[0].headers.Authorization, undefined, 'the token is attached only when VS Code starts it');
  });

  it('workbench.mcp.startServer → broker tools in vscode.lm.tools → lm.invokeTool calls echo through the broker', async () => {
    const a = await api();
    await useAbsoluteEcho(a);
    const entry = await connectedEntry(a);
    const before = entry.state!.broker.sessions;
    const tool = await startUntil(() => vscode.lm.tools.find((t) => t.name.endsWith('echo__echo')));
    console.log(
      `[mcp] VS Code lists ${vscode.lm.tools.filter((t) => t.name.startsWith('mcp_')).length} MCP tools; echo as ${tool.name}`,
    );

    // The copilot client's tool profile denies everything__*: VS Code must not see those tools.
    assert.ok(!vscode.lm.tools.some((t) => /everything__/.test(t.name)), 'the client profile of copilot applies');
    // Control tools are there for the client's scopes (read, write)...
    assert.ok(
      vscode.lm.tools.some((t) => t.name.endsWith('switchboard__list_servers')),
      'facade read tools are offered',
    );

    const result = await vscode.lm.invokeTool(tool.name, {
      input: { text: 'hello from VS Code' },
      toolInvocationToken: undefined,
    });
    assert.match(textOf(result), /hello from VS Code/);
    // A result only the upstream can compute: echo's add tool, through the broker, by VS Code's client.
    const add = vscode.lm.tools.find((t) => t.name.endsWith('echo__add'));
    assert.ok(add, 'echo__add listed');
    const sum = textOf(
      await vscode.lm.invokeTool(add.name, { input: { a: 20, b: 22 }, toolInvocationToken: undefined }),
    );
    assert.match(sum, /\b42\b/);
    await waitFor(
      a,
      () => (entry.state?.broker.sessions ?? 0) > before || (entry.state?.broker.sessions ?? 0) >= 2,
      "a second session (VS Code's client) on the broker",
    );
    // Which revision VS Code's own client speaks with the broker, as the broker saw its handshake.
    const opened = await waitFor(
      a,
      () => auditedSessions().find((e) => e.client === 'copilot'),
      "the broker's audit of VS Code's session",
    );
    console.log(
      `[mcp] VS Code ${vscode.version}'s MCP client (${opened.clientName} ${opened.clientVersion}) ` +
        `opened a session on protocol ${opened.protocol}` +
        (opened.requested ? ` (it asked for ${opened.requested})` : ' (the version it asked for)'),
    );
    assert.match(opened.protocol, /^\d{4}-\d{2}-\d{2}$/);

    // ... but operator-only tools (approvals) are refused to an agent, whatever it asks.
    const approve = vscode.lm.tools.find((t) => t.name.endsWith('switchboard__approve_server'));
    if (approve) {
      let text: string;
      try {
        text = textOf(
          await vscode.lm.invokeTool(approve.name, { input: { name: 'memory' }, toolInvocationToken: undefined }),
        );
      } catch (e) {
        text = (e as Error).message;
      }
      assert.match(text, /operator only/);
      assert.strictEqual(entry.server('memory')!.approval, 'required');
    }
  });
});
