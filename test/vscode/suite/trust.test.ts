// Checks the window's trust state against what the launcher asked for: test/vscode/run.mjs sets
// SWITCHBOARD_EXPECT_TRUSTED=true by default and =false with --untrusted (Restricted Mode).
import * as assert from 'assert';
import * as vscode from 'vscode';

describe('workspace trust', () => {
  it('matches SWITCHBOARD_EXPECT_TRUSTED', function () {
    const expected = process.env.SWITCHBOARD_EXPECT_TRUSTED;
    assert.ok(expected === 'true' || expected === 'false', 'the launcher sets SWITCHBOARD_EXPECT_TRUSTED');
    assert.strictEqual(
      vscode.workspace.isTrusted,
      expected === 'true',
      `vscode.workspace.isTrusted=${vscode.workspace.isTrusted}`,
    );
  });

  it('has the workspace folder open', () => {
    assert.ok(vscode.workspace.workspaceFolders?.length, 'no workspace folder open');
  });
});
