// Security, attacked harder than test/broker: hundreds of bad and revoked tokens, every write
// and operator tool from under-scoped clients (the list is read from the broker's own tools, so
// a new write tool is covered without editing this file), forged Host/Origin on every method,
// the listening socket checked in /proc, shadowing at start and at runtime, canary secrets hunted
// in every file, log, response and upstream command line, and a community server in a freshly
// cloned registry.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import {
  FAULT_FIXTURES,
  RawHttp,
  descendants,
  facade,
  faultServer,
  filesUnder,
  listeningAddresses,
  noteUpstreams,
  report,
  running,
  startBroker,
  status,
  type Json,
} from './lib';

const CANARY = 'canary-5e1f0c2a-do-not-leak';
const ENV_CANARY = 'envcanary-91b7d3-do-not-leak';

describe('faults: security', function () {
  this.timeout(180_000);
  let root: string;
  let broker: BrokerProcess;
  let operator: Client;
  const responses: string[] = [];
  const tokens: Record<string, string> = {};

  before(async () => {
    root = tempDir('sb-fault-sec-');
    fs.writeFileSync(path.join(root, 'secrets.env'), `API_TOKEN=${CANARY}\nOTHER_SECRET=${CANARY}-2\n`);
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': faultServer('echo', 'bare.mjs'),
      // Prints its secret to stderr (so into the broker's log ring) and keeps running.
      'mcp-servers.d/granted.yaml': faultServer(
        'granted',
        'bare.mjs',
        ['--print-env', 'API_TOKEN'],
        'envFile: secrets.env\ngrants: [secrets]\n',
      ),
      // Prints its secret and crashes, in a loop: the secret is in its last output, so in lastError.
      'mcp-servers.d/leaky.yaml': faultServer(
        'leaky',
        'bare.mjs',
        ['--print-env', 'API_TOKEN', '--exit-after-ms', '1'],
        'envFile: secrets.env\ngrants: [secrets]\nrestart:\n  maxRetries: 3\n  backoffMs: 50\n',
      ),
      'mcp-servers.d/ungranted.yaml': faultServer(
        'ungranted',
        'bare.mjs',
        ['--print-env', 'API_TOKEN'],
        'envFile: secrets.env\n',
      ),
      'mcp-servers.d/shadow.yaml': fixtureServer('shadow', 'shadow.mjs'),
      'mcp-servers.d/changing.yaml': fixtureServer('changing', 'changing.mjs'),
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\n',
      'clients.d/writer.yaml': 'name: writer\nmcp_allow: [read, write]\n',
      'clients.d/victim.yaml': 'name: victim\nmcp_allow: [read]\n',
      'clients.d/gone.yaml': 'name: gone\nmcp_allow: [read]\n',
    });
    broker = await startBroker({
      root,
      env: { API_TOKEN: ENV_CANARY, GITHUB_TOKEN: ENV_CANARY, AWS_SECRET_ACCESS_KEY: ENV_CANARY },
    });
    operator = await connect(broker.url, broker.token, 'operator');
    await waitFor(
      async () => {
        const s = (await facade(operator, 'list_servers')).servers as Json[];
        return (
          s.filter((x) => x.state === 'running').length === 5 && s.find((x) => x.name === 'leaky')?.state === 'failed'
        );
      },
      'five running servers and leaky failed',
      60_000,
      200,
    );
    noteUpstreams(broker);
    for (const name of ['reader', 'writer', 'victim', 'gone']) {
      tokens[name] = fs.readFileSync((await facade(operator, 'client_connection', { name })).tokenFile, 'utf8').trim();
    }
  });

  after(async () => {
    await operator?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it("refuses requests without a token, with bad tokens, and with revoked or removed clients' tokens (401)", async () => {
    const anon = new RawHttp(broker.port);
    let requests = 0;
    const bad: string[] = [];
    const expect401 = async (http: RawHttp, what: string, req: Parameters<RawHttp['request']>[0]) => {
      requests++;
      const res = await http.request(req);
      if (res.status !== 401) bad.push(`${what}: HTTP ${res.status}`);
      else if (!/Bearer/.test(String(res.headers['www-authenticate']))) bad.push(`${what}: no www-authenticate`);
    };
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    for (const p of ['/mcp', '/servers/echo/mcp']) {
      for (const method of ['POST', 'GET', 'DELETE'])
        await expect401(anon, `no token ${method} ${p}`, {
          method,
          path: p,
          body: method === 'POST' ? init : undefined,
          headers: { accept: 'application/json, text/event-stream' },
        });
    }
    // 300 wrong tokens: random, near misses of real ones, other schemes.
    const near = (t: string, i: number) =>
      t.slice(0, i % t.length) + (t[i % t.length] === 'A' ? 'B' : 'A') + t.slice((i % t.length) + 1);
    for (let i = 0; i < 300; i++) {
      const token =
        i % 3 === 0 ? near(broker.token, i) : i % 3 === 1 ? near(tokens.reader, i) : `${broker.token.slice(0, 20)}${i}`;
      await expect401(new RawHttp(broker.port, token), `bad token ${i}`, { body: init });
    }
    await expect401(anon, 'basic auth', {
      body: init,
      headers: { authorization: `Basic ${Buffer.from(`operator:${broker.token}`).toString('base64')}` },
    });
    await expect401(anon, 'token in the query', { path: `/mcp?token=${broker.token}`, body: init });

    // Revoked: a rotated client token stops working at once, mid-session too.
    const victim = await connect(broker.url, tokens.victim, 'victim');
    await facade(victim, 'list_servers');
    const rotated = await facade(operator, 'client_connection', { name: 'victim', rotate: true });
    const newToken = fs.readFileSync(rotated.tokenFile, 'utf8').trim();
    assert.notEqual(newToken, tokens.victim);
    await expect401(new RawHttp(broker.port, tokens.victim), 'rotated token', { body: init });
    await assert.rejects(facade(victim, 'list_servers'), 'the old session goes with the old token');
    await victim.close().catch(() => undefined);
    const again = await connect(broker.url, newToken, 'victim');
    await facade(again, 'list_servers');
    await again.close();
    // Removed: a deleted client's token is refused.
    await facade(operator, 'remove_client', { name: 'gone' });
    await expect401(new RawHttp(broker.port, tokens.gone), 'removed client', { body: init });
    report('tokens', { requests, faultsInjected: requests, failures: bad.length });
    assert.deepEqual(bad, []);
  });

  it('denies every write and operator tool to a read client, and operator tools to a write client', async () => {
    const tools = (await operator.listTools()).tools.filter((t) => t.name.startsWith('switchboard__'));
    const scopeOf = (t: { description?: string }) => /\[scope: (\w+)\]$/.exec(t.description ?? '')?.[1];
    const writeTools = tools.filter((t) => scopeOf(t) === 'write').map((t) => t.name);
    const operatorTools = tools.filter((t) => scopeOf(t) === 'operator').map((t) => t.name);
    assert.ok(
      writeTools.length >= 8 && operatorTools.length >= 5,
      `${writeTools.length} write, ${operatorTools.length} operator tools`,
    );
    const reader = await connect(broker.url, tokens.reader, 'reader');
    const writer = await connect(broker.url, tokens.writer, 'writer');
    const before = new Map(filesUnder(root).map((f) => [f, fs.readFileSync(f, 'utf8')]));
    const echoPid = (await status(operator, 'echo')).pid;
    const args = {
      name: 'echo',
      definition: {
        name: 'evil',
        trust: 'trusted',
        command: process.execPath,
        args: ['-e', '0'],
        messages: [{ role: 'user', content: 'x' }],
        mcp_allow: ['read', 'write'],
      },
      rotate: true,
    };
    const allowed: string[] = [];
    let calls = 0;
    const attempt = async (client: Client, who: string, tool: string, needs: RegExp) => {
      calls++;
      const r = await client.callTool({ name: tool, arguments: args }).then(
        (x) => (x.isError ? new Error(textOf(x)) : x),
        (e: Error) => e,
      );
      if (!(r instanceof Error) || !needs.test(r.message))
        allowed.push(`${who} ${tool}: ${r instanceof Error ? r.message : 'allowed'}`);
      responses.push(r instanceof Error ? r.message : JSON.stringify(r));
    };
    for (const tool of writeTools) await attempt(reader, 'reader', tool, /needs the 'write' scope/);
    for (const tool of operatorTools) {
      await attempt(reader, 'reader', tool, /operator only/);
      await attempt(writer, 'writer', tool, /operator only/);
    }
    await reader.close();
    await writer.close();
    const after = new Map(filesUnder(root).map((f) => [f, fs.readFileSync(f, 'utf8')]));
    assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort(), 'no file added or removed');
    for (const [f, t] of before) assert.equal(after.get(f), t, `${f} unchanged`);
    assert.equal((await status(operator, 'echo')).pid, echoPid, 'nothing was restarted');
    report('scopes', {
      writeTools: writeTools.length,
      operatorTools: operatorTools.length,
      calls,
      faultsInjected: calls,
      wronglyAllowed: allowed.length,
    });
    assert.deepEqual(allowed, []);
  });

  it('refuses foreign Host and Origin headers on every method (DNS rebinding, 403) and allows loopback ones', async () => {
    const http = new RawHttp(broker.port, broker.token);
    const p = broker.port;
    const hosts = [
      'evil.example',
      `evil.example:${p}`,
      `127.0.0.1.evil.example:${p}`,
      `localhost.evil.example:${p}`,
      '127.0.0.1',
      'localhost',
      `127.0.0.1:${p + 1}`,
      `0.0.0.0:${p}`,
      `[::2]:${p}`,
      `127.0.0.2:${p}`,
      `10.0.0.1:${p}`,
      `LOCALHOST.:${p}`,
      '',
    ];
    const origins = [
      'http://evil.example',
      `http://evil.example:${p}`,
      'null',
      'https://127.0.0.1.evil.example',
      `http://localhost.evil.example:${p}`,
      'file://',
      'chrome-extension://abcdef',
      `ftp://127.0.0.1:${p}`,
      'http://[::2]',
      'javascript:alert(1)',
    ];
    const bad: string[] = [];
    let requests = 0;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    for (const method of ['POST', 'GET', 'DELETE']) {
      for (const path of ['/mcp', '/servers/echo/mcp', '/health']) {
        for (const host of hosts) {
          requests++;
          const res = await http
            .request({ method, path, headers: { host }, body: method === 'POST' ? body : undefined })
            .catch((e: Error) => ({ status: -1, body: e.message, headers: {} }));
          // An empty Host is refused by Node's HTTP parser itself (400) before the broker sees it.
          if (res.status !== 403 && !(host === '' && res.status === 400))
            bad.push(`${method} ${path} Host ${JSON.stringify(host)}: ${res.status}`);
        }
        for (const origin of origins) {
          requests++;
          const res = await http.request({
            method,
            path,
            headers: { origin },
            body: method === 'POST' ? body : undefined,
          });
          if (res.status !== 403) bad.push(`${method} ${path} Origin ${origin}: ${res.status}`);
        }
      }
    }
    // The loopback spellings are allowed (a 400 for the missing session is fine: not 403).
    for (const headers of [
      { host: `127.0.0.1:${p}` },
      { host: `localhost:${p}` },
      { origin: `http://localhost:${p}` },
      { origin: `http://127.0.0.1:${p}` },
    ]) {
      const res = await http.request({ headers, body });
      if (res.status === 403) bad.push(`loopback ${JSON.stringify(headers)} refused`);
    }
    http.close();
    report('dns-rebinding', { requests, faultsInjected: requests, failures: bad.length });
    assert.deepEqual(bad, []);
  });

  it('listens on 127.0.0.1 only (checked in /proc/net/tcp*, and refused on 127.0.0.2)', async () => {
    const addresses = listeningAddresses(broker.proc.pid!);
    assert.deepEqual(addresses, [`127.0.0.1:${broker.port}`]);
    const err = await new Promise<string>((resolve) => {
      const s = net.connect({ host: '127.0.0.2', port: broker.port }, () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    assert.equal(err, 'ECONNREFUSED');
    // No upstream of the broker listens anywhere either (stdio servers only).
    for (const pid of descendants(broker.proc.pid!)) assert.deepEqual(listeningAddresses(pid), [], `upstream ${pid}`);
    report('loopback-only', { listening: addresses, otherLoopbackAddress: err });
  });

  it('never lets an upstream shadow a facade tool, at start or when its tool list changes', async () => {
    let changed = 0;
    operator.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    for (const name of [
      'switchboard__restart_server',
      'switchboard__client_connection',
      'switchboard__approve_server',
    ]) {
      await operator.callTool({ name: 'changing__add_tool', arguments: { name } });
    }
    await waitFor(() => changed > 0, 'list_changed');
    // Tools new since approval are quarantined (tool pins) until the operator accepts all three.
    await waitFor(async () => {
      const diff = await operator.callTool({ name: 'switchboard__tool_changes', arguments: { name: 'changing' } });
      const result = diff.structuredContent as { toolsHash: string; changes: unknown[] } | undefined;
      if (result?.changes.length !== 3) return undefined;
      const args = { name: 'changing', hash: result.toolsHash };
      return !(await operator.callTool({ name: 'switchboard__accept_tool_changes', arguments: args })).isError;
    }, 'the runtime tools to be accepted');
    const tools = await waitFor(async () => {
      const list = (await operator.listTools()).tools;
      return list.some((t) => t.name === 'changing__switchboard__approve_server') ? list : undefined;
    }, 'the runtime tools to be listed');
    const names = tools.map((t) => t.name);
    const facadeNames = names.filter((n) => n.startsWith('switchboard__'));
    assert.equal(new Set(facadeNames).size, facadeNames.length, 'each facade name listed once');
    for (const t of tools.filter((x) => x.name.startsWith('switchboard__')))
      assert.match(t.description ?? '', /\[scope: \w+\]$/, `${t.name} is the broker's own`);
    assert.ok(
      names.includes('shadow__switchboard__list_servers') && names.includes('changing__switchboard__restart_server'),
    );
    const real = await operator.callTool({ name: 'switchboard__list_servers', arguments: {} });
    assert.doesNotMatch(textOf(real), /SHADOWED/);
    assert.ok((real.structuredContent as Json).servers.length >= 6);
    const restart = await operator.callTool({ name: 'switchboard__restart_server', arguments: { name: 'echo' } });
    assert.equal((restart.structuredContent as Json).state, 'running', 'the real restart_server ran');
    noteUpstreams(broker);
    assert.equal(
      textOf(await operator.callTool({ name: 'changing__switchboard__restart_server', arguments: {} })),
      'switchboard__restart_server called',
    );
    const prompts = (await operator.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('shadow__switchboard__x') && !prompts.includes('switchboard__x'));
    report('shadowing', {
      faultsInjected: 5,
      upstreamToolsNamedLikeFacade: 3 + 2,
      facadeToolsListed: facadeNames.length,
      shadowed: 0,
    });
  });

  it('never shows a canary secret or a token in any file, log, response, state or command line', async () => {
    const readerC = await connect(broker.url, tokens.reader, 'reader');
    // Exercise every read path, as operator and as a client.
    for (const c of [operator, readerC]) {
      responses.push(JSON.stringify(await c.readResource({ uri: 'switchboard://state' })));
      responses.push(JSON.stringify(await facade(c, 'list_servers')));
      responses.push(JSON.stringify(await facade(c, 'list_clients')));
      responses.push(JSON.stringify(await facade(c, 'registry_problems')));
      for (const name of ['echo', 'granted', 'leaky', 'ungranted', 'shadow']) {
        responses.push(JSON.stringify(await facade(c, 'server_status', { name })));
        responses.push(JSON.stringify(await facade(c, 'tail_logs', { name, lines: 500 })));
      }
      responses.push(JSON.stringify(await c.listTools()));
    }
    // An error path: a probe of a definition that prints its secret and exits.
    responses.push(
      JSON.stringify(
        await facade(operator, 'probe_server', {
          definition: {
            name: 'probe',
            trust: 'trusted',
            command: process.execPath,
            args: [path.join(FAULT_FIXTURES, 'bare.mjs'), '--print-env', 'API_TOKEN', '--exit-after-ms', '50'],
            envFile: 'secrets.env',
            grants: ['secrets'],
          },
        }),
      ),
    );
    responses.push(JSON.stringify(await facade(operator, 'client_connection', { name: 'reader' })));
    responses.push(textOf(await operator.callTool({ name: 'ungranted__echo', arguments: { text: 'x' } })));
    await readerC.close();
    // The secret did reach the granted server (so the test is not vacuous) and its log ring.
    const grantedPid = (await status(operator, 'granted')).pid as number;
    assert.ok(
      fs.readFileSync(`/proc/${grantedPid}/environ`, 'utf8').includes(CANARY),
      'the granted server has the secret',
    );
    const ungrantedPid = (await status(operator, 'ungranted')).pid as number;
    assert.ok(
      !fs.readFileSync(`/proc/${ungrantedPid}/environ`, 'utf8').includes(CANARY),
      'the ungranted server does not',
    );
    const leaky = await status(operator, 'leaky');
    assert.equal(leaky.state, 'failed');
    if (process.env.FAULTS_DEBUG) console.log('leaky lastError:', leaky.lastError);
    assert.match(leaky.lastError, /\[redacted\]/, 'the secret in the last output was redacted');

    await new Promise((r) => setTimeout(r, 300)); // the audit log writes in batches
    const operatorToken = broker.token;
    const allTokens = [
      operatorToken,
      ...Object.values(tokens),
      fs.readFileSync((await facade(operator, 'client_connection', { name: 'victim' })).tokenFile, 'utf8').trim(),
    ];
    const secrets = [CANARY, ENV_CANARY, ...allTokens];
    const leaks: string[] = [];
    const files = [...filesUnder(broker.home), ...filesUnder(root)].filter((f) => f !== path.join(root, 'secrets.env'));
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      for (const s of secrets) {
        if (!text.includes(s)) continue;
        // A token file holds its own token, nothing else.
        if (file.endsWith('.token') && text.trim() === s) continue;
        leaks.push(
          `${path.relative(path.dirname(root), file)} contains ${s === CANARY || s === ENV_CANARY ? 'a canary' : 'a token'}`,
        );
      }
    }
    const logs = broker.stderr.join('\n');
    for (const s of secrets) if (logs.includes(s)) leaks.push(`broker log contains ${s.slice(0, 12)}…`);
    for (const [i, r] of responses.entries())
      for (const s of secrets)
        if (r.includes(s)) leaks.push(`response ${i} contains ${s.slice(0, 12)}…: ${r.slice(0, 100)}`);
    for (const pid of [broker.proc.pid!, ...descendants(broker.proc.pid!)]) {
      if (!running(pid)) continue;
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      for (const s of secrets)
        if (cmdline.includes(s)) leaks.push(`command line of ${pid} contains ${s.slice(0, 12)}…`);
    }
    report('canary-secrets', {
      secretsHunted: secrets.length,
      filesSearched: files.length,
      responsesSearched: responses.length,
      logLines: broker.stderr.length,
      leaks: leaks.length,
    });
    assert.deepEqual(leaks, []);
  });
});

describe('faults: community server in a freshly cloned registry', function () {
  this.timeout(120_000);
  after(() => removeTempDirs());

  function git(cwd: string, ...args: string[]): void {
    const r = spawnSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
        GIT_CONFIG_NOSYSTEM: '1',
      },
    });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  }

  it('does not start an enabled community server without approval, even when another clone of it is approved', async () => {
    const upstreamRepo = tempDir('sb-fault-origin-');
    writeRegistry(upstreamRepo, {
      'mcp-servers.d/community.yaml':
        faultServer('community', 'bare.mjs').replace('trust: trusted', 'trust: community') + 'enabled: true\n',
      'mcp-servers.d/builtin.yaml': faultServer('builtin', 'bare.mjs'),
    });
    git(upstreamRepo, 'init', '-q');
    git(upstreamRepo, 'add', '.');
    git(upstreamRepo, 'commit', '-q', '-m', 'registry');
    const home = tempDir('sb-home-');
    const results: Json = {};
    let approvedElsewhere = false;
    for (const round of ['fresh clone', 'second clone after the first was approved']) {
      const clone = path.join(tempDir('sb-fault-clone-'), 'ws');
      git(path.dirname(clone), 'clone', '-q', '--no-hardlinks', upstreamRepo, clone);
      const b = await startBroker({ root: clone, home });
      const c = await connect(b.url, b.token, 'operator');
      await waitFor(async () => (await status(c, 'builtin')).state === 'running', 'builtin', 30_000);
      const s = await status(c, 'community');
      assert.equal(s.state, 'awaiting-approval', `${round}: enabled: true from the repository is not enough`);
      assert.equal(s.pid, undefined);
      const children = descendants(b.proc.pid!);
      for (const pid of children) fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      assert.equal(children.length, 1, `${round}: only the trusted server runs`);
      assert.ok(!(await c.listTools()).tools.some((t) => t.name.startsWith('community__')));
      const call = await c.callTool({ name: 'community__echo', arguments: { text: 'x' } }).catch((e: Error) => e);
      assert.ok(call instanceof Error || call.isError, 'its tools cannot be called');
      results[round] = s.state;
      if (!approvedElsewhere) {
        // Approve it in this clone: the approval is for this workspace only.
        const approved = await facade(c, 'approve_server', { name: 'community', hash: s.approvalHash });
        assert.equal(approved.state, 'running');
        noteUpstreams(b);
        approvedElsewhere = true;
      }
      await c.close();
      await b.stop();
    }
    report('community-approval', { faultsInjected: 2, clones: 2, startedWithoutApproval: 0, states: results });
  });
});
