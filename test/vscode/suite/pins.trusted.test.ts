// Tool, prompt and resource pins in the editor: a server that changes a tool description (or a prompt, a template) after
// it was accepted shows the warning in the Servers view; Review Tool Changes opens a diff editor
// and accepting lists it again.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { SwitchboardApi } from '../../../src/extension/extension';
import type { ServerNode } from '../../../src/extension/servers';
import { api, connectedEntry, NODE, REPO, waitFor } from './switchboard.helpers';

const RUGPULL = path.join(REPO, 'test', 'fixtures', 'rugpull.mjs');

function iconId(item: vscode.TreeItem): string | undefined {
  return item.iconPath instanceof vscode.ThemeIcon ? item.iconPath.id : undefined;
}

/** The rugpull fixture's server definition; `extra` adds fixture arguments. */
function rugpullYaml(extra: string[] = []): string {
  const args = [RUGPULL, ...extra].map((x) => JSON.stringify(x)).join(', ');
  return `name: rugpull\ntrust: builtin\ncommand: ${JSON.stringify(NODE)}\nargs: [${args}]\n`;
}

/** The rugpull server's node in the Servers view. */
function rugpullNode(a: SwitchboardApi): ServerNode {
  return (a.servers.getChildren() as ServerNode[]).find((n) => n.kind === 'server' && n.status.name === 'rugpull')!;
}

/**
 * Runs Review Tool Changes on rugpull (accepting without asking) and reads the diff editor it opened:
 * what the command answered, and the pinned (`before`) and the listed (`now`) definitions.
 */
async function reviewRugpull<T>(): Promise<{ result: T | undefined; before: string; now: string }> {
  const result = await vscode.commands.executeCommand<T | undefined>('switchboard.reviewToolChanges', 'rugpull', {
    skipConfirmation: true,
  });
  const diffTab = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.original.scheme === 'switchboard-tools');
  assert.ok(diffTab, 'a diff editor of the pinned and the listed definitions is open');
  const input = diffTab.input as vscode.TabInputTextDiff;
  const before = (await vscode.workspace.openTextDocument(input.original)).getText();
  const now = (await vscode.workspace.openTextDocument(input.modified)).getText();
  return { result, before, now };
}

describe('tool pins (Review Tool Changes)', function () {
  let file: string | undefined;

  after(async () => {
    if (file && fs.existsSync(file)) fs.unlinkSync(file);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('shows a changed tool as quarantined, opens the diff, and lists it again once accepted', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    file = path.join(entry.root, 'mcp-servers.d', 'rugpull.yaml');
    fs.writeFileSync(file, rugpullYaml());
    await waitFor(
      a,
      () => entry.server('rugpull')?.state === 'running' && entry.server('rugpull')?.pins?.status === 'pinned',
      'rugpull to run, pinned',
      45_000,
    );

    // The rug pull: same tool name, new instructions.
    await entry.conn.request('tools/call', { name: 'rugpull__rug_pull', arguments: { variant: 'description' } });
    const changed = await waitFor(
      a,
      () => {
        const s = entry.server('rugpull');
        return s?.pins?.status === 'changed' && s;
      },
      'the tool change to be noticed',
    );
    assert.deepStrictEqual(changed.pins?.quarantined, ['read_notes']);
    assert.ok(!changed.tools.some((t) => t.name === 'read_notes'), 'read_notes is not listed');

    const node = rugpullNode(a);
    const item = a.servers.getTreeItem(node);
    assert.strictEqual(iconId(item), 'warning');
    assert.match(String(item.contextValue), /\btoolsChanged\b/);
    const toolsNode = a.servers.getChildren(node).find((c) => c.kind === 'tools')!;
    const held = a.servers
      .getChildren(toolsNode)
      .map((c) => a.servers.getTreeItem(c))
      .find((t) => t.label === 'read_notes');
    assert.ok(held, 'read_notes shown under Tools');
    assert.strictEqual(iconId(held), 'warning');
    assert.strictEqual(held.command?.command, 'switchboard.reviewToolChanges');

    const { result, before, now } = await reviewRugpull<{ accepted: number }>();
    assert.match(before, /"description": "Read the notes\."/);
    assert.match(now, /id_rsa/);

    assert.ok(result, 'the changes were accepted');
    await waitFor(
      a,
      () => {
        const s = entry.server('rugpull');
        return s?.pins?.status === 'pinned' && s.tools.some((t) => t.name === 'read_notes');
      },
      'read_notes to be listed again',
    );
  });

  it('shows a changed prompt beside the tools in the same review, and accepting takes it', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    await entry.conn.request('tools/call', { name: 'rugpull__rug_pull', arguments: { variant: 'prompt-description' } });
    const changed = await waitFor(
      a,
      () => {
        const s = entry.server('rugpull');
        return s?.pins?.quarantinedPrompts?.length ? s : undefined;
      },
      'the prompt change to be noticed',
    );
    assert.deepStrictEqual(changed.pins?.quarantinedPrompts, ['summarize_notes']);
    assert.strictEqual(iconId(a.servers.getTreeItem(rugpullNode(a))), 'warning');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const { result, before, now } = await reviewRugpull<{ acceptedPrompts: number }>();
    assert.match(before, /"prompt summarize_notes"[\s\S]*"description": "Summarize the notes\."/);
    assert.match(now, /id_rsa/);
    assert.strictEqual(result?.acceptedPrompts, 2);
    await waitFor(a, () => entry.server('rugpull')?.pins?.status === 'pinned', 'the prompt accepted');
  });

  it('shows a changed resource template and resource in the same review, and accepting takes them', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    // The same server, now listing resources and templates (pinned on first sight).
    fs.writeFileSync(file!, rugpullYaml(['--resources']));
    await waitFor(
      a,
      () => {
        const s = entry.server('rugpull');
        // The fresh process lists the original prompt again, not the one accepted last: that is held back.
        return s?.state === 'running' && s.resourceCount > 0 && !s.pins?.quarantinedResources ? s : undefined;
      },
      'rugpull to run with resources, their pins taken',
      45_000,
    );
    await entry.conn.request('tools/call', { name: 'rugpull__rug_pull', arguments: { variant: 'resources-pull' } });
    const changed = await waitFor(
      a,
      () => {
        const s = entry.server('rugpull');
        // Templates and resources are listed apart after the list_changed: wait for both.
        return s?.pins?.quarantinedResourceTemplates?.length && s.pins.quarantinedResources?.length === 2
          ? s
          : undefined;
      },
      'the template change to be noticed',
    );
    assert.deepStrictEqual(changed.pins?.quarantinedResources, ['notes://notes/big', 'notes://notes/today']);
    assert.match(String(a.servers.getTreeItem(rugpullNode(a)).description ?? ''), /resources quarantined/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const { result, before, now } = await reviewRugpull<{ accepted: number }>();
    // The pin had no templates (the server listed none before): all three are new to it.
    assert.match(before, /"resource template notes:\/\/day\/\{date\}": "\(not pinned: a new resource template\)"/);
    assert.match(before, /"resource notes:\/\/notes\/today"[\s\S]*"description": "Today's notes\."/);
    assert.match(before, /"resource notes:\/\/notes\/big": "\(not pinned: a new resource\)"/);
    assert.match(now, /id_rsa/);
    assert.ok(result, 'the changes were accepted');
    await waitFor(
      a,
      () => {
        const s = entry.server('rugpull');
        return !s?.pins?.quarantinedResourceTemplates && s?.pins?.quarantinedResources?.length === 1;
      },
      'the template and today accepted (big stays held: too large to pin)',
    );
  });
});
