// Probing a definition that is not saved yet: connect, list what it offers, measure, tear down.
import * as path from 'node:path';
import type { ServerDef } from '../registry/schema';
import { buildEnvironment } from './environment';
import { LogRing } from './logRing';
import type { Prompt, Resource, ResourceTemplate, Tool } from './mcpTypes';
import { UpstreamClient, type UpstreamLaunch } from './upstreamClient';

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

export async function probeServer(def: ServerDef, root: string, timeoutMs = 15_000): Promise<ProbeResult> {
  const logs = new LogRing(200);
  const empty = { tools: [], prompts: [], resources: [], resourceTemplates: [] };
  let launch: UpstreamLaunch;
  let secrets: string[] = [];
  try {
    if (def.transport === 'stdio') {
      const built = buildEnvironment({ root, env: def.env, envFile: def.envFile, grants: def.grants });
      secrets = built.secretValues;
      launch = { transport: 'stdio', command: def.command!, args: def.args, cwd: def.cwd ? path.resolve(root, def.cwd) : root, env: built.env };
    } else {
      launch = { transport: def.transport, url: def.url!, headers: def.headers };
      secrets = Object.values(def.headers);
    }
  } catch (err) {
    return { ok: false, error: (err as Error).message, ...empty, stderrTail: [] };
  }
  const redact = (s: string): string => secrets.reduce((acc, v) => (v.length >= 4 ? acc.split(v).join('[redacted]') : acc), s);
  const t0 = performance.now();
  let client: UpstreamClient | undefined;
  try {
    client = await UpstreamClient.connect(launch, {
      toolsChanged() {}, promptsChanged() {}, resourcesChanged() {}, resourceUpdated() {}, log() {}, lost() {},
    }, logs, Math.min(timeoutMs, def.timeouts.startupMs));
    const t1 = performance.now();
    const [tools, prompts, resources, resourceTemplates] = await Promise.all([
      client.listTools(timeoutMs), client.listPrompts(timeoutMs), client.listResources(timeoutMs), client.listResourceTemplates(timeoutMs),
    ]);
    const t2 = performance.now();
    return {
      ok: true,
      connectMs: round(t1 - t0),
      listMs: round(t2 - t1),
      serverInfo: { name: client.info.serverName, version: client.info.serverVersion },
      tools, prompts, resources, resourceTemplates,
      stderrTail: logs.tail(20).map((l) => redact(l.text)),
    };
  } catch (err) {
    return { ok: false, error: redact((err as Error).message), connectMs: round(performance.now() - t0), ...empty, stderrTail: logs.tail(20).map((l) => redact(l.text)) };
  } finally {
    await client?.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
