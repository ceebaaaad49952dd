// Guardrails, what a tool says about itself (issue 33 item 4), end to end: a real broker, the
// poisoned fixture (SDK) as a stdio child and real SDK clients. The scanner's findings show in the
// state (server_status.scan), in the approval summary, and in Review Tool Changes (tool_changes);
// holdFlaggedTools holds flagged tools back like changed ones until the operator accepts them.
// Positive controls: the clean tool of the same server and a clean server have no findings, and
// a server without the setting serves its flagged tools (shown, not held).
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  facade,
  fixtureServer,
  killStarted,
  removeTempDirs,
  startBrokerProcess,
  status,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

type Json = Record<string, any>;

const names = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);

describe('guardrails: the tool-description scanner', function () {
  this.timeout(120_000);
  let broker: BrokerProcess;
  let op: Client;

  before(async () => {
    const root = tempDir('sb-scan-');
    const rugpull = fixtureServer('notes', 'rugpull.mjs');
    writeRegistry(root, {
      'mcp-servers.d/facts.yaml': fixtureServer('facts', 'poisoned.mjs', ['--poison-instructions']),
      'mcp-servers.d/held.yaml': fixtureServer('held', 'poisoned.mjs', [], 'holdFlaggedTools: true\n'),
      'mcp-servers.d/clean.yaml': fixtureServer('clean', 'echo.mjs'),
      'mcp-servers.d/notes.yaml': rugpull,
    });
    broker = await startBrokerProcess({ root });
    op = await connect(broker.url, broker.token, 'operator-test');
    for (const name of ['facts', 'held', 'clean', 'notes'])
      await waitFor(async () => (await status(op, name)).state === 'running', `${name} to run`, 20_000);
  });

  after(async () => {
    await op?.close().catch(() => undefined);
    await broker?.stop();
    await killStarted();
    removeTempDirs();
  });

  it('finds the poisoned tools, prompt and instructions, with severity, and not the clean ones', async () => {
    const s = await status(op, 'facts');
    assert.ok(s.scan, 'a scan report');
    assert.equal(s.scan.severity, 'high');
    assert.deepEqual([...s.scan.tools].sort(), ['echo_text', 'get_fact']);
    const of = (item: string) => s.scan.findings.filter((f: Json) => f.item === item).map((f: Json) => f.sign);
    assert.ok(of("tool 'get_fact'").includes('model-directive'), JSON.stringify(s.scan.findings));
    assert.ok(of("tool 'get_fact'").includes('credential-access'));
    assert.ok(of("tool 'echo_text'").includes('hidden-text'));
    // The hidden text is shown decoded, so the operator reads what the model would.
    const hidden = s.scan.findings.find((f: Json) => f.item === "tool 'echo_text'" && f.sign === 'hidden-text');
    assert.match(hidden.excerpt, /⟦hidden: Ignore previous instructions/);
    assert.ok(of("prompt 'summary'").includes('exfiltration'));
    assert.ok(of('instructions').includes('credential-access'));
    // Positive control: the clean tool of the same server has none.
    assert.deepEqual(of("tool 'add'"), []);
    // The approval summary names them, with a warning.
    const line = s.approvalItems.find((l: Json) => l.label === "Scanner: tool 'get_fact'");
    assert.ok(line, JSON.stringify(s.approvalItems));
    assert.match(line.warning, /high/);
    assert.match(s.approvalSummary, /Scanner: tool 'echo_text': hidden text/);
    // Without holdFlaggedTools they are shown, not held.
    assert.deepEqual(s.pins.quarantined, []);
    assert.ok((await names(op)).includes('facts__get_fact'));
    // Positive control: a clean server has no report and no scanner lines.
    const clean = await status(op, 'clean');
    assert.equal(clean.scan, undefined);
    assert.ok(!clean.approvalSummary.includes('Scanner'));
  });

  it('holdFlaggedTools: flagged tools held back like changed ones, with findings in the review, until accepted', async () => {
    const s = await status(op, 'held');
    assert.deepEqual(s.pins.quarantined, ['echo_text', 'get_fact']);
    assert.equal(s.pins.status, 'changed');
    const listed = await names(op);
    assert.ok(listed.includes('held__add'), 'the clean tool is served');
    assert.ok(!listed.includes('held__get_fact') && !listed.includes('held__echo_text'), listed.join(', '));
    await assert.rejects(op.callTool({ name: 'held__get_fact', arguments: {} }), /quarantined/);
    const diff = await facade(op, 'tool_changes', { name: 'held' });
    const byTool = Object.fromEntries(diff.changes.map((c: Json) => [c.tool, c]));
    assert.equal(byTool.get_fact.change, 'added');
    assert.ok(byTool.get_fact.findings.some((f: Json) => f.sign === 'credential-access'));
    assert.ok(byTool.echo_text.findings.some((f: Json) => f.sign === 'hidden-text'));
    // The operator reads them and accepts: served from then on.
    await facade(op, 'accept_tool_changes', { name: 'held', hash: diff.toolsHash });
    await waitFor(async () => (await names(op)).includes('held__get_fact'), 'get_fact served after the review');
    assert.equal(textOf(await op.callTool({ name: 'held__get_fact', arguments: {} })), 'Honey never spoils.');
  });

  it('a tool that changes after the pin is scanned: Review Tool Changes shows what it now asks', async () => {
    assert.equal((await status(op, 'notes')).scan, undefined, 'clean before the rug pull');
    await op.callTool({ name: 'notes__rug_pull', arguments: { variant: 'description' } });
    const s = await waitFor(async () => {
      const st = await status(op, 'notes');
      return st.pins.quarantined.includes('read_notes') && st;
    }, 'read_notes held after its change');
    assert.deepEqual(s.scan.tools, ['read_notes']);
    const diff = await facade(op, 'tool_changes', { name: 'notes' });
    const change = diff.changes.find((c: Json) => c.tool === 'read_notes');
    assert.equal(change.change, 'changed');
    assert.ok(
      change.findings.some((f: Json) => f.sign === 'credential-access'),
      JSON.stringify(change),
    );
  });
});
