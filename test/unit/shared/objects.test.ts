// shared/objects.ts: the copies the per-request folders make instead of `{ ...a, b }`. Their result
// must be what the spread gives (keys, values, order, `__proto__` as an own key), and objects of one
// shape made by them must share one hidden class on the broker's Node, which the spread does not on
// Node 20 (checked in a child process with V8's %HaveSameMap: a property of the engine, not a timing).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { copied, copyWith, copyWithout, merged } from '../../../src/broker/shared/objects';

describe('shared/objects: copies without a spread-first literal', () => {
  it("merged() is { ...a, ...b, ...c }: later keys win in the earlier key's place, undefined parts add nothing", () => {
    const a = { x: 1, y: 2 };
    const b = { y: 3, z: undefined };
    assert.deepEqual(merged(a, b), { ...a, ...b });
    assert.deepEqual(Object.keys(merged(a, b)), Object.keys({ ...a, ...b }));
    assert.deepEqual(merged(undefined, b), { ...b });
    assert.deepEqual(merged(a, null), { ...a });
    assert.deepEqual(merged(a, { w: 0 }, b), { ...a, w: 0, ...b });
    assert.deepEqual(merged(a, b, { q: 1 }, { x: 9 }), { ...a, ...b, q: 1, x: 9 });
    assert.notEqual(merged(a, undefined), a, 'a copy, never the source');
  });

  it('copyWith() and copyWithout() are the spread with one key set, and the rest without some', () => {
    const params = { name: 'echo', arguments: { text: 'hi' }, _meta: { progressToken: 1 } };
    assert.deepEqual(copyWith(params, '_meta', { t: 2 }), { ...params, _meta: { t: 2 } });
    assert.deepEqual(Object.keys(copyWith(params, '_meta', 1)), ['name', 'arguments', '_meta']);
    assert.deepEqual(copyWith(undefined, 'a', 1), { a: 1 });
    const { _meta: _drop, ...rest } = params;
    assert.deepEqual(copyWithout(params, '_meta'), rest);
    assert.deepEqual(copyWithout(undefined, 'x'), {});
    assert.deepEqual(copied(params), { ...params });
  });

  it('a "__proto__" key (JSON.parse makes one) stays an own key and never becomes the prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "name": "x"}') as Record<string, unknown>;
    for (const out of [
      merged(hostile, { a: 1 }),
      merged({ a: 1 }, hostile),
      copyWith(hostile, 'a', 1),
      copyWithout(hostile, 'name'),
      copied(hostile),
      copyWith({}, '__proto__', { polluted: true }),
    ]) {
      assert.equal(Object.getPrototypeOf(out), Object.prototype);
      assert.equal((out as { polluted?: unknown }).polluted, undefined);
      assert.ok(Object.hasOwn(out, '__proto__'), 'kept as an own key, as a spread keeps it');
      assert.deepEqual(JSON.parse(JSON.stringify(out)).__proto__, { polluted: true });
    }
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  it('objects of one shape made per call share one hidden class (V8 %HaveSameMap, in a child process)', function () {
    this.timeout(20_000);
    const objects = path.resolve(__dirname, '../../../src/broker/shared/objects.js');
    // Counts how many of 2,000 objects made the same way share the previous one's hidden class.
    const script = `
      const { merged, copyWith, copied } = require(${JSON.stringify(objects)});
      const make = {
        merged: (p, m) => merged(p, { _meta: m }),
        copyWith: (p, m) => copyWith(p, '_meta', m),
        copiedThenSet: (p, m) => { const o = copied(p); o._meta = m; return o; },
        spread: (p, m) => ({ ...p, _meta: m }),
        differentShapes: (p, m, i) => (i % 2 ? { a: 1, b: m } : { b: m, a: 1 }),
      };
      const out = {};
      for (const [name, f] of Object.entries(make)) {
        let same = 0, prev;
        for (let i = 0; i < 2000; i++) {
          const o = f({ name: 'echo', arguments: JSON.parse('{"text":"' + i + '"}') }, { i }, i);
          if (prev && %HaveSameMap(prev, o)) same++;
          prev = o;
        }
        out[name] = same;
      }
      process.stdout.write(JSON.stringify(out));`;
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const same = JSON.parse(run.stdout) as Record<string, number>;
    assert.ok(same.merged >= 1990, `merged: ${same.merged} of 1,999 shared`);
    assert.ok(same.copyWith >= 1990, `copyWith: ${same.copyWith} of 1,999 shared`);
    assert.ok(same.copiedThenSet >= 1990, `copied then set: ${same.copiedThenSet} of 1,999 shared`);
    // Control: the check tells shapes apart (alternating key orders never share).
    assert.equal(same.differentShapes, 0);
    // What the helpers are for: on Node 20 the spread makes a class per object; V8 12 (Node 22+) shares them.
    if (Number(process.versions.node.split('.')[0]) === 20) assert.ok(same.spread < 100, `spread: ${same.spread}`);
  });
});
