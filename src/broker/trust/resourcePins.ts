// Resource template and resource pins: a template's description and a resource's name and
// description reach the model through every agent's resources lists, so an upstream that changes
// them after approval is the same rug pull as a changed tool description.
//   Templates are pinned like prompts (by uriTemplate): changed, new, listed twice or oversized is
//   held back until the operator reviews it.
//   Resources: the metadata of each URI is pinned, the SET is not. Servers list files, rows and
//   tickets that come and go in ordinary use; holding back every new URI would stop that use. So a
//   new URI is listed and its metadata recorded on first sight (trust on first use per URI); only a
//   URI whose pinned metadata changed is held back. `pins.resources: strict` holds new URIs too.
// pins.ts judges these in the same evaluation as tools and prompts, under the same accept hash.
import { ErrorCodes, McpFailure, type Resource, type ResourceTemplate } from '../shared/mcpTypes';
import type { LockEntry } from './lockfile';
import type { PinRecord, ResourcePin, TemplatePin } from './pinStore';
import { scanText, type ScanFinding } from './toolScanner';
import { canonicalJson, sha256, toolSetHash, type PinnedTool, type ToolDigests } from './toolDigest';

/** The largest template definition (canonical JSON) pinned and listed, as for a prompt. */
export const MAX_TEMPLATE_DEFINITION = 32 * 1024;
/** The most text (name + title + description) a resource may carry and be listed: a file's label, not a manual. */
export const MAX_RESOURCE_TEXT = 8 * 1024;
/** The largest resource metadata (canonical JSON, annotations and _meta included) pinned and listed. */
export const MAX_RESOURCE_DEFINITION = 32 * 1024;
/**
 * How many URIs a server's pin records. Past it, a new URI is listed but its metadata is not
 * recorded (so a later change to it is not caught), or held back under `pins.resources: strict`:
 * a server listing 10,000 files would otherwise make every pin write carry megabytes.
 */
export const MAX_PINNED_RESOURCES = 500;

export type { ResourcePin, TemplatePin } from './pinStore';

/** Why an entry is held back whatever the pins say. */
export type Unfit = 'duplicated' | 'oversized';

interface Digested {
  digests: ToolDigests;
  unfit: ReadonlyMap<string, Unfit>;
  definitions: ReadonlyMap<string, PinnedTool>;
}

/** Every field it lists (a picture, a mime type and _meta included), keyed under `name` for the review. */
function pinnedEntry(entry: Record<string, unknown>, leaveOut: readonly string[]): PinnedTool {
  const out: PinnedTool = { name: String(entry.name) };
  for (const [field, value] of Object.entries(entry))
    if (field !== 'name' && value !== undefined && !leaveOut.includes(field)) out[field] = value;
  return out;
}

/** A template as pinned: uriTemplate, name, title, description, mimeType, annotations, icons, _meta. */
export const pinnedTemplate = (t: ResourceTemplate): PinnedTool => pinnedEntry(t, []);
/** A resource's metadata as pinned: everything but its size (a file that grows is not a rug pull). */
export const pinnedResource = (r: Resource): PinnedTool => pinnedEntry(r, ['size']);

const textOf = (r: Resource): number =>
  [r.name, r.title, r.description].reduce<number>((n, s) => n + (typeof s === 'string' ? s.length : 0), 0);

function digestList<T extends Record<string, unknown>>(
  items: readonly T[],
  keyOf: (item: T) => string,
  pinned: (item: T) => PinnedTool,
  tooBig: (item: T, text: string) => boolean,
): Digested {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  const digests: ToolDigests = {};
  const unfit = new Map<string, Unfit>();
  const definitions = new Map<string, PinnedTool>();
  for (const [key, group] of groups) {
    const all = group.map(pinned);
    // A key listed twice gets one digest over every definition: never one a pin of a single one matches.
    const text = group.length > 1 ? canonicalJson({ duplicated: all }) : canonicalJson(all[0]);
    digests[key] = sha256(text);
    definitions.set(key, all[0]);
    if (group.length > 1) unfit.set(key, 'duplicated');
    else if (tooBig(group[0], text)) unfit.set(key, 'oversized');
  }
  return { digests, unfit, definitions };
}

const templateCache = new WeakMap<readonly ResourceTemplate[], Digested>();
const resourceCache = new WeakMap<readonly Resource[], Digested>();

/** The digests of a template list by uriTemplate, once per list object. */
export function templateDigestsOf(templates: readonly ResourceTemplate[]): Digested {
  let known = templateCache.get(templates);
  if (!known) {
    known = digestList(
      templates,
      (t) => String(t.uriTemplate),
      pinnedTemplate,
      (_, text) => text.length > MAX_TEMPLATE_DEFINITION,
    );
    templateCache.set(templates, known);
  }
  return known;
}

/**
 * The digests of a resource list by URI, once per list object. An MCP App's ui:// page is left out:
 * it is pinned with the tools that open it (catalog/apps/appPages.ts), bytes and all.
 */
export function resourceDigestsOf(resources: readonly Resource[]): Digested {
  let known = resourceCache.get(resources);
  if (!known) {
    const own = resources.filter((r) => !String(r.uri).startsWith('ui://'));
    known = digestList(
      own,
      (r) => String(r.uri),
      pinnedResource,
      (r, text) => textOf(r) > MAX_RESOURCE_TEXT || text.length > MAX_RESOURCE_DEFINITION,
    );
    resourceCache.set(resources, known);
  }
  return known;
}

const digestsOfPin = (pin: { definitions: Record<string, { digest: string }> }): ToolDigests =>
  Object.fromEntries(Object.entries(pin.definitions).map(([key, d]) => [key, d.digest]));

/** A pin of `templates`: a uriTemplate listed twice or an oversized one is left out (never pinned). */
export function templatePin(templates: readonly ResourceTemplate[], lockTemplates?: string): TemplatePin {
  const { digests, unfit, definitions: defs } = templateDigestsOf(templates);
  const definitions: TemplatePin['definitions'] = {};
  for (const [key, definition] of defs) if (!unfit.has(key)) definitions[key] = { digest: digests[key], definition };
  return {
    hash: toolSetHash(digestsOfPin({ definitions })),
    definitions,
    ...(lockTemplates ? { lockPrompts: lockTemplates } : {}),
  };
}

/**
 * A pin of `resources` on top of `before`: the URIs listed now first (their metadata as it is now),
 * then the earlier ones still room for (a URI removed and listed again is held to what it was).
 */
export function resourcePin(
  resources: readonly Resource[],
  before?: ResourcePin,
  only?: ReadonlySet<string>,
): ResourcePin {
  const { digests, unfit, definitions: defs } = resourceDigestsOf(resources);
  const definitions: ResourcePin['definitions'] = {};
  let room = MAX_PINNED_RESOURCES;
  for (const [uri, definition] of defs) {
    if (room === 0) break;
    if (unfit.has(uri) || (only && !only.has(uri))) continue;
    definitions[uri] = { digest: digests[uri], definition };
    room--;
  }
  for (const [uri, d] of Object.entries(before?.definitions ?? {})) {
    if (room === 0) break;
    if (definitions[uri]) continue;
    definitions[uri] = d;
    room--;
  }
  return { definitions };
}

/** Whether the lockfile's templates bind: it has them, and the operator has not accepted a change against them. */
const lockBinds = (
  lock: LockEntry | undefined,
  pin: TemplatePin | undefined,
): lock is LockEntry & Required<Pick<LockEntry, 'templateDigests'>> =>
  lock?.templateDigests !== undefined && lock.resourceTemplates !== pin?.lockPrompts;

/** Whether templates may be pinned on first sight: the lockfile does not lock them, or they match it. */
export const templatesFit = (templates: readonly ResourceTemplate[], lock: LockEntry | undefined): boolean =>
  !lock?.templateDigests || lock.resourceTemplates === toolSetHash(templateDigestsOf(templates).digests);

/**
 * Trust on first sight for resources: a pin from before templates were pinned takes the templates
 * listed now (`templates`: how many); a URI never seen has its metadata recorded (unless strict holds
 * it back). Undefined when the pin stays as it is.
 */
export function resourcesOnFirstSight(
  pin: PinRecord,
  lists: { resources: readonly Resource[]; templates: readonly ResourceTemplate[] },
  lock: LockEntry | undefined,
  strict: boolean,
): { record: PinRecord; templates?: number } | undefined {
  let record = pin;
  let templates: number | undefined;
  if (!pin.resourceTemplates && templatesFit(lists.templates, lock)) {
    const taken = templatePin(lists.templates, lock?.resourceTemplates);
    record = { ...record, resourceTemplates: taken };
    templates = Object.keys(taken.definitions).length;
  }
  const { fresh } = judgeResources([], lists.resources, { resources: pin.resources }, undefined, strict);
  if (!pin.resources || fresh.length) {
    record = { ...record, resources: resourcePin(lists.resources, pin.resources, pin.resources && new Set(fresh)) };
  }
  return record === pin ? undefined : { record, ...(templates !== undefined ? { templates } : {}) };
}

/** How the resource lists stand against their pins. */
export interface ResourceJudgement {
  /** uriTemplates held back: not listed, completions not forwarded, reads only they match refused. */
  heldTemplates: string[];
  removedTemplates: string[];
  /** URIs held back: not listed, reads refused. */
  heldResources: string[];
  /** New URIs whose metadata is recorded now (trust on first use per URI). */
  fresh: string[];
  changed: boolean;
  bound: boolean;
}

export function judgeResources(
  templates: readonly ResourceTemplate[],
  resources: readonly Resource[],
  pins: { templates?: TemplatePin; resources?: ResourcePin },
  lock: LockEntry | undefined,
  strict: boolean,
): ResourceJudgement {
  const t = templateDigestsOf(templates);
  const constraints: ToolDigests[] = [];
  if (pins.templates) constraints.push(digestsOfPin(pins.templates));
  if (lockBinds(lock, pins.templates)) constraints.push(lock.templateDigests);
  const heldTemplates = Object.keys(t.digests)
    .filter((key) => t.unfit.has(key) || constraints.some((c) => c[key] !== t.digests[key]))
    .sort();
  const removedTemplates = [...new Set(constraints.flatMap((c) => Object.keys(c)))]
    .filter((key) => !(key in t.digests))
    .sort();
  const r = resourceDigestsOf(resources);
  const pinned = pins.resources?.definitions;
  const heldResources: string[] = [];
  const fresh: string[] = [];
  let room = MAX_PINNED_RESOURCES - Object.keys(pinned ?? {}).length;
  for (const [uri, digest] of Object.entries(r.digests)) {
    const was = pinned?.[uri]?.digest;
    if (r.unfit.has(uri) || (was !== undefined && was !== digest)) heldResources.push(uri);
    else if (was === undefined && strict && pinned !== undefined) heldResources.push(uri);
    else if (was === undefined && room > 0) {
      fresh.push(uri);
      room--;
    }
  }
  heldResources.sort();
  const changed = heldTemplates.length > 0 || removedTemplates.length > 0 || heldResources.length > 0;
  return { heldTemplates, removedTemplates, heldResources, fresh, changed, bound: constraints.length > 0 };
}

/** One template or resource in the operator's review. */
export interface ResourceChange {
  /** The uriTemplate of a template, the URI of a resource. */
  uri: string;
  /** `duplicated` and `oversized` are never accepted; a removed resource URI is not shown (it is just gone). */
  change: 'changed' | 'added' | 'removed' | 'duplicated' | 'oversized';
  before?: PinnedTool;
  after?: PinnedTool;
  differsFrom: ('approval' | 'lockfile')[];
  findings?: ScanFinding[];
}

function scanEntry(where: string, entry: PinnedTool | undefined): ScanFinding[] {
  const text = entry && typeof entry.description === 'string' ? entry.description : undefined;
  return text === undefined ? [] : scanText(text, where);
}

function unfitChange(
  uri: string,
  why: Unfit,
  before: PinnedTool | undefined,
  now: PinnedTool | undefined,
  max: number,
): ResourceChange {
  const size = canonicalJson(now ?? {}).length;
  const after = why === 'oversized' ? { name: now?.name ?? uri, size: `${size} characters (more than ${max})` } : now;
  return { uri, change: why, ...(before ? { before } : {}), ...(after ? { after } : {}), differsFrom: [] };
}

/** What differs between the template pins and the templates listed now, template by template. */
export function templateChanges(
  templates: readonly ResourceTemplate[],
  pin: TemplatePin | undefined,
  lock: LockEntry | undefined,
  knownDefinition: (digest: string) => PinnedTool | undefined,
): ResourceChange[] {
  const { digests, unfit, definitions } = templateDigestsOf(templates);
  const pinned = pin ? digestsOfPin(pin) : undefined;
  const locked = lockBinds(lock, pin) ? lock.templateDigests : undefined;
  const keys = new Set([...definitions.keys(), ...Object.keys(pinned ?? {}), ...Object.keys(locked ?? {})]);
  const changes: ResourceChange[] = [];
  for (const key of [...keys].sort()) {
    const beforeDigest = pinned?.[key] ?? locked?.[key];
    const before = pin?.definitions[key]?.definition ?? (beforeDigest ? knownDefinition(beforeDigest) : undefined);
    const now = definitions.get(key);
    const why = unfit.get(key);
    if (why) {
      changes.push(unfitChange(key, why, before, now, MAX_TEMPLATE_DEFINITION));
      continue;
    }
    const differsFrom: ResourceChange['differsFrom'] = [];
    if (pinned && pinned[key] !== digests[key]) differsFrom.push('approval');
    if (locked && locked[key] !== digests[key]) differsFrom.push('lockfile');
    if (!differsFrom.length) continue;
    const findings = scanEntry(`resource template '${key}'`, now);
    changes.push({
      uri: key,
      change: !now ? 'removed' : beforeDigest === undefined ? 'added' : 'changed',
      ...(before ? { before } : {}),
      ...(now ? { after: now } : {}),
      differsFrom,
      ...(findings.length ? { findings } : {}),
    });
  }
  return changes;
}

/** The held-back resources in the operator's review: changed metadata, new under strict, listed twice, oversized. */
export function resourceChanges(
  resources: readonly Resource[],
  pin: ResourcePin | undefined,
  held: readonly string[],
): ResourceChange[] {
  const { unfit, definitions } = resourceDigestsOf(resources);
  return held.map((uri) => {
    const before = pin?.definitions[uri]?.definition;
    const now = definitions.get(uri);
    const why = unfit.get(uri);
    if (why) return unfitChange(uri, why, before, now, MAX_RESOURCE_TEXT);
    const findings = scanEntry(`resource '${uri}'`, now);
    return {
      uri,
      change: before ? 'changed' : 'added',
      ...(before ? { before } : {}),
      ...(now ? { after: now } : {}),
      differsFrom: ['approval'],
      ...(findings.length ? { findings } : {}),
    };
  });
}

/**
 * The part of the accept hash the resources add: every template's digest, and the digests of the
 * held-back resources only (a file added between the review and the accept does not void it).
 */
export function resourceReviewHash(
  templates: readonly ResourceTemplate[],
  resources: readonly Resource[],
  heldResources: readonly string[],
): string {
  const r = resourceDigestsOf(resources).digests;
  const held = heldResources.map((uri) => `${uri}\0${r[uri]}`).join('\n');
  return `templates ${toolSetHash(templateDigestsOf(templates).digests)}\nresources ${sha256(held)}`;
}

/** The error a read of a held-back resource, or of a URI only held-back templates match, gets. */
export function resourceQuarantined(server: string, uri: string, review: string, template?: string): McpFailure {
  const what = template
    ? `Resource '${uri}' of server '${server}' is only offered by resource template '${template}', which is quarantined`
    : `Resource '${uri}' of server '${server}' is quarantined`;
  return new McpFailure(
    ErrorCodes.Forbidden,
    `${what}: its description is not the one pinned when the server was approved (it changed, it is new, ` +
      `the server lists it more than once, or it is too large to pin). The operator must review the change: ${review}.`,
  );
}
