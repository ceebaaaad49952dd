// Lifecycles end to end: a lazy server runs once to learn its catalog, then only when a call,
// prompts/get or resources/read needs it, and stops again after idleStopMs; a crash during its
// first call fails that call only.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
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
  status,
} from '../../helpers/broker';

type Json = Record<string, any>;

/** The pids a fixture wrote at each start (echo.mjs --starts): one line per start. */
const starts = (file: string): number[] =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];

/**
 * Host pids of the processes whose command line names `arg` (a server's `--starts` file): the server
 * and its sandbox. The pid a sandboxed server writes is one of its own PID namespace, not the host's.
 */
function processesNaming(arg: string): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(arg)) out.push(Number(entry));
    } catch {
      /* exited while we looked */
    }
  }
  return out;
}

describe('lifecycles', function () {
  this.timeout(90_000);
  let broker: BrokerProcess;
  let client: Client;
  let dir: string;
  let slowFile: string;
  const startsOf = (name: string): string => path.join(dir, `${name}.starts`);
  /** A lazy echo.mjs that counts its starts. */
  // The start counts are written outside the sandbox's own temp dir: the filesystem grant names it.
  const writesStarts = (): string => `grants: [filesystem]\nfilesystem:\n  write: [${JSON.stringify(dir)}]\n`;
  const lazy = (name: string, idleStopMs: number): string =>
    fixtureServer(
      name,
      'echo.mjs',
      ['--starts', startsOf(name)],
      `lifecycle: lazy\nidleStopMs: ${idleStopMs}\n${writesStarts()}`,
    );
  const idle = (name: string): Promise<Json> =>
    waitFor(async () => {
      const s = await status(client, name);
      return s.state === 'idle' ? s : undefined;
    }, `${name} to go idle`);

  before(async () => {
    const root = tempDir('sb-life-');
    dir = tempDir('sb-life-starts-');
    slowFile = path.join(dir, 'slowlearn.delay');
    fs.writeFileSync(slowFile, '6000');
    writeRegistry(root, {
      'mcp-servers.d/oncall.yaml': lazy('oncall', 1500),
      'mcp-servers.d/onprompt.yaml': lazy('onprompt', 600_000),
      // Its own resources (echo.mjs's are offered by the eager server too, which would answer them).
      'mcp-servers.d/onread.yaml': fixtureServer(
        'onread',
        'many-tools.mjs',
        ['--count', '1', '--resources', '2'],
        'lifecycle: lazy\n',
      ),
      // Slow to come up: its learning run is still going when the first test calls it.
      'mcp-servers.d/slowlearn.yaml': fixtureServer(
        'slowlearn',
        'echo.mjs',
        ['--delay-from', slowFile],
        'lifecycle: lazy\ngrants: [filesystem]\nfilesystem:\n  read: [' + JSON.stringify(dir) + ']\n',
      ),
      'mcp-servers.d/eager.yaml': fixtureServer('eager', 'echo.mjs', ['--starts', startsOf('eager')], writesStarts()),
      'mcp-servers.d/fragile.yaml': fixtureServer(
        'fragile',
        'crashy.mjs',
        [],
        'lifecycle: lazy\nrestart:\n  backoffMs: 50\n  maxBackoffMs: 100\n',
      ),
    });
    broker = await startBrokerProcess({ root });
    client = await connect(broker.url, broker.token, 'operator');
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it('a call to a lazy server while it learns its catalog waits for that start (its tools not listed yet)', async () => {
    // The positive control: the call below is made in the window it is about (state starting, no catalog).
    const before = await status(client, 'slowlearn');
    assert.equal(before.state, 'starting', JSON.stringify(before));
    assert.equal(before.catalog, 'none');
    assert.ok(!(await client.listTools()).tools.some((t) => t.name.startsWith('slowlearn__')), 'not listed yet');
    const result = await client.callTool({ name: 'slowlearn__echo', arguments: { text: 'early' } });
    assert.equal(textOf(result), 'echo: early');
    // It stays up for the idle time after serving the call, as a server started for a call does.
    assert.equal((await status(client, 'slowlearn')).state, 'running');
    // A name it does not have is still refused as unknown once it has started.
    await assert.rejects(client.callTool({ name: 'slowlearn__nope', arguments: {} }), /Unknown tool 'slowlearn__nope'/);
  });

  it('runs a lazy server with no cached catalog once to learn it, then stops it; an eager one stays up', async () => {
    for (const name of ['oncall', 'onprompt', 'onread']) {
      const s = await idle(name);
      assert.equal(s.lifecycle, 'lazy');
      assert.equal(s.catalog, 'cached');
      assert.equal(s.pid, undefined);
    }
    for (const name of ['oncall', 'onprompt']) {
      const pids = starts(startsOf(name));
      assert.equal(pids.length, 1, `${name} started once`);
      await waitFor(() => processesNaming(startsOf(name)).length === 0, `${name}'s learning run to exit`);
    }
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('oncall__echo') && tools.includes('onread__tool_0001'), 'idle servers list their tools');
    assert.equal((await client.listResources()).resources.filter((r) => r.uri.startsWith('fixture://many/')).length, 2);
    await waitFor(async () => (await status(client, 'eager')).state === 'running', 'the eager server');
    assert.equal((await status(client, 'eager')).lifecycle, 'eager');
  });

  it('starts on the first tools/call, stops after idleStopMs unused, and starts again on the next call', async () => {
    await idle('oncall');
    const first = await client.callTool({ name: 'oncall__echo', arguments: { text: 'wake' } });
    assert.equal(textOf(first), 'echo: wake');
    assert.equal(starts(startsOf('oncall')).length, 2);
    const running = await status(client, 'oncall');
    assert.equal(running.state, 'running');
    assert.equal(running.lastError, undefined, 'idle is not an error');
    assert.ok(isAlive(running.pid), 'its process runs');
    assert.ok(processesNaming(startsOf('oncall')).length > 0, 'the host sees its processes');

    const stopped = await idle('oncall');
    assert.equal(stopped.lastError, undefined);
    await waitFor(() => processesNaming(startsOf('oncall')).length === 0, 'the idle process to exit');
    await waitFor(() => !isAlive(running.pid), 'its sandbox to be gone (reaped)');

    const again = await client.callTool({ name: 'oncall__add', arguments: { a: 2, b: 3 } });
    assert.equal(textOf(again), '5');
    assert.equal(starts(startsOf('oncall')).length, 3);
  });

  it('starts on prompts/get and on resources/read', async () => {
    await idle('onprompt');
    const prompt = await client.getPrompt({ name: 'onprompt__greet', arguments: { name: 'Ada' } });
    assert.equal((prompt.messages[0].content as { text: string }).text, 'Hello, Ada!');
    assert.equal(starts(startsOf('onprompt')).length, 2);

    await idle('onread');
    const read = await client.readResource({ uri: 'fixture://many/0002' });
    assert.equal(read.contents[0].uri, 'fixture://many/0002');
    const s = await status(client, 'onread');
    assert.equal(s.state, 'running');
    assert.ok(s.pid, 'a process answered the read');
  });

  it('a crash during the first call of a lazy server fails only that call', async () => {
    await idle('fragile');
    const [crashed, other] = await Promise.all([
      client.callTool({ name: 'fragile__crash', arguments: {} }).catch((e: Error) => e),
      client.callTool({ name: 'eager__echo', arguments: { text: 'meanwhile' } }),
    ]);
    const message = crashed instanceof Error ? crashed.message : textOf(crashed);
    assert.ok(crashed instanceof Error || crashed.isError, 'the crashing call fails');
    assert.match(message, /fragile/);
    assert.equal(textOf(other), 'echo: meanwhile', 'a call to another server is untouched');
    // The restart policy brings it back; the next call goes through.
    await waitFor(async () => ['running', 'idle'].includes((await status(client, 'fragile')).state), 'fragile back');
    const ok = await client.callTool({ name: 'fragile__ok', arguments: {} });
    assert.equal(textOf(ok), 'ok');
    assert.equal((await status(client, 'fragile')).state, 'running');
  });
});
