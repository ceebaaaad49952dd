// The operator's approvals, kept per user outside the workspace: of community servers, and the
// one-time acceptance of the servers a workspace marks trusted or builtin (a workspace file can
// request a tier, never grant it). An approval is bound to the hash of the whole normalised
// definition (approvalMaterial.ts): change anything that decides what runs and it no longer counts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServerDef } from '../../registry/schema';
import {
  changedFields,
  describeChange,
  fieldDigests,
  hashOfDigests,
  normalizeForApproval,
  readEnvFileDigest,
  type ApprovalField,
} from './approvalMaterial';
import { approvalLines, approvalSummaryText, withoutEnvValues, type ApprovalLine } from './approvalSummary';
import { readOrCreateToken, rootId } from '../shared/userState';
import { writePrivateFile } from '../shared/privateFiles';

export interface ApprovalEntry {
  hash: string;
  approvedAt: string;
  /** What was approved, for the operator to read back; env and header values never appear. */
  summary: string;
  /** One digest per field, so a later change can be named ("its working directory changed"). */
  fields?: Partial<Record<ApprovalField, string>>;
}

export type ApprovalStatus = 'not-needed' | 'approved' | 'required' | 'changed';

/** Where a definition stands, with the hash and lines the operator is shown. */
export interface ApprovalCheck {
  status: ApprovalStatus;
  hash: string;
  lines: ApprovalLine[];
  /** For `changed`: the fields that differ from what was approved. */
  changed: ApprovalField[];
}

export class ApprovalMismatch extends Error {}

interface ApprovalFile {
  version: 1;
  approvals: Record<string, ApprovalEntry>;
}

export interface ApprovalsOptions {
  /** The operator accepted the workspace's trusted/builtin servers for this run (`--accept-workspace-trust`). */
  acceptWorkspaceTrust?: boolean;
  /** false: the administrator's policy does not honour a workspace's trusted/builtin (acceptWorkspaceTrust then counts for nothing). */
  workspaceTrustHonoured?: () => boolean;
}

/** What one definition is now: its per-field digests, hash and the lines shown for it. */
interface Evaluated {
  digests: Record<ApprovalField, string>;
  hash: string;
  lines: ApprovalLine[];
}

/** How many shown hashes are remembered, to say which fields changed when a stale one comes back. */
const SHOWN_LIMIT = 512;

export class Approvals {
  private data: ApprovalFile;
  private readonly rootKey: string;
  private readonly shown = new Map<string, Record<ApprovalField, string>>();
  /** The per-user key of the digests (next to the approvals, mode 0600). */
  private readonly key: string;

  constructor(
    private readonly file: string,
    private readonly root: string,
    private readonly opts: ApprovalsOptions = {},
  ) {
    this.rootKey = rootId(root);
    this.key = readOrCreateToken(path.join(path.dirname(file), 'approvals.key'));
    this.data = this.read();
  }

  private read(): ApprovalFile {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as ApprovalFile;
      if (parsed && typeof parsed.approvals === 'object') return parsed;
    } catch {
      /* first use */
    }
    return { version: 1, approvals: {} };
  }

  private entryKey(name: string): string {
    return `${this.rootKey}/${name}`;
  }

  private evaluate(def: ServerDef): Evaluated {
    const envFile = readEnvFileDigest(this.root, def.envFile);
    const digests = fieldDigests(normalizeForApproval(def, this.root, envFile), this.key);
    const hash = hashOfDigests(digests);
    this.shown.delete(hash);
    this.shown.set(hash, digests);
    if (this.shown.size > SHOWN_LIMIT) this.shown.delete(this.shown.keys().next().value!);
    return { digests, hash, lines: approvalLines(def, this.root, envFile) };
  }

  /** Whether the operator must approve (community) or accept (workspace-trusted) this definition. */
  private needsOperator(def: ServerDef): boolean {
    return (
      def.trust === 'community' || !this.opts.acceptWorkspaceTrust || this.opts.workspaceTrustHonoured?.() === false
    );
  }

  check(def: ServerDef): ApprovalCheck {
    const now = this.evaluate(def);
    if (!this.needsOperator(def)) return { status: 'not-needed', hash: now.hash, lines: now.lines, changed: [] };
    // Another process (the CLI's `approve`) may have written the file since we read it.
    this.data = this.read();
    const entry = this.data.approvals[this.entryKey(def.name)];
    if (!entry) return { status: 'required', hash: now.hash, lines: now.lines, changed: [] };
    if (entry.hash === now.hash) return { status: 'approved', hash: now.hash, lines: now.lines, changed: [] };
    return { status: 'changed', hash: now.hash, lines: now.lines, changed: changedFields(entry.fields, now.digests) };
  }

  status(def: ServerDef): ApprovalStatus {
    return this.check(def).status;
  }

  hashOf(def: ServerDef): string {
    return this.evaluate(def).hash;
  }

  /**
   * Records the approval of `def` as it is now, only if that is what the operator was shown:
   * `shownHash` must equal its hash, or the definition changed in between and must be reviewed again.
   */
  approve(def: ServerDef, shownHash: string): ApprovalEntry {
    const now = this.evaluate(def);
    if (shownHash !== now.hash) {
      const before = this.shown.get(shownHash);
      const what = before
        ? describeChange(changedFields(before, now.digests))
        : 'its definition is not the one that was shown';
      throw new ApprovalMismatch(
        `Not approved: '${def.name}' changed after it was shown to you (${what}). ` +
          'Review it again and approve what it is now.',
      );
    }
    this.data = this.read();
    const entry: ApprovalEntry = {
      hash: now.hash,
      approvedAt: new Date().toISOString(),
      summary: approvalSummaryText(withoutEnvValues(now.lines)),
      fields: now.digests,
    };
    this.data.approvals[this.entryKey(def.name)] = entry;
    writePrivateFile(this.file, JSON.stringify(this.data, null, 2) + '\n');
    return entry;
  }

  revoke(name: string): boolean {
    this.data = this.read();
    // `delete` answers true for a key that was never there: ask first, so "revoked" means it was approved.
    const key = this.entryKey(name);
    if (!Object.hasOwn(this.data.approvals, key)) return false;
    delete this.data.approvals[key];
    writePrivateFile(this.file, JSON.stringify(this.data, null, 2) + '\n');
    return true;
  }
}

/** Why a definition waits for the operator, in words that say what to do. */
export function awaitingReason(def: ServerDef, check: ApprovalCheck): string | undefined {
  const workspace = def.trust !== 'community';
  if (check.status === 'required') {
    return workspace
      ? `this workspace marks it ${def.trust}; accept the workspace's ${def.trust} servers once to start it`
      : "a community server needs the operator's approval before it runs";
  }
  if (check.status === 'changed') {
    const what = describeChange(check.changed);
    return workspace
      ? `${what} since you accepted this workspace's ${def.trust} servers; review it and accept it again`
      : `${what} since it was approved; review it and approve it again`;
  }
  return undefined;
}
