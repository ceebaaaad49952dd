// The endpoint's hand-written request check must accept exactly what the SDK's JSONRPCRequestSchema
// accepts: a request the SDK would drop silently has to be refused up front, and a request the
// SDK takes must not be refused. Checked against the SDK itself, on hand-picked edge cases and on
// generated variations of them.
import assert from 'node:assert/strict';
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { isMessage, isWellFormedRequest } from '../../../src/broker/http/messageShape';

const base = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };

const ids: unknown[] = [0, 1, -1, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 1.5, 1e300, '', 'a', null, true, [], {}, 1e21];
const metas: unknown[] = [
  undefined,
  {},
  null,
  [],
  'x',
  1,
  { progressToken: 1 },
  { progressToken: 'p' },
  { progressToken: 1.5 },
  { progressToken: null },
  { progressToken: 2 ** 60 },
  { progressToken: {} },
  { other: [1, 2] },
  { 'io.modelcontextprotocol/related-task': { taskId: 't' } },
  { 'io.modelcontextprotocol/related-task': { taskId: 1 } },
  { 'io.modelcontextprotocol/related-task': {} },
  { 'io.modelcontextprotocol/related-task': null },
  { 'io.modelcontextprotocol/related-task': { taskId: 't', extra: 1 } },
];
const paramsValues: unknown[] = [undefined, {}, null, [], 'x', 0, { a: 1 }, { _meta: undefined }];
const extras: Record<string, unknown>[] = [{}, { extra: 1 }, { result: {} }, { error: { code: 1, message: 'x' } }];
const methods: unknown[] = ['tools/call', '', 1, null, 'x'.repeat(300)];

function variants(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const id of ids) out.push({ ...base, id });
  for (const method of methods) out.push({ ...base, method });
  for (const params of paramsValues) {
    const m: Record<string, unknown> = { ...base, params };
    if (params === undefined) delete m.params;
    out.push(m);
  }
  for (const meta of metas)
    out.push({ ...base, params: meta === undefined ? { name: 'echo' } : { name: 'echo', _meta: meta } });
  for (const extra of extras) out.push({ ...base, ...extra });
  out.push({ ...base, jsonrpc: '1.0' }, { id: 1, method: 'x' });
  out.push(JSON.parse('{"jsonrpc":"2.0","id":1,"method":"x","__proto__":{"a":1}}'));
  out.push(JSON.parse('{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"__proto__":{"progressToken":1.5}}}}'));
  return out;
}

/** A seeded generator, so a failure names a case that can be run again. */
function rng(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('message shape checks', () => {
  it('accept exactly the requests the SDK schema accepts (edge cases)', () => {
    let accepted = 0;
    for (const m of variants()) {
      assert.equal(isWellFormedRequest(m), isJSONRPCRequest(m), JSON.stringify(m));
      if (isJSONRPCRequest(m)) accepted++;
    }
    assert.ok(accepted >= 10, 'the cases include well-formed requests, not only broken ones');
  });

  it('accept exactly the requests the SDK schema accepts (5,000 generated combinations)', () => {
    const next = rng(20261203);
    const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
    let accepted = 0;
    for (let i = 0; i < 5000; i++) {
      const m: Record<string, unknown> = { jsonrpc: next() < 0.9 ? '2.0' : '2', method: pick(methods) };
      if (next() < 0.95) m.id = pick(ids);
      if (next() < 0.8) {
        const meta = pick(metas);
        m.params =
          next() < 0.2 ? pick(paramsValues) : meta === undefined ? { name: 'echo' } : { name: 'echo', _meta: meta };
        if (m.params === undefined) delete m.params;
      }
      if (next() < 0.1) Object.assign(m, pick(extras));
      assert.equal(isWellFormedRequest(m), isJSONRPCRequest(m), `case ${i}: ${JSON.stringify(m)}`);
      if (isJSONRPCRequest(m)) accepted++;
    }
    assert.ok(accepted > 500 && accepted < 4500, `a mix of accepted and refused cases (${accepted} accepted)`);
  });

  it('tell requests, notifications and responses apart, and refuse what is none of them', () => {
    assert.equal(isMessage(base), true);
    assert.equal(isMessage({ jsonrpc: '2.0', method: 'notifications/initialized' }), true);
    assert.equal(isMessage({ jsonrpc: '2.0', id: 3, result: {} }), true);
    assert.equal(isMessage({ jsonrpc: '2.0', id: 3, error: { code: 1, message: 'x' } }), true);
    for (const bad of [
      null,
      [],
      'x',
      { jsonrpc: '2.0' },
      { jsonrpc: '2.0', id: 1 },
      { ...base, id: 1.5 },
      { ...base, extra: true },
      { ...base, params: [] },
    ]) {
      assert.equal(isMessage(bad), false, JSON.stringify(bad));
    }
  });
});
