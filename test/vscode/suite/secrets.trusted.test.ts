// ${input:NAME} in a real VS Code: a workspace server that uses an input waits in needs-input; Enter
// Secret shows a password box (answered through the workbench's own quick input); the server runs
// with the value; after Restart Broker the value comes back from VS Code's SecretStorage.
import * as assert from 'assert';
import * as path from 'path';
import * as vscode from 'vscode';
import { api, connectedEntry, NODE, REPO, waitFor } from './switchboard.helpers';

const run = <T = unknown>(id: string, ...args: unknown[]): Promise<T> =>
  vscode.commands.executeCommand<T>(`switchboard.${id}`, ...args) as Promise<T>;

const VALUE = 'sb-entered-secret-7f3a';

/** The tool's answer as the operator channel returns it, searched for the value as a whole. */
function textOf(result: unknown): string {
  return JSON.stringify(result);
}

describe('Enter Secret (${input:NAME})', function () {
  this.timeout(120_000);

  after(async () => {
    await run('forgetSecret', 'entered', 'sb-test-key').catch(() => undefined);
    await run('removeServer', 'entered', { skipConfirmation: true }).catch(() => undefined);
  });

  it('waits in needs-input, runs with the value typed in the password box, and again after a broker restart', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    await run('addServer', {
      definition: {
        name: 'entered',
        trust: 'trusted',
        transport: 'stdio',
        command: NODE,
        args: [path.join(REPO, 'test', 'fixtures', 'leaker.mjs')],
        grants: ['secrets'],
        // Its job here is showing what it got: results not redacted (guardrails).
        redactResults: false,
        env: { API_KEY: '${input:sb-test-key}' },
        inputs: { 'sb-test-key': { description: 'The test API key' } },
      },
    });
    await waitFor(a, () => entry.server('entered')?.state === 'needs-input', 'entered to wait for its input');

    const shown: string[] = [];
    const sub = a.secrets.onDidShowSecretInput((s) => {
      shown.push(s.box.title ?? '');
      assert.strictEqual(s.box.password, true);
      s.box.value = VALUE;
      void vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    });
    try {
      const done = await run<{ name: string; servers: string[] }>('enterSecret', 'entered');
      assert.deepStrictEqual(done, { name: 'sb-test-key', servers: ['entered'] });
    } finally {
      sub.dispose();
    }
    assert.deepStrictEqual(shown, ['entered: The test API key']);
    await waitFor(a, () => entry.server('entered')?.state === 'running', 'entered to run with the value');
    const got = await entry.conn.request('tools/call', { name: 'entered__env', arguments: { name: 'API_KEY' } });
    assert.ok(textOf(got).includes(VALUE), `the server's API_KEY: ${textOf(got)}`);

    // A new broker process knows nothing: the value comes from VS Code's SecretStorage.
    const pid = entry.state!.broker.pid;
    await run('restartBroker', entry.folder.uri);
    await waitFor(
      a,
      () =>
        entry.phase === 'connected' && entry.state?.broker.pid !== pid && entry.server('entered')?.state === 'running',
      'entered to run again after the broker restart',
    );
    assert.strictEqual(entry.server('entered')?.inputs?.[0]?.source, 'editor');
    const again = await entry.conn.request('tools/call', { name: 'entered__env', arguments: { name: 'API_KEY' } });
    assert.ok(textOf(again).includes(VALUE), `after the restart: ${textOf(again)}`);

    // Forget: the broker drops it and the server waits again.
    await run('forgetSecret', 'entered', 'sb-test-key');
    await waitFor(a, () => entry.server('entered')?.state === 'needs-input', 'entered to wait again after Forget');
  });
});
