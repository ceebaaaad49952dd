// What a tool pin binds: the parts of a tool definition a model reads or a client relies on, in
// canonical JSON, one digest per tool and one hash over the set. Plain SHA-256, not keyed: tool
// definitions are no secret, and the digests must mean the same on every machine (the lockfile).
import * as crypto from 'node:crypto';
import type { JsonObject, Tool } from '../shared/mcpTypes';

/** The pinned fields of a tool: a change to any of them changes what an agent is told or sends. */
export const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export type PinnedTool = { name: string } & Partial<Record<(typeof PINNED_FIELDS)[number], unknown>>;

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

/** The pinned fields a tool has (absent ones are left out, not nulled, so adding `title: undefined` is no change). */
export function pinnedDefinition(tool: Tool): PinnedTool {
  const out: PinnedTool = { name: tool.name };
  for (const field of PINNED_FIELDS) {
    const value = (tool as JsonObject)[field];
    if (value !== undefined) (out as Record<string, unknown>)[field] = value;
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

/** The digests of a tool list, computed once per list object (an upstream replaces its list on change). */
export function digestsOf(tools: readonly Tool[]): ToolDigests {
  let digests = digestCache.get(tools);
  if (!digests) {
    digests = {};
    for (const tool of tools) digests[tool.name] = toolDigest(tool);
    digestCache.set(tools, digests);
  }
  return digests;
}

/** The hash of a tool set: over its names and their digests, in name order. */
export function toolSetHash(digests: ToolDigests): string {
  const lines = Object.keys(digests)
    .sort()
    .map((name) => `${JSON.stringify(name)}=${digests[name]}`);
  return sha256(lines.join('\n'));
}
