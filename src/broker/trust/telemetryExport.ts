// Whether the workspace's telemetry.yaml may send the broker's traces and metrics off this machine.
// telemetry.yaml is workspace content: a cloned repository, a pull or an agent's edit can write it,
// and its `endpoint` would otherwise ship every span (tool, prompt and server names, resource URIs,
// client names, timings) to whoever the file names, in every workspace that opens it. A loopback
// endpoint keeps the data on this machine and is used as written; any other needs the operator's
// approval of that exact endpoint for this workspace (`switchboard approve --telemetry`, kept per
// user outside the workspace) or `serve --accept-workspace-trust`; an untrusted workspace never
// exports off the machine. The OTEL_* environment is the operator's own and is not judged here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TelemetryBlock } from '../../registry/telemetryConfig';
import { writePrivateFile } from '../shared/privateFiles';
import { rootId, switchboardHome } from '../shared/userState';

/** The per-user file of approved telemetry.yaml endpoints, by workspace. */
export function telemetryApprovalsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(switchboardHome(env), 'telemetry-approvals.json');
}

/** True for an http(s) URL whose host is a loopback address or `localhost`. */
export function isLoopbackEndpoint(endpoint: string): boolean {
  let host: string;
  try {
    host = new URL(endpoint).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** One way to write an endpoint, so `http://h:4318/` and `http://h:4318` are one approval. */
function normalized(endpoint: string): string {
  return endpoint.trim().replace(/\/+$/, '');
}

interface ApprovalFile {
  version: 1;
  workspaces: Record<string, { endpoint: string; approvedAt: string }>;
}

/** The operator's approvals of telemetry.yaml endpoints, per workspace root. */
export class TelemetryExportApprovals {
  private readonly id: string;

  constructor(
    private readonly file: string,
    root: string,
  ) {
    this.id = rootId(root);
  }

  private read(): ApprovalFile {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as ApprovalFile;
      if (parsed && typeof parsed.workspaces === 'object' && parsed.workspaces) return parsed;
    } catch {
      /* none yet */
    }
    return { version: 1, workspaces: {} };
  }

  /** The endpoint approved for this workspace, if any. */
  approved(): string | undefined {
    return this.read().workspaces[this.id]?.endpoint;
  }

  approve(endpoint: string): void {
    const data = this.read();
    data.workspaces[this.id] = { endpoint: normalized(endpoint), approvedAt: new Date().toISOString() };
    writePrivateFile(this.file, JSON.stringify(data, null, 2) + '\n');
  }

  /** Withdraws this workspace's approval; false when there was none. */
  revoke(): boolean {
    const data = this.read();
    if (!data.workspaces[this.id]) return false;
    delete data.workspaces[this.id];
    writePrivateFile(this.file, JSON.stringify(data, null, 2) + '\n');
    return true;
  }
}

/** How far the operator trusts the workspace for this run of the broker. */
export interface WorkspaceTrustOfRun {
  untrusted: boolean;
  acceptWorkspaceTrust: boolean;
}

/**
 * Where telemetry.yaml's endpoint stands: none (no file or no endpoint), on-this-machine (loopback,
 * used), approved (used), accepted-for-this-run (--accept-workspace-trust, used), awaiting-approval
 * (not used until the operator approves it), untrusted (never used in this run).
 */
export type TelemetryExportStatus =
  'none' | 'on-this-machine' | 'approved' | 'accepted-for-this-run' | 'awaiting-approval' | 'untrusted';

export interface JudgedBlock {
  /** The block to use: as written, or without its endpoint. */
  block?: TelemetryBlock;
  status: TelemetryExportStatus;
  /** The endpoint telemetry.yaml names. */
  endpoint?: string;
  /** The endpoint the operator approved for this workspace, when it is not this one. */
  approvedOther?: string;
  /** Why the endpoint was left out, for the broker's log; absent when it is used. */
  held?: string;
}

/** telemetry.yaml's block as the broker may use it: its endpoint left out unless allowed. */
export function judgeWorkspaceTelemetry(
  root: string,
  block: TelemetryBlock | undefined,
  run: WorkspaceTrustOfRun,
  approvals: TelemetryExportApprovals = new TelemetryExportApprovals(telemetryApprovalsFile(), root),
): JudgedBlock {
  const endpoint = block?.endpoint;
  if (!block || endpoint === undefined) return { block, status: 'none' };
  if (isLoopbackEndpoint(endpoint)) return { block, status: 'on-this-machine', endpoint };
  const withoutEndpoint = { ...block, endpoint: undefined };
  if (run.untrusted) {
    return {
      block: withoutEndpoint,
      status: 'untrusted',
      endpoint,
      held: `telemetry.yaml names ${endpoint} as its export endpoint: not used, the workspace is not trusted`,
    };
  }
  const approved = approvals.approved();
  if (approved === normalized(endpoint)) return { block, status: 'approved', endpoint };
  if (run.acceptWorkspaceTrust) return { block, status: 'accepted-for-this-run', endpoint };
  return {
    block: withoutEndpoint,
    status: 'awaiting-approval',
    endpoint,
    ...(approved ? { approvedOther: approved } : {}),
    held:
      `telemetry.yaml names ${endpoint} as its export endpoint, which is off this machine: nothing is sent ` +
      `there until you approve it${approved ? ` (you approved ${approved}, not this one)` : ''}: ` +
      `switchboard approve --telemetry --root ${root}, or Allow in VS Code`,
  };
}
