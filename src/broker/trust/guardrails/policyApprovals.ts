// Which guardrail policies are in force: the versions the operator approved, kept per user outside
// the workspace. A policy file is like a server definition: anyone with write access (an agent with
// the write scope, a `git pull`) may propose one, only the operator activates it. Until then the
// version approved before stays in force, also when the file is edited or deleted: an agent that
// edits away a deny rule loosens nothing until the operator approves the edit.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { PolicyDef } from '../../../registry/schema';
import { writePrivateFile } from '../../shared/privateFiles';
import { rootId } from '../../shared/userState';

/**
 * in-force: the file is what was approved. awaiting-approval: a new file, nothing of it in force.
 * changed: the file differs from what was approved, which stays in force. removed: the file is gone,
 * what was approved stays in force until the operator confirms the removal (revoke).
 */
export type PolicyApprovalStatus = 'in-force' | 'awaiting-approval' | 'changed' | 'removed';

interface ApprovedPolicy {
  hash: string;
  approvedAt: string;
  def: PolicyDef;
}

interface PolicyApprovalFile {
  version: 1;
  policies: Record<string, ApprovedPolicy>;
}

/** Key order does not decide a policy's identity. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** What the operator is shown and sends back: a change in between refuses the approval. */
export function policyHash(def: PolicyDef): string {
  return createHash('sha256').update(canonical(def)).digest('hex').slice(0, 32);
}

export class PolicyApprovalMismatch extends Error {}

export class PolicyApprovals {
  private readonly prefix: string;

  constructor(
    private readonly file: string,
    root: string,
  ) {
    this.prefix = `${rootId(root)}/`;
  }

  private read(): PolicyApprovalFile {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as PolicyApprovalFile;
      if (parsed && typeof parsed.policies === 'object') return parsed;
    } catch {
      /* first use */
    }
    return { version: 1, policies: {} };
  }

  /** This workspace's approved policies, by name. */
  approved(): Map<string, ApprovedPolicy> {
    const all = this.read().policies;
    const mine = new Map<string, ApprovedPolicy>();
    for (const [key, entry] of Object.entries(all))
      if (key.startsWith(this.prefix)) mine.set(key.slice(this.prefix.length), entry);
    return mine;
  }

  status(name: string, written: PolicyDef | undefined): PolicyApprovalStatus {
    const approved = this.approved().get(name);
    if (!written) return 'removed';
    if (!approved) return 'awaiting-approval';
    return approved.hash === policyHash(written) ? 'in-force' : 'changed';
  }

  /** Approves the policy as written now, only if that is what the operator was shown. */
  approve(def: PolicyDef, shownHash: string): ApprovedPolicy {
    const hash = policyHash(def);
    if (hash !== shownHash)
      throw new PolicyApprovalMismatch(
        `Not approved: policy '${def.name}' changed after it was shown to you. Review it again and approve what it is now.`,
      );
    const data = this.read();
    const entry = { hash, approvedAt: new Date().toISOString(), def };
    data.policies[this.prefix + def.name] = entry;
    writePrivateFile(this.file, JSON.stringify(data, null, 2) + '\n');
    return entry;
  }

  /** Takes a policy out of force (its file, if any, then waits for approval again). */
  revoke(name: string): boolean {
    const data = this.read();
    // `delete` is true for a key that was never there: ask first.
    const had = Object.prototype.hasOwnProperty.call(data.policies, this.prefix + name);
    delete data.policies[this.prefix + name];
    if (had) writePrivateFile(this.file, JSON.stringify(data, null, 2) + '\n');
    return had;
  }
}
