// A pin record as the pins take it (first use, lockfile, the operator's accept), the accept hash
// the review names, and what quarantine-server holds back: pins.ts decides when, this file what.
import type { LockEntry } from './lockfile';
import type { Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';
import type { HeldBack, LiveServer } from './pinState';
import { promptDigestsOf, promptPin, promptSetHash } from './promptPins';
import type { PinRecord, PinSource } from './pinStore';
import { resourceDigestsOf, resourcePin, resourceReviewHash, templateDigestsOf, templatePin } from './resourcePins';
import { duplicateNames, digestsOf, pinnedDefinition, sha256, toolSetHash, type ToolDigests } from './toolDigest';

/** A server's resource lists as the gate judges them. */
export interface ResourceLists {
  resources: readonly Resource[];
  templates: readonly ResourceTemplate[];
}
export const NO_RESOURCES: ResourceLists = { resources: [], templates: [] };

export const instructionsDigest = (text: string | undefined): string => sha256(`instructions\n${text ?? ''}`);

/** The lockfile hashes a pin is taken against (the operator's pin then binds in their place). */
type LockHashes = Pick<LockEntry, 'tools' | 'prompts' | 'resourceTemplates'> | undefined;

/**
 * A pin of `tools`, `prompts` and resource lists (a name listed twice is left out: it is never pinned)
 * and of the live instructions; `before`: the pin it replaces, whose resource URIs it keeps room for.
 */
export function pinRecord(
  tools: readonly Tool[],
  source: PinSource,
  lock: LockHashes,
  live: LiveServer | undefined,
  prompts: readonly Prompt[],
  lists: ResourceLists,
  before?: PinRecord,
): PinRecord {
  const lockTools = lock?.tools;
  const digests = digestsOf(tools);
  const repeated = duplicateNames(tools);
  const definitions: PinRecord['definitions'] = {};
  for (const tool of tools) {
    if (!repeated.has(tool.name))
      definitions[tool.name] = { digest: digests[tool.name], definition: pinnedDefinition(tool) };
  }
  const pinnedDigests = Object.fromEntries(Object.entries(definitions).map(([n, d]) => [n, d.digest]));
  return {
    tools: toolSetHash(pinnedDigests),
    definitions,
    pinnedAt: new Date().toISOString(),
    source,
    ...(lockTools ? { lockTools } : {}),
    prompts: promptPin(prompts, lock?.prompts),
    resourceTemplates: templatePin(lists.templates, lock?.resourceTemplates),
    resources: resourcePin(lists.resources, before?.resources),
    ...(live
      ? { instructions: { digest: instructionsDigest(live.instructions), text: live.instructions ?? null } }
      : {}),
  };
}

/**
 * The hash the operator's review names: the tool set, the prompt set, the templates and held-back
 * resources, and the instructions when they are known, so an accept cannot take what changed after
 * the review.
 */
export function reviewHash(
  tools: readonly Tool[],
  live: LiveServer | undefined,
  prompts: readonly Prompt[],
  lists: ResourceLists,
  heldResources: readonly string[],
): string {
  const hash = toolSetHash(digestsOf(tools));
  const promptHash = promptSetHash(promptDigestsOf(prompts).digests);
  const resources = resourceReviewHash(lists.templates, lists.resources, heldResources);
  return sha256(`${hash}\n${live ? instructionsDigest(live.instructions) : ''}\nprompts ${promptHash}\n${resources}`);
}

export const pinDigests = (pin: PinRecord): ToolDigests =>
  Object.fromEntries(Object.entries(pin.definitions).map(([name, d]) => [name, d.digest]));

export const NONE: ReadonlySet<string> = new Set();

/** Every entry of every list: what quarantine-server holds back once anything changed. */
export function everything(tools: readonly Tool[], prompts: readonly Prompt[], lists: ResourceLists): HeldBack {
  return {
    tools: new Set(Object.keys(digestsOf(tools))),
    prompts: new Set(prompts.map((p) => p.name)),
    resourceTemplates: new Set(Object.keys(templateDigestsOf(lists.templates).digests)),
    resources: new Set(Object.keys(resourceDigestsOf(lists.resources).digests)),
  };
}
export const NO_PROMPTS: readonly Prompt[] = [];
