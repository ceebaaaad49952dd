// Registry problems reach the Problems panel: from the broker's loader for saved files, and live
// from the registry's parser while a file is being edited.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, connectedEntry, waitFor } from './switchboard.helpers';

describe('Problems panel', () => {
  it('shows a broken YAML file with file, line and message, and clears it when fixed', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const file = path.join(entry.root, 'mcp-servers.d', 'broken.yaml');
    fs.writeFileSync(file, 'name: broken\ntrust: trusted\ncomand: node\n');
    const uri = vscode.Uri.file(file);
    try {
      const diag = await waitFor(
        a,
        () => vscode.languages.getDiagnostics(uri).find((d) => /comand/.test(d.message)),
        'a diagnostic for broken.yaml',
      );
      assert.strictEqual(diag.severity, vscode.DiagnosticSeverity.Error);
      assert.strictEqual(diag.range.start.line, 2, 'line 3 (0-based 2)');
      assert.match(diag.message, /unknown key 'comand'.*did you mean 'command'/);
      assert.strictEqual(diag.source, 'switchboard');

      // Live: edit the buffer without saving; the problem goes away as soon as the text is right.
      const doc = await vscode.workspace.openTextDocument(uri);
      const editor = await vscode.window.showTextDocument(doc);
      await editor.edit((e) => e.replace(new vscode.Range(2, 0, 2, 6), 'command'));
      assert.ok(doc.isDirty);
      await waitFor(a, () => vscode.languages.getDiagnostics(uri).length === 0, 'the live diagnostics to clear');
      // ... and comes back while typing a new mistake.
      await editor.edit((e) => e.insert(new vscode.Position(3, 0), 'enabled: maybe\n'));
      const live = await waitFor(
        a,
        () => vscode.languages.getDiagnostics(uri).find((d) => d.range.start.line === 3),
        'a live diagnostic on line 4',
      );
      assert.match(live.message, /enabled/);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    } finally {
      fs.rmSync(file, { force: true });
    }
    await waitFor(a, () => vscode.languages.getDiagnostics(uri).length === 0, 'the diagnostics to go with the file');
  });

  it('contributes the generated JSON Schemas for the registry files (yamlValidation)', async () => {
    const ext = vscode.extensions.getExtension('switchboard.mcp-switchboard')!;
    const yamlValidation = ext.packageJSON.contributes.yamlValidation as { fileMatch: string[]; url: string }[];
    const server = yamlValidation.find((v) => v.fileMatch.includes('**/mcp-servers.d/*.yaml'));
    assert.ok(server, 'mcp-servers.d is validated');
    const schemaFile = path.join(ext.extensionPath, server.url);
    assert.ok(fs.existsSync(schemaFile), `${schemaFile} exists`);
    const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8'));
    assert.ok(schema.properties.command && schema.properties.grants, 'the schema describes server fields');
  });
});
