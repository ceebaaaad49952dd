// The one atomic writer (src/registry/atomicWrite.ts), in both forms, with real processes and files:
// readers see the old file or a whole new one, a failed write leaves nothing behind, modes hold.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic, writeFileAtomicSync } from '../../src/registry/atomicWrite';
import { useRoot } from './helpers/tmp';

const MODULE = path.resolve(__dirname, '../../src/registry/atomicWrite.js');

/** A child that writes `file` `times` times with the sync form, each text naming itself and its length. */
function writer(file: string, id: number, times: number): Promise<number | null> {
  const code = `
    const { writeFileAtomicSync } = require(${JSON.stringify(MODULE)});
    for (let i = 0; i < ${times}; i++) {
      const body = '${id}:' + i + ':' + 'x'.repeat((i % 50) * 100);
      writeFileAtomicSync(${JSON.stringify(file)}, body.length + '|' + body);
    }`;
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  return new Promise((resolve) => child.on('exit', resolve));
}

describe('atomic writes (registry/atomicWrite.ts)', function () {
  this.timeout(120_000);
  const ctx = useRoot('atomic');

  it('several processes replacing one file: every read is one whole write', async () => {
    const file = path.join(ctx.root, 'shared.txt');
    fs.writeFileSync(file, '0|');
    const done = Promise.all([1, 2, 3].map((id) => writer(file, id, 400)));
    let finished = false;
    void done.then(() => (finished = true));
    let reads = 0;
    while (!finished) {
      const text = fs.readFileSync(file, 'utf8');
      const bar = text.indexOf('|');
      assert.equal(text.length - bar - 1, Number(text.slice(0, bar)), `torn read: ${text.slice(0, 60)}…`);
      reads++;
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(await done, [0, 0, 0]);
    assert.ok(reads > 10, `the reader ran while they wrote (${reads} reads)`);
    assert.deepEqual(
      fs.readdirSync(ctx.root).filter((f) => f.endsWith('.tmp')),
      [],
      'no temp file left behind',
    );
  });

  it('a write that cannot take the name fails and leaves no temp file, in both forms', async () => {
    const dir = path.join(ctx.root, 'taken');
    fs.mkdirSync(path.join(dir, 'target'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'target', 'inside'), 'kept');
    assert.throws(() => writeFileAtomicSync(path.join(dir, 'target'), 'new'));
    await assert.rejects(writeFileAtomic(path.join(dir, 'target'), 'new'));
    assert.deepEqual(fs.readdirSync(dir), ['target'], 'only the directory that was there');
    assert.equal(fs.readFileSync(path.join(dir, 'target', 'inside'), 'utf8'), 'kept');
  });

  it('keeps the mode of the file it replaces, or takes the one it is given', async () => {
    if (process.platform === 'win32') return; // modes mean nothing there (privateFiles.ts uses ACLs)
    const kept = path.join(ctx.root, 'kept.txt');
    fs.writeFileSync(kept, 'old', { mode: 0o640 });
    fs.chmodSync(kept, 0o640);
    await writeFileAtomic(kept, 'new');
    assert.equal(fs.statSync(kept).mode & 0o777, 0o640);
    const given = path.join(ctx.root, 'given.txt');
    fs.writeFileSync(given, 'old', { mode: 0o644 });
    writeFileAtomicSync(given, 'secret', { mode: 0o600 });
    assert.equal(fs.statSync(given).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(given, 'utf8'), 'secret');
  });
});
