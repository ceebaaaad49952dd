// Turning the broker's telemetry on at start (telemetry/settings.ts says when), with the broker's
// gauges read from the control operations, on or off while it runs when the editor's setting
// changes (set_editor_telemetry), and off again at stop.
import { readTelemetryFile, type TelemetryBlock } from '../../registry/telemetryConfig';
import type { EditorTelemetry, TelemetryExport } from '../control/controlApi';
import type { TelemetryExportControl } from '../control/controlOperations';
import { ErrorCodes, McpFailure } from '../shared/mcpTypes';
import type { ControlPlane } from '../control/controlPlane';
import type { Broker } from './broker';
import { EDITOR_TELEMETRY_ENV, telemetrySettings, type TelemetrySettings } from '../telemetry/settings';
import {
  judgeWorkspaceTelemetry,
  TelemetryExportApprovals,
  telemetryApprovalsFile,
  type WorkspaceTrustOfRun,
} from '../trust/telemetryExport';
import { startTelemetry, stopTelemetry, telemetry, type BrokerGauges } from '../telemetry/telemetry';

/** Starts telemetry if the environment, telemetry.yaml or the editor turns it on; says so in the log. */
export function startBrokerTelemetry(
  root: string,
  log: ((line: string) => void) | undefined,
  run: WorkspaceTrustOfRun,
): boolean {
  const { block, problems } = readTelemetryFile(root);
  for (const p of problems)
    log?.(`${p.file}:${p.line}: error: ${p.message} (telemetry stays as the environment sets it)`);
  const settings = telemetrySettings(process.env, workspaceBlock(root, block, run, log));
  return settings ? startWith(settings, log) : false;
}

/** telemetry.yaml's block with its endpoint left out unless it may be used (trust/telemetryExport.ts). */
function workspaceBlock(
  root: string,
  block: TelemetryBlock | undefined,
  run: WorkspaceTrustOfRun,
  log: ((line: string) => void) | undefined,
): TelemetryBlock | undefined {
  const judged = judgeWorkspaceTelemetry(root, block, run);
  if (judged.held) log?.(judged.held);
  return judged.block;
}

/**
 * The editor's setting changed: telemetry starts or stops now, in this process (the tracing layer
 * and /metrics follow at once). The OTEL_* environment and telemetry.yaml still turn it on whatever
 * the editor says. `gauges` are observed by the telemetry started here.
 */
export async function applyEditorTelemetry(
  root: string,
  enabled: boolean,
  log: ((line: string) => void) | undefined,
  gauges: () => BrokerGauges,
  run: WorkspaceTrustOfRun,
): Promise<EditorTelemetry> {
  // Later reads of the environment (none yet) see what the editor says now, not what it said at start.
  process.env[EDITOR_TELEMETRY_ENV] = enabled ? '1' : '';
  const settings = telemetrySettings(process.env, workspaceBlock(root, readTelemetryFile(root).block, run, log));
  const running = telemetry();
  if (settings && running) {
    if (enabled) return { telemetry: true, changed: false };
    return { telemetry: true, changed: false, note: `telemetry stays on: ${settings.turnedOnBy} turns it on` };
  }
  if (!settings && !running) return { telemetry: false, changed: false };
  if (!settings) {
    await stopTelemetry();
    log?.('telemetry off (the editor setting)');
    return { telemetry: false, changed: true };
  }
  if (!startWith(settings, log)) {
    return { telemetry: false, changed: false, note: 'the OpenTelemetry SDK could not be loaded (see the broker log)' };
  }
  telemetry()?.observe(gauges);
  return { telemetry: true, changed: true };
}

/**
 * telemetry.yaml's export endpoint for the control operations: where it stands, and the operator's
 * approval of it, after which the running broker's telemetry starts again with the endpoint.
 */
export function telemetryExportControl(
  root: string,
  run: WorkspaceTrustOfRun,
  log: ((line: string) => void) | undefined,
  gauges: () => BrokerGauges,
): TelemetryExportControl {
  const judged = () => judgeWorkspaceTelemetry(root, readTelemetryFile(root).block, run);
  const state = (): TelemetryExport => {
    const j = judged();
    return {
      status: j.status,
      ...(j.endpoint ? { endpoint: j.endpoint } : {}),
      ...(j.approvedOther ? { approvedOther: j.approvedOther } : {}),
      telemetry: telemetry() !== undefined,
    };
  };
  return {
    state,
    async approve(endpoint: string): Promise<TelemetryExport> {
      const j = judged();
      const refuse = (message: string) => new McpFailure(ErrorCodes.InvalidParams, message);
      if (!j.endpoint) throw refuse('telemetry.yaml names no export endpoint: there is nothing to approve.');
      if (j.endpoint !== endpoint)
        throw refuse(`Nothing approved: telemetry.yaml names ${j.endpoint} now, not ${endpoint}. Look at it again.`);
      if (j.status === 'untrusted')
        throw refuse('The workspace is not trusted: its telemetry.yaml exports nowhere off this machine.');
      if (j.status === 'approved' || j.status === 'on-this-machine') return state();
      // Also under --accept-workspace-trust (used for this run only): the approval outlives the run.
      new TelemetryExportApprovals(telemetryApprovalsFile(), root).approve(endpoint);
      log?.(`the operator approved ${endpoint} as this workspace's telemetry export endpoint`);
      if (j.status !== 'awaiting-approval') return state();
      const settings = telemetrySettings(process.env, judged().block);
      if (settings) {
        if (telemetry()) await stopTelemetry();
        if (startWith(settings, log)) telemetry()?.observe(gauges);
      }
      return state();
    },
  };
}

function startWith(settings: TelemetrySettings, log: ((line: string) => void) | undefined): boolean {
  try {
    startTelemetry(settings);
  } catch (err) {
    // A missing or broken SDK bundle must not keep the broker from serving.
    log?.(`telemetry stays off: the OpenTelemetry SDK could not be loaded (${(err as Error).message})`);
    return false;
  }
  const where = [
    settings.traces ? `traces to ${settings.traces.url ?? 'the OTEL_EXPORTER_OTLP_* endpoint'}` : undefined,
    settings.metrics ? `metrics to ${settings.metrics.url ?? 'the OTEL_EXPORTER_OTLP_* endpoint'}` : undefined,
  ].filter(Boolean);
  log?.(
    `telemetry on (turned on by ${settings.turnedOnBy}): ${where.length ? where.join(', ') : 'nothing exported'}; ` +
      'GET /metrics serves Prometheus text to the operator',
  );
  for (const note of settings.notes) log?.(`telemetry: ${note}`);
  return true;
}

/** The numbers the gauges show, read when metrics are collected (not on any request's path). */
export function brokerGauges(broker: Broker, control: ControlPlane): () => BrokerGauges {
  return () => {
    // Only what the gauges count: a server's whole status would scan its tools' text each collection.
    const servers = control.operations.serverGauges();
    const upstreamStates: Record<string, number> = {};
    const restarts: Record<string, number> = {};
    let pendingClientRequests = 0;
    let quarantinedTools = 0;
    for (const s of servers) {
      upstreamStates[s.state] = (upstreamStates[s.state] ?? 0) + 1;
      restarts[s.name] = s.restarts;
      pendingClientRequests += s.pendingServerRequests;
      quarantinedTools += s.quarantinedTools;
    }
    const toolTokensPerClient: Record<string, number> = {};
    for (const c of control.operations.listClients()) {
      if (c.toolTokens !== undefined) toolTokensPerClient[c.name] = c.toolTokens;
    }
    return {
      sessions: broker.endpoint.sessionCount,
      upstreamStates,
      pendingClientRequests,
      restarts,
      quarantinedTools,
      toolTokensPerClient,
    };
  };
}

export { stopTelemetry };
