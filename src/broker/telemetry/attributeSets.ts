// The attributes of a request's span and duration metric, built once per kind of request (method,
// tool or prompt, client, server) and reused by every call of that kind. Why: the metrics SDK hashes
// the attribute set of every record (keys sorted, then stringified), and a set built afresh per call
// cost its copies and deletes on top (a CPU profile of the broker with telemetry on, stop 40). The
// per-call values that would make the cache grow without bound (a session id, a resource URI) are
// kept out of it: they go on the span alone, never on a metric (their cardinality).
import type { Attributes } from '@opentelemetry/api';
import { merged } from '../shared/objects';

/** Kinds of request kept at most; past it the cache starts over (memory stays bounded). */
const MAX_SETS = 1024;

/** One kind of request's span name and attributes (shared by its span and its metric: never mutate). */
export interface AttributeSet {
  readonly name: string;
  readonly attributes: Attributes;
  /** The metric's attributes of a failure, per error.type, made on first use. */
  readonly failed: Map<string, Attributes>;
  /** The span's attributes with mcp.session.id, per session, made on the session's first request. */
  readonly sessions: Map<string, Attributes>;
}

/** Sessions whose span attributes one set keeps at most; past it that set's start over. */
const MAX_SESSIONS_PER_SET = 32;

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

/** One level of the sets' lookup: a key part to the next level, the last level's to its set. */
type Level = Map<string, Level | AttributeSet>;

/**
 * The attribute sets seen so far. `target` is the tool or prompt name, or the resource URI: a URI
 * names the span's mcp.resource.uri (set per call) but neither its name nor the cached set. Found
 * through one Map per key part, not one Map keyed by the parts joined: joining made a ~80-character
 * string per request (~350 bytes to allocate and a hash to compute, twice per call; stop 44).
 */
export class AttributeSets {
  private servedSets: Level = new Map();
  private upstreamSets: Level = new Map();
  private count = 0;

  /** Sets kept now (at most MAX_SETS). */
  get size(): number {
    return this.count;
  }

  /** A request the broker serves: method, target, client and (per-server endpoint) server. */
  served(method: string, target: string | undefined, client: string, endpointServer: string | undefined): AttributeSet {
    const named = method === 'resources/read' ? undefined : target;
    const leaf = level(level(level(this.servedSets, method), orNone(named)), client);
    const key = orNone(endpointServer);
    return (
      (leaf.get(key) as AttributeSet | undefined) ??
      this.remember(leaf, key, method, named, {
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
    const leaf = level(level(level(level(this.upstreamSets, method), orNone(named)), server), protocol ?? '');
    const key = trust ?? '';
    return (
      (leaf.get(key) as AttributeSet | undefined) ??
      this.remember(leaf, key, method, named, {
        'mcp.method.name': method,
        ...targetAttributes(method, named),
        'switchboard.server': server,
        ...(protocol ? { 'mcp.protocol.version': protocol } : {}),
        ...(trust ? { 'switchboard.trust': trust } : {}),
      })
    );
  }

  private remember(
    leaf: Level,
    key: string,
    method: string,
    named: string | undefined,
    attributes: Attributes,
  ): AttributeSet {
    // Past the bound the lookup starts over (this set still goes in the level it was looked up in,
    // which is no longer reachable: used for this request only).
    if (this.count >= MAX_SETS) {
      this.servedSets = new Map();
      this.upstreamSets = new Map();
      this.count = 0;
    }
    const set: AttributeSet = {
      name: named !== undefined ? `${method} ${named}` : method,
      attributes: Object.freeze(attributes),
      failed: new Map(),
      sessions: new Map(),
    };
    leaf.set(key, set);
    this.count++;
    return set;
  }
}

/** The next level under `part`, made on first use. */
function level(from: Level, part: string): Level {
  let next = from.get(part) as Level | undefined;
  if (next === undefined) from.set(part, (next = new Map()));
  return next;
}

/** The metric's attributes of one request: its set's, with error.type when it failed. */
export function metricAttributes(set: AttributeSet, errorType: string | undefined): Attributes {
  if (errorType === undefined) return set.attributes;
  let failed = set.failed.get(errorType);
  if (!failed) set.failed.set(errorType, (failed = Object.freeze(merged(set.attributes, { 'error.type': errorType }))));
  return failed;
}

/**
 * A served request's span attributes: its set's with its session's mcp.session.id, one frozen object
 * per session and kind of request, shared by the session's spans. Not per call: a span then carries
 * no object of its own for it, and the exporter reads a shared object instead of a merge (the session
 * id is on spans only, never on a metric: its cardinality).
 */
export function sessionAttributes(set: AttributeSet, sessionId: string): Attributes {
  let attributes = set.sessions.get(sessionId);
  if (attributes === undefined) {
    if (set.sessions.size >= MAX_SESSIONS_PER_SET) set.sessions.clear();
    attributes = Object.freeze(merged(set.attributes, { 'mcp.session.id': sessionId }));
    set.sessions.set(sessionId, attributes);
  }
  return attributes;
}
