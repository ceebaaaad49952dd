// A broker exporting over OTLP to the loopback collector (otlpCollector.ts), started the way the
// telemetry suites need it: a registry of fixtures, spans exported soon after each call (so a test
// waits little), the operator connected, the agent's token at hand and the upstreams running.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  clientToken,
  connect,
  removeTempDirs,
  startBrokerProcess,
  status,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from './broker';
import type { CollectedSpan, OtlpCollector } from './otlpCollector';

export interface TelemetryBrokerOptions {
  /** The prefix of the workspace's temp dir. */
  prefix: string;
  /** The registry's files, given the collector's endpoint. An agent, if any, is clients.d/agent.yaml. */
  files: (endpoint: string) => Record<string, string>;
  /** Over the defaults: OTEL_EXPORTER_OTLP_ENDPOINT the collector, OTEL_BSP_SCHEDULE_DELAY 50 ms. */
  env?: NodeJS.ProcessEnv;
  /** The servers to wait for until they are running. */
  running?: string[];
}

export interface TelemetryBroker {
  broker: BrokerProcess;
  operator: Client;
  /** The token of the client 'agent' ('' when the registry has none). */
  agentToken: string;
}

/** Starts `collector` (OTLP/HTTP), then a broker exporting to it. */
export async function startTelemetryBroker(
  collector: OtlpCollector,
  opts: TelemetryBrokerOptions,
): Promise<TelemetryBroker> {
  const endpoint = await collector.start();
  const root = tempDir(opts.prefix);
  const files = opts.files(endpoint);
  writeRegistry(root, files);
  const broker = await startBrokerProcess({
    root,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', ...opts.env },
  });
  const operator = await connect(broker.url, broker.token, 'operator');
  const agentToken = 'clients.d/agent.yaml' in files ? await clientToken(operator, 'agent') : '';
  for (const name of opts.running ?? []) {
    await waitFor(async () => (await status(operator, name)).state === 'running', `${name} running`, 30_000);
  }
  return { broker, operator, agentToken };
}

/** Closes `clients`, then stops the broker and the collector (any of them may be missing if a start failed). */
export async function stopTelemetryBroker(
  collector: OtlpCollector,
  broker: BrokerProcess | undefined,
  clients: (Client | undefined)[] = [],
): Promise<void> {
  for (const client of clients) await client?.close().catch(() => undefined);
  await broker?.stop();
  await collector.stop();
  removeTempDirs();
}

/** The spans of the trace `traceId` once exactly `count` of them are exported. */
export function exportedTrace(
  collector: OtlpCollector,
  traceId: string,
  count: number,
  what: string,
): Promise<CollectedSpan[]> {
  return waitFor(
    () => {
      const spans = collector.spans.filter((s) => s.traceId === traceId);
      return spans.length === count ? spans : undefined;
    },
    what,
    20_000,
  );
}
