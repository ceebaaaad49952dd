// Rug-pull defence: the tools and prompts of a running server are held to the pins taken when it was
// approved (or to the committed lockfile). A tool or prompt whose definition differs from a pin, or
// that is new, is quarantined (not listed, not callable) until the operator reviews the diff and
// accepts it. A name listed twice is held back whatever the pins say; changed instructions are not
// served. Prompts are judged in promptPins.ts, resource templates and resource metadata in
// resourcePins.ts, in the same evaluation and the same accept hash.
import * as fs from 'node:fs';
import type { ServerDef } from '../../registry/schema';
import { lockfilePath, readLockfile, type LockEntry, type LockfileRead } from './lockfile';
import { ErrorCodes, McpFailure, type Prompt, type Tool } from '../shared/mcpTypes';
import {
  PinMismatch,
  reviewCommand,
  type HeldBack,
  type InstructionsChange,
  type LiveServer,
  type PinState,
  type ToolChange,
  type ToolChanges,
} from './pinState';
import { judgePrompts, promptChanges, promptDigestsOf, promptPin, promptSetHash } from './promptPins';
import type { PinRecord, PinStore } from './pinStore';
import {
  everything,
  instructionsDigest,
  NO_PROMPTS,
  NO_RESOURCES,
  NONE,
  pinDigests,
  pinRecord,
  reviewHash,
  type ResourceLists,
} from './pinRecord';
import {
  judgeResources,
  resourcesOnFirstSight,
  templatesFit,
  resourceChanges,
  templateChanges,
  type ResourceJudgement,
} from './resourcePins';
import { flaggedTools, scanText, scanTool } from './toolScanner';
import {
  duplicateNames,
  digestsOf,
  pinnedDefinition,
  toolSetHash,
  type PinnedTool,
  type ToolDigests,
} from './toolDigest';

// The state and review types live in pinState.ts; importers keep importing them from here.
export * from './pinState';
export type { ResourceLists } from './pinRecord';

interface Evaluation {
  tools: readonly Tool[];
  prompts: readonly Prompt[];
  lists: ResourceLists;
  /** How the resource lists stood (the review shows its held-back resources). */
  verdict: ResourceJudgement;
  stamp: string;
  /** The instructions the tools were listed with (undefined: not running, so not known). */
  live?: LiveServer;
  held: HeldBack;
  state: PinState;
  /** The operator's pin and the lockfile entry the tools were held to. */
  pin?: PinRecord;
  lock?: LockEntry;
}

export class Pins {
  private readonly latest = new Map<string, Evaluation>();
  private lock: { stamp: string; read: LockfileRead } = { stamp: '', read: { state: 'absent' } };
  private reportedLockProblem?: string;

  constructor(
    private readonly store: PinStore,
    private readonly root: string,
    private readonly defOf: (server: string) => ServerDef | undefined,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** The lockfile as it is now, read again only when its size or mtime changed. */
  private lockfile(): LockfileRead {
    let stamp = 'absent';
    try {
      const stat = fs.statSync(lockfilePath(this.root));
      stamp = `${stat.mtimeMs}:${stat.size}`;
    } catch {
      /* absent */
    }
    if (stamp !== this.lock.stamp) {
      this.lock = { stamp, read: stamp === 'absent' ? { state: 'absent' } : readLockfile(this.root) };
      const problem = this.lock.read.state === 'invalid' ? this.lock.read.error : undefined;
      if (problem && problem !== this.reportedLockProblem) this.log(`${problem}; it is ignored until fixed`);
      this.reportedLockProblem = problem;
    }
    return this.lock.read;
  }

  private lockEntry(server: string): LockEntry | undefined {
    const read = this.lockfile();
    return read.state === 'read' ? read.servers[server] : undefined;
  }

  /**
   * The catalog's hook: the tools and prompts of `server` to hold back from its current lists. The
   * first lists of a server never pinned become its pin (trust on first use), unless the lockfile pins it.
   */
  gate(
    server: string,
    tools: readonly Tool[],
    live?: LiveServer,
    prompts: readonly Prompt[] = NO_PROMPTS,
    lists: ResourceLists = NO_RESOURCES,
  ): HeldBack {
    const def = this.defOf(server);
    const lock = this.lockEntry(server);
    const stamp = `${this.store.generation}\0${this.lock.stamp}\0${def?.onToolChange}`;
    const cached = this.latest.get(server);
    if (
      cached &&
      cached.tools === tools &&
      cached.prompts === prompts &&
      cached.lists.resources === lists.resources &&
      cached.lists.templates === lists.templates &&
      cached.stamp === stamp &&
      cached.live?.instructions === live?.instructions &&
      (cached.live === undefined) === (live === undefined)
    )
      return cached.held;
    const evaluation = this.evaluate(server, tools, prompts, lists, def, lock, live);
    this.latest.set(server, evaluation);
    return evaluation.held;
  }

  /**
   * The tools of a list the pins hold back, judged without taking a pin or touching the live state:
   * what a probe run for a client other than the operator may not show it (probe_server lists a
   * fresh process's tools, which a rug pull changed as much as the running one's).
   */
  heldOf(
    server: string,
    tools: readonly Tool[],
    prompts: readonly Prompt[] = NO_PROMPTS,
    lists: ResourceLists = NO_RESOURCES,
  ): HeldBack {
    const pin = this.store.get(server);
    const lock = this.lockEntry(server);
    const digests = digestsOf(tools);
    const repeated = duplicateNames(tools);
    const constraints: ToolDigests[] = [];
    if (pin) constraints.push(pinDigests(pin));
    if (lock && lock.tools !== pin?.lockTools) constraints.push(lock.toolDigests);
    const held = Object.keys(digests).filter(
      (name) => repeated.has(name) || constraints.some((c) => c[name] !== digests[name]),
    );
    const heldPrompts = judgePrompts(prompts, pin?.prompts, lock).held;
    const def = this.defOf(server);
    const pinned = { templates: pin?.resourceTemplates, resources: pin?.resources };
    const verdict = judgeResources(lists.templates, lists.resources, pinned, lock, def?.pins?.resources === 'strict');
    const any = held.length || heldPrompts.length || verdict.heldTemplates.length || verdict.heldResources.length;
    if (any && def?.onToolChange === 'quarantine-server') return everything(tools, prompts, lists);
    return {
      tools: new Set(held),
      prompts: new Set(heldPrompts),
      resourceTemplates: new Set(verdict.heldTemplates),
      resources: new Set(verdict.heldResources),
    };
  }

  /**
   * The instructions to serve for `server` given what it says now: held back (undefined) when they
   * differ from the pinned ones, until the operator accepts them with its tools.
   */
  instructions(server: string, text: string | undefined): string | undefined {
    const pinned = this.store.get(server)?.instructions;
    return !pinned || pinned.digest === instructionsDigest(text) ? text : undefined;
  }

  private evaluate(
    server: string,
    tools: readonly Tool[],
    prompts: readonly Prompt[],
    lists: ResourceLists,
    def: ServerDef | undefined,
    lock?: LockEntry,
    live?: LiveServer,
  ): Evaluation {
    const digests = digestsOf(tools);
    const hash = toolSetHash(digests);
    let pin = this.store.get(server);
    if (!pin && (!lock || lock.tools === hash)) {
      // holdFlaggedTools: a tool the scanner flags is left out of the first pin, so it waits for review as a new one.
      const flagged = !lock && def?.holdFlaggedTools ? flaggedTools(tools) : NONE;
      const pinned = flagged.size ? tools.filter((t) => !flagged.has(t.name)) : tools;
      const promptsFit = !lock?.promptDigests || lock.prompts === promptSetHash(promptDigestsOf(prompts).digests);
      // Prompts that differ from the lockfile are not pinned: the lockfile's digests hold them back.
      const fitting = promptsFit ? prompts : NO_PROMPTS;
      const record = pinRecord(pinned, lock ? 'lockfile' : 'first-use', lock, live, fitting, lists);
      if (!promptsFit) delete record.prompts;
      if (!templatesFit(lists.templates, lock)) delete record.resourceTemplates;
      pin = this.store.put(server, record);
      const what = `${pinned.length} tools and ${Object.keys(record.prompts?.definitions ?? {}).length} prompts`;
      this.log(`pinned the ${what} of '${server}' (${lock ? 'as mcp-servers.lock says' : 'first use'})`);
      if (flagged.size)
        this.log(
          `held back ${flagged.size} flagged tool(s) of '${server}' (${[...flagged].join(', ')}): ${reviewCommand(server)}`,
        );
    } else if (pin && live && !pin.instructions) {
      // A pin from before instructions were pinned: the instructions of its first live start join it.
      const { instructions } = pinRecord([], pin.source, undefined, live, NO_PROMPTS, NO_RESOURCES);
      pin = this.store.put(server, { ...pin, instructions });
      this.log(`pinned the instructions of '${server}' (its tools were pinned before instructions were)`);
    }
    const promptHash = promptSetHash(promptDigestsOf(prompts).digests);
    if (pin && !pin.prompts && (!lock?.promptDigests || lock.prompts === promptHash)) {
      // A pin from before prompts were pinned: the first prompt list seen joins it (trust on first use).
      pin = this.store.put(server, { ...pin, prompts: promptPin(prompts, lock?.prompts) });
      this.log(`pinned the ${prompts.length} prompts of '${server}' (its tools were pinned before prompts were)`);
    }
    const strict = def?.pins?.resources === 'strict';
    const seen = pin && resourcesOnFirstSight(pin, lists, lock, strict);
    if (seen) {
      pin = this.store.put(server, seen.record);
      if (seen.templates !== undefined)
        this.log(`pinned the ${seen.templates} resource templates of '${server}' (pinned before templates were)`);
    }
    const promptVerdict = judgePrompts(prompts, pin?.prompts, lock);
    const resourcePins = { templates: pin?.resourceTemplates, resources: pin?.resources };
    const verdict = judgeResources(lists.templates, lists.resources, resourcePins, lock, strict);
    const instructionsChanged =
      live !== undefined &&
      pin?.instructions !== undefined &&
      pin.instructions.digest !== instructionsDigest(live.instructions);
    const constraints: ToolDigests[] = [];
    if (pin) constraints.push(pinDigests(pin));
    // A lockfile entry the operator has not accepted a change against binds as well: it can only add.
    if (lock && lock.tools !== pin?.lockTools) constraints.push(lock.toolDigests);
    const repeated = duplicateNames(tools);
    let held = Object.keys(digests).filter(
      (name) => repeated.has(name) || constraints.some((c) => c[name] !== digests[name]),
    );
    const removed = [...new Set(constraints.flatMap((c) => Object.keys(c)))].filter((n) => !(n in digests)).sort();
    const changed =
      held.length > 0 || removed.length > 0 || instructionsChanged || promptVerdict.changed || verdict.changed;
    let heldPrompts = promptVerdict.held;
    let { heldTemplates, heldResources } = verdict;
    if (changed && def?.onToolChange === 'quarantine-server') {
      const all = everything(tools, prompts, lists);
      held = [...all.tools];
      heldPrompts = [...all.prompts].sort();
      heldTemplates = [...all.resourceTemplates].sort();
      heldResources = [...all.resources].sort();
    }
    const stamp = `${this.store.generation}\0${this.lock.stamp}\0${def?.onToolChange}`;
    const read = this.lock.read;
    const state: PinState = {
      status:
        constraints.length === 0 &&
        !repeated.size &&
        !promptVerdict.bound &&
        !promptVerdict.unfit.size &&
        !verdict.bound &&
        !verdict.changed
          ? 'unpinned'
          : changed
            ? 'changed'
            : 'pinned',
      quarantined: held.sort(),
      removed,
      ...(repeated.size ? { duplicated: [...repeated].sort() } : {}),
      ...(instructionsChanged ? { instructionsChanged } : {}),
      ...(heldPrompts.length ? { quarantinedPrompts: heldPrompts } : {}),
      ...(promptVerdict.removed.length ? { removedPrompts: promptVerdict.removed } : {}),
      ...(heldTemplates.length ? { quarantinedResourceTemplates: heldTemplates } : {}),
      ...(verdict.removedTemplates.length ? { removedResourceTemplates: verdict.removedTemplates } : {}),
      ...(heldResources.length ? { quarantinedResources: heldResources } : {}),
      toolsHash: reviewHash(tools, live, prompts, lists, verdict.heldResources),
      source: pin?.source,
      locked: lock !== undefined,
      ...(read.state === 'invalid' ? { lockfileProblem: read.error } : {}),
    };
    const before = this.latest.get(server)?.state;
    if (changed && !before?.quarantined.length && held.length) {
      this.log(`quarantined ${held.length} tool(s) of '${server}' (${held.join(', ')}): ${reviewCommand(server)}`);
    }
    if (heldPrompts.length && !before?.quarantinedPrompts?.length) {
      const names = heldPrompts.join(', ');
      this.log(`quarantined ${heldPrompts.length} prompt(s) of '${server}' (${names}): ${reviewCommand(server)}`);
    }
    const heldLists = heldTemplates.length + heldResources.length;
    if (heldLists && !before?.quarantinedResourceTemplates?.length && !before?.quarantinedResources?.length) {
      const what = `${heldTemplates.length} resource template(s) and ${heldResources.length} resource(s)`;
      this.log(`quarantined ${what} of '${server}': ${reviewCommand(server)}`);
    }
    if (instructionsChanged && !before?.instructionsChanged) {
      this.log(`held back the changed instructions of '${server}': ${reviewCommand(server)}`);
    }
    const heldBack = {
      tools: held.length ? new Set(held) : NONE,
      prompts: heldPrompts.length ? new Set(heldPrompts) : NONE,
      resourceTemplates: heldTemplates.length ? new Set(heldTemplates) : NONE,
      resources: heldResources.length ? new Set(heldResources) : NONE,
    };
    return { tools, prompts, lists, verdict, stamp, live, held: heldBack, state, pin, lock };
  }

  /** A server's pins for the state; `running`: whether its tool list is live (else only the stored pin counts). */
  state(server: string, running: boolean): PinState {
    const evaluation = this.latest.get(server);
    if (running && evaluation) return evaluation.state;
    const pin = this.store.get(server);
    const read = this.lockfile();
    const locked = read.state === 'read' && read.servers[server] !== undefined;
    return {
      status: pin || locked ? 'pinned' : 'unpinned',
      quarantined: [],
      removed: [],
      ...(pin ? { source: pin.source } : {}),
      locked,
      ...(read.state === 'invalid' ? { lockfileProblem: read.error } : {}),
    };
  }

  private live(server: string): Evaluation {
    const evaluation = this.latest.get(server);
    if (!evaluation) {
      throw new McpFailure(
        ErrorCodes.InvalidParams,
        `'${server}' has not listed its tools since the broker started; start it, then review its tool changes.`,
      );
    }
    return evaluation;
  }

  /** What differs between the pins and the tools the server lists now, tool by tool. */
  changes(server: string, running: boolean): ToolChanges {
    if (!running) {
      throw new McpFailure(
        ErrorCodes.InvalidParams,
        `'${server}' is not running, so its tools cannot be compared with the pins; start it and review again.`,
      );
    }
    const { tools, prompts, lists, verdict, pin, lock, state, live } = this.live(server);
    const digests = digestsOf(tools);
    const repeated = duplicateNames(tools);
    const pinned = pin ? pinDigests(pin) : undefined;
    const lockBinds = lock !== undefined && lock.tools !== pin?.lockTools;
    const changes: ToolChange[] = [];
    const byName = new Map(tools.map((t) => [t.name, t] as const));
    const locked = lockBinds ? Object.keys(lock.toolDigests) : [];
    const names = new Set([...byName.keys(), ...Object.keys(pinned ?? {}), ...locked]);
    for (const name of [...names].sort()) {
      if (repeated.has(name)) {
        const duplicates = tools.filter((t) => t.name === name).map(pinnedDefinition);
        const before = pin?.definitions[name]?.definition;
        changes.push({ tool: name, change: 'duplicated', ...(before ? { before } : {}), duplicates, differsFrom: [] });
        continue;
      }
      const differsFrom: ToolChange['differsFrom'] = [];
      if (pinned && pinned[name] !== digests[name]) differsFrom.push('approval');
      if (lockBinds && lock.toolDigests[name] !== digests[name]) differsFrom.push('lockfile');
      if (!differsFrom.length) continue;
      const tool = byName.get(name);
      const beforeDigest = pinned?.[name] ?? (lockBinds ? lock.toolDigests[name] : undefined);
      const before =
        pin?.definitions[name]?.definition ?? (beforeDigest ? this.knownDefinition(beforeDigest) : undefined);
      const change = !tool ? 'removed' : beforeDigest === undefined ? 'added' : 'changed';
      const findings = tool ? scanTool(tool, { ownTools: [...byName.keys()] }) : [];
      changes.push({
        tool: name,
        change,
        ...(before ? { before } : {}),
        ...(tool ? { after: pinnedDefinition(tool) } : {}),
        differsFrom,
        ...(findings.length ? { findings } : {}),
      });
    }
    const policy = this.defOf(server)?.onToolChange ?? 'quarantine-tools';
    const scanned = live?.instructions ? scanText(live.instructions, 'instructions', {}, true) : [];
    const instructions: InstructionsChange | undefined = state.instructionsChanged
      ? {
          before: pin?.instructions?.text,
          after: live?.instructions ?? null,
          ...(scanned.length ? { findings: scanned } : {}),
        }
      : undefined;
    return {
      server,
      status: state.status,
      policy,
      toolsHash: state.toolsHash ?? toolSetHash(digests),
      changes,
      prompts: promptChanges(prompts, pin?.prompts, lock, (digest) => this.knownDefinition(digest, 'prompts')),
      resourceTemplates: templateChanges(lists.templates, pin?.resourceTemplates, lock, (digest) =>
        this.knownDefinition(digest, 'resourceTemplates'),
      ),
      resources: resourceChanges(lists.resources, pin?.resources, verdict.heldResources),
      ...(instructions ? { instructions } : {}),
    };
  }

  /** The definition behind a digest, if any pin of this root still has it (a lockfile holds digests only). */
  private knownDefinition(
    digest: string,
    kind: 'tools' | 'prompts' | 'resourceTemplates' = 'tools',
  ): PinnedTool | undefined {
    for (const record of this.store.all()) {
      const definitions = kind === 'tools' ? record.definitions : (record[kind]?.definitions ?? {});
      for (const d of Object.values(definitions)) if (d.digest === digest) return d.definition;
    }
    return undefined;
  }

  /**
   * The operator accepts the tools the server lists now as its pin, only if `toolsHash` is the hash
   * of the set they reviewed: a change that came after the review is not accepted with it.
   */
  accept(server: string, toolsHash: string, running: boolean): PinRecord {
    if (!running) {
      const message = `'${server}' is not running; start it and review its tools again.`;
      throw new McpFailure(ErrorCodes.InvalidParams, message);
    }
    const { tools, prompts, lists, verdict, lock, live } = this.live(server);
    if (reviewHash(tools, live, prompts, lists, verdict.heldResources) !== toolsHash) {
      throw new PinMismatch(
        `Not accepted: the tools or prompts of '${server}' changed again after they were shown to you. ` +
          `Review them again (${reviewCommand(server)}) and accept what they are now.`,
      );
    }
    // Without live instructions (cannot happen while it runs) the pinned ones stay as they were.
    const old = this.store.get(server);
    const instructions = live ? {} : { instructions: old?.instructions };
    const accepted = pinRecord(tools, 'accepted', lock, live, prompts, lists, old);
    const record = this.store.put(server, { ...accepted, ...instructions });
    const repeated = duplicateNames(tools);
    const left = repeated.size
      ? ` (${[...repeated].join(', ')} listed more than once: not pinned, still held back)`
      : '';
    this.log(`the operator accepted the tools, prompts and resources of '${server}' as its new pin${left}`);
    return record;
  }
}
