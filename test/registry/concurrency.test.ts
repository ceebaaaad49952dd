// Several real processes write the registry at once while this one keeps reading it: every read
// must parse, validate, and be one whole definition (never a mix of two writes).

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDefinitionFileName, parseDefinition, RegistryLoader } from '../../src/registry/loader';
import { useRoot } from './helpers/tmp';

const WRITERS = 4;
const ITERATIONS = 300;

function checkWhole(file: string, text: string): string | undefined {
  const res = parseDefinition('server', file, text);
  if (!res.def) return `${path.basename(file)} did not validate: ${JSON.stringify(res.problems)}\n${text}`;
  const m = /^w(\d+)-(\d+)$/.exec(res.def.description ?? '');
  if (!m) return `${path.basename(file)}: unexpected description ${res.def.description}`;
  const [id, i] = [Number(m[1]), Number(m[2])];
  const arg = `${id}:${i}:${'x'.repeat(200)}`;
  if (res.def.args.length !== i % 20 || res.def.args.some((a) => a !== arg) || res.def.env.WRITER !== String(id)) {
    return `${path.basename(file)} mixes two writes: ${text.slice(0, 300)}`;
  }
  return undefined;
}

describe('registry writer under concurrent processes', function () {
  this.timeout(120_000);
  const ctx = useRoot('concurrent');

  it('never exposes a half-written or unparsable file', async () => {
    const dir = path.join(ctx.root, 'mcp-servers.d');
    const helper = path.join(__dirname, 'helpers', 'concurrentWriter.js');
    const children: ChildProcess[] = [];
    const exits: Promise<{ code: number | null; stderr: string }>[] = [];
    for (let id = 0; id < WRITERS; id++) {
      const child = spawn(process.execPath, [helper, ctx.root, String(id), String(ITERATIONS)], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      exits.push(new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr }))));
    }
    let running = WRITERS;
    for (const e of exits) void e.then(() => running--);

    const failures: string[] = [];
    let reads = 0;
    const loader = new RegistryLoader(ctx.root);
    try {
      while (running > 0 && failures.length === 0) {
        let names: string[] = [];
        try {
          names = fs.readdirSync(dir).filter(isDefinitionFileName);
        } catch {
          // the first writer has not created the directory yet
        }
        for (const name of names) {
          const file = path.join(dir, name);
          let text: string;
          try {
            text = fs.readFileSync(file, 'utf8');
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT' && name.startsWith('gone-')) continue; // removed on purpose
            throw err;
          }
          reads++;
          const why = checkWhole(file, text);
          if (why) failures.push(why);
        }
        // The stateful loader sees the same files; it must never report an error either.
        const snap = loader.load();
        for (const p of snap.problems) failures.push(`loader: ${p.message}`);
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      if (failures.length > 0) for (const c of children) c.kill();
    }
    const results = await Promise.all(exits);
    assert.deepEqual(failures, []);
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.ok(reads > 0, 'the reader overlapped the writers');

    const left = fs.readdirSync(dir).sort();
    assert.deepEqual(
      left.filter((n) => n.startsWith('.')),
      [],
      'no temp files are left behind',
    );
    const expected = ['shared', ...Array.from({ length: WRITERS }, (_, i) => [`gone-${i}`, `own-${i}`]).flat()]
      .map((n) => `${n}.yaml`)
      .sort();
    assert.deepEqual(left, expected);
    for (const name of left)
      assert.equal(checkWhole(path.join(dir, name), fs.readFileSync(path.join(dir, name), 'utf8')), undefined);
    const finalSnap = new RegistryLoader(ctx.root).load();
    for (let id = 0; id < WRITERS; id++)
      assert.equal(finalSnap.servers.get(`own-${id}`)?.description, `w${id}-${ITERATIONS - 1}`);
  });
});
