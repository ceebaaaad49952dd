// Prompt pins: a prompt's text is model-visible as a tool description is, so an upstream that
// changes a prompt after approval is the same rug pull. The prompts a server lists are pinned in the
// same record as its tools (pinStore.ts) and the lockfile; pins.ts judges both in one evaluation.
// A prompt that differs from its pin, is new, is listed twice or is oversized is held back.
import { ErrorCodes, McpFailure, type Prompt } from '../shared/mcpTypes';
import type { LockEntry } from './lockfile';
import type { PromptPin } from './pinStore';
import { scanPrompt, type ScanFinding } from './toolScanner';
import { canonicalJson, sha256, toolSetHash, type PinnedTool, type ToolDigests } from './toolDigest';

/**
 * The largest prompt definition (canonical JSON) the broker pins and lists. A prompt is a name, a
 * description and a few arguments (a few KB at most); a bigger one floods the model's context and
 * every pin file and review that holds it, so it is held back, never pinned, whatever the pins say.
 */
export const MAX_PROMPT_DEFINITION = 32 * 1024;

/**
 * A prompt as pinned: every field it lists (name, title, description, arguments with their name,
 * description and required, icons, _meta, and any field no revision defines yet). Unlike a tool's,
 * its icons are pinned: a prompt is picked by a person from a menu, where the picture is part of it.
 */
export function pinnedPrompt(prompt: Prompt): PinnedTool {
  const out: PinnedTool = { name: prompt.name };
  for (const [field, value] of Object.entries(prompt)) if (field !== 'name' && value !== undefined) out[field] = value;
  return out;
}

/** Why a prompt is held back whatever the pins say: listed more than once, or over MAX_PROMPT_DEFINITION. */
export type PromptUnfit = 'duplicated' | 'oversized';

interface Digested {
  digests: ToolDigests;
  unfit: ReadonlyMap<string, PromptUnfit>;
}
const digestCache = new WeakMap<readonly Prompt[], Digested>();

/**
 * The digests of a prompt list, computed once per list object. A name listed twice gets one digest
 * over every definition (never one a pin of a single one matches); an oversized one, a digest of its text.
 */
export function promptDigestsOf(prompts: readonly Prompt[]): Digested {
  let known = digestCache.get(prompts);
  if (known) return known;
  const seen = new Map<string, number>();
  for (const p of prompts) seen.set(p.name, (seen.get(p.name) ?? 0) + 1);
  const digests: ToolDigests = {};
  const unfit = new Map<string, PromptUnfit>();
  for (const [name, count] of seen) {
    const all = prompts.filter((p) => p.name === name).map(pinnedPrompt);
    const text = count > 1 ? canonicalJson({ duplicated: all }) : canonicalJson(all[0]);
    digests[name] = sha256(text);
    if (count > 1) unfit.set(name, 'duplicated');
    else if (text.length > MAX_PROMPT_DEFINITION) unfit.set(name, 'oversized');
  }
  known = { digests, unfit };
  digestCache.set(prompts, known);
  return known;
}

/** The hash of a prompt set: over its names and digests, in name order (the tool set's formula). */
export const promptSetHash = (digests: ToolDigests): string => toolSetHash(digests);

/** A pin of `prompts`: a name listed twice or an oversized prompt is left out (it is never pinned). */
export function promptPin(prompts: readonly Prompt[], lockPrompts?: string): PromptPin {
  const { digests, unfit } = promptDigestsOf(prompts);
  const definitions: PromptPin['definitions'] = {};
  for (const p of prompts) {
    if (!unfit.has(p.name)) definitions[p.name] = { digest: digests[p.name], definition: pinnedPrompt(p) };
  }
  const pinned = Object.fromEntries(Object.entries(definitions).map(([n, d]) => [n, d.digest]));
  return { hash: promptSetHash(pinned), definitions, ...(lockPrompts ? { lockPrompts } : {}) };
}

const pinDigests = (pin: PromptPin): ToolDigests =>
  Object.fromEntries(Object.entries(pin.definitions).map(([name, d]) => [name, d.digest]));

/** Whether the lockfile's prompts bind: it has them, and the operator has not accepted a change against them. */
const lockBinds = (
  lock: LockEntry | undefined,
  pin: PromptPin | undefined,
): lock is LockEntry & Required<Pick<LockEntry, 'promptDigests'>> =>
  lock?.promptDigests !== undefined && lock.prompts !== pin?.lockPrompts;

/** How a prompt list stands against its pins. */
export interface PromptJudgement {
  /** Held back: not listed, `prompts/get` refused. */
  held: string[];
  /** Pinned prompts the server no longer lists. */
  removed: string[];
  unfit: ReadonlyMap<string, PromptUnfit>;
  /** Whether anything differs from the pins (held, removed). */
  changed: boolean;
  /** Whether any pin binds the prompts (the operator's or the lockfile's). */
  bound: boolean;
}

export function judgePrompts(prompts: readonly Prompt[], pin?: PromptPin, lock?: LockEntry): PromptJudgement {
  const { digests, unfit } = promptDigestsOf(prompts);
  const constraints: ToolDigests[] = [];
  if (pin) constraints.push(pinDigests(pin));
  if (lockBinds(lock, pin)) constraints.push(lock.promptDigests);
  const held = Object.keys(digests)
    .filter((name) => unfit.has(name) || constraints.some((c) => c[name] !== digests[name]))
    .sort();
  const removed = [...new Set(constraints.flatMap((c) => Object.keys(c)))].filter((n) => !(n in digests)).sort();
  return { held, removed, unfit, changed: held.length > 0 || removed.length > 0, bound: constraints.length > 0 };
}

export interface PromptChange {
  prompt: string;
  /** `duplicated` (every definition in `duplicates`) and `oversized` are never accepted. */
  change: 'changed' | 'added' | 'removed' | 'duplicated' | 'oversized';
  /** The pinned definition; absent when only its digest is known (a pin from mcp-servers.lock). */
  before?: PinnedTool;
  /** The definition now (an oversized one: its name and size only). */
  after?: PinnedTool;
  differsFrom: ('approval' | 'lockfile')[];
  duplicates?: PinnedTool[];
  findings?: ScanFinding[];
}

/** What differs between the prompt pins and the prompts listed now, prompt by prompt. */
export function promptChanges(
  prompts: readonly Prompt[],
  pin: PromptPin | undefined,
  lock: LockEntry | undefined,
  knownDefinition: (digest: string) => PinnedTool | undefined,
): PromptChange[] {
  const { digests, unfit } = promptDigestsOf(prompts);
  const pinned = pin ? pinDigests(pin) : undefined;
  const locked = lockBinds(lock, pin) ? lock.promptDigests : undefined;
  const byName = new Map(prompts.map((p) => [p.name, p] as const));
  const names = new Set([...byName.keys(), ...Object.keys(pinned ?? {}), ...Object.keys(locked ?? {})]);
  const changes: PromptChange[] = [];
  for (const name of [...names].sort()) {
    const beforeDigest = pinned?.[name] ?? locked?.[name];
    const before = pin?.definitions[name]?.definition ?? (beforeDigest ? knownDefinition(beforeDigest) : undefined);
    const why = unfit.get(name);
    if (why === 'duplicated') {
      const duplicates = prompts.filter((p) => p.name === name).map(pinnedPrompt);
      changes.push({ prompt: name, change: why, ...(before ? { before } : {}), duplicates, differsFrom: [] });
      continue;
    }
    if (why === 'oversized') {
      const size = canonicalJson(pinnedPrompt(byName.get(name)!)).length;
      const after = { name, size: `${size} characters (more than ${MAX_PROMPT_DEFINITION})` };
      changes.push({ prompt: name, change: why, ...(before ? { before } : {}), after, differsFrom: [] });
      continue;
    }
    const differsFrom: PromptChange['differsFrom'] = [];
    if (pinned && pinned[name] !== digests[name]) differsFrom.push('approval');
    if (locked && locked[name] !== digests[name]) differsFrom.push('lockfile');
    if (!differsFrom.length) continue;
    const prompt = byName.get(name);
    const findings = prompt ? scanPrompt(prompt) : [];
    changes.push({
      prompt: name,
      change: !prompt ? 'removed' : beforeDigest === undefined ? 'added' : 'changed',
      ...(before ? { before } : {}),
      ...(prompt ? { after: pinnedPrompt(prompt) } : {}),
      differsFrom,
      ...(findings.length ? { findings } : {}),
    });
  }
  return changes;
}

/** The error a `prompts/get` of a held-back prompt gets; `review` names the review command. */
export function promptQuarantined(server: string, prompt: string, review: string): McpFailure {
  return new McpFailure(
    ErrorCodes.Forbidden,
    `Prompt '${prompt}' of server '${server}' is quarantined: its definition is not the one pinned when the ` +
      `server was approved (it changed, it is new, the server lists the name more than once, or it is ` +
      `larger than ${MAX_PROMPT_DEFINITION / 1024} KB). The operator must review the change: ${review}.`,
  );
}
