// The endpoint's encoding and body parsing, as pure functions: responses spliced around an
// upstream's bytes, batches, SSE event data, JSON-RPC errors, cached lists, and what a POST body
// may hold.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { rawResult, rememberJson } from '../../../src/broker/shared/rawJson';
import {
  isBodyError,
  MAX_BATCH,
  parseMessages,
  type BodyError,
  type ParsedBody,
} from '../../../src/broker/http/requestBody';
import {
  cachedListResult,
  endWithMessage,
  errorBody,
  eventData,
  idKey,
  joinBatch,
  serialize,
  toJsonRpcError,
} from '../../../src/broker/http/wire';
import { McpFailure } from '../../../src/broker/shared/mcpTypes';

const text = (s: string | Buffer) => (typeof s === 'string' ? s : s.toString('utf8'));
const response = (id: string | number, result: object) => ({ jsonrpc: '2.0', id, result }) as JSONRPCMessage;

describe('http wire encoding', () => {
  it('serializes a plain message with JSON.stringify', () => {
    const m = response(1, { a: 1 });
    assert.equal(serialize(m), JSON.stringify(m));
  });

  it("splices a remembered result's text or bytes in unchanged, with the id last", () => {
    const remembered = {};
    rememberJson(remembered, '{"tools":[]}');
    assert.equal(serialize(response('x', remembered)), '{"jsonrpc":"2.0","result":{"tools":[]},"id":"x"}');
    const bytes = Buffer.from('{"content":[{"type":"text","text":"héllo"}],"id":"forged"}');
    const out = serialize(response(7, rawResult(bytes)));
    assert.ok(Buffer.isBuffer(out));
    assert.equal(JSON.parse(text(out)).id, 7, "the id a client reads is the broker's");
    assert.equal(JSON.parse(text(out)).result.content[0].text, 'héllo');
  });

  it('answers over real HTTP with the pieces written together: the same body, its exact length', async () => {
    const big = Buffer.from(JSON.stringify({ content: [{ type: 'text', text: 'é'.repeat(300_000) }] }));
    const messages = [
      response(1, { a: 1 }),
      response('raw', rawResult(big)),
      response(3, cachedListResult('tools', [])),
    ];
    const server = http.createServer((req, res) => {
      endWithMessage(res, messages[Number(req.url!.slice(1))], 200, { 'mcp-session-id': 's1' });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      for (let i = 0; i < messages.length; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/${i}`);
        const body = Buffer.from(await res.arrayBuffer());
        assert.equal(res.headers.get('content-type'), 'application/json');
        assert.equal(res.headers.get('mcp-session-id'), 's1');
        assert.equal(Number(res.headers.get('content-length')), body.length);
        assert.equal(body.toString('utf8'), text(serialize(messages[i])));
      }
    } finally {
      server.close();
    }
  });

  it('joins a batch into one JSON array, text or bytes', () => {
    assert.equal(joinBatch(['{"a":1}', '{"b":2}']), '[{"a":1},{"b":2}]');
    const mixed = joinBatch(['{"a":1}', Buffer.from('{"b":2}'), '{"c":3}']);
    assert.ok(Buffer.isBuffer(mixed));
    assert.deepEqual(JSON.parse(text(mixed)), [{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it("writes SSE data as one line of JSON, re-encoding an upstream's bytes and refusing broken ones", () => {
    // CR and LF are JSON whitespace between tokens, and would end an SSE line.
    const withCr = rawResult(Buffer.from('{"text":\r\n"a\\rb"}'));
    const data = eventData(response(3, withCr));
    assert.ok(!/[\r\n]/.test(data), 'no bare CR or LF in the event');
    assert.deepEqual(JSON.parse(data), { jsonrpc: '2.0', id: 3, result: { text: 'a\rb' } });
    const broken = JSON.parse(eventData(response(4, rawResult(Buffer.from('{"text":"a\rb"}')))));
    assert.equal(broken.id, 4);
    assert.equal(broken.error.code, -32603);
    assert.match(broken.error.message, /not valid JSON/);
    assert.deepEqual(JSON.parse(eventData(response(5, { ok: true }))), { jsonrpc: '2.0', id: 5, result: { ok: true } });
  });

  it('turns errors into JSON-RPC error objects', () => {
    assert.deepEqual(toJsonRpcError(new McpFailure(-32602, 'bad name', { field: 'name' })), {
      code: -32602,
      message: 'bad name',
      data: { field: 'name' },
    });
    assert.deepEqual(toJsonRpcError(new Error('boom')), { code: -32603, message: 'boom' });
    assert.deepEqual(toJsonRpcError(undefined), { code: -32603, message: 'Internal error' });
    assert.deepEqual(toJsonRpcError({ code: 1.5, message: '' }), { code: -32603, message: 'Internal error' });
    const body = { jsonrpc: '2.0', id: 9, error: { code: -32600, message: 'nope' } };
    assert.deepEqual(JSON.parse(errorBody(-32600, 'nope', 9)), body);
    assert.equal(JSON.parse(errorBody(-32600, 'nope')).id, null);
  });

  it('keeps ids of different types apart', () => {
    assert.notEqual(idKey(1), idKey('1'));
  });

  it("computes a list result's JSON once per list object", () => {
    const list = [{ name: 'a' }];
    const first = cachedListResult('tools', list);
    assert.equal(cachedListResult('tools', list), first);
    assert.equal(serialize(response(1, first)), '{"jsonrpc":"2.0","result":{"tools":[{"name":"a"}]},"id":1}');
    assert.notEqual(cachedListResult('tools', [{ name: 'a' }]), first, 'a new list is a new result');
  });
});

describe('http request body parsing', () => {
  const error = (body: string): BodyError => {
    const parsed = parseMessages(body);
    assert.ok(isBodyError(parsed), `${body.slice(0, 60)} is refused`);
    return parsed;
  };
  const ok = (body: string): ParsedBody => {
    const parsed = parseMessages(body);
    assert.ok(!isBodyError(parsed), `${body.slice(0, 60)} is accepted: ${JSON.stringify(parsed)}`);
    return parsed;
  };

  it('accepts a message, a batch and an initialize on its own', () => {
    assert.equal(ok('{"jsonrpc":"2.0","id":1,"method":"ping"}').messages.length, 1);
    const batch = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]';
    assert.equal(ok(batch).messages.length, 2);
    const init = ok('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
    assert.equal((init.initialize as { method: string }).method, 'initialize');
    assert.equal(ok('{"jsonrpc":"2.0","id":1,"method":"ping"}').initialize, undefined);
  });

  it('refuses bad JSON, deep nesting, empty and long batches, and malformed messages', () => {
    assert.equal(error('{"jsonrpc":').code, -32700);
    const deep = error(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${'['.repeat(600)}${']'.repeat(600)}}}`);
    assert.equal(deep.code, -32600);
    assert.match(deep.message, /nested deeper than 512/);
    assert.match(error('[]').message, /empty batch/);
    const notes = Array.from({ length: MAX_BATCH + 1 }, (_, id) => ({ jsonrpc: '2.0', method: 'n', id }));
    const many = JSON.stringify(notes);
    assert.match(error(many).message, /limited to 100/);
    const bad = error('{"jsonrpc":"1.0","id":7,"method":"ping"}');
    assert.equal(bad.code, -32600);
    assert.equal(bad.id, 7, 'the error names the id it could read');
    assert.equal(error('{"jsonrpc":"1.0","id":{},"method":"ping"}').id, null);
    assert.equal(error('42').id, null);
  });

  it('wants initialize alone and as a request', () => {
    const withPing = '[{"jsonrpc":"2.0","id":1,"method":"initialize"},{"jsonrpc":"2.0","id":2,"method":"ping"}]';
    assert.match(error(withPing).message, /on its own/);
    assert.match(error('{"jsonrpc":"2.0","method":"initialize"}').message, /request with an id/);
  });
});
