// What the tool, prompt and resource pinning suites (and the faults suite's rug pulls past the pins)
// share: the rugpull fixture as a registry server, a broker with an operator and a write-scoped agent
// on it, a workspace for the lockfile, the refusals and the operator-only review, and the real
// `switchboard` CLI run as a process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BROKER_JS,
  clientToken,
  connect,
  facade,
  fixture,
  startBrokerProcess,
  tempDir,
  textOf,
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
 * read and write scopes. Approves nothing and waits for no pin: for a suite that watches that happen.
 */
export async function startPinWorkspace(prefix: string, servers: Record<string, string>): Promise<PinWorkspace> {
  const root = tempDir(prefix);
  const files: Record<string, string> = { 'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n' };
  for (const [name, yaml] of Object.entries(servers)) files[`mcp-servers.d/${name}.yaml`] = yaml;
  writeRegistry(root, files);
  const broker = await startBrokerProcess({ root });
  const operator = await connect(broker.url, broker.token);
  const writerToken = await clientToken(operator, 'writer');
  const writer = await connect(broker.url, writerToken, 'writer');
  return { root, broker, operator, writer, writerToken };
}

/**
 * startPinWorkspace, then the operator approves the servers `approve` names before the suite runs.
 * Resolves once every server is pinned.
 */
export async function pinWorkspace(
  prefix: string,
  servers: Record<string, string>,
  approve: string[],
): Promise<PinWorkspace> {
  const ws = await startPinWorkspace(prefix, servers);
  const { operator } = ws;
  for (const name of approve) {
    const before = await facade(operator, 'server_status', { name });
    await facade(operator, 'approve_server', { name, hash: before.approvalHash });
  }
  for (const name of Object.keys(servers))
    await pinsWhen(operator, name, (p) => p.status === 'pinned', `${name} pinned`);
  return ws;
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

/**
 * The JSON-RPC error of a request that must be refused. `attempt` makes the request and returns what
 * was served; if it was served, that is an assertion failure saying `what` (`read_notes was called`).
 */
export async function refusalOf(
  what: string,
  attempt: () => Promise<string>,
): Promise<{ code: number; message: string }> {
  try {
    const text = await attempt();
    assert.fail(`${what}: ${text}`);
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    return err as { code: number; message: string };
  }
}

/** The JSON-RPC error of a tool call that must be refused. */
export function toolRefusal(client: Client, name: string): Promise<{ code: number; message: string }> {
  return refusalOf(`${name} was called`, async () => textOf(await client.callTool({ name, arguments: {} })));
}

/** Asserts that a client with write scope (not the operator) can neither see nor accept `server`'s changes. */
export async function assertReviewIsOperatorOnly(writer: Client, server: string, toolsHash: string): Promise<void> {
  for (const [tool, args] of [
    ['accept_tool_changes', { name: server, hash: toolsHash }],
    ['tool_changes', { name: server }],
  ] as const) {
    const err = await writer.callTool({ name: `switchboard__${tool}`, arguments: args }).then(
      () => new Error('called'),
      (e: Error) => e,
    );
    assert.match(err.message, /is for the operator only/, tool);
  }
}

/**
 * The pin record of `server` in the broker's tool-pins.json once `ready` holds for it: the pin state
 * changes before the pin store's write lands on disk.
 */
export function storedPinRecord(
  home: string,
  server: string,
  ready: (record: Record<string, any>) => boolean = () => true,
): Promise<Record<string, any>> {
  return waitFor(() => {
    const pins = JSON.parse(fs.readFileSync(path.join(home, 'tool-pins.json'), 'utf8')).pins as Record<string, any>;
    const found = Object.entries(pins).find(([key]) => key.endsWith(`/${server}`))?.[1] as
      Record<string, any> | undefined;
    return found && ready(found) ? found : undefined;
  }, `the pins of ${server} written to tool-pins.json`);
}

/**
 * A workspace for the lockfile suites: one rugpull server 'notes' whose variant the test sets by writing
 * `variantFile` (so `switchboard lock` / `verify`, run as processes, see it), and a SWITCHBOARD_HOME for them.
 */
export interface LockWorkspace {
  root: string;
  home: string;
  variantFile: string;
  lockFile: string;
}

/** A LockWorkspace in temp dirs named `<prefix>-` and `<prefix>-home-`; `extra` adds fixture arguments. */
export function lockWorkspace(prefix: string, trust: string, extra: string[] = []): LockWorkspace {
  const root = tempDir(`${prefix}-`);
  const ws = {
    root,
    home: tempDir(`${prefix}-home-`),
    variantFile: path.join(root, 'variant.txt'),
    lockFile: path.join(root, 'mcp-servers.lock'),
  };
  writeLockedNotes(ws, trust, extra);
  return ws;
}

/** (Re)writes the 'notes' server of a LockWorkspace with another trust. */
export function writeLockedNotes(ws: LockWorkspace, trust: string, extra: string[] = []): void {
  writeRegistry(ws.root, {
    'mcp-servers.d/notes.yaml': rugpullServer('notes', `trust: ${trust}\n`, [
      ...extra,
      '--variant-file',
      ws.variantFile,
    ]),
  });
}
