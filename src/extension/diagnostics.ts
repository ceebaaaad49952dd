// Registry problems in the Problems panel. Saved files: what the broker's loader reported (state
// resource). Files being edited: the registry's own parser run on the unsaved buffer, so mistakes
// show while typing, with the same words and positions.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Problem, ProblemFix } from '../registry/problems';
import { parseDefinition } from '../registry/parse';
import { KIND_DIRS, type Kind } from '../registry/schema';
import type { Ctx } from './ctx';

const DIR_KINDS = new Map<string, Kind>(Object.entries(KIND_DIRS).map(([k, d]) => [d, k as Kind]));

/** `server` for `<root>/mcp-servers.d/x.yaml` when root is one of ours, else undefined. */
export function kindOf(file: string, roots: readonly string[]): Kind | undefined {
  if (!/\.ya?ml$/i.test(file)) return undefined;
  const dir = path.dirname(file);
  const kind = DIR_KINDS.get(path.basename(dir));
  if (!kind) return undefined;
  return roots.some((r) => path.resolve(r) === path.dirname(dir)) ? kind : undefined;
}

export function toDiagnostic(
  p: Pick<Problem, 'line' | 'column' | 'message' | 'severity'>,
  doc?: vscode.TextDocument,
): vscode.Diagnostic {
  const line = Math.max(0, p.line - 1);
  const col = Math.max(0, p.column - 1);
  let range = new vscode.Range(line, col, line, col + 1);
  if (doc && line < doc.lineCount) {
    const text = doc.lineAt(line).text;
    // Underline the word (key or value) the problem points at, not one character.
    const m = /^[^\s:,[\]{}#]+/.exec(text.slice(col));
    const end = m ? col + m[0].length : Math.max(col + 1, text.length);
    range = new vscode.Range(line, col, line, Math.min(end, Math.max(text.length, col + 1)));
  }
  const d = new vscode.Diagnostic(
    range,
    p.message,
    p.severity === 'warning' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Error,
  );
  d.source = 'switchboard';
  return d;
}

/** A diagnostic as the Quick Fix provider gets it back (a copy): by file, start and message. */
function fixKey(uri: vscode.Uri, d: vscode.Diagnostic): string {
  return `${uri.toString()}\n${d.range.start.line}:${d.range.start.character}\n${d.message}`;
}

export class RegistryDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('switchboard');
  private readonly disposables: vscode.Disposable[] = [this.collection];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The fix each shown problem carries, by where it is and what it says (fixKey). */
  private fixes = new Map<string, ProblemFix>();

  constructor(private readonly ctx: Ctx) {
    this.disposables.push(
      ctx.onDidChange(() => this.refresh()),
      vscode.workspace.onDidChangeTextDocument((e) => this.schedule(e.document)),
      vscode.workspace.onDidOpenTextDocument((d) => this.schedule(d)),
      vscode.workspace.onDidCloseTextDocument(() => this.refresh()),
      vscode.workspace.onDidSaveTextDocument(() => this.refresh()),
    );
    this.refresh();
  }

  private roots(): string[] {
    return this.ctx.entries().map((e) => e.root);
  }

  private schedule(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== 'file' || !kindOf(doc.uri.fsPath, this.roots())) return;
    const key = doc.uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.refresh();
      }, 150),
    );
  }

  /** Rebuilds every diagnostic: broker problems for files on disk, live parses for dirty buffers. */
  refresh(): void {
    const byFile = new Map<string, vscode.Diagnostic[]>();
    const fixes = new Map<string, ProblemFix>();
    const shown = (file: string, p: Problem, doc: vscode.TextDocument | undefined): vscode.Diagnostic => {
      const d = toDiagnostic(p, doc);
      if (p.fix) fixes.set(fixKey(vscode.Uri.file(file), d), p.fix);
      return d;
    };
    const openDirty = new Map<string, vscode.TextDocument>();
    const roots = this.roots();
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme !== 'file' || !kindOf(doc.uri.fsPath, roots)) continue;
      // Unsaved edits, or no broker to ask: parse the buffer here.
      const hasState = this.ctx.entryFor(doc.uri)?.state !== undefined;
      if (doc.isDirty || !hasState) openDirty.set(path.resolve(doc.uri.fsPath), doc);
    }
    const docOf = (file: string): vscode.TextDocument | undefined =>
      vscode.workspace.textDocuments.find(
        (d) => d.uri.scheme === 'file' && path.resolve(d.uri.fsPath) === path.resolve(file),
      );
    for (const entry of this.ctx.entries()) {
      for (const p of entry.state?.problems ?? []) {
        const file = path.resolve(p.file);
        if (openDirty.has(file)) continue;
        const list = byFile.get(file) ?? [];
        list.push(shown(file, p, docOf(file)));
        byFile.set(file, list);
      }
    }
    for (const [file, doc] of openDirty) {
      const kind = kindOf(file, roots)!;
      const { problems } = parseDefinition(kind, file, doc.getText());
      byFile.set(
        file,
        problems.map((p) => shown(file, p, doc)),
      );
    }
    this.fixes = fixes;
    this.collection.clear();
    for (const [file, diags] of byFile) this.collection.set(vscode.Uri.file(file), diags);
  }

  /** The correction a shown diagnostic offers (the registry parser's "did you mean"), if any. */
  fixFor(uri: vscode.Uri, d: vscode.Diagnostic): ProblemFix | undefined {
    return this.fixes.get(fixKey(uri, d));
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const d of this.disposables) d.dispose();
  }
}
