// Probing a definition that is not saved yet: connect, list what it offers, measure, tear down.
// It is launched exactly as a start would launch it (launch.ts): same environment, sandbox, redaction.
import { readAppPages } from '../catalog/apps/appPages';
import type { ServerDef } from '../../registry/schema';
import { connectUpstream } from '../connection/connect';
import type { UpstreamConnection } from '../connection/connection';
import type { CredentialSource } from '../connection/auth/credentials';
import { planLaunch, type LaunchPlan } from './launchUpstream';
import { LogRing } from '../shared/logRing';
import type { Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';

export interface ProbeResult {
  ok: boolean;
  /** Why it failed, in words a person can act on (command not found, exit code + stderr, HTTP status, timeout). */
  error?: string;
  connectMs?: number;
  listMs?: number;
  serverInfo?: { name?: string; version?: string };
  tools: Tool[];
  /** Its MCP App pages as pin entries (catalog/apps/appPages.ts): `switchboard lock` pins them with the tools. */
  appPages?: Tool[];
  /** Tools left out because the pins hold them back (only in a probe run for a client, not the operator). */
  heldBack?: string[];
  /** Prompts left out because the pins hold them back (the same). */
  heldBackPrompts?: string[];
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  stderrTail: string[];
}

/** What the operator has approved of a definition, as `Approvals.status(def)` says. */
type ApprovalStatus = 'not-needed' | 'approved' | 'required' | 'changed';

/**
 * Why a client that is not the operator may not probe this definition, or undefined when it may.
 * A probe runs the definition, so it is allowed only for what the operator would let start anyway:
 * a community definition approved exactly as it is, or a trusted/builtin one identical to the saved
 * definition of that name. Anything else would let an agent run code the operator never saw.
 */
export function whyProbeIsRefused(
  def: ServerDef,
  saved: ServerDef | undefined,
  approval: ApprovalStatus,
): string | undefined {
  const ask =
    `Save it with switchboard__upsert_server and ask the operator to review and approve '${def.name}' ` +
    '(Approve in the Servers view, or `switchboard approve`), or ask the operator to probe it from the console.';
  if (def.trust === 'community') {
    if (approval === 'approved') return undefined;
    const state =
      approval === 'changed' ? 'differs from the one the operator approved' : 'has not been approved by the operator';
    return `Probing runs the server, and this definition of '${def.name}' ${state}. ${ask}`;
  }
  if (saved && canonical(saved) === canonical(def)) return undefined;
  const what = saved
    ? `differs from the saved ${saved.trust} definition of '${def.name}'`
    : `is ${def.trust} but not in the registry`;
  const rule = `only the operator may run a ${def.trust} definition that is not saved`;
  return `Probing runs the server, and this definition ${what}; ${rule}. ${ask}`;
}

/** JSON with sorted keys, so two parses of the same definition compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  });
}

const ignored = {
  toolsChanged() {},
  promptsChanged() {},
  resourcesChanged() {},
  resourceUpdated() {},
  log() {},
  lost() {},
};

export async function probeServer(
  def: ServerDef,
  root: string,
  timeoutMs = 15_000,
  credentials?: CredentialSource,
): Promise<ProbeResult> {
  const logs = new LogRing(200);
  const empty = { tools: [], prompts: [], resources: [], resourceTemplates: [] };
  let plan: LaunchPlan;
  try {
    const onNetworkRefused = (r: { host: string; port: number }): void =>
      logs.push(`network: refused ${r.host}:${r.port} (not in this server's network allow-list)`);
    plan = planLaunch(def, root, { onNetworkRefused, credentials });
  } catch (err) {
    return { ok: false, error: (err as Error).message, ...empty, stderrTail: [] };
  }
  const redact = (s: string): string => plan.redactor.redact(s);
  const tail = (): string[] => logs.tail(20).map((l) => redact(l.text));
  const t0 = performance.now();
  let client: UpstreamConnection | undefined;
  try {
    client = await connectUpstream(plan.launch, ignored, logs, Math.min(timeoutMs, def.timeouts.startupMs));
    const t1 = performance.now();
    const [tools, prompts, resources, resourceTemplates] = await Promise.all([
      client.listTools(timeoutMs),
      client.listPrompts(timeoutMs),
      client.listResources(timeoutMs),
      client.listResourceTemplates(timeoutMs),
    ]);
    const appPages = await readAppPages(tools, resources, (uri) =>
      client!.request('resources/read', { uri }, { timeoutMs }),
    );
    const t2 = performance.now();
    return {
      ok: true,
      ...(appPages.length ? { appPages } : {}),
      connectMs: round(t1 - t0),
      listMs: round(t2 - t1),
      serverInfo: { name: client.info.serverName, version: client.info.serverVersion },
      tools,
      prompts,
      resources,
      resourceTemplates,
      stderrTail: tail(),
    };
  } catch (err) {
    return {
      ok: false,
      error: redact((err as Error).message),
      connectMs: round(performance.now() - t0),
      ...empty,
      stderrTail: tail(),
    };
  } finally {
    await client?.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
