// Fault: the broker SIGKILLed while 1,000 registry files are being upserted — half of them by
// the broker itself (operator upsert_server calls, so the kill lands inside its own writes) and
// half by an external writer process using the same RegistryWriter, killed at the same instant.
// Proves: every file on disk parses and is exactly its old or its new version (no torn or empty
// file, no file lost); the leftover temp files are invisible to the loader; the dead broker's
// upstreams exit with it; its discovery record is detected as stale (status says no broker, a
// new serve replaces it); the restarted broker runs every enabled server again.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
  REPO,
  connect,
  removeTempDirs,
  tempDir,
  track,
  waitFor,
  type BrokerProcess,
} from '../helpers/broker';
import { parseDefinition } from '../../src/registry/parse';
import { toYaml } from '../../src/registry/serialize';
import { ServerDefSchema } from '../../src/registry/schema';
import { FAULT_FIXTURES, descendants, facade, notePid, pool, report, running, startBroker } from './lib';

const TOTAL = 1000;
const ENABLED = 6;
const name = (i: number) => `srv-${String(i).padStart(4, '0')}`;

function definition(i: number, version: 'v1' | 'v2'): Record<string, unknown> {
  return {
    name: name(i),
    description: `${version} of ${name(i)}`,
    trust: 'trusted',
    command: process.execPath,
    args: [path.join(FAULT_FIXTURES, 'bare.mjs'), '--label', name(i)],
    enabled: i < ENABLED,
    env: { VERSION: version, INDEX: String(i) },
  };
}

describe('faults: broker SIGKILL during 1,000 registry upserts', function () {
  this.timeout(240_000);
  let root: string;
  let home: string;
  let broker: BrokerProcess | undefined;
  let operator: Client | undefined;

  before(async () => {
    root = tempDir('sb-fault-reg-');
    home = tempDir('sb-home-');
    const dir = path.join(root, 'mcp-servers.d');
    fs.mkdirSync(dir, { recursive: true });
    for (let i = 0; i < TOTAL; i++) {
      fs.writeFileSync(path.join(dir, `${name(i)}.yaml`), toYaml('server', ServerDefSchema.parse(definition(i, 'v1'))));
    }
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('leaves every file old or new, detects the stale record, and restores every enabled server', async () => {
    const t0 = Date.now();
    broker = await startBroker({ root, home, timeoutMs: 60_000 });
    operator = await connect(broker.url, broker.token, 'operator');
    const first = broker;
    await waitFor(
      async () =>
        (await facade(operator!, 'list_servers')).servers.filter((s: any) => s.state === 'running').length === ENABLED,
      'the enabled servers',
      60_000,
      200,
    );
    const upstreamPids = descendants(first.proc.pid!);
    for (const pid of upstreamPids) notePid(pid, 'upstream of the killed broker');
    assert.equal(upstreamPids.length, ENABLED);

    // The external writer: the second half, through the same RegistryWriter, in its own process.
    const defsFile = path.join(home, 'defs.json');
    const half = TOTAL / 2;
    fs.writeFileSync(defsFile, JSON.stringify(Array.from({ length: half }, (_, k) => definition(half + k, 'v2'))));
    const writer = track(
      spawn(
        process.execPath,
        [
          path.join(FAULT_FIXTURES, 'writer.cjs'),
          path.join(REPO, 'out', 'src', 'registry', 'writer.js'),
          root,
          defsFile,
          '15',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    notePid(writer.pid, 'external writer');
    let externalDone = 0;
    readline.createInterface({ input: writer.stdout! }).on('line', (l) => {
      externalDone = Number(l) || externalDone;
    });
    let writerErr = '';
    writer.stderr!.setEncoding('utf8').on('data', (c: string) => {
      writerErr += c;
    });

    // The broker as writer: the first half, 16 upserts in flight, until it is killed.
    let brokerDone = 0;
    let brokerErrors = 0;
    let killedAt = 0;
    const killAfter = Math.floor(half * 0.4);
    const kill = () => {
      if (killedAt) return;
      killedAt = Date.now();
      first.proc.kill('SIGKILL');
      writer.kill('SIGKILL');
    };
    await pool(
      Array.from({ length: half }, (_, i) => i),
      16,
      async (i) => {
        if (killedAt) return;
        try {
          await facade(operator!, 'upsert_server', { definition: definition(i, 'v2') });
          brokerDone++;
        } catch {
          brokerErrors++;
        }
        // Both writers are in the middle of their halves when the kill lands.
        if (brokerDone >= killAfter && externalDone >= half * 0.2) kill();
      },
    );
    kill();
    await new Promise((r) =>
      first.proc.exitCode !== null || first.proc.signalCode !== null ? r(undefined) : first.proc.once('exit', r),
    );
    await new Promise((r) =>
      writer.exitCode !== null || writer.signalCode !== null ? r(undefined) : writer.once('exit', r),
    );
    await operator!.close().catch(() => undefined);
    operator = undefined;
    assert.equal(writerErr, '', 'the external writer failed on its own');

    // 1. Every file parses and is its old or its new version, nothing else.
    const dir = path.join(root, 'mcp-servers.d');
    const entries = fs.readdirSync(dir);
    const tempFiles = entries.filter((f) => f.startsWith('.') && f.endsWith('.tmp'));
    const visible = entries.filter((f) => !f.startsWith('.'));
    assert.equal(visible.length, TOTAL, 'no definition file lost or added');
    let oldCount = 0;
    let newCount = 0;
    const torn: string[] = [];
    for (let i = 0; i < TOTAL; i++) {
      const file = path.join(dir, `${name(i)}.yaml`);
      const parsed = parseDefinition('server', file, fs.readFileSync(file, 'utf8'));
      const errors = parsed.problems.filter((p) => p.severity === 'error');
      if (!parsed.def || errors.length) {
        torn.push(`${name(i)}: ${errors.map((e) => e.message).join('; ')}`);
        continue;
      }
      const asOld = JSON.stringify(ServerDefSchema.parse(definition(i, 'v1')));
      const asNew = JSON.stringify(ServerDefSchema.parse(definition(i, 'v2')));
      const got = JSON.stringify(parsed.def);
      if (got === asOld) oldCount++;
      else if (got === asNew) newCount++;
      else torn.push(`${name(i)}: neither version: ${got.slice(0, 200)}`);
    }
    assert.deepEqual(torn, []);

    // 2. The dead broker's upstreams did not outlive it (stdin EOF ends a stdio server).
    await waitFor(() => upstreamPids.every((pid) => !running(pid)), "the killed broker's upstreams to exit", 10_000);

    // 3. Its runtime record is still on disk, and is recognised as stale.
    const records = fs.readdirSync(path.join(home, 'brokers')).filter((f) => f.endsWith('.json'));
    assert.equal(records.length, 1);
    const recordFile = path.join(home, 'brokers', records[0]);
    const stale = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
    assert.equal(stale.pid, first.proc.pid);
    const st = spawnSync(process.execPath, [BROKER_JS, 'status', '--root', root], {
      env: { ...process.env, SWITCHBOARD_HOME: home },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(st.status, 1, `status exits 1 for a dead broker: ${st.stdout}${st.stderr}`);
    assert.match(st.stderr, /no broker is running/);

    // 4. A new broker replaces the stale record and restores every enabled server.
    const tRestart = Date.now();
    broker = await startBroker({ root, home, timeoutMs: 60_000 });
    assert.notEqual(broker.proc.pid, first.proc.pid);
    assert.equal(JSON.parse(fs.readFileSync(recordFile, 'utf8')).pid, broker.proc.pid, 'the stale record was replaced');
    operator = await connect(broker.url, broker.token, 'operator');
    const servers = await waitFor(
      async () => {
        const list = (await facade(operator!, 'list_servers')).servers as any[];
        return list.filter((s) => s.state === 'running').length === ENABLED ? list : undefined;
      },
      'every enabled server to run again',
      60_000,
      200,
    );
    const restoreMs = Date.now() - tRestart;
    assert.equal(servers.length, TOTAL);
    for (const s of servers) assert.equal(s.state, s.name < name(ENABLED) ? 'running' : 'disabled', s.name);
    const problems = (await facade(operator, 'registry_problems')).problems as any[];
    assert.deepEqual(
      problems.filter((p) => p.severity === 'error'),
      [],
      'leftover temp files are not definitions',
    );
    for (const pid of descendants(broker.proc.pid!)) notePid(pid, 'upstream');

    report('registry-sigkill', {
      files: TOTAL,
      writtenByBrokerBeforeKill: brokerDone,
      brokerUpsertErrors: brokerErrors,
      writtenByExternalWriterBeforeKill: externalDone,
      faultsInjected: 2,
      onDiskOld: oldCount,
      onDiskNew: newCount,
      tornOrInvalid: torn.length,
      leftoverTempFiles: tempFiles.length,
      staleRecordDetected: true,
      enabledRestored: ENABLED,
      restoreMs,
      seconds: Math.round((Date.now() - t0) / 1000),
    });
    assert.equal(oldCount + newCount, TOTAL);
    assert.ok(newCount > 0 && oldCount > 0, 'the kill landed in the middle of the writes');
  });
});
