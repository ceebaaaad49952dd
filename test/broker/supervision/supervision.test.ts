// Supervision: remote transports, restart backoff and the crash-loop breaker, process groups.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  fixture,
  fixtureServer,
  isAlive,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  textOf,
  track,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  status,
} from '../../helpers/broker';

/** Starts a fixture as an HTTP or SSE server and resolves its URL. */
async function remoteFixture(script: string, mode: '--http' | '--sse'): Promise<{ url: string; stop(): void }> {
  const proc = track(spawn(process.execPath, [fixture(script), mode, '0'], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: proc.stdout! }).on('line', (l) => {
      try {
        resolve((JSON.parse(l) as { listening: string }).listening);
      } catch {
        /* not the line */
      }
    });
    proc.once('exit', (c) => reject(new Error(`${script} exited ${c}`)));
  });
  return { url, stop: () => proc.kill('SIGTERM') };
}

describe('supervision', function () {
  this.timeout(90_000);
  let broker: BrokerProcess;
  let client: Client;
  let root: string;
  const remotes: { stop(): void }[] = [];

  before(async () => {
    root = tempDir('sb-sup-');
    const http = await remoteFixture('echo.mjs', '--http');
    const sse = await remoteFixture('echo.mjs', '--sse');
    remotes.push(http, sse);
    writeRegistry(root, {
      'mcp-servers.d/remote-http.yaml': `name: remote-http\ntrust: trusted\ntransport: http\nurl: ${http.url}\n`,
      'mcp-servers.d/remote-sse.yaml': `name: remote-sse\ntrust: trusted\ntransport: sse\nurl: ${sse.url}\n`,
      'mcp-servers.d/looping.yaml': fixtureServer(
        'looping',
        'crashy.mjs',
        ['--exit-at-start'],
        'restart:\n  maxRetries: 3\n  backoffMs: 50\n  maxBackoffMs: 200\n',
      ),
      'mcp-servers.d/spawner.yaml': fixtureServer('spawner', 'spawner.mjs'),
      'mcp-servers.d/stubborn.yaml': fixtureServer('stubborn', 'spawner.mjs', ['--ignore-sigterm']),
      'mcp-servers.d/missing.yaml': 'name: missing\ntrust: trusted\ncommand: definitely-not-a-command-xyz\n',
    });
    broker = await startBrokerProcess({ root });
    client = await connect(broker.url, broker.token);
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    await broker?.stop();
    for (const r of remotes) r.stop();
    removeTempDirs();
  });

  it('serves Streamable HTTP and SSE upstreams through the same catalog', async () => {
    await waitFor(async () => (await status(client, 'remote-http')).state === 'running', 'remote-http');
    await waitFor(async () => (await status(client, 'remote-sse')).state === 'running', 'remote-sse');
    assert.equal(
      textOf(await client.callTool({ name: 'remote-http__echo', arguments: { text: 'over http' } })),
      'echo: over http',
    );
    assert.equal(
      textOf(await client.callTool({ name: 'remote-sse__echo', arguments: { text: 'over sse' } })),
      'echo: over sse',
    );
  });

  it('opens the crash-loop breaker: state failed with the reason, after the configured retries', async () => {
    const s = await waitFor(
      async () => {
        const st = await status(client, 'looping');
        return st.state === 'failed' ? st : undefined;
      },
      'the breaker to open',
      20_000,
      100,
    );
    assert.equal(s.restarts, 3);
    assert.match(s.lastError, /exited with code 2/);
    assert.match(s.lastError, /boom: exiting at start/);
    assert.match(s.lastError, /gave up after 3 restarts/);
    const call = await client.callTool({ name: 'switchboard__tail_logs', arguments: { name: 'looping', lines: 50 } });
    assert.match(textOf(call), /boom: exiting at start/, 'stderr is drained into the log ring');
  });

  it('reports a missing command at once, without retrying', async () => {
    const s = await waitFor(async () => {
      const st = await status(client, 'missing');
      return st.state === 'failed' ? st : undefined;
    }, 'missing to fail');
    assert.match(s.lastError, /command not found: definitely-not-a-command-xyz/);
    assert.equal(s.restarts, 0);
  });

  it('kills the whole process group on stop: no orphaned grandchildren, even when SIGTERM is ignored', async () => {
    await waitFor(
      async () =>
        (await status(client, 'spawner')).state === 'running' && (await status(client, 'stubborn')).state === 'running',
      'spawners',
    );
    // The grandchild pids the servers report are of their sandboxes' PID namespaces: the host's view of
    // each tree is read from /proc instead, and each must hold its grandchild (`node -e setInterval…`).
    for (const name of ['spawner', 'stubborn']) await client.callTool({ name: `${name}__children`, arguments: {} });
    const leaders = [(await status(client, 'spawner')).pid, (await status(client, 'stubborn')).pid];
    const kids = leaders.flatMap((leader) => {
      const tree = descendants(leader);
      const grandchild = tree.filter((pid) => commandLine(pid).includes('setInterval'));
      assert.equal(grandchild.length, 1, `the grandchild in ${leader}'s tree: ${tree.map(commandLine).join(' | ')}`);
      return tree;
    });
    for (const pid of [...kids, ...leaders]) assert.ok(isAlive(pid), `${pid} runs`);
    fs.unlinkSync(path.join(root, 'mcp-servers.d/spawner.yaml'));
    fs.unlinkSync(path.join(root, 'mcp-servers.d/stubborn.yaml'));
    await waitFor(
      () => [...kids, ...leaders].every((pid) => !isAlive(pid)),
      'every process of both groups to be gone',
      20_000,
      100,
    );
  });

  it('kills npx and its node grandchild when the broker stops', async () => {
    const own = tempDir('sb-npx-');
    writeRegistry(own, {
      'mcp-servers.d/everything.yaml':
        'name: everything\ntrust: trusted\ncommand: npx\nargs: [--no-install, mcp-server-everything, stdio]\n' +
        `cwd: ${JSON.stringify(path.resolve(__dirname, '../../../..'))}\n`,
    });
    const b = await startBrokerProcess({ root: own });
    const c = await connect(b.url, b.token);
    const st = await waitFor(
      async () => {
        const s = await status(c, 'everything');
        return s.state === 'running' ? s : undefined;
      },
      'everything via npx',
      30_000,
    );
    const group = descendants(st.pid);
    assert.ok(group.length >= 1, `npx (${st.pid}) has a node child: ${group.join(',')}`);
    await c.close();
    await b.stop();
    await waitFor(
      () => [st.pid, ...group].every((pid) => !isAlive(pid)),
      'npx and its children to be gone',
      15_000,
      100,
    );
  });
});

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Child pids of a process, from /proc (Linux). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry), ...descendants(Number(entry)));
    } catch {
      /* exited while we looked */
    }
  }
  return out;
}
