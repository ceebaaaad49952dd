// The Windows smoke test (npm run test:windows runs it with the Windows build of Node under Wine): the
// built broker serves a registry whose root has a drive letter and spaces, starts stdio servers through
// .cmd shims found with PATH and PATHEXT, passes arguments that need cmd.exe escaping, reaches a remote
// server over loopback HTTP, reloads on fs.watch, answers `status` and `connect`, stops a server with
// what it started, and keeps its per-user files under %LOCALAPPDATA%.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  BROKER_JS,
  connect,
  fixture,
  isAlive,
  startBrokerProcess,
  startHttpFixture,
  textOf,
  waitFor,
  type BrokerProcess,
} from '../helpers/broker';
import { notUnderWine, onlyOn } from '../helpers/platform';

/** Spaces, quotes, and the characters cmd.exe treats specially, in one argument. */
const TRICKY = 'a b "quoted" & echo INJECTED | x ^ ! < > ( ) ,;=';
/** Percent signs, which cmd.exe expands even inside quotes. */
const PERCENT = '100% %PATH% %% %cd:~,%';

const windows = onlyOn('win32', 'the Windows smoke test needs a Windows Node (npm run test:windows)');

windows.describe('Windows smoke: the broker on a Windows Node', function () {
  this.timeout(120_000);
  let base: string;
  let root: string;
  let localAppData: string;
  let env: NodeJS.ProcessEnv;
  let broker: BrokerProcess;
  let client: Client;
  let remote: { url: string; stop(): Promise<void> };

  const callText = async (name: string, args: Record<string, unknown> = {}): Promise<string> =>
    textOf(await client.callTool({ name, arguments: args }));
  const toolNames = async (): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);

  before(async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard win smoke '));
    root = path.join(base, 'registry root');
    localAppData = path.join(base, 'Local App Data');
    const bin = path.join(base, 'shim bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.mkdirSync(localAppData);
    // What npm writes for a package's bin: a .cmd that runs node with the script and passes %* on.
    fs.writeFileSync(path.join(bin, 'echo-server.cmd'), `@"${process.execPath}" "${fixture('echo.mjs')}" %*\r\n`);
    // npx-style: the runner takes what to run and its arguments from the command line.
    fs.writeFileSync(path.join(bin, 'fake-npx.cmd'), `@"${process.execPath}" %*\r\n`);
    const pathKey = Object.keys(process.env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
    env = {
      ...process.env,
      [pathKey]: [bin, path.dirname(process.execPath), process.env[pathKey]].join(';'),
      LOCALAPPDATA: localAppData,
      SWITCHBOARD_HOME: undefined,
    };
    // The first Node started in a fresh Wine prefix can take half a minute on a busy machine.
    remote = await startHttpFixture('echo.mjs', 90_000);
    const server = (name: string, body: string): [string, string] => [
      `mcp-servers.d/${name}.yaml`,
      `name: ${name}\ntrust: trusted\n${body}`,
    ];
    const files = Object.fromEntries([
      server('shimmed', 'command: echo-server\nargs: [--name, shimmed]\n'),
      server(
        'npxish',
        `command: fake-npx\nargs: [${JSON.stringify(fixture('echo.mjs'))}, --name, ${JSON.stringify(TRICKY)}]\n`,
      ),
      server(
        'npxpct',
        `command: fake-npx\nargs: [${JSON.stringify(fixture('echo.mjs'))}, --name, ${JSON.stringify(PERCENT)}]\n`,
      ),
      server('remote', `transport: http\nurl: ${remote.url}\n`),
      server('spawner', `command: node\nargs: [${JSON.stringify(fixture('spawner.mjs'))}, --detach-grandchild]\n`),
      // Ignores stdin EOF and SIGTERM: only a kill ends it, so the broker's end must take it along.
      server('stubborn', `command: node\nargs: [${JSON.stringify(fixture('spawner.mjs'))}, --ignore-sigterm]\n`),
    ]);
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    }
    broker = await startBrokerProcess({ root, home: undefined, env, timeoutMs: 60_000 });
    client = await connect(broker.url, broker.token);
  });

  after(async function () {
    this.timeout(60_000);
    await client?.close().catch(() => undefined);
    await broker?.stop().catch(() => undefined);
    await remote?.stop().catch(() => undefined);
    // A process a failed test left running keeps its working directory busy: the test says so, not this.
    try {
      if (base) fs.rmSync(base, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    } catch {
      /* in the fresh Wine prefix's temp dir, which the next run replaces */
    }
  });

  it('serves a registry root with a drive letter and spaces, its per-user files under %LOCALAPPDATA%', () => {
    assert.match(root, /^[A-Za-z]:\\.* .*/, `a drive-letter root with spaces: ${root}`);
    const home = path.join(localAppData, 'Switchboard');
    assert.ok(
      broker.tokenFile.toLowerCase().startsWith(home.toLowerCase() + '\\'),
      `the operator token is under ${home}: ${broker.tokenFile}`,
    );
    assert.ok(fs.existsSync(broker.tokenFile));
  });

  it('starts a stdio server through a .cmd shim found on PATH with PATHEXT', async () => {
    await waitFor(async () => (await toolNames()).includes('shimmed__whoami'), 'the shimmed server', 60_000, 250);
    assert.equal(await callText('shimmed__whoami'), 'shimmed');
    assert.equal(await callText('shimmed__echo', { text: 'über & 100%' }), 'echo: über & 100%');
  });

  it('passes arguments that need cmd.exe escaping through an npx-style shim exactly', async () => {
    await waitFor(async () => (await toolNames()).includes('npxish__whoami'), 'the npx-style server', 60_000, 250);
    assert.equal(await callText('npxish__whoami'), TRICKY);
  });

  // Wine's cmd.exe expands %VAR% once more in the text a batch file's %* stands for; Windows' does not
  // (the batch-argument tests of Rust and Zig, which escape % the same way, pass on Windows). Under Wine
  // this server gets `100 C:\windows\system32;…`: shared/platform/windowsCommand.ts is unit-tested for it.
  notUnderWine("its cmd.exe expands %VAR% again inside a batch file's %*").it(
    'passes percent signs through an npx-style shim exactly',
    async () => {
      await waitFor(async () => (await toolNames()).includes('npxpct__whoami'), 'the percent server', 60_000, 250);
      assert.equal(await callText('npxpct__whoami'), PERCENT);
    },
  );

  it('reaches a remote upstream over loopback HTTP', async () => {
    await waitFor(async () => (await toolNames()).includes('remote__echo'), 'the remote server', 60_000, 250);
    assert.equal(await callText('remote__echo', { text: 'over http' }), 'echo: over http');
  });

  it('reloads the registry when a definition is added (fs.watch)', async () => {
    fs.writeFileSync(
      path.join(root, 'mcp-servers.d', 'late.yaml'),
      'name: late\ntrust: trusted\ncommand: echo-server\nargs: [--name, late]\n',
    );
    await waitFor(async () => (await toolNames()).includes('late__whoami'), 'the added server', 60_000, 250);
    assert.equal(await callText('late__whoami'), 'late');
  });

  it('`switchboard status` lists the servers and their state', () => {
    const r = spawnSync(process.execPath, [BROKER_JS, 'status', '--root', root, '--json'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const status = JSON.parse(r.stdout) as { servers: { name: string; state: string }[] };
    const states = Object.fromEntries(status.servers.map((s) => [s.name, s.state]));
    for (const name of ['shimmed', 'npxish', 'remote', 'late'])
      assert.equal(states[name], 'running', `${name}: ${JSON.stringify(states)}`);
  });

  it('`switchboard connect` bridges stdio to the running broker', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BROKER_JS, 'connect', '--root', root, '--no-start'],
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    const agent = new SdkClient({ name: 'stdio-agent', version: '1' });
    await agent.connect(transport);
    try {
      const result = await agent.callTool({ name: 'shimmed__echo', arguments: { text: 'through the bridge' } });
      assert.equal(textOf(result), 'echo: through the bridge');
    } finally {
      await agent.close();
    }
  });

  it('stops a server together with the process it left running (its Job Object)', async () => {
    await waitFor(async () => (await toolNames()).includes('spawner__children'), 'the spawner', 60_000, 250);
    const leader = Number(await callText('spawner__pid'));
    const grandchild = Number(await callText('spawner__children'));
    assert.ok(isAlive(leader) && isAlive(grandchild), 'both run before the stop (positive control)');
    fs.rmSync(path.join(root, 'mcp-servers.d', 'spawner.yaml'));
    await waitFor(async () => !(await toolNames()).includes('spawner__children'), 'the spawner removed', 60_000, 250);
    await waitFor(() => !isAlive(leader), `the spawner (pid ${leader}) to stop`, 30_000, 250);
    await waitFor(() => !isAlive(grandchild), `its detached child (pid ${grandchild}) to stop`, 30_000, 250);
  });

  it('takes its stdio servers along when the broker process is ended', async () => {
    await waitFor(async () => (await toolNames()).includes('stubborn__pid'), 'the stubborn server', 60_000, 250);
    const server = Number(await callText('stubborn__pid'));
    assert.ok(isAlive(server), 'the server runs (positive control)');
    // On Windows process.kill is TerminateProcess: no shutdown code runs, only the job's kill-on-close.
    broker.proc.kill();
    await waitFor(() => broker.proc.exitCode !== null || broker.proc.signalCode !== null, 'the broker to end', 30_000);
    await waitFor(() => !isAlive(server), `the server (pid ${server}) to end with the broker`, 30_000, 250);
  });
});
