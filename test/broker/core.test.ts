// The broker's data plane, end to end: the built broker process, fixture upstreams and a real
// server from npm, reached by real SDK clients over real HTTP.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ToolListChangedNotificationSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  connect,
  fixtureServer,
  isAlive,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';

async function toolNames(client: Client): Promise<string[]> {
  const all: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    all.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/**
 * The host pid of a server's process as the broker reports it (server_status): for a sandboxed server,
 * its sandbox's outer process. A pid the server reports itself is one of its own PID namespace, the
 * same small number at every start, so it cannot tell one start from another. The server's own `pid`
 * tool (`tool`) is called first, so the server is shown to answer too.
 */
async function pidOf(client: Client, tool: string): Promise<number> {
  const server = tool.slice(0, tool.indexOf('__'));
  await client.callTool({ name: tool, arguments: {} });
  const result = await client.callTool({ name: 'switchboard__server_status', arguments: { name: server } });
  const pid = (result.structuredContent as { pid?: number }).pid;
  if (!pid || !isAlive(pid)) throw new Error(`${server} has no live process (${pid})`);
  return pid;
}

/** The headers of a raw HTTP session on the broker, opened with an initialize (to see the wire itself). */
async function rawSession(broker: BrokerProcess): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${broker.token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await fetch(broker.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  await init.text();
  return { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id')! };
}

describe('broker core', function () {
  this.timeout(60_000);
  let root: string;
  let broker: BrokerProcess;
  let client: Client;

  before(async () => {
    root = tempDir('sb-core-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs', ['--logging']),
      'mcp-servers.d/many.yaml': fixtureServer(
        'many',
        'many-tools.mjs',
        ['--count', '120', '--page-size', '25', '--prompts', '3', '--resources', '4'],
        'excludeTools: ["tool_00?9", "tool_01?9"]\n',
      ),
      'mcp-servers.d/slow.yaml': fixtureServer('slow', 'slow.mjs', [], 'timeouts:\n  callMs: 1500\n'),
      'mcp-servers.d/crashy.yaml': fixtureServer(
        'crashy',
        'crashy.mjs',
        [],
        'restart:\n  backoffMs: 100\n  maxRetries: 50\n',
      ),
      'mcp-servers.d/changing.yaml': fixtureServer('changing', 'changing.mjs'),
      'mcp-servers.d/everything.yaml':
        'name: everything\ntrust: trusted\ncommand: npx\nargs: [--no-install, mcp-server-everything, stdio]\ncwd: ' +
        JSON.stringify(path.resolve(__dirname, '../../..')) +
        '\n',
      'mcp-servers.d/picky.yaml': fixtureServer(
        'picky',
        'echo.mjs',
        [],
        'allowedTools: [echo, "a*"]\nexcludeTools: [add]\n',
      ),
    });
    broker = await startBrokerProcess({ root });
    client = await connect(broker.url, broker.token);
    await waitFor(
      async () => (await toolNames(client)).some((n) => n.startsWith('everything__')),
      'every upstream to be listed',
      30_000,
    );
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('lists every upstream tool under <server>__<tool>, following upstream pagination', async () => {
    const names = await toolNames(client);
    assert.ok(names.includes('echo__echo'));
    assert.ok(names.includes('echo__add'));
    assert.ok(names.includes('slow__slow'));
    const many = names.filter((n) => n.startsWith('many__'));
    // 120 numbered tools over 5 upstream pages, minus 12 excluded (0009, 0019, ... 0119), plus the 2 odd names.
    assert.equal(many.length, 120 - 12 + 2);
    assert.ok(!names.includes('many__tool_0019'), 'excludeTools applies');
    assert.ok(names.includes('many__tool_0020'));
    for (const name of names) {
      assert.match(name, /^[A-Za-z0-9_-]{1,64}$/, `${name} is valid for strict clients`);
    }
  });

  it('shortens over-long and invalid names deterministically and maps them back on call', async () => {
    const names = await toolNames(client);
    const long = names.find((n) => n.startsWith('many__a_really_long'));
    const weird = names.find((n) => n.startsWith('many__weird_tool_name'));
    assert.ok(long && long.length <= 64, `long name shortened: ${long}`);
    assert.ok(weird, 'weird name sanitized');
    const result = await client.callTool({ name: long!, arguments: {} });
    assert.match(textOf(result), /^a_really_long_tool_name_that_goes_way_past_the_sixty_four_char_limit_x called/);
    const again = await connect(broker.url, broker.token);
    assert.ok((await toolNames(again)).includes(long!), 'same shortened name for another session');
    await again.close();
    assert.match(textOf(await client.callTool({ name: weird!, arguments: {} })), /^weird\.tool name called/);
  });

  it('applies allowedTools and excludeTools', async () => {
    const picky = (await toolNames(client)).filter((n) => n.startsWith('picky__')).sort();
    assert.deepEqual(picky, ['picky__echo']);
    const denied = await client.callTool({ name: 'picky__add', arguments: { a: 1, b: 2 } }).catch((e: Error) => e);
    assert.ok(denied instanceof Error && /Unknown tool/.test(denied.message));
  });

  it('forwards arguments, content, structuredContent and isError', async () => {
    const echo = await client.callTool({ name: 'echo__echo', arguments: { text: 'hi' } });
    assert.equal(textOf(echo), 'echo: hi');
    assert.deepEqual(echo.structuredContent, { text: 'hi' });
    const sum = await client.callTool({ name: 'echo__add', arguments: { a: 2, b: 40 } });
    assert.deepEqual(sum.structuredContent, { sum: 42 });
    const failed = await client.callTool({ name: 'echo__fail', arguments: { message: 'nope' } });
    assert.equal(failed.isError, true);
    assert.match(textOf(failed), /nope/);
  });

  it("forwards large results exactly (passed on as the upstream's bytes, not re-serialized)", async () => {
    // 20 KB arrives in one pipe read, 300 KB and 1 MB in many: the two ways a line is put together.
    for (const bytes of [20_000, 300_000, 1_048_576]) {
      const result = await client.callTool({ name: 'echo__payload', arguments: { bytes } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'x'.repeat(bytes) }], `${bytes} bytes`);
    }
    // On the wire: one JSON body whose id is the caller's own, after the result.
    const headers = await rawSession(broker);
    const batch = [
      {
        jsonrpc: '2.0',
        id: 'big',
        method: 'tools/call',
        params: { name: 'echo__payload', arguments: { bytes: 500_000 } },
      },
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'small' } } },
    ];
    const res = await fetch(broker.url, { method: 'POST', headers, body: JSON.stringify(batch) });
    const text = await res.text();
    assert.equal(Number(res.headers.get('content-length')), Buffer.byteLength(text));
    const answers = JSON.parse(text) as { id: unknown; result: { content: { text: string }[] } }[];
    assert.deepEqual(answers.map((a) => a.id).sort(), [9, 'big'].sort());
    assert.equal(answers.find((a) => a.id === 'big')!.result.content[0].text.length, 500_000);
    assert.match(text, /,"id":"big"\}/);
  });

  it('calls a real npm server (server-everything) through the broker', async () => {
    const names = await toolNames(client);
    assert.ok(names.includes('everything__echo'), names.filter((n) => n.startsWith('everything')).join(','));
    const result = await client.callTool({ name: 'everything__echo', arguments: { message: 'from the broker' } });
    assert.match(textOf(result), /from the broker/);
  });

  it('serves prompts and resources (and templates) namespaced, routed to their owner', async () => {
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('echo__greet'));
    assert.ok(prompts.includes('many__prompt_0003'), 'upstream prompt pages followed');
    const greeting = await client.getPrompt({ name: 'echo__greet', arguments: { name: 'Ada' } });
    assert.match(JSON.stringify(greeting.messages), /Hello, Ada!/);

    const resources = (await client.listResources()).resources;
    assert.ok(resources.some((r) => r.uri === 'fixture://readme' && r.name.startsWith('echo__')));
    assert.equal(resources.filter((r) => r.uri.startsWith('fixture://many/')).length, 4);
    const readme = await client.readResource({ uri: 'fixture://readme' });
    assert.ok(readme.contents.length > 0);
    const templates = (await client.listResourceTemplates()).resourceTemplates;
    assert.ok(templates.some((t) => t.uriTemplate === 'fixture://items/{id}'));
    const item = await client.readResource({ uri: 'fixture://items/42' });
    assert.match(JSON.stringify(item.contents), /42/);
  });

  it("forwards progress notifications with the caller's own token", async () => {
    // On the wire: every progress event of the upstream, under the caller's token, then the result.
    const headers = await rawSession(broker);
    const res = await fetch(broker.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'slow__slow',
          arguments: { steps: 4, delayMs: 30 },
          _meta: { progressToken: 'caller-token-7' },
        },
      }),
    });
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map(
        (l) =>
          JSON.parse(l.slice(6)) as {
            method?: string;
            params?: { progressToken: unknown; progress: number };
            id?: number;
            result?: unknown;
          },
      );
    const progress = events.filter((e) => e.method === 'notifications/progress');
    // The broker's own SDK client (upstream side) can lose the upstream's last event to the same
    // race the SDK client has downstream; the first three always cross.
    const values = progress.map((e) => e.params!.progress);
    assert.ok(values.length >= 3, `progress events on the wire: ${values.join(',')}`);
    assert.deepEqual(values, [1, 2, 3, 4].slice(0, values.length));
    assert.ok(progress.every((e) => e.params!.progressToken === 'caller-token-7'));
    assert.equal(events.at(-1)!.id, 2);
    assert.match(JSON.stringify(events.at(-1)!.result), /done 4 steps/);

    // Through the SDK client: its handler sees them in order (it may drop ones that arrive in the
    // same chunk as the result, a client-side race, so only a prefix is required).
    const seen: number[] = [];
    const result = await client.callTool({ name: 'slow__slow', arguments: { steps: 4, delayMs: 50 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.match(textOf(result), /done 4 steps/);
    assert.ok(seen.length >= 1, 'progress reached the SDK client');
    assert.deepEqual(seen, [1, 2, 3, 4].slice(0, seen.length));
  });

  it('forwards cancellation to the upstream', async () => {
    const before = (await client.callTool({ name: 'slow__cancelled', arguments: {} })).structuredContent as {
      cancelled: number;
    };
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow__hang', arguments: {} }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('test cancels'), 200);
    await assert.rejects(call);
    await waitFor(async () => {
      const now = (await client.callTool({ name: 'slow__cancelled', arguments: {} })).structuredContent as {
        cancelled: number;
      };
      return now.cancelled > before.cancelled;
    }, 'the upstream to record the cancellation');
  });

  it("times out a call per the server's timeout and the session stays usable", async () => {
    const err = await client.callTool({ name: 'slow__hang', arguments: {} }).catch((e: Error) => e);
    assert.ok(err instanceof Error);
    assert.match(err.message, /did not answer within 1500 ms/);
    assert.equal(
      textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'still here' } })),
      'echo: still here',
    );
  });

  it('forwards upstream log messages to the session', async () => {
    const logs: unknown[] = [];
    const c = await connect(broker.url, broker.token);
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params);
    });
    await c.setLoggingLevel('debug');
    await c.callTool({ name: 'echo__echo', arguments: { text: 'log me' } });
    await waitFor(() => logs.some((l) => JSON.stringify(l).includes('echo called')), 'a forwarded log message');
    assert.match(JSON.stringify(logs), /"logger":"echo/);
    await c.close();
  });

  it('isolates a crash: in-flight calls fail clearly, others keep working, the upstream restarts', async () => {
    const pidBefore = await pidOf(client, 'crashy__pid');
    const echoPid = await pidOf(client, 'echo__pid');
    const crash = await client.callTool({ name: 'crashy__crash', arguments: {} }).catch((e: Error) => e);
    assert.ok(crash instanceof Error);
    assert.match(crash.message, /crashy.*(stopped while handling this call|exited)/);
    assert.equal(textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'ok' } })), 'echo: ok');
    const pidAfter = await waitFor(
      async () => {
        const pid = await pidOf(client, 'crashy__pid');
        return pid !== pidBefore ? pid : undefined;
      },
      'crashy to be restarted',
      15_000,
      100,
    );
    assert.notEqual(pidAfter, pidBefore);
    assert.equal(await pidOf(client, 'echo__pid'), echoPid, 'other upstream untouched');
  });

  it("propagates an upstream's tools/list_changed to connected sessions", async () => {
    let notified = 0;
    const c = await connect(broker.url, broker.token);
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified++;
    });
    await c.callTool({ name: 'changing__add_tool', arguments: { name: 'gamma' } });
    await waitFor(() => notified > 0, 'tools/list_changed');
    // A tool new since approval is quarantined (tool pins) until the operator accepts it.
    const changes = await waitFor(async () => {
      const diff = await c.callTool({ name: 'switchboard__tool_changes', arguments: { name: 'changing' } });
      const result = diff.structuredContent as { toolsHash: string; changes: unknown[] } | undefined;
      return result?.changes.length ? result : undefined;
    }, 'the new tool to be held back');
    await c.callTool({
      name: 'switchboard__accept_tool_changes',
      arguments: { name: 'changing', hash: changes.toolsHash },
    });
    await waitFor(async () => (await toolNames(c)).includes('changing__gamma'), 'the new tool to be listed');
    assert.match(textOf(await c.callTool({ name: 'changing__gamma', arguments: {} })), /gamma called/);
    await c.callTool({ name: 'changing__remove_tool', arguments: { name: 'gamma' } });
    await waitFor(async () => !(await toolNames(c)).includes('changing__gamma'), 'the tool to be gone');
    await c.close();
  });

  it('hot-reloads the registry: add, change and remove files; unchanged upstreams keep their pid', async () => {
    let notified = 0;
    const c = await connect(broker.url, broker.token);
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified++;
    });
    const echoPid = await pidOf(c, 'echo__pid');

    writeRegistry(root, { 'mcp-servers.d/second.yaml': fixtureServer('second', 'echo.mjs', ['--name', 'second']) });
    await waitFor(async () => (await toolNames(c)).includes('second__whoami'), 'the added server', 15_000);
    // The list can show the server before list_changed arrives: that comes on the session's GET
    // stream, and a tools/list settles a pending catalog rebuild itself.
    await waitFor(() => notified > 0, 'list_changed for the added server');
    assert.equal(textOf(await c.callTool({ name: 'second__whoami', arguments: {} })), 'second');
    const secondPid = await pidOf(c, 'second__pid');

    writeRegistry(root, { 'mcp-servers.d/second.yaml': fixtureServer('second', 'echo.mjs', ['--name', 'second-v2']) });
    await waitFor(
      async () => textOf(await c.callTool({ name: 'second__whoami', arguments: {} })) === 'second-v2',
      'the changed server to restart',
      15_000,
    );
    assert.notEqual(await pidOf(c, 'second__pid'), secondPid, 'a changed definition restarts its upstream');
    assert.equal(await pidOf(c, 'echo__pid'), echoPid, 'an unchanged upstream keeps its pid across a reload');

    fs.unlinkSync(path.join(root, 'mcp-servers.d/second.yaml'));
    await waitFor(
      async () => !(await toolNames(c)).some((n) => n.startsWith('second__')),
      'the removed server to disappear',
      15_000,
    );
    await waitFor(() => !isAlive(secondPid), 'the removed server process to exit');
    assert.equal(await pidOf(c, 'echo__pid'), echoPid);
    await c.close();
  });

  it('reports a malformed file with file and line and keeps the last good version live', async () => {
    const file = path.join(root, 'mcp-servers.d/echo.yaml');
    const good = fs.readFileSync(file, 'utf8');
    const echoPid = await pidOf(client, 'echo__pid');
    fs.writeFileSync(file, good + 'comand: oops\n');
    await waitFor(
      () => broker.stderr.some((l) => /mcp-servers\.d\/echo\.yaml:\d+:\d+: .*comand/.test(l)),
      'the problem to be reported with file and line',
    );
    writeRegistry(root, { 'mcp-servers.d/broken.yaml': 'name: [unclosed\n' });
    await waitFor(
      () => broker.stderr.some((l) => /mcp-servers\.d\/broken\.yaml:\d+:\d+/.test(l)),
      'the YAML syntax error to be reported',
    );
    assert.equal(textOf(await client.callTool({ name: 'echo__echo', arguments: { text: 'alive' } })), 'echo: alive');
    assert.equal(await pidOf(client, 'echo__pid'), echoPid, 'the last good version stays live, untouched');
    fs.writeFileSync(file, good);
    fs.unlinkSync(path.join(root, 'mcp-servers.d/broken.yaml'));
  });

  it('serves one upstream unprefixed at /servers/<name>/mcp', async () => {
    const url = broker.url.replace(/\/mcp$/, '/servers/echo/mcp');
    const single = await connect(url, broker.token);
    const names = (await single.listTools()).tools.map((t) => t.name).sort();
    assert.ok(names.includes('echo') && names.includes('add') && !names.some((n) => n.includes('__')), names.join(','));
    assert.equal(textOf(await single.callTool({ name: 'echo', arguments: { text: 'direct' } })), 'echo: direct');
    assert.ok((await single.listPrompts()).prompts.some((p) => p.name === 'greet'));
    await single.close();
    await assert.rejects(connect(broker.url.replace(/\/mcp$/, '/servers/nosuch/mcp'), broker.token), /404|no server/i);
  });
});
