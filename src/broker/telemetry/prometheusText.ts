// The Prometheus text format (version 0.0.4) of what the broker's MeterProvider collected, for
// GET /metrics. Names as the OpenTelemetry-to-Prometheus rules make them: dots become underscores,
// the unit a suffix (`s` → `_seconds`; `{request}`-style units none), monotonic sums end in `_total`.
import type { Attributes } from '@opentelemetry/api';
import { DataPointType, type MetricData, type ResourceMetrics } from '@opentelemetry/sdk-metrics';

const UNIT_SUFFIX: Record<string, string> = { s: 'seconds', ms: 'milliseconds', By: 'bytes', '1': 'ratio' };

function sanitize(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9_:]/g, '_');
  return /^[0-9]/.test(clean) ? `_${clean}` : clean;
}

function metricName(metric: MetricData): string {
  let name = sanitize(metric.descriptor.name);
  const suffix = UNIT_SUFFIX[metric.descriptor.unit];
  if (suffix && !name.endsWith(`_${suffix}`)) name += `_${suffix}`;
  if (metric.dataPointType === DataPointType.SUM && metric.isMonotonic && !name.endsWith('_total')) name += '_total';
  return name;
}

function escapeValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labels(attributes: Attributes, extra?: [string, string]): string {
  const pairs = Object.entries(attributes)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${sanitize(k)}="${escapeValue(Array.isArray(v) ? v.join(',') : String(v))}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeValue(extra[1])}"`);
  return pairs.length ? `{${pairs.join(',')}}` : '';
}

function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function typeOf(metric: MetricData): string {
  switch (metric.dataPointType) {
    case DataPointType.HISTOGRAM:
      return 'histogram';
    case DataPointType.SUM:
      return metric.isMonotonic ? 'counter' : 'gauge';
    default:
      return 'gauge';
  }
}

function lines(metric: MetricData): string[] {
  const name = metricName(metric);
  const out = [`# HELP ${name} ${metric.descriptor.description.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`];
  out.push(`# TYPE ${name} ${typeOf(metric)}`);
  if (metric.dataPointType === DataPointType.HISTOGRAM) {
    for (const point of metric.dataPoints) {
      const { boundaries, counts } = point.value.buckets;
      let cumulative = 0;
      boundaries.forEach((bound, i) => {
        cumulative += counts[i];
        out.push(`${name}_bucket${labels(point.attributes, ['le', number(bound)])} ${cumulative}`);
      });
      out.push(`${name}_bucket${labels(point.attributes, ['le', '+Inf'])} ${point.value.count}`);
      out.push(`${name}_sum${labels(point.attributes)} ${number(point.value.sum ?? 0)}`);
      out.push(`${name}_count${labels(point.attributes)} ${point.value.count}`);
    }
  } else if (metric.dataPointType === DataPointType.SUM || metric.dataPointType === DataPointType.GAUGE) {
    for (const point of metric.dataPoints) out.push(`${name}${labels(point.attributes)} ${number(point.value)}`);
  }
  return out;
}

export function prometheusText(resourceMetrics: ResourceMetrics): string {
  const out: string[] = [];
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      // Exponential histograms are not produced here (no view asks for them).
      if (metric.dataPointType === DataPointType.EXPONENTIAL_HISTOGRAM) continue;
      out.push(...lines(metric));
    }
  }
  return out.join('\n') + '\n';
}
