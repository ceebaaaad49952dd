// telemetry.yaml is workspace content (a cloned repository can ship one): its endpoint receives the
// broker's spans only when it is on this machine, or when the operator approved that endpoint for the
// workspace (`switchboard approve --telemetry`), or ran the broker with --accept-workspace-trust; an
// untrusted workspace exports nowhere off the machine. A real broker, a real OTLP collector listening
// on this machine's own non-loopback address (what "off this machine" looks like to the broker), and
// the positive controls: the same collector gets spans once the endpoint is approved, and a loopback
// endpoint gets them without approval.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import {
  BROKER_JS,
  connect,
  facade,
  removeTempDirs,
  tempDir,
  waitFor,
  writeRegistry,
  startBrokerProcess,
  type BrokerProcess,
} from '../../helpers/broker';
import { setTimeout as sleep } from 'node:timers/promises';
import { OtlpCollector } from '../../helpers/otlpCollector';

/**
 * This machine's first address that is not loopback (IPv4, else a global IPv6 one): an endpoint the
 * broker must judge as off the machine, yet one this test can listen on.
 */
function offLoopbackAddress(): string {
  const all = Object.values(os.networkInterfaces()).flatMap((a) => a ?? []);
  const v4 = all.find((a) => a.family === 'IPv4' && !a.internal);
  const v6 = all.find((a) => a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'));
  const found = v4 ?? v6;
  if (!found) throw new Error('this machine has no address besides loopback; the test needs one to stand for "off it"');
  return found.address;
}

describe('telemetry.yaml exports off this machine only with the operator’s consent', function () {
  this.timeout(90_000);
  const started: BrokerProcess[] = [];
  let home: string;
  let root: string;
  let remote: OtlpCollector;
  let remoteUrl: string;

  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SDK_DISABLED: '', OTEL_BSP_SCHEDULE_DELAY: '50' };

  async function brokerWith(endpoint: string, opts: { accept?: boolean; untrusted?: boolean } = {}) {
    writeRegistry(root, {
      'telemetry.yaml': `telemetry:\n  endpoint: ${endpoint}\n  metrics: false\n`,
      'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
    });
    const broker = await startBrokerProcess({
      root,
      home,
      env,
      acceptWorkspaceTrust: opts.accept ?? false,
      args: opts.untrusted ? ['--untrusted'] : [],
    });
    started.push(broker);
    return broker;
  }

  /** Calls a facade tool (a SERVER span, no upstream needed) a few times. */
  async function someCalls(broker: BrokerProcess): Promise<void> {
    const client = await connect(broker.url, broker.token);
    try {
      for (let i = 0; i < 3; i++) await client.callTool({ name: 'switchboard__list_servers', arguments: {} });
    } finally {
      await client.close();
    }
  }

  async function stop(broker: BrokerProcess): Promise<void> {
    await broker.stop();
    started.splice(started.indexOf(broker), 1);
  }

  function approve(...extra: string[]): string {
    const out = spawnSync(process.execPath, [BROKER_JS, 'approve', '--telemetry', '--root', root, ...extra], {
      encoding: 'utf8',
      env: { ...process.env, SWITCHBOARD_HOME: home },
      timeout: 20_000,
    });
    assert.equal(out.status, 0, out.stderr);
    return out.stdout;
  }

  before(async () => {
    home = tempDir('sb-tel-home-');
    root = tempDir('sb-tel-consent-');
    remote = new OtlpCollector();
    remoteUrl = await remote.start(offLoopbackAddress());
  });

  after(async () => {
    for (const b of started) await b.stop();
    await remote?.stop();
    removeTempDirs();
  });

  it('sends nothing to an endpoint off this machine that nobody approved, and says how to approve it', async () => {
    const broker = await brokerWith(remoteUrl);
    await someCalls(broker);
    // Time to be exported (the batch delay is 50 ms): none may reach the endpoint.
    await sleep(1500);
    await stop(broker);
    assert.equal(remote.spans.length, 0, 'spans reached an endpoint the operator never approved');
    const log = broker.stderr.join('\n');
    assert.ok(log.includes(`names ${remoteUrl} as its export endpoint, which is off this machine`), log);
    assert.ok(log.includes(`switchboard approve --telemetry --root ${root}`), log);
    // telemetry.yaml still turns telemetry on, for /metrics and the editor's numbers.
    assert.ok(log.includes('telemetry on (turned on by telemetry.yaml): nothing exported'), log);
  });

  it('sends them once the operator approves that endpoint (the positive control), and not after a change of endpoint', async () => {
    assert.match(approve(), /Approved: the traces and metrics .* may be exported to/);
    const approved = await brokerWith(remoteUrl);
    await someCalls(approved);
    await waitFor(() => remote.spans.some((s) => s.name.includes('tools/call')), 'spans at the approved endpoint');
    await stop(approved);
    // The file now names another endpoint off the machine: the approval was of the first only.
    const other = new OtlpCollector();
    const otherUrl = await other.start(offLoopbackAddress());
    try {
      const changed = await brokerWith(otherUrl);
      await someCalls(changed);
      await waitFor(
        () => changed.stderr.some((l) => l.includes(`(you approved ${remoteUrl}, not this one)`)),
        'the log line that the new endpoint is held',
      );
      await sleep(1500);
      await stop(changed);
      assert.equal(other.spans.length, 0, 'a changed endpoint was used on the old approval');
    } finally {
      await other.stop();
    }
  });

  it('an untrusted workspace exports nowhere off the machine, approved or not', async () => {
    const before = remote.spans.length;
    const broker = await brokerWith(remoteUrl, { untrusted: true });
    await someCalls(broker);
    await waitFor(
      () => broker.stderr.some((l) => l.includes('not used, the workspace is not trusted')),
      'the log line for the untrusted workspace',
    );
    await sleep(1500);
    await stop(broker);
    assert.equal(remote.spans.length, before);
    assert.match(approve('--revoke'), /approval for .* withdrawn/);
  });

  it('--accept-workspace-trust uses the endpoint, and a loopback endpoint needs no approval', async () => {
    const before = remote.spans.length;
    const accepted = await brokerWith(remoteUrl, { accept: true });
    await someCalls(accepted);
    await waitFor(() => remote.spans.length > before, 'spans with --accept-workspace-trust');
    await stop(accepted);
    const local = new OtlpCollector();
    const localUrl = await local.start();
    try {
      const broker = await brokerWith(localUrl);
      await someCalls(broker);
      await waitFor(() => local.spans.some((s) => s.name.includes('tools/call')), 'spans at the loopback endpoint');
      await stop(broker);
    } finally {
      await local.stop();
    }
  });

  it('Allow in the editor (approve_telemetry_export) applies at once; agents cannot call it; a changed file is refused', async () => {
    const other = new OtlpCollector();
    const otherUrl = await other.start(offLoopbackAddress());
    const broker = await brokerWith(otherUrl);
    const operator = await connect(broker.url, broker.token, 'operator');
    try {
      assert.deepEqual(await facade(operator, 'telemetry_export', {}), {
        status: 'awaiting-approval',
        endpoint: otherUrl,
        telemetry: true,
      });
      const conn = await facade(operator, 'client_connection', { name: 'agent' });
      const agent = await connect(broker.url, fs.readFileSync(conn.tokenFile, 'utf8').trim(), 'agent');
      try {
        await assert.rejects(
          agent.callTool({ name: 'switchboard__approve_telemetry_export', arguments: { endpoint: otherUrl } }),
          /for the operator only/,
        );
      } finally {
        await agent.close();
      }
      // What was shown is no longer what the file says: nothing is approved.
      await assert.rejects(
        facade(operator, 'approve_telemetry_export', { endpoint: remoteUrl }),
        new RegExp(`telemetry.yaml names ${otherUrl.replace(/[.[\]]/g, '\\$&')} now`),
      );
      await someCalls(broker);
      await sleep(1000);
      assert.equal(other.spans.length, 0, 'exported before the approval');
      const approved = await facade(operator, 'approve_telemetry_export', { endpoint: otherUrl });
      assert.equal(approved.status, 'approved');
      // Same broker process, no restart: its next calls reach the endpoint.
      await someCalls(broker);
      await waitFor(() => other.spans.some((s) => s.name.includes('tools/call')), 'spans after the approval');
    } finally {
      await operator.close();
      await stop(broker);
      await other.stop();
    }
  });

  it('switchboard approve --telemetry while the broker runs: it exports there at once', async () => {
    const other = new OtlpCollector();
    const otherUrl = await other.start(offLoopbackAddress());
    const broker = await brokerWith(otherUrl);
    try {
      await someCalls(broker);
      await sleep(1000);
      assert.equal(other.spans.length, 0, 'exported before the approval');
      assert.match(approve(), /The running broker exports there from now on/);
      await someCalls(broker);
      await waitFor(() => other.spans.some((s) => s.name.includes('tools/call')), 'spans after the CLI approval');
      assert.ok(broker.stderr.some((l) => l.includes(`the operator approved ${otherUrl}`)));
    } finally {
      await stop(broker);
      await other.stop();
      approve('--revoke');
    }
  });
});
