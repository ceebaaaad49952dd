// Guardrails, oversized results (issue 33 item 3), end to end: a real broker, the echo fixture as a
// stdio child returning what it is sent, and SDK clients with a per-client limit (clients.d
// maxResultBytes / maxResultTokens). Above the limit a client gets the head, a note and a
// switchboard://results/<id> link; its pages put the whole text back together; no other session,
// of the same client or another, can read them. Positive controls: a small result and the
// operator (no limit) get the result whole.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
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
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';

const LIMIT = 4096;
/** 20,000 characters, some of them two and three bytes in UTF-8, so a page must not split one. */
const BIG = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(5, '0')}é€ab`).join('');

describe('guardrails: results over a client limit are cut and paged', function () {
  this.timeout(90_000);
  let broker: BrokerProcess;
  let op: Client;
  const opened: Client[] = [];

  const as = async (client: string): Promise<Client> => {
    const conn = await facade(op, 'client_connection', { name: client });
    const c = await connect(broker.url, fs.readFileSync(conn.tokenFile, 'utf8').trim(), client);
    opened.push(c);
    return c;
  };

  before(async () => {
    const root = tempDir('sb-limits-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'clients.d/agent.yaml': `mcp_allow: [read]\nmaxResultBytes: ${LIMIT}\n`,
      'clients.d/other.yaml': `mcp_allow: [read]\nmaxResultBytes: ${LIMIT}\n`,
      'clients.d/counted.yaml': 'mcp_allow: [read]\nmaxResultTokens: 1000\n',
    });
    broker = await startBrokerProcess({ root });
    op = await connect(broker.url, broker.token, 'operator-test');
    await waitFor(async () => (await status(op, 'echo')).state === 'running', 'echo to run', 20_000);
  });

  after(async () => {
    for (const c of opened) await c.close().catch(() => undefined);
    await op?.close().catch(() => undefined);
    await broker?.stop();
    await killStarted();
    removeTempDirs();
  });

  it('over the limit: the head, a note and a link whose pages hold the whole text, for that session only', async () => {
    const agent = await as('agent');
    // Listed first, as an agent does: the SDK client then checks results against echo's outputSchema.
    assert.ok((await agent.listTools()).tools.some((t) => t.name === 'echo__echo' && t.outputSchema));
    const result = await agent.callTool({ name: 'echo__echo', arguments: { text: BIG } });
    // Its structured content ({text}) is as large as the text: dropped, so the result is marked an error, and says why.
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent, undefined);
    const content = result.content as { type: string; text?: string; uri?: string }[];
    const [head, note, link] = content;
    assert.equal(head.type, 'text');
    assert.ok(Buffer.byteLength(head.text!) <= LIMIT, `head of ${Buffer.byteLength(head.text!)} bytes`);
    assert.ok(head.text!.startsWith('echo: 00000é€ab'));
    assert.match(
      note.text!,
      /cut to its first 4096 bytes \(your client's limit\): \d+ more bytes in \d+ more page\(s\)/,
    );
    assert.equal(link.type, 'resource_link');
    assert.match(link.uri!, /^switchboard:\/\/results\/[0-9a-f-]{36}$/);

    const pages: string[] = [];
    let uri: string | undefined = link.uri;
    while (uri) {
      const read = await agent.readResource({ uri });
      const text = (read.contents[0] as { text: string }).text;
      assert.ok(Buffer.byteLength(text) <= LIMIT);
      assert.ok(!text.includes('\ufffd'), 'a page split a character');
      pages.push(text);
      uri = (read._meta as { next?: string } | undefined)?.next;
    }
    assert.ok(pages.length >= 5, `${pages.length} pages`);
    assert.equal(pages[0], head.text);
    assert.equal(pages.join(''), `echo: ${BIG}`);
    await assert.rejects(agent.readResource({ uri: `${link.uri}?page=${pages.length + 1}` }), /page must be 1 to/);

    // Another session of the same client, and another client: as if it did not exist.
    const again = await as('agent');
    await assert.rejects(again.readResource({ uri: link.uri! }), /Resource not found/);
    const other = await as('other');
    await assert.rejects(other.readResource({ uri: link.uri! }), /Resource not found/);
    // Positive control: the session that made the call still reads it.
    assert.equal(((await agent.readResource({ uri: link.uri! })).contents[0] as { text: string }).text, head.text);
  });

  it('within the limit, and for the operator (no limit): the result whole', async () => {
    const agent = await as('agent');
    const small = await agent.callTool({ name: 'echo__echo', arguments: { text: 'short' } });
    assert.deepEqual(small.content, [{ type: 'text', text: 'echo: short' }]);
    const whole = await op.callTool({ name: 'echo__echo', arguments: { text: BIG } });
    assert.deepEqual(whole.content, [{ type: 'text', text: `echo: ${BIG}` }]);
  });

  it('a limit in tokens: cut at about that many tokens', async () => {
    const counted = await as('counted');
    const result = await counted.callTool({ name: 'echo__echo', arguments: { text: BIG } });
    const [head, note] = result.content as { text: string }[];
    assert.match(note.text, /cut to about its first 1000 tokens/);
    assert.ok(head.text.length < BIG.length / 2, `head of ${head.text.length} characters`);
  });
});
