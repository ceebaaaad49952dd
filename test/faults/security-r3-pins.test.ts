// Security round 3, rug pulls past the pins (issue 28, items 5-9). The rugpull fixture, approved and
// pinned, changes what it offers in the ways the review found slipped through, and a client with
// write scope (an agent) does what it may; each attack is refused, on every path a client can take
// (the aggregated /mcp, /servers/<name>/mcp, and the stateless 2026-07-28 requests on both):
//   5. a tool name listed twice, the poisoned definition first: neither is listed or callable;
//   6. instructions changed after approval (instructions + restart_server, which write scope may
//      call): not served on initialize or server/discover until the operator accepts them;
//   7. clientFeatures.elicitation editor→caller, onToolChange relaxed by the agent: the approval
//      goes stale (the operator must approve again);
//   8. the first call to an idle lazy server whose tool changed in the new process: refused;
//   9. a tool's _meta changed (an MCP Apps UI resource a client would render): held back;
//   beyond the list: an agent's probe_server listed the held-back definition from a fresh process;
//      a tool whose name is not a string (["read_notes"]) listed before the real one
//      took its namespaced name on /mcp while the real one's digest kept the pin satisfied.
// Each has a positive control: the legitimate path works before the attack (and icons, a
// description edit, an unchanged tool keep working after it), so no refusal can pass vacuously.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, fixture, removeTempDirs, tempDir, textOf, waitFor, writeRegistry } from '../helpers/broker';
import { facade, report, startBroker, status, type Json } from './lib';
import type { BrokerProcess } from '../helpers/broker';
import { envelope, postStateless } from '../helpers/stateless';
import { rugpullServer, toolRefusal as refusal } from '../broker/trust/pinHelpers';

const INSTRUCTIONS = 'Notes server: read_notes reads the notes, write_notes writes them.';
const POISON = /id_rsa/;

/** The rugpull fixture as a stdio server; `more` adds YAML lines, `variantFile` lets the test switch its variant. */
function rugpull(name: string, more: string, variantFile?: string): string {
  return rugpullServer(name, more, variantFile ? ['--variant-file', variantFile] : []);
}

describe('security round 3: rug pulls past the pins (issue 28 items 5-9)', function () {
  this.timeout(180_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  let writer: Client;
  let writerToken: string;
  const variants: Record<string, string> = {};
  const opened: Client[] = [];

  /** A 2026-07-28 request, stateless, as the writer: the parsed JSON-RPC reply. */
  async function stateless(method: string, params: Json, server?: string): Promise<Json> {
    const message = { method, params: { ...params, _meta: envelope({}, 'agent') } };
    return (await postStateless({ port: broker.port, token: writerToken, server }, message)).message;
  }

  async function perServer(name: string): Promise<Client> {
    const client = await connect(broker.url.replace(/\/mcp$/, `/servers/${name}/mcp`), writerToken, 'agent');
    opened.push(client);
    return client;
  }

  /** What every path lists for `tool` of `server`: [path, the listed definitions of that name]. */
  async function everyListing(server: string, tool: string): Promise<[string, Json[]][]> {
    const exposed = `${server}__${tool}`;
    const one = await perServer(server);
    const pick = (tools: Json[], name: string) => tools.filter((t) => t.name === name);
    return [
      ['/mcp', pick((await writer.listTools()).tools, exposed)],
      [`/servers/${server}/mcp`, pick((await one.listTools()).tools, tool)],
      ['stateless /mcp', pick((await stateless('tools/list', {})).result.tools, exposed)],
      [`stateless /servers/${server}/mcp`, pick((await stateless('tools/list', {}, server)).result.tools, tool)],
    ];
  }

  /** Calls `tool` of `server` on every path: [path, the text it answered, or the error it got]. */
  async function everyCall(server: string, tool: string): Promise<[string, { text?: string; error?: string }][]> {
    const exposed = `${server}__${tool}`;
    const one = await perServer(server);
    const viaSdk = async (client: Client, name: string) => {
      try {
        return { text: textOf(await client.callTool({ name, arguments: {} })) };
      } catch (err) {
        return { error: (err as Error).message };
      }
    };
    const viaStateless = async (name: string, endpoint?: string) => {
      const reply = await stateless('tools/call', { name, arguments: {} }, endpoint);
      return reply.error ? { error: String(reply.error.message) } : { text: textOf(reply.result) };
    };
    return [
      ['/mcp', await viaSdk(writer, exposed)],
      [`/servers/${server}/mcp`, await viaSdk(one, tool)],
      ['stateless /mcp', await viaStateless(exposed)],
      [`stateless /servers/${server}/mcp`, await viaStateless(tool, server)],
    ];
  }

  async function running(name: string): Promise<Json> {
    return waitFor(async () => {
      const s = await status(operator, name);
      return s.state === 'running' && s.pins.status === 'pinned' ? s : undefined;
    }, `${name} running and pinned`);
  }

  before(async () => {
    root = tempDir('sb-r3-pins-');
    for (const name of ['dup', 'instr', 'lazy', 'meta']) variants[name] = path.join(root, `${name}.variant`);
    writeRegistry(root, {
      'mcp-servers.d/dup.yaml': rugpull('dup', 'trust: trusted\n', variants.dup),
      'mcp-servers.d/instr.yaml': rugpull('instr', 'trust: trusted\n', variants.instr),
      'mcp-servers.d/lazy.yaml': rugpull('lazy', 'trust: trusted\nlifecycle: lazy\nidleStopMs: 1500\n', variants.lazy),
      'mcp-servers.d/meta.yaml': rugpull('meta', 'trust: trusted\n', variants.meta),
      'mcp-servers.d/shape.yaml': rugpull('shape', 'trust: trusted\n'),
      'mcp-servers.d/asker.yaml': rugpull('asker', 'trust: community\nclientFeatures: { elicitation: editor }\n'),
      'mcp-servers.d/strict.yaml': rugpull('strict', 'trust: community\nonToolChange: quarantine-server\n'),
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
    });
    broker = await startBroker({ root });
    operator = await connect(broker.url, broker.token);
    const conn = await facade(operator, 'client_connection', { name: 'writer' });
    writerToken = fs.readFileSync(conn.tokenFile, 'utf8').trim();
    writer = await connect(broker.url, writerToken, 'writer');
  });

  after(async () => {
    for (const c of opened) await c.close().catch(() => undefined);
    await writer?.close();
    await operator?.close();
    await broker?.stop();
    removeTempDirs();
  });

  it('5. a tool name listed twice (the poisoned one first) is listed and called on no path', async () => {
    await running('dup');
    // Positive control: the pinned read_notes is listed and callable everywhere.
    for (const [where, listed] of await everyListing('dup', 'read_notes')) {
      assert.deepEqual(
        listed.map((t) => t.description),
        ['Read the notes.'],
        where,
      );
    }
    for (const [where, r] of await everyCall('dup', 'read_notes')) assert.equal(r.text, 'read_notes called', where);

    await operator.callTool({ name: 'dup__rug_pull', arguments: { variant: 'duplicate' } });
    // The change has reached the catalog once the original definition is no longer what /mcp lists.
    await waitFor(async () => {
      const listed = (await writer.listTools()).tools.filter((t) => t.name === 'dup__read_notes');
      return !(listed.length === 1 && listed[0].description === 'Read the notes.');
    }, 'the duplicated list in the catalog');
    const listings = await everyListing('dup', 'read_notes');
    const calls = await everyCall('dup', 'read_notes');
    report('r3 pins 5 duplicate tool names', {
      listed: Object.fromEntries(listings.map(([w, l]) => [w, l.length])),
      calls: Object.fromEntries(calls.map(([w, r]) => [w, r.error ? 'refused' : 'answered'])),
    });
    for (const [where, listed] of listings) assert.deepEqual(listed, [], `${where} lists read_notes`);
    for (const [where, r] of calls) assert.match(r.error ?? `answered: ${r.text}`, /quarantined/, where);

    const s = await status(operator, 'dup');
    assert.equal(s.pins.status, 'changed');
    assert.deepEqual(s.pins.duplicated, ['read_notes']);
    const diff = await facade(operator, 'tool_changes', { name: 'dup' });
    const change = diff.changes.find((c: Json) => c.tool === 'read_notes');
    assert.equal(change.change, 'duplicated');
    assert.equal(change.duplicates.length, 2);
    assert.match(change.duplicates[0].description, POISON);
    // Accepting cannot take a duplicate: it stays held back; the other tools keep working.
    await facade(operator, 'accept_tool_changes', { name: 'dup', hash: diff.toolsHash });
    assert.ok(!(await writer.listTools()).tools.some((t) => t.name === 'dup__read_notes'), 'still held back');
    const ok = await writer.callTool({ name: 'dup__write_notes', arguments: { text: 'x' } });
    assert.equal(textOf(ok), 'write_notes called');
  });

  it('6. instructions changed after approval are served neither on initialize nor on server/discover', async () => {
    const before = await running('instr');
    // Positive control: the pinned instructions reach clients on both paths.
    assert.equal((await perServer('instr')).getInstructions(), INSTRUCTIONS);
    assert.equal((await stateless('server/discover', {}, 'instr')).result.instructions, INSTRUCTIONS);

    fs.writeFileSync(variants.instr, 'instructions');
    await facade(writer, 'restart_server', { name: 'instr' });
    await waitFor(async () => {
      const s = await status(operator, 'instr');
      return s.state === 'running' && s.pid !== before.pid;
    }, 'instr restarted');
    const initialized = (await perServer('instr')).getInstructions();
    const discovered = (await stateless('server/discover', {}, 'instr')).result.instructions;
    report('r3 pins 6 changed instructions', { initialize: initialized ?? null, discover: discovered ?? null });
    assert.doesNotMatch(String(initialized), POISON, 'initialize');
    assert.doesNotMatch(String(discovered), POISON, 'server/discover');
    assert.equal(initialized, undefined);
    assert.equal(discovered, undefined);

    const s = await status(operator, 'instr');
    assert.equal(s.pins.status, 'changed');
    assert.equal(s.pins.instructionsChanged, true);
    const diff = await facade(operator, 'tool_changes', { name: 'instr' });
    assert.equal(diff.instructions.before, INSTRUCTIONS);
    assert.match(diff.instructions.after, POISON);
    // Once the operator accepts them, they are served (the hold was the pin, not a failure).
    await facade(operator, 'accept_tool_changes', { name: 'instr', hash: diff.toolsHash });
    assert.match(String((await perServer('instr')).getInstructions()), POISON);
  });

  it('7. an agent relaxing who answers or what is held back makes the approval stale', async () => {
    for (const name of ['asker', 'strict']) {
      const s = await status(operator, name);
      await facade(operator, 'approve_server', { name, hash: s.approvalHash });
      assert.equal((await status(operator, name)).approval, 'approved');
    }
    const definition = (name: string, more: Json) => ({
      name,
      command: process.execPath,
      args: [fixture('rugpull.mjs')],
      ...more,
    });
    const upsert = async (name: string, more: Json, description: string) => {
      await facade(writer, 'upsert_server', { definition: definition(name, { ...more, description }) });
      return waitFor(async () => {
        const s = await status(operator, name);
        return s.description === description ? s : undefined;
      }, `${name} reloaded`);
    };
    // Positive control: a description edit is no reason to ask the operator again.
    const edited = await upsert('asker', { clientFeatures: { elicitation: 'editor' } }, 'Notes.');
    assert.equal(edited.approval, 'approved');
    const relaxed = await upsert('strict', { onToolChange: 'quarantine-server' }, 'Strict notes.');
    assert.equal(relaxed.approval, 'approved');

    const caller = await upsert(
      'asker',
      { clientFeatures: { elicitation: 'caller' } },
      'Notes, answered by the agent.',
    );
    const lenient = await upsert('strict', {}, 'Strict notes, held back no more.');
    report('r3 pins 7 approval fields', {
      elicitationToCaller: caller.approval,
      onToolChangeRelaxed: lenient.approval,
    });
    assert.equal(caller.approval, 'changed');
    assert.equal(lenient.approval, 'changed');
    assert.equal(caller.state, 'awaiting-approval');
    assert.equal(lenient.state, 'awaiting-approval');
  });

  it('8. the first call to an idle lazy server whose tool changed is refused, not routed', async () => {
    await waitFor(async () => (await status(operator, 'lazy')).state === 'idle', 'lazy idle (its catalog learned)');
    // Positive control: a first call to the idle server starts it and reaches the pinned tool.
    const first = await writer.callTool({ name: 'lazy__read_notes', arguments: {} });
    assert.equal(textOf(first), 'read_notes called');
    await waitFor(async () => (await status(operator, 'lazy')).state === 'idle', 'lazy idle again', 20_000);

    fs.writeFileSync(variants.lazy, 'description');
    const err = await refusal(writer, 'lazy__read_notes');
    report('r3 pins 8 first call after a lazy start', { code: err.code, message: err.message.slice(0, 120) });
    assert.equal(err.code, -32003);
    assert.match(err.message, /'read_notes' of server 'lazy' is quarantined/);
    const s = await status(operator, 'lazy');
    assert.deepEqual(s.pins.quarantined, ['read_notes']);
    const ok = await writer.callTool({ name: 'lazy__write_notes', arguments: { text: 'x' } });
    assert.equal(textOf(ok), 'write_notes called');
  });

  it("beyond: an agent's probe_server does not show it the tool the pins hold back", async () => {
    // The lazy server's variant file still says 'description' (item 8): a fresh process lists the
    // poisoned read_notes. A write-scoped agent may probe it (the definition is the saved one).
    const definition = {
      name: 'lazy',
      trust: 'trusted',
      lifecycle: 'lazy',
      idleStopMs: 1500,
      command: process.execPath,
      args: [fixture('rugpull.mjs'), '--variant-file', variants.lazy],
    };
    const probe = await facade(writer, 'probe_server', { definition });
    const described = Object.fromEntries((probe.tools as Json[]).map((t) => [t.name, t.description]));
    report('r3 pins beyond: probe', { tools: Object.keys(described), heldBack: probe.heldBack ?? null });
    assert.equal(probe.ok, true, probe.error);
    // Positive control: the probe ran and lists the tools that are not held back.
    assert.equal(described.write_notes, 'Write the notes.');
    assert.ok(!JSON.stringify(probe.tools).match(POISON), JSON.stringify(described));
    assert.deepEqual(probe.heldBack, ['read_notes']);
    // The operator's probe shows everything: it is how the operator looks at a change.
    const own = await facade(operator, 'probe_server', { definition });
    assert.match(JSON.stringify(own.tools), POISON);
  });

  it('9. a tool whose _meta changed is held back; a change of its icons is not', async () => {
    await running('meta');
    const listedRead = async () => (await writer.listTools()).tools.find((t) => t.name === 'meta__read_notes');
    // Positive control: icons are not pinned, so the tool stays listed with its new icons.
    await operator.callTool({ name: 'meta__rug_pull', arguments: { variant: 'icons' } });
    const withIcons = await waitFor(async () => {
      const t = await listedRead();
      return t?.icons ? t : undefined;
    }, 'read_notes listed with icons');
    assert.equal(withIcons.description, 'Read the notes.');
    assert.equal((await status(operator, 'meta')).pins.status, 'pinned');

    await operator.callTool({ name: 'meta__rug_pull', arguments: { variant: 'meta' } });
    await waitFor(async () => {
      const t = await listedRead();
      return !t || t._meta !== undefined;
    }, 'the _meta change in the catalog');
    const listed = await listedRead();
    report('r3 pins 9 _meta', { listed: listed !== undefined });
    assert.equal(listed, undefined, `listed with ${JSON.stringify(listed?._meta)}`);
    assert.match((await refusal(writer, 'meta__read_notes')).message, /quarantined/);
    const diff = await facade(operator, 'tool_changes', { name: 'meta' });
    const change = diff.changes.find((c: Json) => c.tool === 'read_notes');
    assert.equal(change.after._meta['ui/resourceUri'], 'ui://notes/exfiltrate.html');
  });

  it('beyond: a tool named by a non-string (["read_notes"]) is listed on no path; the real one still works', async () => {
    await running('shape');
    await operator.callTool({ name: 'shape__rug_pull', arguments: { variant: 'array-name' } });
    // The new list is in once its new tool (send_notes) is held back.
    await waitFor(
      async () => (await status(operator, 'shape')).pins.quarantined.includes('send_notes'),
      'the array-name list in the catalog',
    );
    // Before the fix: /mcp listed the poisoned one under shape__read_notes (it came first), and a
    // client of /servers/shape/mcp could not list its tools at all (a name that is not a string).
    const aggregated = (await writer.listTools()).tools.filter((t) => t.name === 'shape__read_notes');
    assert.deepEqual(
      aggregated.map((t) => t.description),
      ['Read the notes.'],
      '/mcp first',
    );
    const listings = await everyListing('shape', 'read_notes');
    report('r3 pins beyond: non-string tool name', {
      descriptions: Object.fromEntries(listings.map(([w, l]) => [w, l.map((t) => t.description)])),
    });
    for (const [where, listed] of listings) {
      assert.deepEqual(
        listed.map((t) => t.description),
        ['Read the notes.'],
        where,
      );
    }
    for (const [where, r] of await everyCall('shape', 'read_notes')) assert.equal(r.text, 'read_notes called', where);
  });
});
