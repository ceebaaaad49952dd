// The editor as fallback client, through the real broker: an operator session that declares itself
// the editor (the extension's own OperatorClient) answers elicitation and sampling for callers that
// cannot, per server's clientFeatures (caller | editor | deny); agents can never take that role;
// a call's timeout waits while a person answers; the editor's folders reach upstreams as roots.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServerRequest } from '../../../src/broker/connection/serverRequests';
import { EDITOR_CAPABILITY } from '../../../src/broker/supervision/editorLink';
import { OperatorClient } from '../../../src/broker/daemon/operatorClient';
import type { BrokerRecord } from '../../../src/broker/daemon/runtime';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  facade,
  startHttpFixture,
  call,
  auditEntries,
  clientToken,
  waitForRunning,
} from '../../helpers/broker';

type Json = Record<string, any>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The editor as the extension runs it: OperatorClient with answerAsEditor; records what it was asked. */
async function startEditor(
  broker: BrokerProcess,
  delayMs = 0,
): Promise<{ client: OperatorClient; asked: ServerRequest[] }> {
  const asked: ServerRequest[] = [];
  const record = { url: broker.url, operatorTokenFile: broker.tokenFile, pid: broker.proc.pid } as BrokerRecord;
  const client = await OperatorClient.connect(record, {
    answerAsEditor: async (request) => {
      asked.push(request);
      await sleep(delayMs); // a person taking their time
      if (request.method === 'sampling/createMessage') {
        return { role: 'assistant', content: { type: 'text', text: 'the editor sampled' }, model: 'vscode-lm' };
      }
      if (request.params.mode === 'url') return { action: 'accept' };
      return { action: 'accept', content: { answer: `the editor answers ${String(request.params.message)}` } };
    },
  });
  // Reachable once its GET stream is open (the SDK opens it just after initialize).
  await waitFor(async () => (await editorConnected(client)) === true, 'the editor to be reachable');
  return { client, asked };
}

/** What the broker's state says: whether a VS Code window answers for callers that cannot. */
async function editorConnected(client: OperatorClient | Client): Promise<boolean> {
  const res = (
    client instanceof OperatorClient
      ? await client.request('resources/read', { uri: 'switchboard://state' })
      : await client.readResource({ uri: 'switchboard://state' })
  ) as Json;
  return JSON.parse(res.contents[0].text).broker.editorConnected === true;
}

/** A client that declares form elicitation and answers after `delayMs`. */
async function elicitingClient(url: string, token: string, name: string, delayMs: number): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    await sleep(delayMs);
    return { action: 'accept', content: { answer: `${name} answers ${request.params.message}` } };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

describe('the editor as fallback client', function () {
  this.timeout(90_000);
  let broker: BrokerProcess;
  let remote: { url: string; stop(): Promise<void> };
  let root: string;
  let operator: Client;
  let terminal: Client;
  let terminalToken: string;

  before(async () => {
    remote = await startHttpFixture('asks-client.mjs');
    root = tempDir('sb-editor-');
    const slow = 'timeouts: { callMs: 800 }\n';
    writeRegistry(root, {
      'mcp-servers.d/asks.yaml': fixtureServer('asks', 'asks-client.mjs'),
      'mcp-servers.d/toeditor.yaml': fixtureServer(
        'toeditor',
        'asks-client.mjs',
        [],
        'clientFeatures: { elicitation: editor, sampling: editor }\n',
      ),
      'mcp-servers.d/denied.yaml': fixtureServer(
        'denied',
        'asks-client.mjs',
        [],
        'clientFeatures: { elicitation: deny, sampling: deny }\n',
      ),
      'mcp-servers.d/slow.yaml': fixtureServer('slow', 'asks-client.mjs', [], slow),
      'mcp-servers.d/rslow.yaml': `name: rslow\ntrust: trusted\ntransport: http\nurl: ${remote.url}\n${slow}`,
      'mcp-servers.d/watcher.yaml': fixtureServer('watcher', 'roots-watcher.mjs'),
      'clients.d/terminal.yaml': 'name: terminal\nmcp_allow: [read]\n',
    });
    broker = await startBrokerProcess({ root });
    operator = await connect(broker.url, broker.token, 'operator-test');
    await waitForRunning(operator, 'every', 'every server running');
    terminalToken = await clientToken(operator, 'terminal');
    terminal = await connect(broker.url, terminalToken, 'terminal');
  });

  after(async () => {
    await terminal?.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    await remote?.stop();
    removeTempDirs();
  });

  it('without an editor: the refusal; with clientFeatures editor, a message that none is connected', async () => {
    assert.equal(await editorConnected(operator), false);
    const refused = await call(terminal, 'asks__elicit', { message: 'nobody yet' });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /Client 'terminal' did not declare elicitation\.form.*Open the workspace in VS Code/);
    const needsEditor = await call(operator, 'toeditor__sample', { prompt: 'x' });
    assert.match(
      needsEditor.text,
      /server 'toeditor' needs VS Code \(its clientFeatures\.sampling is 'editor'\), but no VS Code window/,
    );
  });

  it("caller: the editor answers a terminal agent's elicitation and sampling, told who asks", async () => {
    const editor = await startEditor(broker);
    try {
      const elicited = await call(terminal, 'asks__elicit', { message: 'pick a name' });
      assert.equal(elicited.isError, false, elicited.text);
      assert.deepEqual(JSON.parse(elicited.text), {
        action: 'accept',
        content: { answer: 'the editor answers pick a name' },
      });
      const sampled = await call(terminal, 'asks__sample', { prompt: 'a haiku' });
      assert.equal(JSON.parse(sampled.text).content.text, 'the editor sampled');
      const url = await call(terminal, 'asks__elicit-url', { url: 'https://example.com/login' });
      assert.deepEqual(JSON.parse(url.text), { action: 'accept' });
      assert.deepEqual(
        editor.asked.map((r) => r.method),
        ['elicitation/create', 'sampling/createMessage', 'elicitation/create'],
      );
      assert.deepEqual((editor.asked[0].params._meta as Json | undefined)?.['switchboard/origin'], {
        server: 'asks',
        trust: 'trusted',
        client: 'terminal',
      });
      // Sampling with tools: the editor did not declare sampling.tools, so that is still refused.
      const withTools = await call(terminal, 'asks__sample', { prompt: 'x', withTools: true });
      assert.match(withTools.text, /Client 'terminal' did not declare sampling\.tools/);
      assert.equal(editor.asked.length, 3);
    } finally {
      await editor.client.close();
    }
  });

  it('caller: a client that declared the capability still gets its own; editor: always the editor', async () => {
    const editor = await startEditor(broker);
    const alice = await elicitingClient(broker.url, broker.token, 'alice', 0);
    try {
      const own = await call(alice, 'asks__elicit', { message: 'for alice' });
      assert.equal(JSON.parse(own.text).content.answer, 'alice answers for alice');
      assert.equal(editor.asked.length, 0, 'the editor saw nothing of it');
      const routed = await call(alice, 'toeditor__elicit', { message: 'for the editor' });
      assert.equal(JSON.parse(routed.text).content.answer, 'the editor answers for the editor');
      assert.equal(editor.asked.length, 1);
      const entries = await waitFor(
        () =>
          auditEntries(broker.home, (e) => e.event === 'server-request').filter(
            (e) => e.server === 'toeditor' && e.outcome === 'ok',
          ),
        'the audit entry of toeditor',
      );
      assert.equal(entries.at(-1)!.routedTo, 'editor');
    } finally {
      await alice.close();
      await editor.client.close();
    }
  });

  it('deny: refused for every caller, naming the server and the setting; the editor never sees it', async () => {
    const editor = await startEditor(broker);
    const alice = await elicitingClient(broker.url, broker.token, 'alice', 0);
    try {
      for (const [client, tool] of [
        [alice, 'denied__elicit'],
        [terminal, 'denied__sample'],
      ] as const) {
        const refused = await call(client, tool, { message: 'no', prompt: 'no' });
        assert.equal(refused.isError, true);
        const denied = /Server 'denied' may not ask for (elicitation|sampling): its clientFeatures\.\w+ is 'deny'/;
        assert.match(refused.text, denied);
        assert.match(refused.text, /mcp-servers\.d\/denied\.yaml/);
      }
      assert.equal(editor.asked.length, 0);
    } finally {
      await alice.close();
      await editor.client.close();
    }
  });

  it("an agent's session that claims to be the editor is never given another client's request", async () => {
    const impostor = new Client(
      { name: 'impostor', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} }, experimental: { [EDITOR_CAPABILITY]: {} } } },
    );
    const seen: string[] = [];
    impostor.setRequestHandler(ElicitRequestSchema, (request) => {
      seen.push(request.params.message);
      return { action: 'accept', content: { answer: 'stolen' } };
    });
    const otherToken = fs
      .readFileSync((await facade(operator, 'client_connection', { name: 'terminal' })).tokenFile, 'utf8')
      .trim();
    await impostor.connect(
      new StreamableHTTPClientTransport(new URL(broker.url), {
        requestInit: { headers: { Authorization: `Bearer ${otherToken}` } },
      }),
    );
    try {
      await waitFor(async () => !(await editorConnected(operator)), 'the last editor to be gone');
      const refused = await call(terminal, 'asks__elicit', { message: 'secret question' });
      assert.equal(refused.isError, true, refused.text);
      assert.match(refused.text, /did not declare elicitation\.form/);
      const editorOnly = await call(terminal, 'toeditor__elicit', { message: 'secret question' });
      assert.match(editorOnly.text, /no VS Code window/);
      assert.deepEqual(seen, []);
    } finally {
      await impostor.close();
    }
  });

  it("stdio and HTTP: a call's timeout (callMs 800) waits while its client answers (after 1500 ms)", async () => {
    const patient = await elicitingClient(broker.url, broker.token, 'patient', 1500);
    const editor = await startEditor(broker, 1500);
    try {
      for (const server of ['slow', 'rslow']) {
        const answered = await call(patient, `${server}__elicit`, { message: `slow ${server}` });
        assert.equal(answered.isError, false, answered.text);
        assert.equal(JSON.parse(answered.text).content.answer, `patient answers slow ${server}`);
        // The same when the editor answers for a caller that cannot.
        const viaEditor = await call(terminal, `${server}__elicit`, { message: `editor ${server}` });
        assert.equal(JSON.parse(viaEditor.text).content.answer, `the editor answers editor ${server}`);
      }
    } finally {
      await patient.close();
      await editor.client.close();
    }
  });

  it("the editor's folders: upstreams hear roots/list_changed, then list the registry root and them", async () => {
    const editor = await startEditor(broker);
    try {
      const folder = { uri: pathToFileURL(path.join(root, 'project')).href, name: 'project' };
      const set = (await editor.client.call('set_editor_roots', { roots: [folder] })) as Json;
      assert.equal(set.changed, true);
      const registryRoot = { uri: pathToFileURL(root).href, name: 'workspace registry root' };
      const seen = await waitFor(async () => {
        const s = JSON.parse((await call(operator, 'watcher__seen')).text);
        return s.changes >= 1 && s.roots.length === 2 ? s : undefined;
      }, 'the watcher to re-list its roots');
      assert.deepEqual(seen.roots, [registryRoot, folder]);
      // A caller without roots gets the same inside a call.
      const roots = await call(terminal, 'asks__roots');
      assert.deepEqual(JSON.parse(roots.text).roots, [registryRoot, folder]);
      // Setting the same folders again changes nothing and notifies nobody.
      const again = (await editor.client.call('set_editor_roots', { roots: [folder] })) as Json;
      assert.equal(again.changed, false);
      // An agent cannot set the editor's roots.
      await assert.rejects(
        terminal.callTool({ name: 'switchboard__set_editor_roots', arguments: { roots: [] } }),
        /'switchboard__set_editor_roots' is for the operator only/,
      );
    } finally {
      await editor.client.close();
    }
  });
});
