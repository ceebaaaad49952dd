// The control plane end to end: facade tools, scopes, trust tiers, grants, secrets, sharing and
// the stdio bridge — real broker process, real upstreams, real SDK clients.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  BROKER_JS,
  connect,
  fixture,
  track,
  fixtureServer,
  isAlive,
  removeTempDirs,
  startBrokerProcess,
  stopProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  facade,
} from '../../helpers/broker';
import { OperatorClient } from '../../../src/broker/daemon/operatorClient';
import type { BrokerRecord } from '../../../src/broker/daemon/runtime';
import { ErrorCodes, McpFailure } from '../../../src/broker/shared/mcpTypes';

type Json = Record<string, any>;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

const CANARY = 'canary-7f3a9c1e-secret-value';

describe('control plane', function () {
  this.timeout(90_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  const responses: string[] = [];

  before(async () => {
    root = tempDir('sb-ctl-');
    fs.writeFileSync(path.join(root, 'secrets.env'), `API_TOKEN=${CANARY}\nPLAIN=visible\n`);
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/granted.yaml': fixtureServer(
        'granted',
        'echo.mjs',
        [],
        // Its job here is showing what it got: results not redacted (guardrails, redactedResults.test).
        'envFile: secrets.env\ngrants: [secrets]\nredactResults: false\n',
      ),
      'mcp-servers.d/ungranted.yaml': fixtureServer('ungranted', 'echo.mjs', [], 'envFile: secrets.env\n'),
      'mcp-servers.d/shadow.yaml': fixtureServer('shadow', 'shadow.mjs'),
      'mcp-servers.d/isolated.yaml': fixtureServer('isolated', 'netprobe.mjs'),
      'mcp-servers.d/online.yaml': fixtureServer('online', 'netprobe.mjs', [], 'grants: [network]\n'),
      'mcp-servers.d/tls.yaml': fixtureServer('tls', 'echo.mjs', [], 'grants: [network]\n'),
      'mcp-servers.d/community.yaml':
        fixtureServer('community', 'echo.mjs', ['--name', 'community']).replace('trust: trusted', 'trust: community') +
        'enabled: true\n',
      'prompts.d/review.yaml':
        'name: review\ndescription: Review a file\narguments:\n  - name: file\n    required: true\n' +
        'messages:\n  - role: user\n    content: "Please review {{file}} carefully."\n',
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\ntools:\n  deny: ["echo__add"]\n',
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
    });
    broker = await startBrokerProcess({
      root,
      env: { API_TOKEN: CANARY, GITHUB_TOKEN: CANARY, SSL_CERT_DIR: root, SSL_CERT_FILE: path.join(root, 'ca.pem') },
    });
    operator = await connect(broker.url, broker.token, 'operator');
    await waitFor(
      async () =>
        (await facade(operator, 'list_servers')).servers.filter((s: Json) => s.state === 'running').length === 7,
      'seven running servers',
      30_000,
    );
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  function clientToken(name: string): Promise<string> {
    return facade(operator, 'client_connection', { name }).then((c) => fs.readFileSync(c.tokenFile, 'utf8').trim());
  }

  it('lists facade tools with schemas and annotations; an upstream cannot shadow them', async () => {
    const tools = (await operator.listTools()).tools;
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of [
      'list_servers',
      'server_status',
      'tail_logs',
      'list_prompts',
      'list_clients',
      'registry_problems',
    ]) {
      assert.equal(byName.get(`switchboard__${name}`)?.annotations?.readOnlyHint, true, name);
    }
    assert.equal(byName.get('switchboard__remove_server')?.annotations?.destructiveHint, true);
    assert.equal(byName.get('switchboard__restart_server')?.annotations?.readOnlyHint, false);
    assert.ok(byName.get('switchboard__upsert_server')?.inputSchema.properties?.definition);
    // The hostile upstream's tools are namespaced under its own name, never the facade's.
    assert.ok(byName.has('shadow__switchboard__list_servers'));
    assert.equal(tools.filter((t) => t.name === 'switchboard__list_servers').length, 1);
    const real = await operator.callTool({ name: 'switchboard__list_servers', arguments: {} });
    assert.doesNotMatch(textOf(real), /SHADOWED/);
    assert.equal(
      textOf(await operator.callTool({ name: 'shadow__switchboard__list_servers', arguments: {} })),
      'SHADOWED',
    );
    const prompts = (await operator.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('shadow__switchboard__x') && prompts.includes('switchboard__review'));
  });

  it('reports server status: state, pid, uptime, restarts, tools, grants, trust', async () => {
    const status = await facade(operator, 'server_status', { name: 'echo' });
    assert.equal(status.state, 'running');
    assert.ok(isAlive(status.pid));
    assert.ok(status.uptimeMs >= 0);
    assert.equal(status.trust, 'trusted');
    assert.ok(status.tools.some((t: Json) => t.exposedAs === 'echo__echo'));
    const granted = await facade(operator, 'server_status', { name: 'granted' });
    assert.deepEqual(granted.grants, ['secrets']);
    assert.equal(granted.enforcement.secrets, 'granted');
    const ungranted = await facade(operator, 'server_status', { name: 'ungranted' });
    assert.equal(ungranted.enforcement.secrets, 'enforced');
    assert.deepEqual(ungranted.withheldEnv, ['API_TOKEN', 'PLAIN']);
    const logs = await facade(operator, 'tail_logs', { name: 'echo', lines: 5 });
    assert.ok(logs.lines.some((l: Json) => /running/.test(l.text)));
    const unknown = await operator.callTool({ name: 'switchboard__server_status', arguments: { name: 'nope' } });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /No server named 'nope'/);
  });

  it('tail_logs with after: only the lines logged since that cursor, each once (a live log follows this way)', async () => {
    const first = await facade(operator, 'tail_logs', { name: 'echo', lines: 500 });
    assert.equal(typeof first.next, 'number');
    const idle = await facade(operator, 'tail_logs', { name: 'echo', after: first.next });
    assert.deepEqual(idle.lines, []);
    assert.equal(idle.next, first.next);
    await facade(operator, 'restart_server', { name: 'echo' });
    let fresh: Json[] = [];
    let cursor = first.next;
    await waitFor(async () => {
      const page = await facade(operator, 'tail_logs', { name: 'echo', after: cursor });
      fresh = fresh.concat(page.lines);
      cursor = page.next;
      return fresh.some((l: Json) => /^running/.test(l.text));
    }, 'the restart in the followed log');
    // Only what happened since: the restart's own lines, not the first start's.
    assert.equal(fresh.filter((l: Json) => /^running/.test(l.text)).length, 1);
    assert.ok(cursor > first.next);
    // Two "running" lines at least (the child's own "shutting down" may or may not make it out
    // before it is killed), so a cap of one always leaves some behind.
    const stale = await facade(operator, 'tail_logs', { name: 'echo', after: 0, lines: 1 });
    assert.equal(stale.lines.length, 1);
    assert.ok(stale.skipped > 0, 'lines beyond the cap are counted as skipped');
  });

  it('enables, disables, restarts, upserts and removes through the facade', async () => {
    const before = await facade(operator, 'server_status', { name: 'echo' });
    const restarted = await facade(operator, 'restart_server', { name: 'echo' });
    assert.equal(restarted.state, 'running');
    assert.notEqual(restarted.pid, before.pid);

    const disabled = await facade(operator, 'disable_server', { name: 'echo' });
    assert.equal(disabled.state, 'disabled');
    assert.match(fs.readFileSync(path.join(root, 'mcp-servers.d/echo.yaml'), 'utf8'), /enabled: false/);
    await waitFor(() => !isAlive(restarted.pid), 'the disabled server to exit');
    const enabled = await facade(operator, 'enable_server', { name: 'echo' });
    assert.ok(['starting', 'running'].includes(enabled.state));

    const added = await facade(operator, 'upsert_server', {
      definition: {
        name: 'added',
        trust: 'trusted',
        command: process.execPath,
        args: [fixture('echo.mjs'), '--name', 'added'],
      },
    });
    assert.ok(fs.existsSync(path.join(root, 'mcp-servers.d/added.yaml')));
    assert.equal(added.status.trust, 'trusted', 'the operator may add a trusted server');
    await waitFor(
      async () => textOf(await operator.callTool({ name: 'added__whoami', arguments: {} })) === 'added',
      'the added server to serve',
    );
    await facade(operator, 'remove_server', { name: 'added' });
    assert.ok(!fs.existsSync(path.join(root, 'mcp-servers.d/added.yaml')));
    const bad = await operator.callTool({
      name: 'switchboard__upsert_server',
      arguments: { definition: { name: 'Bad Name', command: 'x' } },
    });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /name/i);
  });

  it("keeps a failed operation's code from the broker to the operator client: bad input, a disk that refuses", async () => {
    const record = { url: broker.url, operatorTokenFile: broker.tokenFile, pid: broker.proc.pid } as BrokerRecord;
    const client = await OperatorClient.connect(record);
    try {
      await assert.rejects(
        client.call('upsert_server', { definition: { name: 'bad', transport: 'stdio', comand: 'x' } }),
        (err: McpFailure) =>
          err instanceof McpFailure && err.code === ErrorCodes.InvalidParams && /comand/.test(err.message),
      );
      // A file the writer cannot replace (a directory where the definition goes): the machine's fault, not the caller's.
      fs.mkdirSync(path.join(root, 'mcp-servers.d', 'blocked.yaml'));
      await assert.rejects(
        client.call('upsert_server', { definition: { name: 'blocked', command: 'node' } }),
        (err: McpFailure) =>
          err instanceof McpFailure && err.code === ErrorCodes.InternalError && (err.data as Json)?.errno === 'EISDIR',
      );
      // Positive control: the same call with a writable place succeeds.
      fs.rmdirSync(path.join(root, 'mcp-servers.d', 'blocked.yaml'));
      const ok = await client.call('upsert_server', {
        definition: { name: 'blocked', command: 'node', enabled: false },
      });
      assert.ok(ok);
      await client.call('remove_server', { name: 'blocked' });
    } finally {
      await client.close();
    }
  });

  it('probes an unsaved definition and explains failures', async () => {
    const ok = await facade(operator, 'probe_server', {
      definition: { name: 'probe', command: process.execPath, args: [fixture('echo.mjs')] },
    });
    assert.equal(ok.ok, true);
    assert.ok(ok.tools.some((t: Json) => t.name === 'echo' && t.inputSchema));
    assert.ok(ok.prompts.some((p: Json) => p.name === 'greet'));
    assert.ok(ok.connectMs > 0 && ok.listMs >= 0);
    assert.ok(!fs.existsSync(path.join(root, 'mcp-servers.d/probe.yaml')), 'a probe saves nothing');
    const missing = await facade(operator, 'probe_server', {
      definition: { name: 'probe', command: 'no-such-command-xyz' },
    });
    assert.equal(missing.ok, false);
    assert.match(missing.error, /command not found: no-such-command-xyz/);
    const exits = await facade(operator, 'probe_server', {
      definition: { name: 'probe', command: process.execPath, args: [fixture('crashy.mjs'), '--exit-at-start'] },
    });
    assert.equal(exits.ok, false);
    assert.match(exits.error, /exited with code 2/);
    assert.match(exits.error, /boom: exiting at start/);
    const http404 = await facade(operator, 'probe_server', {
      definition: { name: 'probe', transport: 'http', url: `http://127.0.0.1:${broker.port}/nowhere` },
    });
    assert.equal(http404.ok, false);
    assert.match(http404.error, /40[14]/);
  });

  it('serves fleet prompts with arguments substituted', async () => {
    const prompt = await operator.getPrompt({ name: 'switchboard__review', arguments: { file: 'src/app.ts' } });
    assert.match(JSON.stringify(prompt.messages), /Please review src\/app\.ts carefully\./);
    await assert.rejects(
      operator.getPrompt({ name: 'switchboard__review', arguments: {} }),
      /needs the argument 'file'/,
    );
    const listed = await facade(operator, 'list_prompts');
    assert.equal(listed.prompts[0].exposedAs, 'switchboard__review');
  });

  it('denies a read client every write tool, naming the scope, and applies scope edits mid-session', async () => {
    const reader = await connect(broker.url, await clientToken('reader'), 'reader');
    const servers = await facade(reader, 'list_servers');
    assert.ok(servers.servers.length > 0, 'read tools work');
    for (const tool of [
      'enable_server',
      'disable_server',
      'restart_server',
      'remove_server',
      'upsert_server',
      'probe_server',
      'upsert_prompt',
      'remove_prompt',
    ]) {
      const err = await reader
        .callTool({ name: `switchboard__${tool}`, arguments: { name: 'echo', definition: {} } })
        .catch((e: Error) => e);
      assert.ok(err instanceof Error, `${tool} must be refused`);
      assert.match(err.message, /needs the 'write' scope/);
    }
    for (const tool of ['approve_server', 'client_connection', 'upsert_client']) {
      const err = await reader
        .callTool({ name: `switchboard__${tool}`, arguments: { name: 'x', definition: {} } })
        .catch((e: Error) => e);
      assert.ok(err instanceof Error && /operator only/.test(err.message), tool);
    }
    // The profile hides tools from this client's list and refuses calls to them.
    const names = (await reader.listTools()).tools.map((t) => t.name);
    assert.ok(!names.includes('echo__add') && names.includes('echo__echo'));
    await assert.rejects(reader.callTool({ name: 'echo__add', arguments: { a: 1, b: 1 } }), /tool profile/);

    // Same session, new authority.
    writeRegistry(root, { 'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read, write]\n' });
    await waitFor(async () => {
      const r = await reader
        .callTool({ name: 'switchboard__restart_server', arguments: { name: 'echo' } })
        .catch(() => undefined);
      return r && !r.isError;
    }, 'the write scope to apply without reconnecting');
    writeRegistry(root, {
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\ntools:\n  deny: ["echo__add"]\n',
    });
    await waitFor(async () => {
      const r = await reader
        .callTool({ name: 'switchboard__restart_server', arguments: { name: 'echo' } })
        .catch((e: Error) => e);
      return r instanceof Error && /write/.test(r.message);
    }, 'the write scope to be withdrawn');
    await reader.close();
  });

  it('downgrades servers an agent writes to the community tier', async () => {
    const writer = await connect(broker.url, await clientToken('writer'), 'writer');
    const added = await facade(writer, 'upsert_server', {
      definition: { name: 'agentmade', trust: 'trusted', command: process.execPath, args: [fixture('echo.mjs')] },
    });
    assert.equal(added.status.trust, 'community');
    assert.match(added.note, /community/);
    assert.equal(added.status.state, 'awaiting-approval');
    await facade(writer, 'remove_server', { name: 'agentmade' });
    await writer.close();
  });

  it('keeps a community server inert until approved; a changed command needs approval again', async () => {
    let status = await facade(operator, 'server_status', { name: 'community' });
    assert.equal(status.state, 'awaiting-approval', 'enabled: true from the repo is not enough');
    assert.equal(status.approval, 'required');
    assert.match(status.approvalSummary, /echo\.mjs/);
    const approvalsFile = path.join(broker.home, 'approvals.json');
    assert.ok(!fs.existsSync(approvalsFile) || !fs.readFileSync(approvalsFile, 'utf8').includes('community'));

    status = await facade(operator, 'approve_server', { name: 'community', hash: status.approvalHash });
    assert.equal(status.state, 'running');
    assert.equal(status.approval, 'approved');
    assert.ok(
      fs.readFileSync(approvalsFile, 'utf8').includes('/community'),
      'approval stored per user, outside the workspace',
    );
    assert.equal(fs.statSync(approvalsFile).mode & 0o777, 0o600);
    assert.ok(!filesUnder(root).some((f) => /approv/i.test(f)), 'nothing about approvals in the workspace');

    const file = path.join(root, 'mcp-servers.d/community.yaml');
    fs.writeFileSync(
      file,
      fs
        .readFileSync(file, 'utf8')
        .replace("'--name', 'community'", "'--name', 'changed'")
        .replace('"--name", "community"', '"--name", "changed"'),
    );
    await waitFor(
      async () => (await facade(operator, 'server_status', { name: 'community' })).state === 'awaiting-approval',
      'the changed server to need approval again',
    );
    status = await facade(operator, 'server_status', { name: 'community' });
    assert.equal(status.approval, 'changed');
    status = await facade(operator, 'approve_server', { name: 'community', hash: status.approvalHash });
    assert.equal(status.state, 'running');
    status = await facade(operator, 'revoke_approval', { name: 'community' });
    assert.equal(status.state, 'awaiting-approval');
  });

  it('enforces the secrets grant: envFile values and secret-looking variables reach only granted servers', async () => {
    const granted = await operator.callTool({ name: 'granted__env', arguments: { name: 'API_TOKEN' } });
    assert.equal(textOf(granted), CANARY, 'the granted server gets the envFile value');
    for (const name of ['API_TOKEN', 'GITHUB_TOKEN', 'PLAIN']) {
      const r = await operator.callTool({ name: 'ungranted__env', arguments: { name } });
      responses.push(JSON.stringify(r));
      assert.equal(textOf(r), '<unset>', `${name} withheld without the secrets grant`);
    }
    const inherited = await operator.callTool({ name: 'echo__env', arguments: { name: 'GITHUB_TOKEN' } });
    assert.equal(textOf(inherited), '<unset>', "the broker's own secret variables are never inherited");
  });

  it('passes TLS trust settings (SSL_CERT_DIR, SSL_CERT_FILE, NODE_EXTRA_CA_CERTS) only with the network grant', async () => {
    for (const name of ['SSL_CERT_DIR', 'SSL_CERT_FILE']) {
      assert.equal(
        textOf(await operator.callTool({ name: 'tls__env', arguments: { name } })),
        name === 'SSL_CERT_DIR' ? root : path.join(root, 'ca.pem'),
        `${name} reaches a server with the network grant`,
      );
      assert.equal(
        textOf(await operator.callTool({ name: 'echo__env', arguments: { name } })),
        '<unset>',
        `${name} is kept from a server that cannot reach the network`,
      );
    }
    assert.notEqual(
      textOf(await operator.callTool({ name: 'echo__env', arguments: { name: 'PATH' } })),
      '<unset>',
      'the allow-list still passes PATH',
    );
  });

  it('enforces the network grant with a network namespace (or says it cannot)', async () => {
    const isolated = await facade(operator, 'server_status', { name: 'isolated' });
    const listener = net.createServer((s) => s.end()).listen(0, '127.0.0.1');
    await new Promise((r) => listener.once('listening', r));
    const port = (listener.address() as net.AddressInfo).port;
    try {
      const online = await operator.callTool({ name: 'online__fetch_loopback', arguments: { port } });
      assert.equal(textOf(online), 'connected');
      if (isolated.enforcement.network === 'enforced') {
        const blocked = await operator.callTool({ name: 'isolated__fetch_loopback', arguments: { port } });
        assert.notEqual(
          textOf(blocked),
          'connected',
          'a server without the network grant cannot reach the host network',
        );
        const ifaces = (await operator.callTool({ name: 'isolated__interfaces', arguments: {} })).structuredContent as {
          names: string[];
        };
        assert.deepEqual(
          ifaces.names.filter((n) => n !== 'lo'),
          [],
        );
      } else {
        assert.equal(isolated.enforcement.network, 'not-enforced');
        assert.ok(
          isolated.enforcement.notes.some((n: string) => /cannot be blocked/.test(n)),
          'the state says honestly that it is not enforced',
        );
      }
    } finally {
      listener.close();
    }
  });

  it('pushes switchboard://state updates to subscribers', async () => {
    const c = await connect(broker.url, broker.token);
    let updates = 0;
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (n.params.uri === 'switchboard://state') updates++;
    });
    await c.subscribeResource({ uri: 'switchboard://state' });
    const state = JSON.parse(
      ((await c.readResource({ uri: 'switchboard://state' })).contents[0] as { text: string }).text,
    ) as Json;
    assert.ok(state.servers.some((s: Json) => s.name === 'echo'));
    assert.equal(state.broker.pid, broker.proc.pid);
    await facade(operator, 'restart_server', { name: 'echo' });
    await waitFor(() => updates > 0, 'a resources/updated notification');
    await c.close();
  });

  it('audits who called what, without arguments, and never leaks secrets or tokens anywhere', async () => {
    const readerToken = await clientToken('reader');
    const reader = await connect(broker.url, readerToken, 'reader');
    await reader.callTool({ name: 'echo__echo', arguments: { text: `argument-${CANARY}` } });
    responses.push(JSON.stringify(await reader.readResource({ uri: 'switchboard://state' })));
    responses.push(JSON.stringify(await facade(operator, 'list_servers')));
    responses.push(JSON.stringify(await facade(operator, 'tail_logs', { name: 'granted' })));
    await reader.close();
    const auditFile = filesUnder(broker.home).find((f) => f.endsWith('audit.jsonl'))!;
    // Entries are written in batches (at most 50 ms late): wait for this call's own entry.
    const readAudit = () =>
      fs
        .readFileSync(auditFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    const isTheCall = (e: Json) => e.client === 'reader' && e.event === 'call' && e.tool === 'echo';
    await waitFor(() => readAudit().some(isTheCall), 'the audit entry of the call');
    const audit = readAudit();
    const call = audit.find((e) => e.client === 'reader' && e.tool === 'echo' && e.event === 'call');
    assert.ok(call && call.outcome === 'ok' && typeof call.ms === 'number' && call.server === 'echo');
    assert.ok(audit.some((e) => e.event === 'rejected' || e.event === 'facade'));

    const written = [...filesUnder(broker.home), ...filesUnder(root)].filter((f) => !f.endsWith('secrets.env'));
    const tokenFiles = written.filter((f) => f.endsWith('.token'));
    for (const file of written) {
      if (tokenFiles.includes(file)) continue;
      const text = fs.readFileSync(file, 'utf8');
      assert.ok(!text.includes(CANARY), `canary secret found in ${file}`);
      assert.ok(!text.includes(broker.token) && !text.includes(readerToken), `a token found in ${file}`);
    }
    for (const file of tokenFiles) assert.equal(fs.statSync(file).mode & 0o777, 0o600, file);
    const logs = broker.stderr.join('\n');
    assert.ok(!logs.includes(CANARY) && !logs.includes(broker.token));
    for (const r of responses) assert.ok(!r.includes(CANARY) && !r.includes(broker.token), r.slice(0, 200));
  });

  it('removing a client definition ends its token at once', async () => {
    writeRegistry(root, { 'clients.d/temp.yaml': 'name: temp\n' });
    await waitFor(
      async () => (await facade(operator, 'list_clients')).clients.some((c: Json) => c.name === 'temp'),
      'the new client',
    );
    const token = await clientToken('temp');
    const c = await connect(broker.url, token, 'temp');
    await facade(c, 'list_servers');
    fs.unlinkSync(path.join(root, 'clients.d/temp.yaml'));
    await waitFor(async () => {
      const res = await fetch(broker.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: '{}',
      });
      return res.status === 401;
    }, 'the token to be refused');
    await c.close().catch(() => undefined);
  });
});

describe('sharing one broker', function () {
  this.timeout(90_000);
  afterEach(() => removeTempDirs());

  function serve(root: string, home: string, extra: string[] = []) {
    const proc = track(
      spawn(
        process.execPath,
        [BROKER_JS, 'serve', '--root', root, '--port', '0', '--json', '--accept-workspace-trust', ...extra],
        { env: { ...process.env, SWITCHBOARD_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    proc.stderr!.resume();
    const ready = new Promise<Json>((resolve, reject) => {
      readline.createInterface({ input: proc.stdout! }).on('line', (l) => {
        try {
          resolve(JSON.parse(l));
        } catch {
          /* not json */
        }
      });
      proc.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
    });
    ready.catch(() => undefined);
    return { proc, ready };
  }

  it('two starters for one root end with one broker and one set of upstream processes', async () => {
    const root = tempDir('sb-share-');
    const home = tempDir('sb-home-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/two.yaml': fixtureServer('two', 'echo.mjs'),
    });
    const a = serve(root, home);
    const b = serve(root, home);
    const [ra, rb] = await Promise.all([a.ready, b.ready]);
    assert.equal(ra.pid, rb.pid, 'both starters point at the same broker');
    assert.equal([ra.reused, rb.reused].filter(Boolean).length, 1, 'exactly one reused the other');
    const owner = ra.reused ? b : a;
    const other = ra.reused ? a : b;
    await new Promise((r) => (other.proc.exitCode !== null ? r(undefined) : other.proc.once('exit', r)));
    const client = await connect(ra.url, fs.readFileSync(ra.tokenFile, 'utf8').trim());
    // Host pids as the broker reports them: each server's own pid is one of its sandbox's PID namespace.
    const pids = new Set<number>();
    for (const name of ['echo', 'two']) {
      await waitFor(() => client.callTool({ name: `${name}__pid`, arguments: {} }), name);
      pids.add((await facade(client, 'server_status', { name })).pid as number);
    }
    assert.equal(pids.size, 2, 'M upstream processes, not 2M');
    for (const pid of pids) assert.ok(isAlive(pid), `${pid} runs`);
    const third = serve(root, home);
    assert.equal((await third.ready).reused, true);
    await client.close();
    await stopProcess(owner.proc);
  });

  it('replaces a stale record left by a killed broker', async () => {
    const root = tempDir('sb-stale-');
    const home = tempDir('sb-home-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
    const first = await startBrokerProcess({ root, home });
    first.proc.kill('SIGKILL');
    await new Promise((r) => first.proc.once('exit', r));
    const second = await startBrokerProcess({ root, home });
    assert.notEqual(second.proc.pid, first.proc.pid);
    const c = await connect(second.url, second.token);
    assert.match(
      textOf(await waitFor(() => c.callTool({ name: 'echo__echo', arguments: { text: 'x' } }), 'echo')),
      /echo: x/,
    );
    await c.close();
    await second.stop();
  });

  it('exits after --idle-exit with no session left', async () => {
    const root = tempDir('sb-idle-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
    const b = await startBrokerProcess({ root, args: ['--idle-exit', '2'] });
    const c = await connect(b.url, b.token);
    await waitFor(() => c.callTool({ name: 'echo__pid', arguments: {} }), 'echo');
    const upstreamPid = (await facade(c, 'server_status', { name: 'echo' })).pid as number;
    assert.ok(isAlive(upstreamPid), 'the upstream runs');
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(b.proc.exitCode, null, 'an open session holds the broker');
    await c.close();
    await waitFor(() => b.proc.exitCode !== null, 'the idle broker to exit', 15_000, 100);
    await waitFor(() => !isAlive(upstreamPid), 'its upstream to be stopped');
  });

  it('bridges a stdio MCP client through `switchboard connect`, across a broker restart', async () => {
    const root = tempDir('sb-bridge-');
    const home = tempDir('sb-home-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'clients.d/terminal.yaml': 'name: terminal\nmcp_allow: [read]\n',
    });
    let b = await startBrokerProcess({ root, home });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BROKER_JS, 'connect', '--root', root, '--client', 'terminal', '--no-start'],
      env: { ...process.env, SWITCHBOARD_HOME: home } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-agent', version: '1' });
    await client.connect(transport);
    await waitFor(
      async () => (await client.listTools()).tools.some((t) => t.name === 'echo__echo'),
      'echo through the bridge',
    );
    assert.equal(
      textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'bridged' } })),
      'echo: bridged',
    );
    await assert.rejects(
      client.callTool({ name: 'switchboard__restart_server', arguments: { name: 'echo' } }),
      /write/,
    );

    await b.stop();
    b = await startBrokerProcess({ root, home });
    const again = await waitFor(
      () => client.callTool({ name: 'echo__echo', arguments: { text: 'after restart' } }),
      'the bridge to reconnect',
      30_000,
      300,
    );
    assert.equal(textOf(again), 'echo: after restart');

    const bridgePid = transport.pid!;
    await client.close();
    await waitFor(() => !isAlive(bridgePid), 'the bridge to exit on stdin EOF');
    await b.stop();
  });
});
