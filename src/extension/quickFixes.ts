// Quick Fixes on registry YAML: a problem the registry parser gave a fix ("did you mean 'command'?")
// offers to make that change (didYouMean.ts computes the edit). The diagnostics are ours (source `switchboard`).
import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import { kindOf, type RegistryDiagnostics } from './diagnostics';
import { didYouMeanFix } from './didYouMean';

export class RegistryQuickFixes implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  constructor(
    private readonly ctx: Ctx,
    private readonly diagnostics: RegistryDiagnostics,
  ) {}

  static register(ctx: Ctx, diagnostics: RegistryDiagnostics): vscode.Disposable {
    return vscode.languages.registerCodeActionsProvider(
      [
        { scheme: 'file', pattern: '**/*.yaml' },
        { scheme: 'file', pattern: '**/*.yml' },
      ],
      new RegistryQuickFixes(ctx, diagnostics),
      { providedCodeActionKinds: RegistryQuickFixes.kinds },
    );
  }

  provideCodeActions(
    doc: vscode.TextDocument,
    _range: vscode.Range,
    context: vscode.CodeActionContext,
  ): vscode.CodeAction[] {
    if (
      !kindOf(
        doc.uri.fsPath,
        this.ctx.entries().map((e) => e.root),
      )
    )
      return [];
    const actions: vscode.CodeAction[] = [];
    for (const d of context.diagnostics) {
      if (d.source !== 'switchboard') continue;
      const at = d.range.start;
      if (at.line >= doc.lineCount) continue;
      const fix = didYouMeanFix(doc.lineAt(at.line).text, at.character, this.diagnostics.fixFor(doc.uri, d));
      if (!fix) continue;
      const action = new vscode.CodeAction(fix.title, vscode.CodeActionKind.QuickFix);
      action.edit = new vscode.WorkspaceEdit();
      action.edit.replace(doc.uri, new vscode.Range(at.line, fix.start, at.line, fix.end), fix.newText);
      action.diagnostics = [d];
      action.isPreferred = true;
      actions.push(action);
    }
    return actions;
  }
}
