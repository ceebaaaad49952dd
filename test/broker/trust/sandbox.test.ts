// The OS sandbox end to end: real bubblewrap around a real fixture server under the real broker.
// Without the filesystem grant a server cannot read a canary under HOME nor write outside its temp
// dir; with the grant it reaches what the definition names; an allow-list admits one loopback host
// and refuses another; where bubblewrap cannot run, the state says not-enforced and why.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as net from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { NetworkProxy, type ProxyRefusal } from '../../../src/broker/trust/networkProxy';
import {
  connect,
  fixture,
  fixtureServer,
  killStarted,
  REPO,
  removeTempDirs,
  startBrokerProcess,
  tempDir,
  waitFor,
  writeRegistry,
  type BrokerProcess,
  status,
  callText,
} from '../../helpers/broker';

type Json = Record<string, any>;

async function running(client: Client, name: string): Promise<Json> {
  return waitFor(async () => {
    const s = await status(client, name);
    if (s.state === 'failed') throw new Error(`${name} failed: ${s.lastError}`);
    return s.state === 'running' ? s : undefined;
  }, `${name} running`);
}

/** A loopback HTTP server answering `hello from <label>`. */
function helloServer(label: string): Promise<http.Server> {
  const server = http.createServer((_req, res) => res.end(`hello from ${label}`));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const portOf = (s: http.Server): number => (s.address() as { port: number }).port;

// Bubblewrap is Linux only: elsewhere the second suite checks the honest state instead.
(process.platform === 'linux' ? describe : describe.skip)('sandbox: bubblewrap around stdio servers (Linux)', () => {
  // Canaries live in the real home directory: the one a server would go after.
  let canaryDir: string;
  let canary: string;
  let readableDir: string;
  let outside: string;
  let root: string;
  let broker: BrokerProcess;
  let client: Client;
  let alpha: http.Server;
  let beta: http.Server;

  before(async function () {
    canaryDir = fs.mkdtempSync(path.join(os.homedir(), '.sb-canary-'));
    canary = path.join(canaryDir, 'secret.txt');
    fs.writeFileSync(canary, 'canary-value-7d1f');
    readableDir = path.join(canaryDir, 'granted');
    fs.mkdirSync(readableDir);
    fs.writeFileSync(path.join(readableDir, 'notes.txt'), 'granted-notes');
    // Outside /tmp and HOME (both hidden): a directory the sandbox shows read-only.
    outside = fs.mkdtempSync('/var/tmp/sb-outside-');
    fs.mkdirSync(path.join(outside, 'out'));
    [alpha, beta] = await Promise.all([helloServer('alpha'), helloServer('beta')]);
    root = tempDir('sb-sandbox-');
    fs.writeFileSync(path.join(root, 'readme.txt'), 'in the registry root');
    const allow = `["127.0.0.1:${portOf(alpha)}"]`;
    writeRegistry(root, {
      'mcp-servers.d/confined.yaml': fixtureServer('confined', 'fsprobe.mjs'),
      'mcp-servers.d/scoped.yaml': fixtureServer(
        'scoped',
        'fsprobe.mjs',
        [],
        `grants: [filesystem]\nfilesystem:\n  read: [${JSON.stringify(readableDir)}]\n` +
          `  write: [${JSON.stringify(path.join(outside, 'out'))}]\n`,
      ),
      'mcp-servers.d/webby.yaml': fixtureServer(
        'webby',
        'fsprobe.mjs',
        [],
        `grants: [network]\nnetwork:\n  allow: ${allow}\n`,
      ),
      'mcp-servers.d/full.yaml': fixtureServer('full', 'fsprobe.mjs', [], 'grants: [filesystem]\n'),
    });
    broker = await startBrokerProcess({ root });
    client = await connect(broker.url, broker.token);
    for (const name of ['confined', 'scoped', 'webby', 'full']) await running(client, name);
  });

  after(async () => {
    await client?.close();
    await killStarted();
    alpha?.close();
    beta?.close();
    removeTempDirs();
    fs.rmSync(canaryDir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('without the filesystem grant: no canary under HOME, no writes outside its temp dir, and says enforced', async () => {
    const s = await status(client, 'confined');
    assert.equal(s.enforcement.filesystem, 'enforced', JSON.stringify(s.enforcement));
    assert.equal(s.enforcement.network, 'enforced');
    assert.equal(await callText(client, 'confined__read_file', { path: canary }), 'ENOENT', 'HOME is an empty tmpfs');
    const token = path.join(broker.home, 'tokens');
    assert.notEqual((await callText(client, 'confined__read_file', { path: broker.tokenFile })).slice(0, 3), 'ok:');
    assert.equal(
      await callText(client, 'confined__read_file', { path: path.join(root, 'readme.txt') }),
      'ok: in the registry root',
    );
    assert.equal(await callText(client, 'confined__write_file', { path: path.join(root, 'w.txt') }), 'EROFS');
    assert.equal(await callText(client, 'confined__write_file', { path: path.join(outside, 'out', 'w.txt') }), 'EROFS');
    assert.equal(await callText(client, 'confined__write_file', { path: path.join(token, 'w.txt') }), 'ENOENT');
    for (const p of [path.join(root, 'w.txt'), path.join(outside, 'out', 'w.txt'), path.join(token, 'w.txt')])
      assert.ok(!fs.existsSync(p), `nothing was written to ${p}`);
    const tmp = await callText(client, 'confined__tmpdir');
    const inTemp = path.join(tmp, `probe-${process.pid}.txt`);
    assert.equal(await callText(client, 'confined__write_file', { path: inTemp }), 'ok: written');
    assert.match(await callText(client, 'confined__read_file', { path: inTemp }), /^ok: written by pid/);
    assert.ok(!fs.existsSync(inTemp), 'its temp dir is its own, not the host’s');
    // The temp dir ends with the server: after a restart the file is gone.
    await client.callTool({ name: 'switchboard__restart_server', arguments: { name: 'confined' } });
    await running(client, 'confined');
    assert.equal(await callText(client, 'confined__read_file', { path: inTemp }), 'ENOENT');
  });

  it('with the grant naming paths: those readable and writable as named, the rest of HOME still hidden', async () => {
    const s = await status(client, 'scoped');
    assert.equal(s.enforcement.filesystem, 'enforced');
    assert.deepEqual(s.enforcement.readPaths, [readableDir]);
    const notes = path.join(readableDir, 'notes.txt');
    assert.equal(await callText(client, 'scoped__read_file', { path: notes }), 'ok: granted-notes');
    assert.equal(await callText(client, 'scoped__write_file', { path: path.join(readableDir, 'x.txt') }), 'EROFS');
    assert.equal(
      await callText(client, 'scoped__read_file', { path: canary }),
      'ENOENT',
      'the rest of HOME stays hidden',
    );
    const written = path.join(outside, 'out', 'result.txt');
    assert.equal(await callText(client, 'scoped__write_file', { path: written }), 'ok: written');
    assert.match(fs.readFileSync(written, 'utf8'), /^written by pid/, 'the write reached the host');
    assert.equal(await callText(client, 'scoped__write_file', { path: path.join(outside, 'beside.txt') }), 'EROFS');
  });

  it('a bare filesystem grant keeps full access, and the state says so', async () => {
    const s = await status(client, 'full');
    assert.equal(s.enforcement.filesystem, 'granted');
    assert.ok(s.enforcement.notes.some((n: string) => /full access/.test(n)));
    assert.equal(await callText(client, 'full__read_file', { path: canary }), 'ok: canary-value-7d1f');
  });

  it('an allow-list admits the named loopback host through the proxy and refuses another, logged and audited', async () => {
    const s = await status(client, 'webby');
    assert.equal(s.enforcement.network, 'enforced');
    assert.deepEqual(s.enforcement.allowedHosts, [`127.0.0.1:${portOf(alpha)}`]);
    const a = `http://127.0.0.1:${portOf(alpha)}/`;
    const b = `http://127.0.0.1:${portOf(beta)}/`;
    assert.equal(await callText(client, 'webby__fetch', { url: a, via: 'proxy' }), '200 hello from alpha');
    assert.match(
      await callText(client, 'webby__fetch', { url: b, via: 'proxy' }),
      /^403 .*not in this server's network allow-list/,
    );
    // Anything that does not ask the proxy gets no network at all: the sandbox has only its own loopback.
    assert.equal(await callText(client, 'webby__fetch', { url: a, via: 'direct' }), 'ECONNREFUSED');
    const logs = await client.callTool({ name: 'switchboard__tail_logs', arguments: { name: 'webby' } });
    assert.match(JSON.stringify(logs), new RegExp(`refused 127\\.0\\.0\\.1:${portOf(beta)}`));
    const auditDir = path.join(broker.home, 'workspaces');
    const audit = await waitFor(() => {
      const file = path.join(auditDir, fs.readdirSync(auditDir)[0], 'audit.jsonl');
      const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
      return text.includes('network-refused') ? text : undefined;
    }, 'the refusal in the audit log');
    const entry = audit
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Json)
      .find((e) => e.event === 'network-refused')!;
    assert.deepEqual([entry.server, entry.host, entry.port], ['webby', '127.0.0.1', portOf(beta)]);
  });

  it("`npx --no-install <bin>` in a project under /tmp finds the project's node_modules (the sample in a fresh clone)", async () => {
    // The layout of a clone: <project>/node_modules/.bin/<bin> and the registry in <project>/workspace,
    // all under the hidden /tmp. Without its node_modules bound back, npx looks for the package on the
    // registry, inside a namespace without network: the handshake timed out with no output.
    const project = tempDir('sb-clone-');
    const pkg = path.join(project, 'node_modules', 'sb-local-echo');
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), '{"name":"sb-local-echo","version":"1.0.0","bin":"bin.mjs"}\n');
    fs.writeFileSync(
      path.join(pkg, 'bin.mjs'),
      `#!/usr/bin/env node\nawait import(${JSON.stringify(fixture('echo.mjs'))});\n`,
      { mode: 0o755 },
    );
    fs.mkdirSync(path.join(project, 'node_modules', '.bin'));
    fs.symlinkSync('../sb-local-echo/bin.mjs', path.join(project, 'node_modules', '.bin', 'sb-local-echo'));
    const workspace = path.join(project, 'workspace');
    // bin.mjs runs this repository's echo fixture, which a clone of the repository under /tmp would
    // hide in turn: that read is granted, as a real server would be granted the files it needs.
    writeRegistry(workspace, {
      'mcp-servers.d/local.yaml':
        'name: local\ntrust: trusted\ncommand: npx\nargs: [--no-install, sb-local-echo, --name, local]\n' +
        `grants: [filesystem]\nfilesystem: { read: [${JSON.stringify(REPO)}] }\n`,
    });
    const local = await startBrokerProcess({ root: workspace });
    const c = await connect(local.url, local.token);
    try {
      const s = await running(c, 'local');
      assert.equal(s.enforcement.filesystem, 'enforced', JSON.stringify(s.enforcement));
      assert.match(await callText(c, 'local__echo', { text: 'from the clone' }), /from the clone/);
    } finally {
      await c.close();
    }
  });
});

describe('sandbox: where bubblewrap cannot run', () => {
  let broker: BrokerProcess;
  let client: Client;
  let canaryDir: string;

  before(async () => {
    canaryDir = fs.mkdtempSync(path.join(os.homedir(), '.sb-canary-'));
    fs.writeFileSync(path.join(canaryDir, 'secret.txt'), 'canary-value-2b9e');
    const root = tempDir('sb-nobwrap-');
    writeRegistry(root, { 'mcp-servers.d/confined.yaml': fixtureServer('confined', 'fsprobe.mjs') });
    broker = await startBrokerProcess({ root, env: { SWITCHBOARD_NO_BWRAP: '1' } });
    client = await connect(broker.url, broker.token);
    await running(client, 'confined');
  });

  after(async () => {
    await client?.close();
    await killStarted();
    removeTempDirs();
    fs.rmSync(canaryDir, { recursive: true, force: true });
  });

  it('says not-enforced and why, and (honestly) the server can read the canary', async () => {
    const s = await status(client, 'confined');
    assert.equal(s.enforcement.filesystem, 'not-enforced');
    const why = process.platform === 'linux' ? /SWITCHBOARD_NO_BWRAP=1/ : /Linux only/;
    assert.ok(
      s.enforcement.notes.some((n: string) => why.test(n)),
      s.enforcement.notes.join(),
    );
    const read = await callText(client, 'confined__read_file', { path: path.join(canaryDir, 'secret.txt') });
    assert.equal(read, 'ok: canary-value-2b9e', 'the state is not claiming what does not hold');
    // The network is still cut by the fallback (unshare --net, sandbox-exec) where that runs.
    if (process.platform === 'linux') assert.equal(s.enforcement.network, 'enforced');
  });
});

// A Unix socket at a file path: not on Windows, where no sandbox uses the proxy.
(process.platform === 'win32' ? describe.skip : describe)('sandbox: the allow-list proxy tunnels CONNECT', () => {
  /** Sends CONNECT, then (if admitted) a line through the tunnel; the status line and what came back. */
  function tunnel(socketPath: string, port: number): Promise<string> {
    return new Promise((resolve) => {
      const c = net.connect(socketPath);
      let got = '';
      c.on('data', (d) => {
        got += d.toString();
        if (got.startsWith('HTTP/1.1 200') && got.endsWith('\r\n\r\n')) c.write('ping through the tunnel');
        else if (got.includes('ping through the tunnel')) c.end();
      });
      c.on('close', () => resolve(got.replace(/\r\n\r\n/, ' | ').split('\r\n')[0]));
      c.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    });
  }

  it('opens a tunnel to an allow-listed host:port, refuses another port, and removes its socket dir on close', async () => {
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const port = (echo.address() as net.AddressInfo).port;
    const refused: ProxyRefusal[] = [];
    const proxy = new NetworkProxy([`127.0.0.1:${port}`], (r) => refused.push(r));
    await proxy.open();
    try {
      assert.equal(fs.statSync(proxy.dir).mode & 0o777, 0o700, 'only this user may connect');
      assert.equal(
        await tunnel(proxy.socketPath, port),
        'HTTP/1.1 200 Connection established | ping through the tunnel',
      );
      assert.match(await tunnel(proxy.socketPath, port + 1), /^HTTP\/1\.1 403 Forbidden/);
      assert.deepEqual(refused, [{ host: '127.0.0.1', port: port + 1 }]);
    } finally {
      await proxy.close();
      echo.close();
    }
    assert.ok(!fs.existsSync(proxy.dir));
  });
});
