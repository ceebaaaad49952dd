// RegistryWatcher on a real directory tree: snapshots arrive for adds, changes, deletes,
// rename-over saves and directories created after start; nothing is emitted for non-changes.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RegistryLoader, type RegistrySnapshot } from '../../src/registry/loader';
import { EVENTS_ARE_SYNCHRONOUS } from '../../src/registry/completeRenames';
import { RegistryWatcher } from '../../src/registry/watcher';
import { RegistryWriter } from '../../src/registry/writer';
import { put, useRoot } from './helpers/tmp';
import { waitForEvent } from '../helpers/broker';

/** The first snapshot `w` emits that satisfies `pred`; rejects after `ms`. */
const nextSnapshot = (w: RegistryWatcher, pred: (s: RegistrySnapshot) => boolean, what: string, ms = 5000) =>
  waitForEvent(w, 'snapshot', (s: RegistrySnapshot) => pred(s) && s, `a snapshot with ${what}`, { timeoutMs: ms });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('registry watcher', function () {
  this.timeout(20_000);
  const ctx = useRoot('watcher');
  let watcher: RegistryWatcher | undefined;
  afterEach(() => watcher?.close());

  function start(opts?: { rescanMs?: number; debounceMs?: number }): RegistrySnapshot {
    watcher = new RegistryWatcher(new RegistryLoader(ctx.root), { debounceMs: 30, ...opts });
    return watcher.start();
  }

  it('emits on add, change and delete', async () => {
    put(ctx.root, 'mcp-servers.d/a.yaml', 'command: node\n');
    const initial = start();
    assert.deepEqual([...initial.servers.keys()], ['a']);
    const w = watcher!;

    let next = nextSnapshot(w, (s) => s.servers.has('b'), 'server b');
    put(ctx.root, 'mcp-servers.d/b.yaml', 'command: node\n');
    await next;

    next = nextSnapshot(w, (s) => s.servers.get('a')?.enabled === false, 'a disabled');
    fs.writeFileSync(path.join(ctx.root, 'mcp-servers.d/a.yaml'), 'command: node\nenabled: false\n');
    const changed = await next;
    assert.ok(changed.generation > initial.generation);

    next = nextSnapshot(w, (s) => !s.servers.has('b'), 'b removed');
    fs.unlinkSync(path.join(ctx.root, 'mcp-servers.d/b.yaml'));
    const removed = await next;
    assert.deepEqual([...removed.servers.keys()], ['a']);
    assert.equal(w.current, removed);
  });

  it('follows editors that save by renaming a temp file over the target, and backup-then-write saves', async () => {
    const file = put(ctx.root, 'prompts.d/p.yaml', 'messages: [{role: user, content: one}]\n');
    start();
    const w = watcher!;
    for (const word of ['two', 'three', 'four']) {
      const next = nextSnapshot(w, (s) => s.prompts.get('p')?.messages[0].content === word, `content ${word}`);
      const tmp = path.join(ctx.root, 'prompts.d', `.p.yaml.${word}.swp`);
      fs.writeFileSync(tmp, `messages: [{role: user, content: ${word}}]\n`);
      fs.renameSync(tmp, file);
      await next;
    }
    // vim-style: move the original aside, write a new file, delete the backup.
    const next = nextSnapshot(w, (s) => s.prompts.get('p')?.messages[0].content === 'five', 'content five');
    fs.renameSync(file, `${file}~`);
    fs.writeFileSync(file, 'messages: [{role: user, content: five}]\n');
    fs.unlinkSync(`${file}~`);
    await next;
  });

  it('notices kind directories created after start, and deleted and recreated ones', async () => {
    start();
    const w = watcher!;
    let next = nextSnapshot(w, (s) => s.clients.has('c'), 'client c');
    put(ctx.root, 'clients.d/c.yaml', 'mcp_allow: [read]\n');
    await next;

    next = nextSnapshot(w, (s) => s.servers.has('late'), 'server late');
    fs.mkdirSync(path.join(ctx.root, 'mcp-servers.d'));
    await sleep(50); // let the directory event and the file event arrive separately
    put(ctx.root, 'mcp-servers.d/late.yaml', 'command: node\n');
    await next;

    next = nextSnapshot(w, (s) => s.clients.size === 0, 'clients gone');
    fs.rmSync(path.join(ctx.root, 'clients.d'), { recursive: true });
    await next;

    next = nextSnapshot(w, (s) => s.clients.has('again'), 'client again');
    put(ctx.root, 'clients.d/again.yaml', '{}\n');
    await next;
    // Changes inside the recreated directory are still seen (its watcher was re-armed).
    next = nextSnapshot(
      w,
      (s) => s.clients.get('again')?.mcp_allow.includes('write') === true,
      'client again with write',
    );
    fs.writeFileSync(path.join(ctx.root, 'clients.d/again.yaml'), 'mcp_allow: [read, write]\n');
    await next;
  });

  it('reports a broken save with the last good definition still live, then the fix', async () => {
    const file = put(ctx.root, 'mcp-servers.d/s.yaml', 'command: node\nargs: [v1]\n');
    start();
    const w = watcher!;
    let next = nextSnapshot(w, (s) => s.problems.length > 0, 'a problem');
    fs.writeFileSync(file, 'command: node\nargs: [v2\n');
    const broken = await next;
    assert.deepEqual(broken.servers.get('s')?.args, ['v1']);
    assert.equal(broken.problems.find((p) => p.severity === 'error')?.file, file);

    next = nextSnapshot(w, (s) => s.problems.length === 0, 'no problems');
    fs.writeFileSync(file, 'command: node\nargs: [v3]\n');
    assert.deepEqual((await next).servers.get('s')?.args, ['v3']);
  });

  it('does not emit when nothing changed (touch, identical rewrite, temp files)', async () => {
    const file = put(ctx.root, 'mcp-servers.d/a.yaml', 'command: node\n');
    start({ rescanMs: 100 });
    const w = watcher!;
    const seen: RegistrySnapshot[] = [];
    w.on('snapshot', (s) => seen.push(s));
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(file, later, later);
    fs.writeFileSync(file, 'command: node\n');
    put(ctx.root, 'mcp-servers.d/.a.yaml.1.tmp', 'garbage');
    fs.unlinkSync(path.join(ctx.root, 'mcp-servers.d/.a.yaml.1.tmp'));
    await sleep(400); // several debounce periods and rescans
    const next = nextSnapshot(w, (s) => s.servers.has('b'), 'server b');
    put(ctx.root, 'mcp-servers.d/b.yaml', 'command: node\n');
    await next;
    assert.equal(seen.length, 1, 'only the real change produced a snapshot');
    assert.ok(seen[0].servers.has('b'));
  });

  it('sees a burst of writer upserts and ends on the final state', async () => {
    start();
    const w = watcher!;
    const writer = new RegistryWriter(ctx.root);
    const next = nextSnapshot(
      w,
      (s) => s.servers.size === 20 && s.servers.get('s19')?.description === 'final',
      'all 20 servers',
    );
    for (let i = 0; i < 20; i++)
      await writer.upsert('server', { name: `s${i}`, command: 'node', description: i === 19 ? 'final' : undefined });
    await next;
  });

  it('the safety rescan catches changes even with fs events lost', async () => {
    // Simulate lost events: a watcher whose fs.watch handles are closed, leaving only the rescan.
    const file = put(ctx.root, 'mcp-servers.d/a.yaml', 'command: node\n');
    start({ rescanMs: 100 });
    const w = watcher!;
    const internals = w as unknown as { watched: Map<string, { watcher: fs.FSWatcher }> };
    const next = nextSnapshot(w, (s) => s.servers.get('a')?.command === 'deno', 'command deno');
    // Close the directory watcher but keep the bookkeeping, so arm() believes it is live.
    internals.watched.get(path.join(ctx.root, 'mcp-servers.d'))?.watcher.close();
    internals.watched.get(ctx.root)?.watcher.close();
    fs.writeFileSync(file, 'command: deno\n');
    await next;
  });

  describe('reading before the quiet time (completeRenames.ts)', () => {
    before(function () {
      // Only inotify queues a write's event before the write returns; elsewhere every change waits.
      if (!EVENTS_ARE_SYNCHRONOUS) this.skip();
    });

    it('reads a file renamed into place whole at once, with a quiet time that never ends in this test', async () => {
      const dir = path.join(ctx.root, 'mcp-servers.d');
      fs.mkdirSync(dir, { recursive: true });
      start({ debounceMs: 600_000, rescanMs: 0 });
      const tmp = path.join(dir, '.r.yaml.tmp');
      fs.writeFileSync(tmp, 'command: node\nenabled: false\n');
      const next = nextSnapshot(watcher!, (s) => s.servers.has('r'), 'server r');
      fs.renameSync(tmp, path.join(dir, 'r.yaml'));
      assert.equal((await next).servers.get('r')?.enabled, false);
    });

    // The safety property the quiet time is for: a definition written in place is never read while
    // its writer pauses, even when what was written so far parses (here: the server without its
    // `enabled: false`). The quiet time is made long so only a wrongly early read could see the half.
    for (const when of ['before the watcher looks', 'after the watcher looked at the empty file']) {
      it(`never reads a definition written in place half-way (first half written ${when})`, async () => {
        const dir = path.join(ctx.root, 'mcp-servers.d');
        fs.mkdirSync(dir, { recursive: true });
        start({ debounceMs: 1500, rescanMs: 0 });
        const w = watcher!;
        const seen: RegistrySnapshot[] = [];
        w.on('snapshot', (s) => seen.push(s));
        const complete = nextSnapshot(w, (s) => s.servers.has('h'), 'server h', 10_000);
        const fd = fs.openSync(path.join(dir, 'h.yaml'), 'w');
        if (when.startsWith('after')) await sleep(100);
        fs.writeSync(fd, 'command: node\n');
        await sleep(300); // the writer pauses with a file that parses
        fs.writeSync(fd, 'enabled: false\n');
        fs.closeSync(fd);
        assert.equal((await complete).servers.get('h')?.enabled, false);
        assert.deepEqual(
          seen.filter((s) => s.servers.get('h')?.enabled === true),
          [],
          'a snapshot read the half-written file',
        );
      });
    }
  });

  it('stops emitting after close()', async () => {
    start({ rescanMs: 50 });
    const w = watcher!;
    let emitted = 0;
    w.on('snapshot', () => emitted++);
    w.close();
    put(ctx.root, 'mcp-servers.d/a.yaml', 'command: node\n');
    await sleep(300);
    assert.equal(emitted, 0);
    assert.throws(() => w.start(), /after close/);
  });
});
