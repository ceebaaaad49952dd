// The operator's approvals of community servers, kept per user outside the workspace. An approval
// is bound to what makes a server dangerous: change any of it and the approval no longer counts.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import type { ServerDef } from '../registry/schema';
import { writePrivateFile } from './runtime';

export function approvalHash(def: ServerDef): string {
  const material = {
    transport: def.transport,
    command: def.command ?? null,
    args: def.args,
    url: def.url ?? null,
    envKeys: Object.keys(def.env).sort(),
    envFile: def.envFile ?? null,
    headerKeys: Object.keys(def.headers).sort(),
    grants: [...def.grants].sort(),
  };
  return crypto.createHash('sha256').update(JSON.stringify(material)).digest('hex');
}

export interface ApprovalEntry {
  hash: string;
  approvedAt: string;
  /** What was approved, for the operator to read back; never env values. */
  summary: string;
}

export type ApprovalStatus = 'not-needed' | 'approved' | 'required' | 'changed';

interface ApprovalFile {
  version: 1;
  approvals: Record<string, ApprovalEntry>;
}

export function describeForApproval(def: ServerDef): string {
  const target = def.transport === 'stdio' ? [def.command, ...def.args].join(' ') : `${def.transport} ${def.url}`;
  return `${target} | grants: ${def.grants.length ? def.grants.join(', ') : 'none'}${Object.keys(def.env).length ? ` | env: ${Object.keys(def.env).join(', ')}` : ''}`;
}

export class Approvals {
  private data: ApprovalFile;

  constructor(private readonly file: string, private readonly rootId: string) {
    this.data = this.read();
  }

  private read(): ApprovalFile {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as ApprovalFile;
      if (parsed && typeof parsed.approvals === 'object') return parsed;
    } catch { /* first use */ }
    return { version: 1, approvals: {} };
  }

  private key(name: string): string {
    return `${this.rootId}/${name}`;
  }

  status(def: ServerDef): ApprovalStatus {
    if (def.trust !== 'community') return 'not-needed';
    // Another process (the CLI's `approve`) may have written the file since we read it.
    this.data = this.read();
    const entry = this.data.approvals[this.key(def.name)];
    if (!entry) return 'required';
    return entry.hash === approvalHash(def) ? 'approved' : 'changed';
  }

  approve(def: ServerDef): ApprovalEntry {
    this.data = this.read();
    const entry = { hash: approvalHash(def), approvedAt: new Date().toISOString(), summary: describeForApproval(def) };
    this.data.approvals[this.key(def.name)] = entry;
    writePrivateFile(this.file, JSON.stringify(this.data, null, 2) + '\n');
    return entry;
  }

  revoke(name: string): boolean {
    this.data = this.read();
    const had = delete this.data.approvals[this.key(name)];
    if (had) writePrivateFile(this.file, JSON.stringify(this.data, null, 2) + '\n');
    return had;
  }
}
