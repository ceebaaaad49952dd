// The attributes of a request's span and duration metric, built once per kind of request (method,
// tool or prompt, client, server) and reused by every call of that kind. Why: the metrics SDK hashes
// the attribute set of every record (keys sorted, then stringified), and a set built afresh per call
// cost its copies and deletes on top (a CPU profile of the broker with telemetry on, stop 40). The
// per-call values that would make the cache grow without bound (a session id, a resource URI) are
// kept out of it: they go on the span alone, never on a metric (their cardinality).
import type { Attributes } from '@opentelemetry/api';

/** Kinds of request kept at most; past it the cache starts over (memory stays bounded). */
const MAX_SETS = 1024;

/** One kind of request's span name and attributes (shared by its span and its metric: never mutate). */
export interface AttributeSet {
  readonly name: string;
  readonly attributes: Attributes;
  /** The metric's attributes of a failure, per error.type, made on first use. */
  readonly failed: Map<string, Attributes>;
}

/** The name a request acts on, for the span's name and gen_ai.tool.name / gen_ai.prompt.name. */
function targetAttributes(method: string, target: string | undefined): Attributes {
  if (target === undefined) return {};
  if (method === 'tools/call') return { 'gen_ai.tool.name': target, 'gen_ai.operation.name': 'execute_tool' };
  if (method === 'prompts/get') return { 'gen_ai.prompt.name': target };
  return {};
}

/** A key part: undefined is not the empty string (a tool may be named '' by a broken client). */
function orNone(value: string | undefined): string {
  return value === undefined ? '\u0001' : value;
}

/**
 * The attribute sets seen so far. `target` is the tool or prompt name, or the resource URI: a URI
 * names the span's mcp.resource.uri (set per call) but neither its name nor the cached set.
 */
export class AttributeSets {
  private readonly sets = new Map<string, AttributeSet>();

  /** Sets kept now (at most MAX_SETS). */
  get size(): number {
    return this.sets.size;
  }

  /** A request the broker serves: method, target, client and (per-server endpoint) server. */
  served(method: string, target: string | undefined, client: string, endpointServer: string | undefined): AttributeSet {
    const named = method === 'resources/read' ? undefined : target;
    const key = `s\u0000${method}\u0000${orNone(named)}\u0000${client}\u0000${orNone(endpointServer)}`;
    return (
      this.sets.get(key) ??
      this.remember(key, method, named, {
        'mcp.method.name': method,
        ...targetAttributes(method, named),
        'switchboard.client': client,
        ...(endpointServer !== undefined ? { 'switchboard.server': endpointServer } : {}),
      })
    );
  }

  /** A request the broker sends an upstream server. */
  upstream(
    method: string,
    target: string | undefined,
    server: string,
    protocol: string | undefined,
    trust: string | undefined,
  ): AttributeSet {
    const named = method === 'resources/read' ? undefined : target;
    const key = `u\u0000${method}\u0000${orNone(named)}\u0000${server}\u0000${protocol ?? ''}\u0000${trust ?? ''}`;
    return (
      this.sets.get(key) ??
      this.remember(key, method, named, {
        'mcp.method.name': method,
        ...targetAttributes(method, named),
        'switchboard.server': server,
        ...(protocol ? { 'mcp.protocol.version': protocol } : {}),
        ...(trust ? { 'switchboard.trust': trust } : {}),
      })
    );
  }

  private remember(key: string, method: string, named: string | undefined, attributes: Attributes): AttributeSet {
    if (this.sets.size >= MAX_SETS) this.sets.clear();
    const set: AttributeSet = {
      name: named !== undefined ? `${method} ${named}` : method,
      attributes: Object.freeze(attributes),
      failed: new Map(),
    };
    this.sets.set(key, set);
    return set;
  }
}

/** The metric's attributes of one request: its set's, with error.type when it failed. */
export function metricAttributes(set: AttributeSet, errorType: string | undefined): Attributes {
  if (errorType === undefined) return set.attributes;
  let failed = set.failed.get(errorType);
  if (!failed) set.failed.set(errorType, (failed = Object.freeze({ ...set.attributes, 'error.type': errorType })));
  return failed;
}
