// What the tool, prompt and resource pinning suites share: the rugpull fixture as a registry server,
// a broker with an operator and a write-scoped agent on it, and the real `switchboard` CLI run as a process.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
  connect,
  facade,
  fixture,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

/** A stdio server running the rugpull fixture; `more` adds YAML lines (trust, policy). */
export function rugpullServer(name: string, more: string, extra: string[] = []): string {
  const args = [fixture('rugpull.mjs'), ...extra].map((a) => JSON.stringify(a)).join(', ');
  return `name: ${name}\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${args}]\n${more}`;
}

export function cli(args: string[], home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BROKER_JS, ...args],
      { env: { ...process.env, SWITCHBOARD_HOME: home }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A broker on a registry of rugpull servers, its operator and a write-scoped agent ('writer'). */
export interface PinWorkspace {
  root: string;
  broker: BrokerProcess;
  operator: Client;
  writer: Client;
  /** The writer's client token (for a client of the other SDK line). */
  writerToken: string;
}

/**
 * Starts a broker on `servers` (file name under mcp-servers.d/ → YAML) plus a client `writer` with
 * read and write scopes; `approve` names the servers the operator approves before the suite runs.
 * Resolves once every server is pinned.
 */
export async function pinWorkspace(
  prefix: string,
  servers: Record<string, string>,
  approve: string[],
): Promise<PinWorkspace> {
  const root = tempDir(prefix);
  const files: Record<string, string> = { 'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n' };
  for (const [name, yaml] of Object.entries(servers)) files[`mcp-servers.d/${name}.yaml`] = yaml;
  writeRegistry(root, files);
  const broker = await startBrokerProcess({ root });
  const operator = await connect(broker.url, broker.token);
  const conn = await facade(operator, 'client_connection', { name: 'writer' });
  const writerToken = fs.readFileSync(conn.tokenFile, 'utf8').trim();
  const writer = await connect(broker.url, writerToken, 'writer');
  for (const name of approve) {
    const before = await facade(operator, 'server_status', { name });
    await facade(operator, 'approve_server', { name, hash: before.approvalHash });
  }
  for (const name of Object.keys(servers))
    await pinsWhen(operator, name, (p) => p.status === 'pinned', `${name} pinned`);
  return { root, broker, operator, writer, writerToken };
}

/** The pin state of `server` once `ready` holds. */
export function pinsWhen(
  operator: Client,
  server: string,
  ready: (pins: Record<string, any>) => boolean,
  what: string,
): Promise<Record<string, any>> {
  return waitFor(async () => {
    const s = await facade(operator, 'server_status', { name: server });
    return ready(s.pins) ? s.pins : undefined;
  }, what);
}

/** Makes the rugpull fixture of `server` switch to `variant` (its rug_pull tool). */
export async function rugPull(operator: Client, server: string, variant: string): Promise<void> {
  await operator.callTool({ name: `${server}__rug_pull`, arguments: { variant } });
}
