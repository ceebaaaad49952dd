// The broker's spans, recorded by a small recorder of our own instead of the SDK's Tracer and Span.
// Why: the SDK's span objects cost ~20 µs per call in the broker (startSpan, SpanImpl, its ids,
// times, attribute copies and contexts; "Telemetry cost, stop 41/42" in docs/performance.md), and
// they sit in the export queue long enough to be promoted by the broker's small semi-spaces. A span
// here is one small object: the request kind's frozen attribute set shared, not copied; two
// performance.now() readings; ids cut from a pooled random buffer. It is everything the library's
// OTLP exporters read from a ReadableSpan (otlp-transformer's sdkSpanToOtlpSpan), built lazily at
// export. The queue (BatchSpanProcessor), the exporters and the encoders stay the library's.
import { randomFillSync } from 'node:crypto';
import {
  ROOT_CONTEXT,
  type SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Attributes,
  type AttributeValue,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanStatus,
  type TraceState,
} from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import {
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanProcessor,
  type TimedEvent,
} from '@opentelemetry/sdk-trace-base';
import { merged } from '../shared/objects';

/** What a span can be the child of: one of ours, or the caller's (taken from its _meta). */
export interface SpanParent {
  spanContext(): SpanContext;
}

const NO_EVENTS: TimedEvent[] = Object.freeze([]) as unknown as TimedEvent[];
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[];
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const FAILED: SpanStatus = Object.freeze({ code: SpanStatusCode.ERROR });
/** Read once: an imported binding of the bundled API is a getter on every read (stop 44). */
const SAMPLED = TraceFlags.SAMPLED;

/** Random bytes drawn 4 KB at a time: one randomFillSync per ~170 spans instead of one per id. */
class IdPool {
  private readonly bytes = Buffer.allocUnsafe(4096);
  private at = this.bytes.length;

  hex(length: number): string {
    if (this.at + length > this.bytes.length) {
      randomFillSync(this.bytes);
      this.at = 0;
    }
    const start = this.at;
    this.at += length;
    // An all-zero id is invalid (W3C trace context); one in 2^64 draws: take the next bytes.
    for (let i = start; i < this.at; i++) if (this.bytes[i] !== 0) return this.bytes.toString('hex', start, this.at);
    return this.hex(length);
  }
}

/** performance.timeOrigin as HrTime, split once so each edge needs only performance.now(). */
const ORIGIN_SECONDS = Math.floor(performance.timeOrigin / 1000);
const ORIGIN_NANOS = Math.round((performance.timeOrigin - ORIGIN_SECONDS * 1000) * 1e6);

/** A performance.now() reading as wall-clock HrTime, [seconds, nanoseconds]. */
function hrTime(now: number): HrTime {
  const whole = Math.floor(now);
  let nanos = ORIGIN_NANOS + Math.round((now - whole) * 1e6) + (whole % 1000) * 1e6;
  let seconds = ORIGIN_SECONDS + Math.floor(whole / 1000);
  if (nanos >= 1e9) {
    seconds += Math.floor(nanos / 1e9);
    nanos %= 1e9;
  }
  return [seconds, nanos];
}

/**
 * One span: what the exporters read, with the attributes and times put together only at export.
 * It is its own SpanContext, and what every span has alike (no events, no links, nothing dropped)
 * is on the prototype: spans wait in the export queue, so each field is kept until the export.
 */
export class RecordedSpan implements ReadableSpan, SpanParent, SpanContext {
  status = UNSET;
  /** performance.now() at the span's start and end (end: -1 while it runs). */
  readonly startedAt: number;
  endedAt = -1;
  /** Per-span attributes set after the start (session id, resource URI, error.type, who answered). */
  private extra: Attributes | undefined;
  /** What the exporter reads, made on its first read of an ended span (it reads each twice). */
  private exported: Attributes | undefined;
  private startHr: HrTime | undefined;
  private endHr: HrTime | undefined;

  constructor(
    private readonly recorder: SpanRecorder,
    readonly name: string,
    readonly kind: SpanKind,
    readonly traceId: string,
    readonly spanId: string,
    readonly traceFlags: number,
    readonly traceState: TraceState | undefined,
    readonly parentSpanContext: SpanContext | undefined,
    /** Shared (frozen) by every span of this kind of request: never mutated. */
    private readonly base: Attributes,
  ) {
    this.startedAt = performance.now();
  }

  spanContext(): SpanContext {
    return this;
  }

  get events(): TimedEvent[] {
    return NO_EVENTS;
  }

  get links(): Link[] {
    return NO_LINKS;
  }

  get droppedAttributesCount(): number {
    return 0;
  }

  get droppedEventsCount(): number {
    return 0;
  }

  get droppedLinksCount(): number {
    return 0;
  }

  get attributes(): Attributes {
    if (!this.extra) return this.base;
    // The OTLP encoder reads a span twice (its size, then its bytes): one merge, kept once ended.
    if (this.endedAt < 0) return merged(this.base, this.extra);
    return (this.exported ??= merged(this.base, this.extra));
  }

  get startTime(): HrTime {
    if (this.endedAt < 0) return hrTime(this.startedAt);
    return (this.startHr ??= hrTime(this.startedAt));
  }

  get endTime(): HrTime {
    if (this.endedAt < 0) return hrTime(this.startedAt);
    return (this.endHr ??= hrTime(this.endedAt));
  }

  get duration(): HrTime {
    const ms = this.endedAt < 0 ? 0 : this.endedAt - this.startedAt;
    return [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
  }

  get ended(): boolean {
    return this.endedAt >= 0;
  }

  get resource(): Resource {
    return this.recorder.resource;
  }

  get instrumentationScope(): { name: string; version?: string } {
    return this.recorder.scope;
  }

  setAttribute(key: string, value: AttributeValue): void {
    (this.extra ??= {})[key] = value;
    this.exported = undefined;
  }

  setAttributes(attributes: Attributes): void {
    this.extra = this.extra ? Object.assign(this.extra, attributes) : { ...attributes };
    this.exported = undefined;
  }

  /** The status says that it failed, never the message: messages can echo arguments. */
  failed(errorType: string): void {
    this.setAttribute('error.type', errorType);
    this.status = FAILED;
  }

  /** Ends the span (once) and hands it to the export queue; returns the end's performance.now(). */
  end(): number {
    if (this.endedAt >= 0) return this.endedAt;
    this.endedAt = performance.now();
    this.recorder.processor?.onEnd(this);
    return this.endedAt;
  }
}

/**
 * How the environment asks spans to be sampled (OTEL_TRACES_SAMPLER and its argument, as the SDK
 * reads them), decided without a Context: the SDK's parent-based sampler wants the parent in a
 * Context, and making one per span (the API copies a Map for each value set) cost more per call
 * than a sampled-out span saved. Undefined for the default, parent-based always-on.
 */
export interface Sampling {
  /** A child takes its parent's sampled flag (the parentbased_* samplers, with their default children). */
  followsParent: boolean;
  /** The flags of a span that does not follow a parent, from its trace id: SAMPLED or NONE. */
  decide(traceId: string): number;
}

const ALWAYS = (): number => SAMPLED;
const NEVER = (): number => TraceFlags.NONE;

export function samplingFromEnv(env: NodeJS.ProcessEnv): Sampling | undefined {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (!name || name === 'parentbased_always_on') return undefined;
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = (): Sampling['decide'] => {
    // The SDK's own ratio sampler, which reads only the trace id (never the context it is given).
    const sampler = new TraceIdRatioBasedSampler(Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1);
    return (traceId) =>
      sampler.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED
        ? SAMPLED
        : TraceFlags.NONE;
  };
  switch (name) {
    case 'always_on':
      return { followsParent: false, decide: ALWAYS };
    case 'always_off':
      return { followsParent: false, decide: NEVER };
    case 'parentbased_always_off':
      return { followsParent: true, decide: NEVER };
    case 'traceidratio':
      return { followsParent: false, decide: ratio() };
    case 'parentbased_traceidratio':
      return { followsParent: true, decide: ratio() };
    default:
      return undefined;
  }
}

/** Starts spans and hands the ended ones to the export queue (none: spans are not exported). */
export class SpanRecorder {
  private readonly ids = new IdPool();
  private readonly sampling: Sampling | undefined;
  readonly scope: { name: string; version?: string };

  constructor(
    readonly resource: Resource,
    scopeName: string,
    scopeVersion: string,
    readonly processor: SpanProcessor | undefined,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.scope = Object.freeze({ name: scopeName, version: scopeVersion });
    this.sampling = samplingFromEnv(env);
  }

  start(name: string, kind: SpanKind, attributes: Attributes, parent: SpanParent | undefined): RecordedSpan {
    const parentContext = parent?.spanContext();
    const traceId = parentContext ? parentContext.traceId : this.ids.hex(16);
    const sampling = this.sampling;
    const traceFlags =
      parentContext && (!sampling || sampling.followsParent)
        ? parentContext.traceFlags & SAMPLED
        : sampling
          ? sampling.decide(traceId)
          : SAMPLED;
    const spanId = this.ids.hex(8);
    return new RecordedSpan(
      this,
      name,
      kind,
      traceId,
      spanId,
      traceFlags,
      parentContext?.traceState,
      parentContext,
      attributes,
    );
  }

  /** Exports what is queued. */
  async flush(): Promise<void> {
    await this.processor?.forceFlush();
  }

  async shutdown(): Promise<void> {
    await this.processor?.shutdown();
  }
}

/** A caller's trace context taken from its _meta, as the parent of the broker's SERVER span. */
export function remoteParent(context: SpanContext | undefined): SpanParent | undefined {
  return context ? { spanContext: () => context } : undefined;
}

/**
 * Puts a span's trace context in an upstream request's _meta, as W3CTraceContextPropagator.inject
 * writes it (traceparent version 00; tracestate when the trace has one), without a Context per call.
 */
export function injectTraceContext(context: SpanContext, meta: Record<string, unknown>): void {
  // Sampled (01) is nearly every span: no number-to-hex string per call for it.
  const flags = context.traceFlags === 1 ? '01' : (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  meta.traceparent = `00-${context.traceId}-${context.spanId}-${flags}`;
  const state = context.traceState?.serialize();
  if (state) meta.tracestate = state;
}
