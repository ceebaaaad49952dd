// Runs inside the real VS Code extension host (code-server): see test/vscode/README.md.
import * as assert from 'assert';
import * as vscode from 'vscode';

const EXTENSION_ID = 'switchboard.mcp-switchboard';

describe('activation', () => {
  it(`${EXTENSION_ID} is loaded as the development extension`, () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(
      ext,
      `extension ${EXTENSION_ID} not found; loaded: ${vscode.extensions.all
        .map((e) => e.id)
        .filter((id) => !id.startsWith('vscode.'))
        .join(', ')}`,
    );
  });

  it('activates', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    await ext.activate();
    assert.strictEqual(ext.isActive, true);
  });

  // run.mjs (code-server) sets SWITCHBOARD_EXPECT_REMOTE=true, run-electron.mjs (desktop, local
  // extension host) sets it to false.
  it('runs in the expected extension host of a real VS Code', () => {
    if (process.env.SWITCHBOARD_EXPECT_REMOTE === 'false') {
      assert.strictEqual(
        vscode.env.remoteName,
        undefined,
        `expected the local extension host, remoteName=${vscode.env.remoteName}`,
      );
    } else {
      assert.ok(vscode.env.remoteName, 'vscode.env.remoteName is not set: not the remote extension host');
    }
    assert.ok(vscode.version, 'vscode.version');
    console.log(
      `[activation] VS Code ${vscode.version}, remoteName=${vscode.env.remoteName}, ` +
        `node ${process.version}, uiKind=${vscode.UIKind[vscode.env.uiKind]}`,
    );
  });
});
