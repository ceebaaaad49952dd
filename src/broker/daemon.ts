// Starting a broker for a workspace root: tokens, the discovery record, and the control plane.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Broker, BROKER_VERSION, type BrokerOptions } from './broker';
import { ControlPlane } from './controlPlane';
import { readOrCreateToken, runtimePaths, writePrivateFile, type BrokerRecord, type RuntimePaths } from './runtime';

export interface RunningBroker {
  broker: Broker;
  control: ControlPlane;
  paths: RuntimePaths;
  url: string;
  port: number;
  operatorToken: string;
  stop(): Promise<void>;
}

export async function startBroker(opts: BrokerOptions): Promise<RunningBroker> {
  const root = path.resolve(opts.root);
  fs.mkdirSync(root, { recursive: true });
  const paths = runtimePaths(root);
  const operatorToken = readOrCreateToken(paths.operatorTokenFile);
  const control = new ControlPlane(root, paths, operatorToken, { untrusted: opts.untrusted ?? false });
  const broker = new Broker({ ...opts, root }, control.hooks());
  control.attach(broker);
  const port = await broker.start();
  const url = `http://127.0.0.1:${port}/mcp`;
  control.url = url;
  const record: BrokerRecord = { pid: process.pid, port, url, root, operatorTokenFile: paths.operatorTokenFile, startedAt: new Date().toISOString(), version: BROKER_VERSION };
  writePrivateFile(paths.recordFile, JSON.stringify(record, null, 2) + '\n');
  let stopped = false;
  return {
    broker, control, paths, url, port, operatorToken,
    async stop() {
      if (stopped) return;
      stopped = true;
      await broker.stop();
      control.close();
      // Only remove the record if it is still ours (another broker may have replaced a stale one).
      try {
        const current = JSON.parse(fs.readFileSync(paths.recordFile, 'utf8')) as BrokerRecord;
        if (current.pid === process.pid && current.port === port) fs.unlinkSync(paths.recordFile);
      } catch { /* already gone */ }
    },
  };
}
