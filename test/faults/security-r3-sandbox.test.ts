// Security round 3, the sandbox (issue 28, items 1 and 2). A hostile stdio server (fixtures/escape.mjs),
// confined by the real broker with no grants, tries what the review found when the broker runs as
// root: read the operator token through /proc/<broker pid>/root, join the broker's network namespace
// with nsenter and call an operator-only tool, unmount its empty HOME and remount / writable to write
// into the host's home, and read a sibling's secret from /proc/<pid>/environ; and a grandchild that
// leaves the process group must still end when the server is stopped. Each attack reports what it
// saw; each has a positive control (the target is there and reachable when not sandboxed, the
// legitimate path still works), so no assertion can pass on an attack that merely misfired.
//
// The scenario runs twice: with the broker as root and as an unprivileged user. Setting up the second
// run needs root (CI runs as root): it adds a system user (useradd) when missing and starts the broker
// under it with setpriv; that user gets a copy of the built broker and of the fixtures in a directory
// it can read, since the checkout may sit under a home directory it cannot enter (/root is 0700).
// Run by a normal user, the suite runs the scenario once, as that user.
//
// Item 2 (the wildcard allow-list) attacks the real proxy with raw CONNECT and absolute-URI requests;
// its positive control reaches a loopback server by an allow-listed name, resolved from a hosts file
// bind-mounted (bubblewrap) over /etc/hosts for the proxy's process only.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { REPO, connect, stopProcess, textOf, track, waitFor } from '../helpers/broker';
import { FAULT_FIXTURES, facade, notePid, report, running, status, type Json } from './lib';

const TEST_USER = 'sb-sandbox-test';
const SIBLING_CANARY = 'sibling-secret-3f9a1c-do-not-leak';
const BROKER_CANARY = 'broker-env-canary-77d2e0-do-not-leak';

interface RunAs {
  label: string;
  uid: number;
  gid: number;
  /** What the broker's command line starts with (setpriv for the unprivileged run). */
  prefix: string[];
}

/** Who this suite can run the broker as: root and a system user when it runs as root, else its own user. */
function whoRuns(): Array<{ title: string; resolve: () => RunAs }> {
  const uid = process.getuid!();
  const gid = process.getgid!();
  if (uid !== 0) {
    const label = `its own user (uid ${uid})`;
    return [{ title: label, resolve: () => ({ label, uid, gid, prefix: [] }) }];
  }
  return [
    { title: 'root', resolve: () => ({ label: 'root', uid: 0, gid: 0, prefix: [] }) },
    { title: `an unprivileged user (${TEST_USER})`, resolve: unprivilegedUser },
  ];
}

/** The system user of the second run, added when missing (needs root, as useradd and setpriv do). */
function unprivilegedUser(): RunAs {
  const id = (flag: string): number => Number(spawnSync('id', [flag, TEST_USER], { encoding: 'utf8' }).stdout.trim());
  if (spawnSync('id', ['-u', TEST_USER]).status !== 0) {
    const add = spawnSync(
      'useradd',
      ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', TEST_USER],
      { encoding: 'utf8' },
    );
    assert.equal(add.status, 0, `useradd ${TEST_USER}: ${add.stderr}`);
  }
  const uid = id('-u');
  const gid = id('-g');
  const prefix = ['setpriv', '--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--'];
  return { label: `an unprivileged user (${TEST_USER}, uid ${uid})`, uid, gid, prefix };
}

interface Stage {
  base: string;
  node: string;
  brokerJs: string;
  escape: string;
  bare: string;
}

/**
 * A world-readable copy of what the broker and its servers run: the bundle, the fixtures, and Node
 * itself if the user cannot run the test's own. Under /var/tmp: neither /tmp nor HOME, both of which
 * every sandbox hides anyway, so the HOME attack is against a real, bound-back-nothing directory.
 */
function stage(who: RunAs): Stage {
  const base = fs.mkdtempSync('/var/tmp/sb-r3-');
  fs.chmodSync(base, 0o755);
  const app = path.join(base, 'app');
  fs.mkdirSync(app, { mode: 0o755 });
  for (const f of fs.readdirSync(path.join(REPO, 'dist')).filter((f) => f.endsWith('.js')))
    fs.copyFileSync(path.join(REPO, 'dist', f), path.join(app, f));
  for (const f of ['escape.mjs', 'bare.mjs']) fs.copyFileSync(path.join(FAULT_FIXTURES, f), path.join(app, f));
  for (const f of fs.readdirSync(app)) fs.chmodSync(path.join(app, f), 0o644);
  let node = process.execPath;
  if (who.prefix.length && spawnSync(who.prefix[0], [...who.prefix.slice(1), node, '-e', '0']).status !== 0) {
    node = path.join(app, 'node');
    fs.copyFileSync(process.execPath, node);
    fs.chmodSync(node, 0o755);
  }
  return {
    base,
    node,
    brokerJs: path.join(app, 'broker.js'),
    escape: path.join(app, 'escape.mjs'),
    bare: path.join(app, 'bare.mjs'),
  };
}

/** A directory owned by the user the broker runs as. */
function ownedDir(p: string, who: RunAs, mode = 0o755): string {
  fs.mkdirSync(p, { recursive: true, mode });
  fs.chownSync(p, who.uid, who.gid);
  return p;
}

function ownedFile(p: string, text: string, who: RunAs): void {
  fs.writeFileSync(p, text);
  fs.chownSync(p, who.uid, who.gid);
}

interface Broker {
  proc: ChildProcess;
  url: string;
  port: number;
  tokenFile: string;
  token: string;
  stderr: string[];
}

async function startBroker(
  who: RunAs,
  s: Stage,
  root: string,
  home: string,
  extraEnv: Record<string, string> = {},
): Promise<Broker> {
  const env = {
    ...extraEnv,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    SWITCHBOARD_HOME: path.join(home, '.switchboard'),
    SB_BROKER_CANARY: BROKER_CANARY,
    LANG: 'C.UTF-8',
  };
  const cmd = [...who.prefix, s.node, s.brokerJs, 'serve', '--root', root, '--port', '0', '--json'];
  const proc = track(
    spawn(cmd[0], [...cmd.slice(1), '--accept-workspace-trust'], {
      env,
      cwd: s.base,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  notePid(proc.pid, `broker as ${who.label}`);
  const stderr: string[] = [];
  readline.createInterface({ input: proc.stderr! }).on('line', (l) => stderr.push(l));
  const ready = await new Promise<{ url: string; port: number; tokenFile: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker not ready:\n${stderr.join('\n')}`)), 30_000);
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const m = JSON.parse(line) as { event?: string; url: string; port: number; tokenFile: string };
        if (m.event === 'ready') {
          clearTimeout(timer);
          resolve(m);
        }
      } catch {
        /* not the ready line */
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited ${code} before ready:\n${stderr.join('\n')}`));
    });
  });
  return { proc, ...ready, token: fs.readFileSync(ready.tokenFile, 'utf8').trim(), stderr };
}

function helloServer(label: string): Promise<http.Server> {
  const server = http.createServer((_req, res) => res.end(`hello from ${label}`));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Where this run's daemon socket goes: /run as root (as docker.sock does); the user's runtime dir otherwise. */
function socketDir(): string {
  if (process.getuid!() === 0) return '/run';
  const dir = process.env.XDG_RUNTIME_DIR;
  assert.ok(dir, 'run as a normal user, this test needs XDG_RUNTIME_DIR for its daemon socket');
  return dir;
}

const portOf = (s: http.Server | net.Server): number => (s.address() as net.AddressInfo).port;

/** Calls one of escape.mjs's tools; its JSON answer. */
async function attack(client: Client, tool: string, args: Json = {}): Promise<Json> {
  const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 });
  return JSON.parse(textOf(result)) as Json;
}

async function runningStatus(client: Client, name: string): Promise<Json> {
  return waitFor(
    async () => {
      const s = await status(client, name);
      if (s.state === 'failed') throw new Error(`${name} failed: ${s.lastError}`);
      return s.state === 'running' ? s : undefined;
    },
    `${name} running`,
    30_000,
  );
}

/** Host pids whose command line holds `marker`. */
function pidsWithMarker(marker: string): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').includes(marker)) out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}

const describeLinux = process.platform === 'linux' ? describe : describe.skip;

describeLinux('faults: security round 3, the bubblewrap sandbox holds (Linux)', function () {
  this.timeout(240_000);

  for (const runAs of whoRuns()) {
    describe(`a confined server, the broker running as ${runAs.title}`, () => {
      let who: RunAs;
      let s: Stage;
      let home: string;
      let root: string;
      let granted: string;
      let broker: Broker;
      let client: Client;
      let alpha: http.Server;
      let beta: http.Server;
      let daemon: net.Server;
      let daemonSocket: string;
      const marker = `sb-r3-escaped-grandchild-${process.pid}-${Math.random().toString(36).slice(2)}`;
      const seen: Json = {};

      before(async () => {
        who = runAs.resolve();
        s = stage(who);
        home = ownedDir(path.join(s.base, 'home'), who, 0o700);
        ownedFile(path.join(home, 'canary.txt'), 'home-canary-1b2c', who);
        ownedDir(path.join(home, '.switchboard'), who, 0o700);
        // In HOME, which every sandbox empties: only the grant brings it back.
        granted = ownedDir(path.join(home, 'granted'), who);
        ownedFile(path.join(granted, 'notes.txt'), 'granted-notes', who);
        root = ownedDir(path.join(s.base, 'workspace'), who);
        ownedFile(path.join(root, 'readme.txt'), 'in the registry root', who);
        ownedDir(path.join(root, 'mcp-servers.d'), who);
        [alpha, beta] = await Promise.all([helloServer('alpha'), helloServer('beta')]);
        // A daemon's socket where daemons keep them (/run: docker.sock, the D-Bus system bus), open to
        // the broker's user as docker.sock is to root or the docker group.
        daemonSocket = path.join(socketDir(), `sb-r3-daemon-${process.pid}.sock`);
        fs.rmSync(daemonSocket, { force: true });
        daemon = net.createServer((c) => c.end('hello from a daemon\n'));
        await new Promise<void>((resolve) => daemon.listen(daemonSocket, resolve));
        fs.chmodSync(daemonSocket, 0o666);
        const server = (name: string, script: string, more = ''): string =>
          `name: ${name}\ntrust: trusted\ncommand: ${JSON.stringify(s.node)}\nargs: [${JSON.stringify(script)}]\n${more}`;
        const files: Record<string, string> = {
          'escape.yaml': server('escape', s.escape),
          'sibling.yaml': server('sibling', s.bare, `grants: [secrets]\nenv:\n  API_KEY: ${SIBLING_CANARY}\n`),
          'granted.yaml': server(
            'granted',
            s.escape,
            `grants: [filesystem, network]\nfilesystem:\n  read: [${JSON.stringify(granted)}, ${JSON.stringify(daemonSocket)}]\n` +
              `network:\n  allow: ["127.0.0.1:${portOf(alpha)}"]\n`,
          ),
        };
        // Links the workspace commits, leading out of it into the hidden HOME: docs -> ~/private, and a
        // server script tool.mjs -> ~/private/escape.mjs (beside ~/private/secret.txt).
        const priv = ownedDir(path.join(home, 'private'), who, 0o700);
        ownedFile(path.join(priv, 'secret.txt'), 'private-canary-5a7e', who);
        ownedFile(path.join(priv, 'escape.mjs'), fs.readFileSync(s.escape, 'utf8'), who);
        fs.symlinkSync(priv, path.join(root, 'docs'));
        fs.symlinkSync(path.join(priv, 'escape.mjs'), path.join(root, 'tool.mjs'));
        files['linkscript.yaml'] = server('linkscript', path.join(root, 'tool.mjs'));
        files['linked.yaml'] = server(
          'linked',
          s.escape,
          `grants: [filesystem]\nfilesystem:\n  read: [./docs, ${JSON.stringify(granted)}]\n`,
        );
        files['linkcwd.yaml'] = server('linkcwd', s.escape, 'cwd: ./docs\n');
        for (const [f, text] of Object.entries(files)) ownedFile(path.join(root, 'mcp-servers.d', f), text, who);
        broker = await startBroker(who, s, root, home);
        client = await connect(broker.url, broker.token);
        for (const name of ['escape', 'sibling', 'granted']) await runningStatus(client, name);
      });

      after(async () => {
        await client?.close().catch(() => undefined);
        if (broker) await stopProcess(broker.proc);
        alpha?.close();
        beta?.close();
        daemon?.close();
        // On code without a PID namespace the escaped grandchild outlives everything: never leave it.
        for (const pid of pidsWithMarker(marker)) process.kill(pid, 'SIGKILL');
        if (s) fs.rmSync(s.base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
        report(`r3-sandbox-${who?.uid === 0 ? 'root' : 'user'}`, { runAs: who?.label, ...seen });
      });

      it('runs without capabilities, in a PID namespace of its own, and says enforced', async () => {
        const st = await status(client, 'escape');
        assert.equal(st.enforcement.filesystem, 'enforced', JSON.stringify(st.enforcement));
        assert.equal(st.enforcement.network, 'enforced');
        const me = await attack(client, 'escape__identity');
        seen.capEff = me.capEff;
        seen.visiblePids = me.visiblePids;
        assert.equal(me.uid, who.uid, 'it runs as the broker’s user');
        assert.equal(me.capEff, '0000000000000000', 'no capabilities');
        // Its /proc holds its own sandbox only: bubblewrap's init, the server, nothing of the host.
        assert.ok(me.visiblePids <= 4, `it sees ${me.visiblePids} processes`);
        assert.ok(me.pid < 10, `its pid (${me.pid}) is one of its own namespace`);
        // The pid in the state is honest: the sandbox's outer process on the host, a child of the broker.
        assert.ok(running(st.pid), `status pid ${st.pid} runs`);
        assert.equal(fs.readFileSync(`/proc/${st.pid}/comm`, 'utf8').trim(), 'bwrap');
        assert.equal(
          Number(fs.readFileSync(`/proc/${st.pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]),
          broker.proc.pid,
        );
      });

      it('cannot read the operator token through /proc/<pid>/root; still reads the registry root', async () => {
        // Positive controls: the token is on disk where the attack looks, and the server reads what it may.
        assert.equal(fs.readFileSync(broker.tokenFile, 'utf8').trim(), broker.token);
        const readme = await attack(client, 'escape__read_file', { path: path.join(root, 'readme.txt') });
        assert.deepEqual(readme, { ok: true, value: 'in the registry root' });
        const direct = await attack(client, 'escape__read_file', { path: broker.tokenFile });
        assert.equal(direct.ok, false, 'SWITCHBOARD_HOME is hidden');
        const through = await attack(client, 'escape__proc_root', { file: broker.tokenFile });
        seen.procRoot = { hits: through.hits.length, tried: through.tried, errors: through.errors };
        assert.equal(through.ok, false, `read the token through /proc: ${JSON.stringify(through.hits)}`);
        assert.ok(through.tried >= 1, 'it did look');
      });

      it("cannot join the broker's network namespace and call an operator-only tool, even holding the token", async () => {
        // Positive control: with that token on that port, the operator-only tool answers.
        const own = await facade(client, 'tool_changes', { name: 'escape' });
        assert.ok(own.toolsHash, 'the operator-only tool works for the operator');
        const direct = await attack(client, 'escape__connect', { port: broker.port });
        assert.equal(direct.ok, false, 'its own network namespace does not reach the broker');
        const r = await attack(client, 'escape__nsenter_call', { port: broker.port, token: broker.token });
        seen.nsenter = { foreignNamespaces: r.foreignNamespaces, tried: r.tried };
        assert.equal(r.ok, false, `reached the broker as operator: ${JSON.stringify(r.tried)}`);
      });

      it('cannot unmount its empty HOME nor remount / writable to write into the real home', async () => {
        const target = path.join(home, 'written-from-the-sandbox.txt');
        const hidden = await attack(client, 'escape__read_file', { path: path.join(home, 'canary.txt') });
        assert.equal(hidden.ok, false, 'HOME is empty inside');
        assert.ok(fs.existsSync(path.join(home, 'canary.txt')), 'the real home has the canary');
        const r = await attack(client, 'escape__remount', { home, file: target });
        seen.remount = { umount: r.umount.ok, remount: r.remount.ok, wroteIntoHome: fs.existsSync(target) };
        assert.ok(!fs.existsSync(target), `it wrote into the real home: ${JSON.stringify(r)}`);
        assert.equal(r.umount.ok, false, `umount ${home} worked`);
        assert.equal(r.remount.ok, false, 'mount -o remount,rw / worked');
      });

      it("cannot read a sibling's secret (nor the broker's environment) from /proc/<pid>/environ", async () => {
        // Positive control: the secret is in the sibling's sandbox, as the host sees it.
        const sibling = await status(client, 'sibling');
        assert.ok(fs.readFileSync(`/proc/${sibling.pid}/environ`, 'latin1').includes(SIBLING_CANARY));
        const hunt = await attack(client, 'escape__environ_hunt', { needle: SIBLING_CANARY });
        assert.equal(hunt.ownReadable, true, 'it can read its own environment the same way');
        seen.environ = { found: hunt.found.length, errors: hunt.errors };
        assert.deepEqual(hunt.found, [], 'found the sibling’s secret');
        const brokerEnv = await attack(client, 'escape__environ_hunt', { needle: BROKER_CANARY });
        assert.deepEqual(brokerEnv.found, [], 'found the broker’s environment');
      });

      it("cannot connect to a daemon's Unix socket in /run; a grant naming the socket can", async () => {
        // Positive controls: the daemon answers on the host, and to a server granted its socket.
        const granted = await attack(client, 'granted__unix_connect', { path: daemonSocket });
        assert.deepEqual(granted, { ok: true, got: 'hello from a daemon\n' });
        const r = await attack(client, 'escape__unix_connect', { path: daemonSocket });
        seen.daemonSocket = r.ok ? 'reached' : r.error;
        assert.equal(r.ok, false, `reached the daemon: ${JSON.stringify(r)}`);
      });

      it('a workspace link out of the registry root into HOME is not followed: not as a script, grant or cwd', async () => {
        assert.equal(fs.readFileSync(path.join(root, 'docs', 'secret.txt'), 'utf8'), 'private-canary-5a7e');
        // The attack: the script's real location was bound back, and with it all of ~/private. Now the
        // link leads nowhere inside, so the server does not run; on the old code it ran and read the secret.
        const script = await waitFor(async () => {
          const c = await status(client, 'linkscript');
          return c.state === 'running' || c.lastError ? c : undefined;
        }, 'linkscript to start or be refused');
        if (script.state === 'running') {
          const stolen = await attack(client, 'linkscript__read_file', {
            path: path.join(home, 'private', 'secret.txt'),
          });
          seen.linkedScript = stolen.ok ? 'read the secret' : stolen.error;
          assert.equal(stolen.ok, false, `read ~/private through its own script's link: ${JSON.stringify(stolen)}`);
        } else seen.linkedScript = script.state;
        assert.match(script.enforcement.notes.join(' '), /tool\.mjs is a symbolic link out of the registry root/);
        // Not attacks on the old code (bubblewrap refused to bind onto a link, and the server failed with
        // "Can't bind mount"), but now said plainly: a granted link is not mounted, a linked cwd is refused.
        await runningStatus(client, 'linked');
        const notes = await attack(client, 'linked__read_file', { path: path.join(granted, 'notes.txt') });
        assert.deepEqual(notes, { ok: true, value: 'granted-notes' }, 'its other, real, granted path works');
        const r = await attack(client, 'linked__read_file', { path: path.join(root, 'docs', 'secret.txt') });
        assert.equal(r.ok, false, `read through the link: ${JSON.stringify(r)}`);
        const st = await status(client, 'linked');
        assert.match(st.enforcement.notes.join(' '), /symbolic link out of the registry root .*not mounted/);
        const cwd = await waitFor(async () => {
          const c = await status(client, 'linkcwd');
          return c.state === 'running' || c.lastError ? c : undefined;
        }, 'linkcwd to start or be refused');
        assert.notEqual(cwd.state, 'running', 'a cwd linked out of the root is refused');
        assert.match(cwd.lastError, /cwd .* is a symbolic link out of the registry root/);
      });

      it('a granted path and the allow-listed host still work; another host is refused', async () => {
        const notes = await attack(client, 'granted__read_file', { path: path.join(granted, 'notes.txt') });
        assert.deepEqual(notes, { ok: true, value: 'granted-notes' });
        const ok = await attack(client, 'granted__fetch', { url: `http://127.0.0.1:${portOf(alpha)}/` });
        assert.deepEqual([ok.status, ok.body], [200, 'hello from alpha']);
        const refused = await attack(client, 'granted__fetch', { url: `http://127.0.0.1:${portOf(beta)}/` });
        assert.equal(refused.status, 403);
        const me = await attack(client, 'granted__identity');
        assert.equal(me.capEff, '0000000000000000', 'the granted server has no capabilities either');
      });

      it('stopping the server ends its whole tree, a grandchild that left the process group too', async () => {
        const st = await status(client, 'escape');
        const spawned = await attack(client, 'escape__spawn_detached', { marker });
        assert.equal(spawned.ok, true);
        const escaped = await waitFor(() => {
          const p = pidsWithMarker(marker);
          return p.length ? p : undefined;
        }, 'the detached grandchild on the host');
        for (const pid of escaped) notePid(pid, 'detached grandchild (escape.mjs)');
        await facade(client, 'disable_server', { name: 'escape' });
        await waitFor(() => !running(st.pid), 'the sandbox to stop', 15_000);
        // Its init was the sandbox's pid 1: when it ends, the kernel ends every process in the namespace.
        const left = await waitFor(
          () => (pidsWithMarker(marker).length === 0 ? 'none' : undefined),
          'the grandchild to end with its sandbox',
          10_000,
        ).catch(() => pidsWithMarker(marker));
        seen.grandchildLeft = left === 'none' ? 0 : (left as number[]).length;
        assert.equal(left, 'none', `the grandchild outlived its server: ${JSON.stringify(left)}`);
      });
    });

    describe(`where bubblewrap cannot run (SWITCHBOARD_NO_BWRAP=1), the broker running as ${runAs.title}`, () => {
      let who: RunAs;
      let s: Stage;
      let broker: Broker;
      let client: Client;

      before(async () => {
        who = runAs.resolve();
        s = stage(who);
        const home = ownedDir(path.join(s.base, 'home'), who, 0o700);
        ownedDir(path.join(home, '.switchboard'), who, 0o700);
        const root = ownedDir(path.join(s.base, 'workspace'), who);
        ownedDir(path.join(root, 'mcp-servers.d'), who);
        const def = `name: escape\ntrust: trusted\ncommand: ${JSON.stringify(s.node)}\nargs: [${JSON.stringify(s.escape)}]\n`;
        ownedFile(path.join(root, 'mcp-servers.d', 'escape.yaml'), def, who);
        broker = await startBroker(who, s, root, home, { SWITCHBOARD_NO_BWRAP: '1' });
        client = await connect(broker.url, broker.token);
        await runningStatus(client, 'escape');
      });

      after(async () => {
        await client?.close().catch(() => undefined);
        if (broker) await stopProcess(broker.proc);
        if (s) fs.rmSync(s.base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
      });

      it('the network it says is enforced holds: the server cannot rejoin the broker’s namespace', async () => {
        const st = await status(client, 'escape');
        assert.equal(st.enforcement.network, 'enforced', JSON.stringify(st.enforcement));
        const direct = await attack(client, 'escape__connect', { port: broker.port });
        assert.equal(direct.ok, false, 'its own network namespace does not reach the broker');
        const r = await attack(client, 'escape__nsenter_call', { port: broker.port, token: broker.token });
        report(`r3-fallback-${who.uid === 0 ? 'root' : 'user'}`, { runAs: who.label, nsenter: r.tried });
        assert.equal(r.ok, false, `rejoined the host's network as operator: ${JSON.stringify(r.tried)}`);
        // Honest about the rest: no file-system confinement, no PID namespace.
        assert.equal(st.enforcement.filesystem, 'not-enforced');
        assert.match(st.enforcement.notes.join(' '), /no PID namespace/);
      });
    });
  }
});

/**
 * Sends `request` to the proxy's socket. A 200 to CONNECT opens a tunnel, through which a GET follows;
 * resolves with the proxy's status line and everything that came back after it.
 */
function throughProxy(socketPath: string, request: string): Promise<{ status: string; body: string }> {
  return new Promise((resolve) => {
    const c = net.connect(socketPath);
    let got = '';
    let tunnelled = false;
    c.setTimeout(10_000, () => c.destroy());
    c.on('data', (d) => {
      got += d.toString('latin1');
      if (!tunnelled && got.startsWith('HTTP/1.1 200 Connection established\r\n\r\n')) {
        tunnelled = true;
        c.write('GET / HTTP/1.1\r\nHost: tunnel\r\nConnection: close\r\n\r\n');
      }
    });
    c.on('error', () => c.destroy());
    c.on('close', () => {
      const [status] = got.split('\r\n');
      resolve({ status, body: got.slice(status.length) });
    });
    c.write(Buffer.from(request, 'latin1'));
  });
}

describeLinux('faults: security round 3, the allow-list proxy reads a host one way only', function () {
  this.timeout(60_000);
  let dir: string;
  let proxy: ChildProcess;
  let socketPath: string;
  let hello: http.Server;
  let port: number;
  const refused: Json[] = [];

  before(async () => {
    hello = await helloServer('loopback');
    port = portOf(hello);
    // The positive control needs a name, allow-listed by a wildcard, that resolves to this loopback
    // server: the proxy runs (as the broker would) with a hosts file of its own, bind-mounted over
    // /etc/hosts by bubblewrap for its process only. The resolver is the system's, unchanged.
    dir = fs.mkdtempSync('/var/tmp/sb-r3-hosts-');
    const hosts = path.join(dir, 'hosts');
    fs.writeFileSync(hosts, '127.0.0.1 localhost\n127.0.0.1 api.example.test\n');
    const compiled = path.join(REPO, 'out', 'src', 'broker', 'trust', 'networkProxy.js');
    const host = path.join(FAULT_FIXTURES, 'proxy-host.cjs');
    // The allow-list: only subdomains of example.test, on the loopback server's port.
    const allow = `*.example.test:${port}`;
    const bwrap = ['--dev-bind', '/', '/', '--ro-bind', hosts, '/etc/hosts', '--'];
    proxy = track(spawn('bwrap', [...bwrap, process.execPath, host, compiled, allow], { stdio: 'pipe' }));
    notePid(proxy.pid, 'proxy-host.cjs');
    const stderr: string[] = [];
    proxy.stderr!.setEncoding('utf8').on('data', (c: string) => stderr.push(c));
    socketPath = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`proxy did not listen: ${stderr.join('')}`)), 15_000);
      readline.createInterface({ input: proxy.stdout! }).on('line', (line) => {
        const m = JSON.parse(line) as { socket?: string; refused?: Json };
        if (m.refused) refused.push(m.refused);
        if (m.socket) {
          clearTimeout(timer);
          resolve(m.socket);
        }
      });
      proxy.once('exit', (code) => reject(new Error(`proxy exited ${code}: ${stderr.join('')}`)));
    });
  });

  after(async () => {
    proxy?.stdin?.end();
    if (proxy) await stopProcess(proxy);
    hello?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('CONNECT: a name with a NUL (or an escape) inside is refused; the allow-listed name still tunnels', async () => {
    // Positive controls: the legitimate name reaches the loopback server, and plain localhost is refused.
    const legit = await throughProxy(socketPath, `CONNECT api.example.test:${port} HTTP/1.1\r\n\r\n`);
    assert.equal(legit.status, 'HTTP/1.1 200 Connection established');
    assert.match(legit.body, /hello from loopback/);
    const plain = await throughProxy(socketPath, `CONNECT localhost:${port} HTTP/1.1\r\n\r\n`);
    assert.match(plain.status, /^HTTP\/1\.1 403 /);
    const attacks = [
      `localhost\u0000.example.test:${port}`,
      `127.0.0.1\u0000.example.test:${port}`,
      `localhost%00.example.test:${port}`,
      `user@api.example.test:${port}`,
      `api.example.test.\u0000:${port}`,
    ];
    const outcomes: Json = {};
    for (const target of attacks) {
      const r = await throughProxy(socketPath, `CONNECT ${target} HTTP/1.1\r\n\r\n`);
      outcomes[JSON.stringify(target)] = r.status;
      assert.doesNotMatch(r.body, /hello from/, `${JSON.stringify(target)} reached the loopback server`);
      assert.match(r.status, /^HTTP\/1\.1 40[03] /, `${JSON.stringify(target)}: ${r.status}`);
    }
    report('r3-allowlist-connect', outcomes);
  });

  it('absolute-URI requests: user info and control bytes are refused; the allow-listed name still answers', async () => {
    const legit = await throughProxy(socketPath, `GET http://api.example.test:${port}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(legit.status, 'HTTP/1.1 200 OK');
    assert.match(legit.body, /hello from loopback/);
    const attacks = [
      `http://localhost\u0000.example.test:${port}/`,
      `http://user:secret@api.example.test:${port}/`,
      `http://api.example.test:${port}@localhost:${port}/`,
    ];
    const outcomes: Json = {};
    for (const url of attacks) {
      const r = await throughProxy(socketPath, `GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`);
      outcomes[JSON.stringify(url)] = r.status;
      assert.doesNotMatch(r.body, /hello from/, `${JSON.stringify(url)} reached the loopback server`);
      assert.match(r.status, /^HTTP\/1\.1 40[03] /, `${JSON.stringify(url)}: ${r.status}`);
    }
    report('r3-allowlist-absolute-uri', outcomes);
  });

  it('refusals reach the log and audit escaped: no control byte from the server gets through', async () => {
    await waitFor(() => refused.length >= 4, 'the refusals');
    const hosts = refused.map((r) => String(r.host));
    assert.ok(
      hosts.some((h) => h.includes('\\u0000')),
      JSON.stringify(hosts),
    );
    for (const h of hosts)
      assert.ok(![...h].some((c) => c.charCodeAt(0) < 0x20), `a raw control byte in ${JSON.stringify(h)}`);
  });
});
