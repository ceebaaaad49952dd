// The untrusted path: run by `node test/vscode/run.mjs --untrusted` (a second instance without
// --disable-workspace-trust, so the window opens in Restricted Mode). Nothing from the registry
// may be spawned; the views say why; VS Code's MCP client is offered nothing.
import * as assert from 'assert';
import * as fs from 'fs';
import * as vscode from 'vscode';
import { api, connectedEntry } from './switchboard.helpers';

/** Child processes of `pid` (an upstream the broker started would be one). */
function childrenOf(pid: number): string[] {
  const out: string[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(`${d}: ${fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ')}`);
    } catch {
      /* gone */
    }
  }
  return out;
}

describe('Restricted Mode (untrusted workspace)', function () {
  it('shows the registry but starts none of its servers, and says why', async () => {
    const a = await api();
    assert.strictEqual(vscode.workspace.isTrusted, false);
    const entry = await connectedEntry(a);
    assert.strictEqual(entry.state!.broker.untrusted, true, 'the broker runs with --untrusted');
    assert.ok(entry.state!.servers.length >= 4, 'the registry is read');
    for (const s of entry.state!.servers) {
      assert.strictEqual(s.state, 'blocked', `${s.name} is ${s.state}`);
      assert.strictEqual(s.pid, undefined, `${s.name} has no process`);
    }
    // Give a wrongly-started upstream time to show up, then look for any child of the broker.
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepStrictEqual(childrenOf(entry.state!.broker.pid), [], 'the broker spawned no process');
    const item = a.servers.getTreeItem(a.servers.getChildren()[0]);
    assert.match(String(item.description), /blocked \(Restricted Mode\)/);
  });

  it("offers VS Code's MCP client nothing and refuses to probe", async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const defs = await a.mcp.provideMcpServerDefinitions(new vscode.CancellationTokenSource().token);
    assert.deepStrictEqual(defs, []);
    await assert.rejects(
      entry.conn.call('probe_server', { definition: { name: 'x', command: 'node', args: ['-e', '1'] } }),
      /not trusted/,
    );
  });
});
