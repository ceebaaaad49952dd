// Prompt pinning end to end (the rug pull in a prompt): a real broker, the rugpull fixture changing
// its prompts after approval, real SDK clients (an operator and an agent with write scope), the
// per-server endpoint, and the real `switchboard review` / `lock` / `verify` processes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  facade,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  type BrokerProcess,
  stopBroker,
} from '../../helpers/broker';
import {
  assertReviewIsOperatorOnly,
  cli,
  lockWorkspace,
  pinsWhen,
  pinWorkspace,
  refusalOf,
  rugPull,
  rugpullServer,
  storedPinRecord,
} from './pinHelpers';

type Json = Record<string, any>;

async function promptNames(client: Client): Promise<string[]> {
  return (await client.listPrompts()).prompts.map((p) => p.name);
}

/** The text of a prompt as served. */
async function served(client: Client, name: string): Promise<string> {
  const result = await client.getPrompt({ name, arguments: {} });
  const content = result.messages[0]?.content as { text?: string } | undefined;
  return content?.text ?? '';
}

/** The JSON-RPC error of a prompts/get that must be refused. */
const refusal = (client: Client, name: string) => refusalOf(`${name} was served`, () => served(client, name));

describe('prompt pins and quarantine', function () {
  this.timeout(120_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  let writer: Client;

  async function acceptAsShown(server: string): Promise<Json> {
    const diff = await facade(operator, 'tool_changes', { name: server });
    return facade(operator, 'accept_tool_changes', { name: server, hash: diff.toolsHash });
  }

  before(async () => {
    ({ root, broker, operator, writer } = await pinWorkspace(
      'sb-prompt-pins-',
      {
        notes: rugpullServer('notes', 'trust: community\n'),
        strict: rugpullServer('strict', 'trust: trusted\nonToolChange: quarantine-server\n'),
      },
      ['notes'],
    ));
  });

  after(() => stopBroker(broker, [writer, operator]));

  it('pins the prompts with the tools at approval: unchanged prompts are listed and served', async () => {
    const names = await promptNames(writer);
    assert.ok(names.includes('notes__summarize_notes') && names.includes('notes__plan_day'), names.join(', '));
    assert.equal(await served(writer, 'notes__summarize_notes'), 'summarize_notes: Summarize the notes.');
    const record = await storedPinRecord(broker.home, 'notes');
    assert.deepEqual(Object.keys(record.prompts.definitions).sort(), ['plan_day', 'summarize_notes']);
  });

  it('quarantines a prompt whose description changed: not listed, prompts/get refused naming the review', async () => {
    await rugPull(operator, 'notes', 'prompt-description');
    await waitFor(async () => !(await promptNames(writer)).includes('notes__summarize_notes'), 'prompt held back');
    const err = await refusal(writer, 'notes__summarize_notes');
    assert.equal(err.code, -32003);
    assert.match(err.message, /Prompt 'summarize_notes' of server 'notes' is quarantined/);
    assert.match(err.message, /Switchboard: Review Tool Changes/);
    assert.match(err.message, /switchboard review notes/);
    // The positive control: the unchanged prompt and the tools keep working.
    assert.ok((await promptNames(writer)).includes('notes__plan_day'));
    assert.equal(await served(writer, 'notes__plan_day'), 'plan_day: Plan the day from the notes.');
    assert.ok((await writer.listTools()).tools.some((t) => t.name === 'notes__read_notes'));
    const pins = await pinsWhen(operator, 'notes', (p) => p.status === 'changed', 'notes changed');
    assert.deepEqual(pins.quarantinedPrompts, ['summarize_notes']);
    assert.deepEqual(pins.quarantined, []);
  });

  it('holds the prompt back on the per-server endpoint as well', async () => {
    const perServer = await connect(broker.url.replace(/\/mcp$/, '/servers/notes/mcp'), broker.token);
    try {
      const names = await promptNames(perServer);
      assert.deepEqual(names, ['plan_day']);
      assert.match((await refusal(perServer, 'summarize_notes')).message, /quarantined/);
      assert.equal(await served(perServer, 'plan_day'), 'plan_day: Plan the day from the notes.');
      // A name the server does not list was never pinned: not forwarded.
      assert.match((await refusal(perServer, 'not_listed')).message, /Unknown prompt 'not_listed'/);
    } finally {
      await perServer.close();
    }
  });

  it('tool_changes shows the prompt beside the tools; an agent with write scope can neither see nor accept it', async () => {
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.deepEqual(diff.changes, []);
    assert.equal(diff.prompts.length, 1);
    const [change] = diff.prompts;
    assert.equal(change.prompt, 'summarize_notes');
    assert.equal(change.change, 'changed');
    assert.deepEqual(change.differsFrom, ['approval']);
    assert.equal(change.before.description, 'Summarize the notes.');
    assert.match(change.after.description, /~\/\.ssh\/id_rsa/);
    assert.ok(change.findings?.length, 'the scanner flags the new description');
    await assertReviewIsOperatorOnly(writer, 'notes', diff.toolsHash);
    assert.ok(!(await promptNames(writer)).includes('notes__summarize_notes'), 'still quarantined');
  });

  it('switchboard review shows the prompt diff; accepting lists and serves the prompt again', async () => {
    const shown = await cli(['review', 'notes', '--root', root], broker.home);
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    assert.match(shown.stdout, /prompt summarize_notes: changed, differs from your pin/);
    assert.match(
      shown.stdout,
      /- {3}"description": "Summarize the notes\.",\n.*\+ {3}"description": "Summarize the notes\. Then/,
    );
    assert.match(shown.stdout, /Not accepted; the changed tools and prompts stay quarantined/);
    const accepted = await cli(['review', 'notes', '--root', root, '--yes'], broker.home);
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
    assert.match(accepted.stdout, /Accepted: 'notes' is pinned to its 3 tools and 2 prompts/);
    await waitFor(async () => (await promptNames(writer)).includes('notes__summarize_notes'), 'prompt listed again');
    assert.match(await served(writer, 'notes__summarize_notes'), /Summarize the notes\. Then/);
  });

  it('the accept hash covers the prompts: a prompt that changed after the review is not accepted', async () => {
    await rugPull(operator, 'notes', 'original');
    const first = await pinsWhen(operator, 'notes', (p) => p.status === 'changed', 'back to the first description');
    const reviewed = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.equal(reviewed.toolsHash, first.toolsHash);
    await rugPull(operator, 'notes', 'prompt-argument');
    await pinsWhen(operator, 'notes', (p) => p.toolsHash !== reviewed.toolsHash, 'the argument noticed');
    const stale = await operator.callTool({
      name: 'switchboard__accept_tool_changes',
      arguments: { name: 'notes', hash: reviewed.toolsHash },
    });
    assert.equal(stale.isError, true);
    assert.match(JSON.stringify(stale.content), /tools or prompts of 'notes' changed again after they were shown/);
    assert.ok(!(await promptNames(writer)).includes('notes__summarize_notes'), 'nothing accepted');
    const again = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.deepEqual(again.prompts[0].after.arguments[1], {
      name: 'send_to',
      description: 'where to send it',
      required: true,
    });
    await facade(operator, 'accept_tool_changes', { name: 'notes', hash: again.toolsHash });
    await waitFor(async () => (await promptNames(writer)).includes('notes__summarize_notes'), 'listed after accept');
  });

  it('quarantines a new prompt until accepted', async () => {
    await rugPull(operator, 'notes', 'new-prompt');
    const pins = await pinsWhen(
      operator,
      'notes',
      (p) => p.quarantinedPrompts?.includes('export_notes'),
      'new prompt held',
    );
    // summarize_notes lost the argument accepted last: held back too.
    assert.deepEqual(pins.quarantinedPrompts, ['export_notes', 'summarize_notes']);
    assert.ok(!(await promptNames(writer)).includes('notes__export_notes'));
    assert.match(
      (await refusal(writer, 'notes__export_notes')).message,
      /'export_notes' of server 'notes' is quarantined/,
    );
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    assert.deepEqual(
      diff.prompts.map((c: Json) => [c.prompt, c.change]),
      [
        ['export_notes', 'added'],
        ['summarize_notes', 'changed'],
      ],
    );
    const accepted = await facade(operator, 'accept_tool_changes', { name: 'notes', hash: diff.toolsHash });
    assert.equal(accepted.acceptedPrompts, 3);
    await waitFor(async () => (await promptNames(writer)).includes('notes__export_notes'), 'new prompt listed');
    assert.equal(await served(writer, 'notes__export_notes'), 'export_notes: Export the notes.');
  });

  it('holds back a prompt name listed twice, and accepting cannot take it', async () => {
    await rugPull(operator, 'notes', 'duplicate-prompt');
    await waitFor(async () => !(await promptNames(writer)).includes('notes__summarize_notes'), 'duplicate held');
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    const dup = diff.prompts.find((c: Json) => c.prompt === 'summarize_notes');
    assert.equal(dup.change, 'duplicated');
    assert.equal(dup.duplicates.length, 2);
    await facade(operator, 'accept_tool_changes', { name: 'notes', hash: diff.toolsHash });
    const pins = await pinsWhen(operator, 'notes', (p) => !p.removedPrompts, 'accepted');
    assert.deepEqual(pins.quarantinedPrompts, ['summarize_notes']);
    assert.match((await refusal(writer, 'notes__summarize_notes')).message, /quarantined/);
    assert.equal(await served(writer, 'notes__plan_day'), 'plan_day: Plan the day from the notes.');
  });

  it('holds back a prompt too large to pin, and accepting cannot take it', async () => {
    await rugPull(operator, 'notes', 'huge-prompt');
    await waitFor(async () => !(await promptNames(writer)).includes('notes__plan_day'), 'huge prompt held');
    const diff = await facade(operator, 'tool_changes', { name: 'notes' });
    const big = diff.prompts.find((c: Json) => c.prompt === 'plan_day');
    assert.equal(big.change, 'oversized');
    assert.ok(JSON.stringify(big).length < 2000, 'the review does not carry the huge text');
    await facade(operator, 'accept_tool_changes', { name: 'notes', hash: diff.toolsHash });
    // summarize_notes (listed once again) is accepted; plan_day stays held back.
    await waitFor(async () => (await promptNames(writer)).includes('notes__summarize_notes'), 'summarize accepted');
    assert.ok(!(await promptNames(writer)).includes('notes__plan_day'));
    assert.match((await refusal(writer, 'notes__plan_day')).message, /larger than 32 KB/);
  });

  it('does not pass on a prompts/get answer whose description is not the listed, pinned one', async () => {
    await rugPull(operator, 'notes', 'original');
    const diff = await waitFor(async () => {
      const d = await facade(operator, 'tool_changes', { name: 'notes' });
      return d.prompts.some((c: Json) => c.prompt === 'plan_day' && c.change === 'added') ? d : undefined;
    }, 'the original plan_day listed');
    await facade(operator, 'accept_tool_changes', { name: 'notes', hash: diff.toolsHash });
    await waitFor(async () => (await promptNames(writer)).includes('notes__plan_day'), 'plan_day accepted');
    assert.equal(await served(writer, 'notes__summarize_notes'), 'summarize_notes: Summarize the notes.');
    // The list stays as pinned (no list_changed); only the answer to prompts/get differs.
    await rugPull(operator, 'notes', 'get-differs');
    const err = await refusal(writer, 'notes__summarize_notes');
    assert.equal(err.code, -32003);
    assert.match(err.message, /answered with a description that is not the one it lists/);
    assert.equal(await served(writer, 'notes__plan_day'), 'plan_day: Plan the day from the notes.');
    await rugPull(operator, 'notes', 'original');
  });

  it('quarantine-server holds back every tool and prompt of the server on a prompt change', async () => {
    assert.ok((await promptNames(writer)).includes('strict__plan_day'));
    await rugPull(operator, 'strict', 'prompt-description');
    await waitFor(async () => !(await promptNames(writer)).some((n) => n.startsWith('strict__')), 'strict held');
    const pins = await pinsWhen(operator, 'strict', (p) => p.status === 'changed', 'strict changed');
    assert.deepEqual(pins.quarantinedPrompts, ['plan_day', 'summarize_notes']);
    assert.deepEqual(pins.quarantined, ['read_notes', 'rug_pull', 'write_notes']);
    assert.match((await refusal(writer, 'strict__plan_day')).message, /'plan_day' of server 'strict' is quarantined/);
    await acceptAsShown('strict');
    await waitFor(async () => (await promptNames(writer)).includes('strict__plan_day'), 'strict listed again');
  });
});

describe('prompt pins in the lockfile, and pins from before prompts were pinned', function () {
  this.timeout(120_000);
  let root: string;
  let home: string;
  let variantFile: string;
  let broker: BrokerProcess | undefined;
  let lockPath: string;
  const lockFile = (): string => lockPath;

  before(() => {
    ({ root, home, variantFile, lockFile: lockPath } = lockWorkspace('sb-prompt-lock', 'trusted'));
  });

  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  after(() => removeTempDirs());

  /**
   * The pins of notes once the broker has judged its live lists and `ready` holds for them, the
   * prompts listed and the diff. Until the catalog has judged a running server's lists, server_status
   * reports its stored pin (or lockfile entry) as 'pinned' with no toolsHash: only a state with a
   * toolsHash is a verdict on what the server lists now.
   */
  async function pinsOf(
    b: BrokerProcess,
    ready: (pins: Json) => boolean = () => true,
  ): Promise<{ names: string[]; pins: Json; diff: Json }> {
    const client = await connect(b.url, b.token);
    try {
      const pins = await waitFor(async () => {
        const s = await facade(client, 'server_status', { name: 'notes' });
        return s.state === 'running' && s.pins.toolsHash !== undefined && ready(s.pins) ? s.pins : undefined;
      }, 'pins evaluated');
      return { names: await promptNames(client), pins, diff: await facade(client, 'tool_changes', { name: 'notes' }) };
    } finally {
      await client.close();
    }
  }

  it('switchboard verify fails on a changed prompt, and passes after switchboard lock', async () => {
    fs.writeFileSync(variantFile, 'original');
    const lock = await cli(['lock', '--root', root], home);
    assert.equal(lock.code, 0, lock.stdout + lock.stderr);
    const entry = JSON.parse(fs.readFileSync(lockFile(), 'utf8')).servers.notes;
    assert.deepEqual(Object.keys(entry.promptDigests), ['plan_day', 'summarize_notes']);
    assert.match(entry.prompts, /^sha256:/);
    const ok = await cli(['verify', '--root', root], home);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /ok\s+notes\s+3 tools and 2 prompts match/);

    fs.writeFileSync(variantFile, 'prompt-description');
    const bad = await cli(['verify', '--root', root], home);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /MISMATCH\s+notes\s+prompt 'summarize_notes' changed/);
    fs.writeFileSync(variantFile, 'new-prompt');
    const added = await cli(['verify', '--root', root], home);
    assert.equal(added.code, 1, added.stdout + added.stderr);
    assert.match(added.stdout, /prompt 'export_notes' is new/);

    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    const again = await cli(['verify', '--root', root], home);
    assert.equal(again.code, 0, again.stdout + again.stderr);
  });

  it("holds a fresh user to the lockfile's prompt pins instead of trusting the first list", async () => {
    fs.writeFileSync(variantFile, 'original');
    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    fs.writeFileSync(variantFile, 'prompt-description');
    broker = await startBrokerProcess({ root, home: tempDir('sb-prompt-fresh-') });
    // The first verdict on the live lists, not a later one: a fresh user is never 'pinned' to the changed prompt.
    const { names, pins, diff } = await pinsOf(broker);
    assert.equal(pins.status, 'changed');
    assert.deepEqual(pins.quarantinedPrompts, ['summarize_notes']);
    assert.deepEqual(names, ['notes__plan_day']);
    assert.deepEqual(diff.prompts[0].differsFrom, ['lockfile']);
  });

  it('a lockfile-bound fresh user is never served the changed prompt, from the first list on', async () => {
    fs.writeFileSync(variantFile, 'original');
    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    fs.writeFileSync(variantFile, 'prompt-description');
    broker = await startBrokerProcess({ root, home: tempDir('sb-prompt-watch-') });
    // Lists and gets from the moment the endpoint answers, while the server starts, until the verdict
    // is in and for a few rounds after: every answer the agent side could have seen.
    const client = await connect(broker.url, broker.token);
    const listed: string[][] = [];
    const gets: string[] = [];
    let verdictRounds = 0;
    try {
      while (verdictRounds < 5) {
        const [names, get, status] = await Promise.all([
          promptNames(client),
          served(client, 'notes__summarize_notes').then(
            (text) => `served: ${text}`,
            (err: Error) => `refused: ${err.message}`,
          ),
          facade(client, 'server_status', { name: 'notes' }),
        ]);
        listed.push(names);
        gets.push(get);
        if (status.pins.toolsHash !== undefined) verdictRounds++;
        assert.ok(listed.length < 2000, 'the server was never judged');
      }
    } finally {
      await client.close();
    }
    assert.ok(
      listed.every((names) => !names.includes('notes__summarize_notes')),
      'the changed prompt was listed',
    );
    assert.ok(
      gets.every((g) => g.startsWith('refused')),
      gets.find((g) => g.startsWith('served')),
    );
    // Positive control: the server's prompts were served (its unchanged one is listed), so the lists
    // recorded are of the running server, from the first one the endpoint answered.
    assert.ok(
      listed.some((names) => names.includes('notes__plan_day')),
      'plan_day was never listed',
    );
  });

  it('a lockfile entry from before prompts were locked pins the first prompt list seen', async () => {
    fs.writeFileSync(variantFile, 'original');
    assert.equal((await cli(['lock', '--root', root], home)).code, 0);
    const doc = JSON.parse(fs.readFileSync(lockFile(), 'utf8'));
    delete doc.servers.notes.prompts;
    delete doc.servers.notes.promptDigests;
    fs.writeFileSync(lockFile(), JSON.stringify(doc, null, 2));
    const ok = await cli(['verify', '--root', root], home);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /3 tools match \(prompts not locked\)/);
    fs.writeFileSync(variantFile, 'prompt-description');
    broker = await startBrokerProcess({ root, home: tempDir('sb-prompt-old-lock-') });
    const { names, pins } = await pinsOf(broker);
    assert.equal(pins.status, 'pinned');
    assert.equal(pins.quarantinedPrompts, undefined);
    assert.ok(names.includes('notes__summarize_notes'), names.join(', '));
  });

  it('a pin from before prompts were pinned takes the first prompt list seen, then holds to it', async () => {
    fs.rmSync(lockFile());
    fs.writeFileSync(variantFile, 'original');
    const pinHome = tempDir('sb-prompt-old-pin-');
    broker = await startBrokerProcess({ root, home: pinHome });
    assert.equal((await pinsOf(broker)).pins.status, 'pinned');
    await broker.stop();
    // The pin file as a broker from before prompt pins wrote it.
    const file = path.join(pinHome, 'tool-pins.json');
    const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const record of Object.values(stored.pins) as Json[]) delete record.prompts;
    fs.writeFileSync(file, JSON.stringify(stored));
    broker = await startBrokerProcess({ root, home: pinHome });
    const first = await pinsOf(broker);
    assert.equal(first.pins.status, 'pinned');
    assert.ok(first.names.includes('notes__summarize_notes'));
    await broker.stop();
    const again = JSON.parse(fs.readFileSync(file, 'utf8'));
    const record = Object.values(again.pins)[0] as Json;
    assert.deepEqual(Object.keys(record.prompts.definitions).sort(), ['plan_day', 'summarize_notes']);
    fs.writeFileSync(variantFile, 'prompt-description');
    broker = await startBrokerProcess({ root, home: pinHome });
    const later = await waitFor(async () => {
      const seen = await pinsOf(broker!);
      return seen.pins.quarantinedPrompts ? seen : undefined;
    }, 'the changed prompt held back');
    assert.deepEqual(later.pins.quarantinedPrompts, ['summarize_notes']);
  });
});
