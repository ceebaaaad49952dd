// Whether telemetry is on and where it goes, from the standard OTEL_* environment variables, the
// registry's `telemetry:` block (telemetry.yaml) and the editor's setting (SWITCHBOARD_TELEMETRY=1,
// which the extension sets when it starts the broker). Off unless one of them turns it on.
import type { TelemetryBlock } from '../../registry/telemetryConfig';
import { merged } from '../shared/objects';

export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';
const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json', 'grpc'];

/** Where one signal is exported; `url` undefined: the exporter reads OTEL_EXPORTER_OTLP_* itself. */
export interface OtlpTarget {
  url?: string;
  protocol: OtlpProtocol;
}

export interface TelemetrySettings {
  serviceName: string;
  /** Spans exported here; undefined: spans are recorded for logs and live numbers only. */
  traces?: OtlpTarget;
  /** Metrics pushed here every `metricsIntervalMs`; /metrics and the editor read them regardless. */
  metrics?: OtlpTarget & { intervalMs: number };
  /** What turned it on, for the broker's log. */
  turnedOnBy: string;
  /** Things in the settings a person should hear of (an unsupported protocol), for the log. */
  notes: string[];
}

export const EDITOR_TELEMETRY_ENV = 'SWITCHBOARD_TELEMETRY';
const DEFAULT_INTERVAL_MS = 60_000;

function envFlag(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.trim().toLowerCase());
}

function exporterList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim().toLowerCase());
}

/** The settings in force, or undefined when telemetry stays off. */
export function telemetrySettings(env: NodeJS.ProcessEnv, block?: TelemetryBlock): TelemetrySettings | undefined {
  if (envFlag(env.OTEL_SDK_DISABLED)) return undefined;
  const anyEndpoint = ['', 'TRACES_', 'METRICS_'].some((s) => env[`OTEL_EXPORTER_OTLP_${s}ENDPOINT`]);
  const tracesExporters = exporterList(env.OTEL_TRACES_EXPORTER);
  const metricsExporters = exporterList(env.OTEL_METRICS_EXPORTER);
  const byEnv = anyEndpoint || !!tracesExporters?.includes('otlp') || !!metricsExporters?.includes('otlp');
  const byEditor = envFlag(env[EDITOR_TELEMETRY_ENV]);
  const byBlock = block?.enabled === true;
  if (!byEnv && !byEditor && !byBlock) return undefined;

  const notes: string[] = [];
  const protocolFor = (signal: 'TRACES' | 'METRICS'): OtlpProtocol => {
    const given = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? block?.protocol;
    if (given === undefined) return 'http/protobuf';
    if (PROTOCOLS.includes(given)) return given as OtlpProtocol;
    notes.push(
      `OTLP protocol '${given}' is not one of http/protobuf, http/json or grpc; ` +
        `${signal.toLowerCase()} are sent as http/protobuf`,
    );
    return 'http/protobuf';
  };
  // The exporters read the OTEL_EXPORTER_OTLP_* endpoints and headers themselves; the block's
  // endpoint is used only where the environment names none.
  const targetFor = (signal: 'TRACES' | 'METRICS', path: string): OtlpTarget | undefined => {
    const envUrl = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] || env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const exporters = signal === 'TRACES' ? tracesExporters : metricsExporters;
    if (exporters?.includes('none')) return undefined;
    if (envUrl) return { protocol: protocolFor(signal) };
    if (block?.endpoint) {
      const protocol = protocolFor(signal);
      // gRPC names the service in the request, not in the URL: the endpoint is the collector's address.
      const base = block.endpoint.replace(/\/+$/, '');
      return { url: protocol === 'grpc' ? base : `${base}/${path}`, protocol };
    }
    // OTEL_TRACES_EXPORTER=otlp alone: the exporter's default endpoint (localhost:4318).
    return exporters?.includes('otlp') ? { protocol: protocolFor(signal) } : undefined;
  };
  const traces = block?.traces === false ? undefined : targetFor('TRACES', 'v1/traces');
  const metricsTarget = block?.metrics === false ? undefined : targetFor('METRICS', 'v1/metrics');
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  const intervalMs =
    Number.isFinite(interval) && interval > 0 ? interval : (block?.metricsIntervalMs ?? DEFAULT_INTERVAL_MS);
  return {
    serviceName: env.OTEL_SERVICE_NAME || block?.serviceName || 'mcp-switchboard',
    traces,
    metrics: metricsTarget && merged(metricsTarget, { intervalMs }),
    turnedOnBy: byEnv ? 'the OTEL_* environment' : byBlock ? 'telemetry.yaml' : 'the editor setting',
    notes,
  };
}
