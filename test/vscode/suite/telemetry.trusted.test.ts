// The telemetry setting in a real VS Code (issue 32): switchboard.telemetry.enabled turned on and
// off while the broker runs is applied by that broker at once (its state says telemetry, /metrics
// answers), with no restart (the same pid).
import * as assert from 'assert';
import * as fs from 'fs';
import * as vscode from 'vscode';
import { api, connectedEntry, waitFor } from './switchboard.helpers';

describe('the telemetry setting applies to the running broker (issue 32)', function () {
  this.timeout(120_000);
  const config = () => vscode.workspace.getConfiguration('switchboard');

  after(() => config().update('telemetry.enabled', undefined, vscode.ConfigurationTarget.Global));

  it('on, then off: the running broker follows, without a restart', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const pid = entry.state!.broker.pid;
    const metrics = async (): Promise<number> => {
      const record = entry.conn.record!;
      const token = fs.readFileSync(record.operatorTokenFile, 'utf8').trim();
      const res = await fetch(new URL('/metrics', record.url), { headers: { Authorization: `Bearer ${token}` } });
      await res.text();
      return res.status;
    };
    assert.ok(!entry.state!.broker.telemetry, 'off to begin with');
    assert.strictEqual(await metrics(), 404);

    await config().update('telemetry.enabled', true, vscode.ConfigurationTarget.Global);
    await waitFor(a, () => entry.state?.broker.telemetry === true, 'the state to say telemetry is on');
    assert.strictEqual(await metrics(), 200);
    assert.strictEqual(entry.state!.broker.pid, pid, 'the same broker');

    await config().update('telemetry.enabled', false, vscode.ConfigurationTarget.Global);
    await waitFor(a, () => entry.state?.broker.telemetry !== true, 'the state to say telemetry is off');
    assert.strictEqual(await metrics(), 404);
    assert.strictEqual(entry.state!.broker.pid, pid, 'still the same broker');
  });
});
