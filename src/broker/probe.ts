// Probing a definition that is not saved yet: connect, list what it offers, measure, tear down.
// It is launched exactly as a start would launch it (launch.ts): same environment, sandbox, redaction.
import type { ServerDef } from '../registry/schema';
import { connectUpstream, type UpstreamConnection } from './connection/connection';
import { planLaunch, type LaunchPlan } from './launch';
import { LogRing } from './logRing';
import type { Prompt, Resource, ResourceTemplate, Tool } from './mcpTypes';

export interface ProbeResult {
  ok: boolean;
  /** Why it failed, in words a person can act on (command not found, exit code + stderr, HTTP status, timeout). */
  error?: string;
  connectMs?: number;
  listMs?: number;
  serverInfo?: { name?: string; version?: string };
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  stderrTail: string[];
}

const ignored = { toolsChanged() {}, promptsChanged() {}, resourcesChanged() {}, resourceUpdated() {}, log() {}, lost() {} };

export async function probeServer(def: ServerDef, root: string, timeoutMs = 15_000): Promise<ProbeResult> {
  const logs = new LogRing(200);
  const empty = { tools: [], prompts: [], resources: [], resourceTemplates: [] };
  let plan: LaunchPlan;
  try {
    plan = planLaunch(def, root);
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
    const t2 = performance.now();
    return {
      ok: true,
      connectMs: round(t1 - t0),
      listMs: round(t2 - t1),
      serverInfo: { name: client.info.serverName, version: client.info.serverVersion },
      tools, prompts, resources, resourceTemplates,
      stderrTail: tail(),
    };
  } catch (err) {
    return { ok: false, error: redact((err as Error).message), connectMs: round(performance.now() - t0), ...empty, stderrTail: tail() };
  } finally {
    await client?.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
