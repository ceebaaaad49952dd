// The registry's `telemetry:` block: `<root>/telemetry.yaml` turns the broker's OpenTelemetry traces
// and metrics on for a workspace and says where they go. Off when the file is absent. Its mistakes
// are reported with file and line like every registry file's; a file with errors turns nothing on.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { positionOf } from './positions';

export const TELEMETRY_FILE = 'telemetry.yaml';

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;

const TelemetryBlockSchema = z.strictObject({
  /** Traces and metrics recorded: /metrics and the editor's numbers; exported when an endpoint is given. */
  enabled: z.boolean().default(true),
  /** The OTLP collector's base address (over HTTP `/v1/traces` and `/v1/metrics` are added; gRPC: as given). */
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  protocol: z.enum(OTLP_PROTOCOLS).optional(),
  traces: z.boolean().default(true),
  metrics: z.boolean().default(true),
  /** How often metrics are pushed to the collector. */
  metricsIntervalMs: z.number().int().min(1000).max(3_600_000).optional(),
  serviceName: z.string().min(1).max(100).optional(),
});
const TelemetryFileSchema = z.strictObject({ telemetry: TelemetryBlockSchema });

export type TelemetryBlock = z.output<typeof TelemetryBlockSchema>;

export interface TelemetryFileProblem {
  file: string;
  line: number;
  message: string;
}

export interface TelemetryFileResult {
  block?: TelemetryBlock;
  problems: TelemetryFileProblem[];
}

export function parseTelemetryFile(text: string, file: string): TelemetryFileResult {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length) {
    return {
      problems: doc.errors.map((e) => ({ file, line: e.linePos?.[0].line ?? 1, message: e.message.split('\n')[0] })),
    };
  }
  const r = TelemetryFileSchema.safeParse(doc.toJS() ?? {});
  if (r.success) return { block: r.data.telemetry, problems: [] };
  return {
    problems: r.error.issues.map((i) => ({
      file,
      // An unknown key is reported on its parent; the line is the key's own.
      line:
        i.code === 'unrecognized_keys'
          ? positionOf(doc, lc, [...i.path, i.keys[0]], 'key').line
          : positionOf(doc, lc, i.path, 'value').line,
      message: `${i.path.join('.') || '(top level)'}: ${i.message}`,
    })),
  };
}

/** The workspace's telemetry block; no file: no block and no problems. */
export function readTelemetryFile(root: string): TelemetryFileResult {
  const file = path.join(root, TELEMETRY_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { problems: [] };
    return { problems: [{ file, line: 1, message: (err as Error).message }] };
  }
  return parseTelemetryFile(text, file);
}
