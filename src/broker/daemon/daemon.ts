// Starting a broker for a workspace root: tokens, the discovery record, the control plane, and
// reuse of a broker that already serves the root.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Broker, type BrokerOptions } from './broker';
import { BROKER_VERSION } from '../shared/version';
import { ControlPlane } from '../control/controlPlane';
import { liveRecord, tryLock, waitForRecord } from './discovery';
import { readOrCreateToken, runtimePaths, type RuntimePaths } from '../shared/userState';
import { writePrivateFile } from '../shared/privateFiles';
import type { BrokerRecord } from './runtime';
import {
  applyEditorTelemetry,
  brokerGauges,
  startBrokerTelemetry,
  stopTelemetry,
  telemetryExportControl,
} from './brokerTelemetry';
import { telemetry } from '../telemetry/telemetry';

export interface RunningBroker {
  broker: Broker;
  control: ControlPlane;
  paths: RuntimePaths;
  url: string;
  port: number;
  operatorToken: string;
  stop(): Promise<void>;
}

export type ServeOutcome = { started: RunningBroker } | { reused: BrokerRecord; paths: RuntimePaths };

/** Starts a broker for the root unless a live one serves it already; two racing starters end with one. */
export async function serveOrReuse(opts: BrokerOptions): Promise<ServeOutcome> {
  const root = path.resolve(opts.root);
  fs.mkdirSync(root, { recursive: true });
  const paths = runtimePaths(root);
  for (let attempt = 0; attempt < 5; attempt++) {
    const existing = await liveRecord(paths, root);
    if (existing) return { reused: existing, paths };
    const lock = tryLock(paths);
    if (!lock) {
      const record = await waitForRecord(paths, root, 30_000);
      if (record) return { reused: record, paths };
      continue;
    }
    try {
      // Re-check under the lock: the previous holder may have finished starting just now.
      const raced = await liveRecord(paths, root);
      if (raced) return { reused: raced, paths };
      return { started: await startBroker({ ...opts, root }) };
    } finally {
      lock.release();
    }
  }
  throw new Error(`could not start or find the broker for ${root}: the start lock ${paths.lockFile} stays taken`);
}

export async function startBroker(opts: BrokerOptions): Promise<RunningBroker> {
  const root = path.resolve(opts.root);
  fs.mkdirSync(root, { recursive: true });
  const paths = runtimePaths(root);
  const operatorToken = readOrCreateToken(paths.operatorTokenFile);
  const trustOfRun = { untrusted: opts.untrusted ?? false, acceptWorkspaceTrust: opts.acceptWorkspaceTrust ?? false };
  startBrokerTelemetry(root, opts.log, trustOfRun);
  // The data plane first, then the control plane over it, then serving under its governance.
  const broker = new Broker({ ...opts, root }, { paths, operatorToken });
  const control: ControlPlane = new ControlPlane(broker, paths, {
    untrusted: opts.untrusted ?? false,
    acceptWorkspaceTrust: opts.acceptWorkspaceTrust,
    editorTelemetry: (enabled) => applyEditorTelemetry(root, enabled, opts.log, gauges, trustOfRun),
    telemetryExport: telemetryExportControl(root, trustOfRun, opts.log, () => gauges()),
  });
  const gauges = brokerGauges(broker, control);
  telemetry()?.observe(gauges);
  const port = await broker.start(control);
  const url = broker.url;
  const record: BrokerRecord = {
    pid: process.pid,
    port,
    url,
    root,
    operatorTokenFile: paths.operatorTokenFile,
    startedAt: new Date().toISOString(),
    version: BROKER_VERSION,
  };
  writePrivateFile(paths.recordFile, JSON.stringify(record, null, 2) + '\n');
  let stopped = false;
  return {
    broker,
    control,
    paths,
    url,
    port,
    operatorToken,
    async stop() {
      if (stopped) return;
      stopped = true;
      // Only remove the record if it is still ours (another broker may have replaced a stale one).
      try {
        const current = JSON.parse(fs.readFileSync(paths.recordFile, 'utf8')) as BrokerRecord;
        if (current.pid === process.pid && current.port === port) fs.unlinkSync(paths.recordFile);
      } catch {
        /* already gone */
      }
      await broker.stop();
      control.close();
      await stopTelemetry();
    },
  };
}
