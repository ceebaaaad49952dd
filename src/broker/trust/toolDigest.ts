// What a tool pin binds: the parts of a tool definition a model reads or a client relies on, in
// canonical JSON, one digest per tool and one hash over the set. Plain SHA-256, not keyed: tool
// definitions are no secret, and the digests must mean the same on every machine (the lockfile).
import * as crypto from 'node:crypto';
import type { JsonObject, Tool } from '../shared/mcpTypes';

/*
 * What a pin binds: every field of a tool the broker passes on to clients but two. A field is
 * pinned unless it changes neither what a model is told nor what a client does with the tool:
 * `_meta` carries extensions clients act on (an MCP Apps UI resource, an output template),
 * annotations and the output schema decide how clients treat a call and its result, and a field
 * no revision defines yet is pinned too, since the broker cannot know what it means. Not pinned:
 * - `icons`: pictures a person sees next to the name; no model reads them and they change nothing
 *   a tool does (servers also move them between hosts and versions: held tools for nothing);
 * - `execution.taskSupport`: whether a call may run as a task; the broker decides that from what
 *   the server declares (taskRoutes.ts), and a task runs the same pinned tool.
 */

/** A tool as pinned: its name and every pinned field it has. */
export type PinnedTool = { name: string } & Record<string, unknown>;

/** Per tool name, its digest (`sha256:<hex>`). */
export type ToolDigests = Record<string, string>;

/** JSON with object keys sorted at every level, so equal definitions give equal bytes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  });
}

/**
 * The pinned fields a tool has (absent ones are left out, not nulled, so adding `title: undefined`
 * is no change; an `execution` left empty once taskSupport is set aside is left out the same way).
 */
export function pinnedDefinition(tool: Tool): PinnedTool {
  const out: PinnedTool = { name: tool.name };
  for (const [field, value] of Object.entries(tool as JsonObject)) {
    if (field === 'name' || field === 'icons' || value === undefined) continue;
    if (field === 'execution' && value && typeof value === 'object' && !Array.isArray(value)) {
      const { taskSupport: _unpinned, ...rest } = value as JsonObject;
      if (Object.keys(rest).length) out.execution = rest;
      continue;
    }
    out[field] = value;
  }
  return out;
}

export function sha256(text: string): string {
  return `sha256:${crypto.createHash('sha256').update(text).digest('hex')}`;
}

export function toolDigest(tool: Tool): string {
  return sha256(canonicalJson(pinnedDefinition(tool)));
}

const digestCache = new WeakMap<readonly Tool[], ToolDigests>();

/**
 * The digests of a tool list, computed once per list object (an upstream replaces its list on
 * change). A name listed more than once gets one digest over all its definitions in list order:
 * never the digest of one of them, so no pin of a single definition can match it.
 */
export function digestsOf(tools: readonly Tool[]): ToolDigests {
  let digests = digestCache.get(tools);
  if (!digests) {
    digests = {};
    const repeated = duplicateNames(tools);
    for (const tool of tools) if (!repeated.has(tool.name)) digests[tool.name] = toolDigest(tool);
    for (const name of repeated) {
      const all = tools.filter((t) => t.name === name).map(pinnedDefinition);
      digests[name] = sha256(canonicalJson({ duplicated: all }));
    }
    digestCache.set(tools, digests);
  }
  return digests;
}

const duplicateCache = new WeakMap<readonly Tool[], ReadonlySet<string>>();

/**
 * The names a list holds more than once. A client cannot tell such tools apart and a call by name
 * reaches whichever the server picks, so the broker lists and calls none of them (pins.ts).
 */
export function duplicateNames(tools: readonly Tool[]): ReadonlySet<string> {
  let repeated = duplicateCache.get(tools);
  if (!repeated) {
    const seen = new Set<string>();
    const found = new Set<string>();
    for (const tool of tools) (seen.has(tool.name) ? found : seen).add(tool.name);
    repeated = found;
    duplicateCache.set(tools, repeated);
  }
  return repeated;
}

/** The hash of a tool set: over its names and their digests, in name order. */
export function toolSetHash(digests: ToolDigests): string {
  const lines = Object.keys(digests)
    .sort()
    .map((name) => `${JSON.stringify(name)}=${digests[name]}`);
  return sha256(lines.join('\n'));
}
