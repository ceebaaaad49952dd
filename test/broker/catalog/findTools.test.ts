// Tool search end to end: find_tools over real upstreams (fixtures and npm servers), toolMode search
// growing one session's list only, call_tool under the same checks as a direct call, and the
// tool-definition token counts in the state — real broker process, real SDK clients over HTTP.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  REPO,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  auditEntries,
} from '../../helpers/broker';

type Json = Record<string, any>;

/** A server from npm (devDependencies), run with this Node straight from node_modules. */
function npmServer(name: string, pkg: string, args: string[], more = ''): string {
  const bin = path.join(REPO, 'node_modules', '@modelcontextprotocol', pkg, 'dist', 'index.js');
  const argList = [bin, ...args].map((a) => JSON.stringify(a)).join(', ');
  return `name: ${name}\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\nargs: [${argList}]\n${more}`;
}

async function facade(client: Client, tool: string, args: Json = {}): Promise<Json> {
  const result = await client.callTool({ name: `switchboard__${tool}`, arguments: args });
  if (result.isError) throw new Error(textOf(result));
  return result.structuredContent as Json;
}

/** What a call answered: its text, or the error it was refused with. */
function outcome(call: Promise<unknown>): Promise<string> {
  return call.then(
    (r) => textOf(r),
    (err: Error) => err.message,
  );
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

/** A client that counts the tools/list_changed notifications it receives. */
async function counting(url: string, token: string, name: string): Promise<{ client: Client; changed: () => number }> {
  const client = await connect(url, token, name);
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
  return { client, changed: () => changed };
}

describe('tool search (find_tools, toolMode search, call_tool, tokens)', function () {
  this.timeout(120_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  const clients: Client[] = [];
  const tokens = new Map<string, string>();

  before(async () => {
    root = tempDir('sb-search-');
    const files = tempDir('sb-search-files-');
    fs.writeFileSync(path.join(files, 'notes.txt'), 'hello from the search test\n');
    // Outside the registry root: the sandbox shows it to these two servers only with the grant.
    const filesGrant = `grants: [filesystem]\nfilesystem:\n  write: [${JSON.stringify(files)}]\n`;
    writeRegistry(root, {
      'mcp-servers.d/many.yaml': fixtureServer('many', 'many-tools.mjs', ['--count', '50']),
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/everything.yaml': npmServer('everything', 'server-everything', ['stdio']),
      'mcp-servers.d/memory.yaml': npmServer(
        'memory',
        'server-memory',
        [],
        'description: Knowledge graph memory\n' +
          `env:\n  MEMORY_FILE_PATH: ${JSON.stringify(path.join(files, 'memory.jsonl'))}\n` +
          filesGrant,
      ),
      'mcp-servers.d/filesystem.yaml': npmServer('filesystem', 'server-filesystem', [files], filesGrant),
      // Read-only, in search mode, with a profile that hides writing files and half of many's tools.
      'clients.d/seeker.yaml':
        'name: seeker\nmcp_allow: [read]\ntoolMode: search\npinnedTools: ["memory__read_graph"]\n' +
        'tools:\n  deny: ["filesystem__write_file", "many__tool_002*"]\n',
      'clients.d/lister.yaml': 'name: lister\nmcp_allow: [read]\n',
      'clients.d/blind.yaml': 'name: blind\nmcp_allow: []\ntoolMode: search\n',
    });
    broker = await startBrokerProcess({ root });
    operator = await connect(broker.url, broker.token, 'operator');
    await waitFor(
      async () =>
        (await facade(operator, 'list_servers')).servers.filter((s: Json) => s.state === 'running').length === 5,
      'five running servers',
      60_000,
    );
    for (const name of ['seeker', 'lister', 'blind']) {
      const { tokenFile } = await facade(operator, 'client_connection', { name });
      tokens.set(name, fs.readFileSync(tokenFile, 'utf8').trim());
    }
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  async function session(name: string) {
    const s = await counting(broker.url, tokens.get(name)!, name);
    clients.push(s.client);
    return s;
  }

  it('ranks real tools by what they do and says why they matched', async () => {
    const { client } = await session('lister');
    const found = await facade(client, 'find_tools', { query: 'read the contents of a text file' });
    assert.equal(found.query, 'read the contents of a text file');
    const top = found.tools[0];
    assert.equal(top.name, 'filesystem__read_text_file');
    assert.equal(top.server, 'filesystem');
    assert.match(top.description, /^Read the complete contents of a file/);
    assert.ok(top.matched.name.includes('read') && top.matched.description.includes('text'), JSON.stringify(top));
    assert.match(top.why, /name: .*read/);
    // The text a model reads is one line per tool, not indented JSON.
    const text = textOf(await client.callTool({ name: 'switchboard__find_tools', arguments: { query: 'sum' } }));
    assert.match(text.split('\n')[0], /^everything__get-sum: Returns the sum of two numbers \(matched /);
    const graph = await facade(client, 'find_tools', { query: 'knowledge graph relations', limit: 3 });
    assert.equal(graph.tools.length, 3);
    assert.ok(
      graph.tools.every((t: Json) => t.server === 'memory'),
      JSON.stringify(graph.tools),
    );
    // The server's description is searched too: "memory" is in no memory tool's own text.
    const byServer = await facade(client, 'find_tools', { query: 'memory', limit: 25 });
    assert.ok(byServer.tools.some((t: Json) => t.name === 'memory__open_nodes' && t.matched.server));
  });

  it('search mode: a session starts with facade and pinned tools; find_tools adds to that session only', async () => {
    const a = await session('seeker');
    const b = await session('seeker');
    const startA = await toolNames(a.client);
    assert.ok(startA.includes('switchboard__find_tools') && startA.includes('switchboard__call_tool'));
    assert.ok(startA.includes('memory__read_graph'), 'the pinned tool is listed from the start');
    // Of the broker's own tools, only those its scopes let it call (read, not write or operator).
    assert.ok(startA.includes('switchboard__server_status'));
    assert.ok(!startA.includes('switchboard__restart_server') && !startA.includes('switchboard__approve_server'));
    assert.deepEqual(
      startA.filter((n) => !n.startsWith('switchboard__')),
      ['memory__read_graph'],
    );
    const startB = await toolNames(b.client);
    assert.deepEqual(startB, startA);

    const found = await facade(a.client, 'find_tools', { query: 'list the files in a directory', limit: 3 });
    const names = found.tools.map((t: Json) => t.name);
    assert.ok(names.includes('filesystem__list_directory'), names.join());
    await waitFor(() => a.changed() === 1, "session A's tools/list_changed");
    const afterA = await toolNames(a.client);
    for (const n of names) assert.ok(afterA.includes(n), `${n} added to A`);
    assert.equal(afterA.length, startA.length + names.filter((n: string) => !startA.includes(n)).length);
    // The same search again adds nothing, so it says nothing.
    await facade(a.client, 'find_tools', { query: 'list the files in a directory', limit: 3 });

    // B's list is as it was. Its own search then brings exactly one notification: none was queued
    // for A's search before it (notifications to one session arrive in order).
    assert.deepEqual(await toolNames(b.client), startB);
    await facade(b.client, 'find_tools', { query: 'sum of two numbers', limit: 1 });
    await waitFor(() => b.changed() === 1, "session B's own tools/list_changed");
    const afterB = await toolNames(b.client);
    assert.ok(afterB.includes('everything__get-sum'));
    assert.ok(!afterB.includes('filesystem__list_directory'), "A's finds are not B's");
    assert.equal(a.changed(), 1, 'A heard nothing of B');
    assert.equal(b.changed(), 1);

    // A found tool is a real tool: its schema is listed and a direct call goes through.
    const listed = (await a.client.listTools()).tools.find((t) => t.name === 'filesystem__list_directory')!;
    assert.ok(listed.inputSchema.properties?.path);
    const result = await a.client.callTool({ name: 'filesystem__list_directory', arguments: { path: '.' } });
    assert.ok(!result.isError, textOf(result));
  });

  it("never finds, lists or calls a tool outside the client's profile or scope (also through call_tool)", async () => {
    const { client } = await session('seeker');
    const writing = await facade(client, 'find_tools', { query: 'write file overwrite content', limit: 25 });
    const names = writing.tools.map((t: Json) => t.name);
    assert.ok(names.includes('filesystem__edit_file'), names.join());
    assert.ok(!names.includes('filesystem__write_file'), 'denied by the profile');
    const many = await facade(client, 'find_tools', { query: 'fixture tool', limit: 25 });
    assert.ok(many.tools.length > 0);
    assert.ok(
      many.tools.every((t: Json) => !t.name.startsWith('many__tool_002')),
      'denied by the profile',
    );
    // Scope: no write tool for a read-only client, no operator tool for any client.
    const control = await facade(client, 'find_tools', { query: 'restart approve server client token', limit: 25 });
    const controlNames = control.tools.map((t: Json) => t.name);
    assert.ok(controlNames.includes('switchboard__server_status'), controlNames.join());
    for (const hidden of ['restart_server', 'approve_server', 'client_connection'])
      assert.ok(!controlNames.includes(`switchboard__${hidden}`), hidden);
    assert.ok(!(await toolNames(client)).includes('filesystem__write_file'));

    const refused = await outcome(
      client.callTool({
        name: 'switchboard__call_tool',
        arguments: { name: 'filesystem__write_file', arguments: { path: 'x.txt', content: 'no' } },
      }),
    );
    assert.match(refused, /not in client 'seeker''s tool profile/);
    const operatorOnly = await outcome(
      client.callTool({
        name: 'switchboard__call_tool',
        arguments: { name: 'switchboard__client_connection', arguments: { name: 'seeker' } },
      }),
    );
    assert.match(operatorOnly, /is for the operator only/);
    const writeScope = await outcome(
      client.callTool({
        name: 'switchboard__call_tool',
        arguments: { name: 'switchboard__restart_server', arguments: { name: 'echo' } },
      }),
    );
    assert.match(writeScope, /needs the 'write' scope/);
    const nested = await outcome(
      client.callTool({ name: 'switchboard__call_tool', arguments: { name: 'switchboard__call_tool', arguments: {} } }),
    );
    assert.match(nested, /cannot call itself/);
  });

  it('call_tool calls an allowed tool like a direct call, audited as that call', async () => {
    const { client } = await session('seeker');
    const result = await client.callTool({
      name: 'switchboard__call_tool',
      arguments: { name: 'everything__get-sum', arguments: { a: 2, b: 3 } },
    });
    assert.ok(!result.isError, textOf(result));
    assert.match(textOf(result), /5/);
    const audit = await waitFor(
      () =>
        auditEntries(broker.home, (e) => e.client === 'seeker' && e.server === 'everything' && e.tool === 'get-sum')[0],
      'the audit entry of the call',
    );
    assert.equal(audit.event, 'call');
    assert.equal(audit.outcome, 'ok');
  });

  it('find_tools works from a read-only client and is refused without read', async () => {
    const { client: reader } = await session('lister');
    assert.ok((await facade(reader, 'find_tools', { query: 'echo' })).tools.length > 0);
    const { client: blind } = await session('blind');
    const refused = await outcome(blind.callTool({ name: 'switchboard__find_tools', arguments: { query: 'echo' } }));
    assert.match(refused, /needs the 'read' scope/);
    const bad = await outcome(
      reader.callTool({ name: 'switchboard__find_tools', arguments: { query: 'echo', limit: 0 } }),
    );
    assert.match(bad, /'limit' must be a whole number from 1 to 25/);
  });

  it('toolMode all is unchanged: a lister sees every tool and finding adds nothing', async () => {
    const { client, changed } = await session('lister');
    const before = await toolNames(client);
    assert.ok(before.includes('filesystem__write_file') && before.includes('many__tool_0001'));
    await facade(client, 'find_tools', { query: 'echo' });
    assert.deepEqual(await toolNames(client), before);
    assert.equal(changed(), 0);
  });

  it('puts tool-definition tokens in the state: per server, and per client profile', async () => {
    const state = await waitFor(
      async () => {
        const read = await operator.readResource({ uri: 'switchboard://state' });
        const s = JSON.parse((read.contents[0] as { text: string }).text) as Json;
        return s.servers.every((x: Json) => x.toolTokens > 0) && s.clients.every((c: Json) => c.toolTokens > 0) && s;
      },
      'token counts in the state',
      30_000,
    );
    const server = (name: string) => state.servers.find((s: Json) => s.name === name);
    const client = (name: string) => state.clients.find((c: Json) => c.name === name);
    // 52 listed tools, each well over ten tokens.
    assert.ok(server('many').toolTokens > 52 * 10, String(server('many').toolTokens));
    assert.ok(server('filesystem').toolTokens > server('echo').toolTokens);
    // The lister sees everything (the facade's tools included); the seeker's profile hides some.
    const upstreamTotal = state.servers.reduce((sum: number, s: Json) => sum + s.toolTokens, 0);
    assert.ok(client('lister').toolTokens > upstreamTotal, `${client('lister').toolTokens} vs ${upstreamTotal}`);
    assert.ok(client('seeker').toolTokens < client('lister').toolTokens);
    assert.equal(client('seeker').toolMode, 'search');
    assert.deepEqual(client('seeker').pinnedTools, ['memory__read_graph']);
  });
});
