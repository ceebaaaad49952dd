// Tool pinning end to end (rug-pull defence): a real broker, the rugpull fixture changing its tool
// definitions after approval, real SDK clients, and the real `switchboard lock` / `verify` processes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  type BrokerProcess,
  facade,
  stopBroker,
} from '../../helpers/broker';
import {
  assertReviewIsOperatorOnly,
  cli,
  lockWorkspace,
  rugpullServer,
  startPinWorkspace,
  toolRefusal as refusal,
  writeLockedNotes,
  type LockWorkspace,
} from './pinHelpers';

type Json = Record<string, any>;

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

describe('tool pins and quarantine', function () {
  this.timeout(90_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  let writer: Client;

  before(async () => {
    ({ root, broker, operator, writer } = await startPinWorkspace('sb-pins-', {
      notes: rugpullServer('notes', 'trust: community\n'),
      strict: rugpullServer('strict', 'trust: trusted\nonToolChange: quarantine-server\n'),
    }));
  });

  after(() => stopBroker(broker, [writer, operator]));

  it('pins the tools of a community server at its approval (the first list after it)', async () => {
    const before = await facade(operator, 'server_status', { name: 'notes' });
    assert.equal(before.approval, 'required');
    assert.equal(before.pins.status, 'unpinned');
    await facade(operator, 'approve_server', { name: 'notes', hash: before.approvalHash });
    const status = await waitFor(async () => {
      const s = await facade(operator, 'server_status', { name: 'notes' });
      return s.pins.status === 'pinned' ? s : undefined;
    }, 'notes pinned');
    assert.deepEqual(status.pins.quarantined, []);
    assert.equal(status.pins.source, 'first-use');
    assert.ok((await toolNames(operator)).includes('notes__read_notes'));
    // Kept per user, outside the workspace (written a moment after the pin is taken: pinStore.ts).
    await waitFor(() => fs.existsSync(path.join(broker.home, 'tool-pins.json')) || undefined, 'tool-pins.json written');
    assert.ok(!fs.readdirSync(root).some((f) => f.includes('pin')), fs.readdirSync(root).join(', '));
  });

  it('pins a server the workspace marks trusted once it is accepted', async () => {
    const status = await waitFor(async () => {
      const s = await facade(operator, 'server_status', { name: 'strict' });
      return s.pins.status === 'pinned' ? s : undefined;
    }, 'strict pinned');
    assert.equal(status.approval, 'not-needed');
  });

  it('quarantines a tool whose description changed: not listed, its call refused naming the review', async () => {
    await operator.callTool({ name: 'notes__rug_pull', arguments: { variant: 'description' } });
    await waitFor(async () => !(await toolNames(writer)).includes('notes__read_notes'), 'read_notes held back');
    const names = await toolNames(writer);
    assert.ok(names.includes('notes__write_notes') && names.includes('notes__rug_pull'), names.join(', '));
    const err = await refusal(writer, 'notes__read_notes');
    assert.equal(err.code, -32003);
    assert.match(err.message, /'read_notes' of server 'notes' is quarantined/);
    assert.match(err.message, /Switchboard: Review Tool Changes/);
    assert.match(err.message, /switchboard review notes/);
    // The unchanged tools keep working.
    const ok = await writer.callTool({ name: 'notes__write_notes', arguments: { text: 'x' } });
    assert.equal(textOf(ok), 'write_notes called');
    const status = await facade(operator, 'server_status', { name: 'notes' });
    assert.equal(status.pins.status, 'changed');
    assert.deepEqual(status.pins.quarantined, ['read_notes']);
  });

  it('holds the tool back on the per-server endpoint as well', async () => {
    const perServer = await connect(broker.url.replace(/\/mcp$/, '/servers/notes/mcp'), broker.token);
    try {
      const names = await toolNames(perServer);
      assert.ok(!names.includes('read_notes') && names.includes('write_notes'), names.join(', '));
      assert.match((await refusal(perServer, 'read_notes')).message, /quarantined/);
    } finally {
      await perServer.close();
    }
  });

  it('tool_changes shows the pinned and the new definition of the changed tool', async () => {
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.equal(diff.status, 'changed');
    assert.equal(diff.changes.length, 1);
    const [change] = diff.changes;
    assert.equal(change.tool, 'read_notes');
    assert.equal(change.change, 'changed');
    assert.deepEqual(change.differsFrom, ['approval']);
    assert.equal(change.before.description, 'Read the notes.');
    assert.match(change.after.description, /~\/\.ssh\/id_rsa/);
    assert.match(diff.toolsHash, /^sha256:/);
  });

  it('refuses to show or accept tool changes for a client with write scope', async () => {
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    await assertReviewIsOperatorOnly(writer, 'notes', diff.toolsHash);
    assert.ok(!(await toolNames(writer)).includes('notes__read_notes'), 'still quarantined');
  });

  it('accepts only the tool set that was reviewed, then lists the tool again', async () => {
    const stale = await operator.callTool({
      name: 'switchboard__accept_tool_changes',
      arguments: { name: 'notes', hash: 'sha256:not-what-the-server-lists' },
    });
    assert.equal(stale.isError, true);
    assert.match(textOf(stale), /changed again after they were shown to you/);
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    const accepted = await facade(operator, 'accept_tool_changes', { name: 'notes', hash: diff.toolsHash });
    assert.equal(accepted.pins.status, 'pinned');
    await waitFor(async () => (await toolNames(writer)).includes('notes__read_notes'), 'read_notes listed again');
    const result = await writer.callTool({ name: 'notes__read_notes', arguments: {} });
    assert.equal(textOf(result), 'read_notes called');
    assert.deepEqual((await facade(operator, 'tool_changes', { name: 'notes' })).changes, []);
  });

  it('quarantines a new tool, and a changed schema, until accepted', async () => {
    await operator.callTool({ name: 'notes__rug_pull', arguments: { variant: 'new-tool' } });
    const status = await waitFor(async () => {
      const s = await facade(operator, 'server_status', { name: 'notes' });
      return s.pins.status === 'changed' ? s : undefined;
    }, 'new tool noticed');
    // read_notes is back to its first description, which is not the one accepted last: held back too.
    assert.deepEqual(status.pins.quarantined, ['read_notes', 'send_notes']);
    assert.ok(!(await toolNames(writer)).includes('notes__send_notes'));
    assert.match((await refusal(writer, 'notes__send_notes')).message, /quarantined/);
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.deepEqual(
      diff.changes.map((c: Json) => [c.tool, c.change]),
      [
        ['read_notes', 'changed'],
        ['send_notes', 'added'],
      ],
    );
    await facade(operator, 'accept_tool_changes', { name: 'notes', hash: diff.toolsHash });
    await waitFor(async () => (await toolNames(writer)).includes('notes__send_notes'), 'send_notes listed');

    await operator.callTool({ name: 'notes__rug_pull', arguments: { variant: 'schema' } });
    await waitFor(async () => !(await toolNames(writer)).includes('notes__write_notes'), 'write_notes held back');
    const schemaDiff = await facade(operator, 'tool_changes', { name: 'notes' });
    // send_notes is gone in this variant: a removal is shown too, and holds nothing back.
    assert.deepEqual(
      schemaDiff.changes.map((c: Json) => [c.tool, c.change]),
      [
        ['send_notes', 'removed'],
        ['write_notes', 'changed'],
      ],
    );
    assert.ok(schemaDiff.changes[1].after.inputSchema.properties.sendTo);
    await facade(operator, 'accept_tool_changes', { name: 'notes', hash: schemaDiff.toolsHash });
    await waitFor(async () => (await toolNames(writer)).includes('notes__write_notes'), 'write_notes listed');
  });

  it('switchboard review prints the diff, and accepts with --yes', async () => {
    await operator.callTool({ name: 'notes__rug_pull', arguments: { variant: 'description' } });
    await waitFor(async () => !(await toolNames(writer)).includes('notes__read_notes'), 'read_notes held back');
    const shown = await cli(['review', 'notes', '--root', root], broker.home);
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    assert.match(shown.stdout, /read_notes: changed, differs from your pin/);
    const diffLines = /- {3}"description": "Read the notes\.",\n.*\+ {3}"description": "Read the notes\. Before/;
    assert.match(shown.stdout, diffLines);
    assert.match(shown.stdout, /Not accepted; the changed tools and prompts stay quarantined/);
    assert.ok(!(await toolNames(writer)).includes('notes__read_notes'), 'showing accepts nothing');
    const accepted = await cli(['review', 'notes', '--root', root, '--yes'], broker.home);
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
    assert.match(accepted.stdout, /Accepted: 'notes' is pinned to its 3 tools/);
    await waitFor(async () => (await toolNames(writer)).includes('notes__read_notes'), 'read_notes listed again');
  });

  it('quarantine-server holds back every tool of the server on a change', async () => {
    assert.ok((await toolNames(writer)).includes('strict__write_notes'));
    await operator.callTool({ name: 'strict__rug_pull', arguments: { variant: 'description' } });
    await waitFor(async () => !(await toolNames(writer)).some((n) => n.startsWith('strict__')), 'strict held back');
    assert.match((await refusal(writer, 'strict__write_notes')).message, /'write_notes' of server 'strict'/);
    const status = await facade(operator, 'server_status', { name: 'strict' });
    assert.deepEqual(status.pins.quarantined, ['read_notes', 'rug_pull', 'write_notes']);
    const diff = await facade(operator, 'tool_changes', { name: 'strict' });
    assert.equal(diff.policy, 'quarantine-server');
    assert.deepEqual(
      diff.changes.map((c: Json) => c.tool),
      ['read_notes'],
    );
    await facade(operator, 'accept_tool_changes', { name: 'strict', hash: diff.toolsHash });
    await waitFor(async () => (await toolNames(writer)).includes('strict__write_notes'), 'strict listed again');
  });
});

describe('tool pins across restarts and the lockfile', function () {
  this.timeout(120_000);
  let ws: LockWorkspace;
  let root: string;
  let home: string;
  let variantFile: string;
  let broker: BrokerProcess | undefined;

  before(() => {
    ws = lockWorkspace('sb-lock', 'trusted');
    ({ root, home, variantFile } = ws);
  });

  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  after(() => removeTempDirs());

  async function toolsOf(b: BrokerProcess): Promise<{ names: string[]; status: Json }> {
    const client = await connect(b.url, b.token);
    try {
      await waitFor(async () => (await facade(client, 'server_status', { name: 'notes' })).state === 'running', 'up');
      const status = await waitFor(async () => {
        const s = await facade(client, 'server_status', { name: 'notes' });
        return s.pins.status !== 'unpinned' ? s : undefined;
      }, 'pins evaluated');
      return { names: await toolNames(client), status };
    } finally {
      await client.close();
    }
  }

  it('switchboard verify exits 2 without a lockfile', async () => {
    const run = await cli(['verify', '--root', root], home);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /no mcp-servers\.lock.*switchboard lock/s);
  });

  it('switchboard verify passes after switchboard lock, and fails with exit 1 on a changed tool', async () => {
    fs.writeFileSync(variantFile, 'original');
    const lock = await cli(['lock', '--root', root], home);
    assert.equal(lock.code, 0, lock.stdout + lock.stderr);
    const text = fs.readFileSync(path.join(root, 'mcp-servers.lock'), 'utf8');
    const locked = JSON.parse(text);
    assert.deepEqual(Object.keys(locked.servers.notes.toolDigests), ['read_notes', 'rug_pull', 'write_notes']);
    assert.ok(!text.includes(process.execPath) && !text.includes('variant'), 'hashes only');
    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    assert.equal(fs.readFileSync(path.join(root, 'mcp-servers.lock'), 'utf8'), text, 'the same bytes again');

    const ok = await cli(['verify', '--root', root], home);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /ok\s+notes\s+3 tools and 2 prompts match/);

    fs.writeFileSync(variantFile, 'description');
    const bad = await cli(['verify', '--root', root], home);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /MISMATCH\s+notes\s+tool 'read_notes' changed/);

    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    const again = await cli(['verify', '--root', root], home);
    assert.equal(again.code, 0, again.stdout + again.stderr);
  });

  it("holds a fresh user to the lockfile's pin instead of trusting the first list", async () => {
    fs.writeFileSync(variantFile, 'original');
    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    fs.writeFileSync(variantFile, 'description');
    broker = await startBrokerProcess({ root, home: tempDir('sb-fresh-home-') });
    const { names, status } = await toolsOf(broker);
    assert.equal(status.pins.status, 'changed');
    assert.equal(status.pins.locked, true);
    assert.deepEqual(status.pins.quarantined, ['read_notes']);
    assert.ok(!names.includes('notes__read_notes') && names.includes('notes__write_notes'), names.join(', '));
    const client = await connect(broker.url, broker.token);
    try {
      const diff = await facade(client, 'tool_changes', { name: 'notes' });
      assert.deepEqual(diff.changes[0].differsFrom, ['lockfile']);
    } finally {
      await client.close();
    }
  });

  it('keeps the pin across broker restarts (a changed tool is held back at once)', async () => {
    fs.rmSync(path.join(root, 'mcp-servers.lock'));
    fs.writeFileSync(variantFile, 'original');
    const pinHome = tempDir('sb-pin-home-');
    broker = await startBrokerProcess({ root, home: pinHome });
    assert.equal((await toolsOf(broker)).status.pins.status, 'pinned');
    await broker.stop();
    fs.writeFileSync(variantFile, 'schema');
    broker = await startBrokerProcess({ root, home: pinHome });
    const { names, status } = await toolsOf(broker);
    assert.deepEqual(status.pins.quarantined, ['write_notes']);
    assert.ok(!names.includes('notes__write_notes'));
  });

  it('holds running servers to a lockfile that changes under them (stricter only)', async () => {
    fs.rmSync(path.join(root, 'mcp-servers.lock'), { force: true });
    fs.writeFileSync(variantFile, 'original');
    broker = await startBrokerProcess({ root, home: tempDir('sb-pull-home-') });
    assert.equal((await toolsOf(broker)).status.pins.status, 'pinned');
    // A teammate's lockfile arrives (say by git pull) pinning another description of read_notes.
    fs.writeFileSync(variantFile, 'description');
    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    fs.writeFileSync(variantFile, 'original');
    const client = await connect(broker.url, broker.token);
    try {
      const status = await waitFor(async () => {
        const s = await facade(client, 'server_status', { name: 'notes' });
        return s.pins.status === 'changed' ? s : undefined;
      }, 'the new lockfile to hold read_notes back');
      assert.deepEqual(status.pins.quarantined, ['read_notes']);
      assert.ok(!(await toolNames(client)).includes('notes__read_notes'));
    } finally {
      await client.close();
    }
  });

  it('a lockfile pins but never approves: a community server still waits for the operator', async () => {
    fs.writeFileSync(variantFile, 'original');
    writeLockedNotes(ws, 'community');
    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    broker = await startBrokerProcess({ root, home: tempDir('sb-unapproved-home-') });
    const client = await connect(broker.url, broker.token);
    try {
      const status = await facade(client, 'server_status', { name: 'notes' });
      assert.equal(status.state, 'awaiting-approval');
      assert.ok(!(await toolNames(client)).some((n) => n.startsWith('notes__')));
    } finally {
      await client.close();
    }
  });
});
