// "Switchboard: Review Tool Changes": the tools, prompts, resource templates and held-back resources a
// server lists now against the ones pinned at its approval, side by side in a diff editor (two virtual
// documents), then one modal to accept them.
import * as vscode from 'vscode';
import type { ResultOf } from '../../broker/control/controlApi';
import { resolveServer, withProgress, type Cmd, type NoPrompt } from './shared';
import { SIGN_LABELS } from '../../broker/trust/toolScanner';
import type { ResourceChange } from '../../broker/trust/resourcePins';

export const TOOL_DIFF_SCHEME = 'switchboard-tools';

type ToolChanges = ResultOf<'tool_changes'>;

/** The two sides of every diff opened, by URI; read-only, served from memory. */
class ToolDiffDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.emitter.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '// This tool review is closed; run Review Tool Changes again.\n';
  }
}

const documents = new ToolDiffDocuments();

export function registerToolDiffDocuments(): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(TOOL_DIFF_SCHEME, documents);
}

const UNKNOWN = '(only its digest is known: it was pinned by mcp-servers.lock)';
const UNKNOWN_INSTRUCTIONS = '(only their digest is known)';

/**
 * One side of the diff: every changed tool by name, its definition or why there is none (every
 * definition of a name listed twice), every changed prompt as `prompt <name>` the same way, and the
 * instructions when they changed.
 */
function side(diff: ToolChanges, which: 'before' | 'after'): string {
  const tools: Record<string, unknown> = {};
  if (diff.instructions) {
    const text = diff.instructions[which];
    tools['(instructions)'] = text === undefined ? UNKNOWN_INSTRUCTIONS : (text ?? '(no instructions)');
  }
  for (const c of diff.changes) {
    const def = which === 'after' && c.change === 'duplicated' ? c.duplicates : c[which];
    if (def) tools[c.tool] = def;
    else if (which === 'before') tools[c.tool] = c.change === 'added' ? '(not pinned: a new tool)' : UNKNOWN;
    else tools[c.tool] = '(removed: the server no longer lists it)';
  }
  for (const c of diff.prompts ?? []) {
    const key = `prompt ${c.prompt}`;
    const def = which === 'after' && c.change === 'duplicated' ? c.duplicates : c[which];
    if (def) tools[key] = def;
    else if (which === 'before')
      tools[key] = c.change === 'removed' || c.change === 'changed' ? UNKNOWN : '(not pinned: a new prompt)';
    else tools[key] = '(removed: the server no longer lists it)';
  }
  for (const [kind, c] of resourceLists(diff)) {
    const key = `${kind} ${c.uri}`;
    const def = c[which];
    if (def) tools[key] = def;
    else if (which === 'before')
      tools[key] = c.change === 'changed' || c.change === 'removed' ? UNKNOWN : `(not pinned: a new ${kind})`;
    else tools[key] = '(removed: the server no longer lists it)';
  }
  return `${JSON.stringify(tools, null, 2)}\n`;
}

/** The review's resource templates and resources, each with what to call it. */
function resourceLists(diff: ToolChanges): (readonly ['resource template' | 'resource', ResourceChange])[] {
  return [
    ...(diff.resourceTemplates ?? []).map((c) => ['resource template', c] as const),
    ...(diff.resources ?? []).map((c) => ['resource', c] as const),
  ];
}

function describe(diff: ToolChanges): string {
  const lines = diff.changes.map((c) => {
    if (c.change === 'duplicated') {
      return `• ${c.tool}: listed ${c.duplicates?.length ?? 2} times; held back until the server lists it once (accepting cannot take it)`;
    }
    const what = c.change === 'added' ? 'new' : c.change === 'removed' ? 'removed' : 'changed';
    const from = c.differsFrom.map((d) => (d === 'approval' ? 'your pin' : 'mcp-servers.lock')).join(' and ');
    // What the scanner found in the definition as it is now (toolScanner.ts).
    const flagged = (c.findings ?? []).map(
      (f) => `\n    ⚠ ${f.severity}: ${SIGN_LABELS[f.sign]} (${f.where}: "${f.excerpt}")`,
    );
    return `• ${c.tool}: ${what} (differs from ${from})${flagged.join('')}`;
  });
  for (const c of diff.prompts ?? []) {
    if (c.change === 'duplicated' || c.change === 'oversized') {
      const why = c.change === 'duplicated' ? 'listed more than once' : 'too large to pin';
      lines.push(`• prompt ${c.prompt}: ${why}; held back (accepting cannot take it)`);
      continue;
    }
    const what = c.change === 'added' ? 'new' : c.change === 'removed' ? 'removed' : 'changed';
    const from = c.differsFrom.map((d) => (d === 'approval' ? 'your pin' : 'mcp-servers.lock')).join(' and ');
    const flagged = (c.findings ?? []).map(
      (f) => `\n    ⚠ ${f.severity}: ${SIGN_LABELS[f.sign]} (${f.where}: "${f.excerpt}")`,
    );
    lines.push(`• prompt ${c.prompt}: ${what} (differs from ${from})${flagged.join('')}`);
  }
  for (const [kind, c] of resourceLists(diff)) {
    if (c.change === 'duplicated' || c.change === 'oversized') {
      const why = c.change === 'duplicated' ? 'listed more than once' : 'too large to pin';
      lines.push(`• ${kind} ${c.uri}: ${why}; held back (accepting cannot take it)`);
      continue;
    }
    const what = c.change === 'added' ? 'new' : c.change === 'removed' ? 'removed' : 'changed';
    const flagged = (c.findings ?? []).map((f) => `\n    ⚠ ${f.severity}: ${SIGN_LABELS[f.sign]} ("${f.excerpt}")`);
    lines.push(`• ${kind} ${c.uri}: ${what}${flagged.join('')}`);
  }
  const held =
    diff.policy === 'quarantine-server'
      ? 'Policy quarantine-server: every tool, prompt and resource of the server is held back until you accept.'
      : 'Changed and new tools, prompts and templates (and resources whose description changed) are held back ' +
        'until you accept; the others keep working.';
  if (diff.instructions) {
    const flagged = (diff.instructions.findings ?? []).map(
      (f) => `\n    ⚠ ${f.severity}: ${SIGN_LABELS[f.sign]} ("${f.excerpt}")`,
    );
    lines.push(`• the instructions: changed; not given to clients until you accept${flagged.join('')}`);
  }
  const accepting =
    'Accepting pins the tools, prompts and resources (and instructions) exactly as the diff shows them now.';
  return `${lines.join('\n')}\n\n${held}\n${accepting}`;
}

export const reviewToolChanges: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const ref = await resolveServer(
    ctx,
    arg,
    'Review the tool and prompt changes of which server?',
    (s) => s.pins?.status === 'changed',
  );
  if (!ref) return;
  const name = ref.name;
  const diff = await withProgress(`Switchboard: comparing the tools and prompts of '${name}'`, () =>
    ref.entry.conn.call('tool_changes', { name }),
  );
  if (!diff) return;
  const prompts = diff.prompts ?? [];
  const lists = resourceLists(diff);
  if (!diff.changes.length && !prompts.length && !lists.length && !diff.instructions) {
    void vscode.window.showInformationMessage(
      `The tools, prompts and resources of '${name}' match their pins: nothing to review.`,
    );
    return diff;
  }
  // A fresh pair of URIs per review: an open diff of an earlier review keeps what it showed.
  const id = `${encodeURIComponent(ref.entry.key)}/${encodeURIComponent(name)}/${Date.now()}`;
  const pinned = vscode.Uri.parse(`${TOOL_DIFF_SCHEME}:/${id}/pinned-tools.json`);
  const current = vscode.Uri.parse(`${TOOL_DIFF_SCHEME}:/${id}/current-tools.json`);
  documents.set(pinned, side(diff, 'before'));
  documents.set(current, side(diff, 'after'));
  const title = prompts.length ? `Tools and prompts of '${name}'` : `Tools of '${name}'`;
  await vscode.commands.executeCommand('vscode.diff', pinned, current, `${title}: pinned ↔ now`, {
    preview: false,
  });
  const n = diff.changes.length;
  const p = prompts.length;
  const what = [
    ...(n ? [`${n} tool${n === 1 ? '' : 's'}`] : []),
    ...(p ? [`${p} prompt${p === 1 ? '' : 's'}`] : []),
    ...(lists.length ? [`${lists.length} resource${lists.length === 1 ? '' : 's'} or template(s)`] : []),
    ...(diff.instructions ? ['the instructions'] : []),
  ].join(' and ');
  if (!opts?.skipConfirmation) {
    const action = 'Accept Changes';
    const pick = await vscode.window.showWarningMessage(
      `Accept changes to ${what} of '${name}'?`,
      { modal: true, detail: describe(diff) },
      action,
    );
    if (pick !== action) return;
  }
  // The hash of the tools and prompts the diff showed: the broker refuses if the server changed them since.
  const result = await withProgress(`Switchboard: accepting the tools and prompts of '${name}'`, () =>
    ref.entry.conn.call('accept_tool_changes', { name, hash: diff.toolsHash }),
  );
  if (result) {
    const pinnedTo = `${result.accepted} tools and ${result.acceptedPrompts ?? 0} prompts`;
    ctx.output.info(`Accepted the tool and prompt changes of '${name}': pinned to its ${pinnedTo} as they are now.`);
    vscode.window.setStatusBarMessage(`$(check) '${name}': tool and prompt changes accepted`, 4000);
  }
  return result;
};
