// The 2026-07-28 pure rules: request checks in the spec's order, header encodings, resultType on
// forwarded bytes, the discover result as connection info.
import assert from 'node:assert/strict';
import { headerValue, statelessHeaders } from '../../../src/broker/connection/statelessHeaders';
import { infoFromDiscover } from '../../../src/broker/connection/statelessSession';
import { withResultType } from '../../../src/broker/http/exchange';
import {
  checkStatelessRequest,
  decodeHeaderValue,
  isStatelessFailure,
  removedMethodMessage,
  type StatelessFailure,
} from '../../../src/broker/http/statelessEnvelope';
import { rawResult, rememberedJson, rememberJson } from '../../../src/broker/shared/rawJson';

const SUPPORTED = ['2026-07-28', '2025-11-25'];
const meta = (version = '2026-07-28'): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
});
const headers = (h: Record<string, string>) => h as never;

function failure(message: unknown, h: Record<string, string>): StatelessFailure {
  const r = checkStatelessRequest(message, headers(h), SUPPORTED);
  assert.ok(isStatelessFailure(r), 'expected a refusal');
  return r;
}

describe('2026-07-28 request checks', () => {
  const ok = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };

  it('accepts a well-formed request and reads its capabilities and client name', () => {
    const m = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { ...meta(), 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } } },
    };
    const r = checkStatelessRequest(m, headers(ok), SUPPORTED);
    assert.ok(!isStatelessFailure(r));
    assert.equal(r.clientName, 'c');
    assert.deepEqual(r.capabilities, {});
  });

  it('checks the envelope first, then the version header, then the version, then the method headers', () => {
    const noMeta = failure({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {});
    assert.deepEqual([noMeta.status, noMeta.code], [400, -32602]);
    const noHeader = failure({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta() } }, {});
    assert.deepEqual([noHeader.status, noHeader.code], [400, -32020]);
    const future = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta('2099-01-01') } };
    const unsupported = failure(future, { ...ok, 'mcp-protocol-version': '2099-01-01' });
    assert.deepEqual([unsupported.status, unsupported.code], [400, -32022]);
    assert.deepEqual(unsupported.data, { supported: SUPPORTED, requested: '2099-01-01' });
    const wrongMethod = failure(
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta() } },
      { ...ok, 'mcp-method': 'prompts/list' },
    );
    assert.equal(wrongMethod.code, -32020);
  });

  it('compares Mcp-Name after decoding the Base64 sentinel form', () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wetter_für_heute', _meta: meta() } };
    const h = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
    const encoded = headers({ ...h, 'mcp-name': headerValue('wetter_für_heute') });
    assert.ok(!isStatelessFailure(checkStatelessRequest(call, encoded, SUPPORTED)));
    assert.equal(failure(call, { ...h, 'mcp-name': 'wetter_fur_heute' }).code, -32020);
    assert.equal(decodeHeaderValue('=?base64?SGVsbG8sIOS4lueVjA==?='), 'Hello, 世界');
    assert.equal(decodeHeaderValue('plain'), 'plain');
  });

  it('refuses batches and responses', () => {
    assert.equal(failure([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], ok).code, -32600);
    assert.equal(failure({ jsonrpc: '2.0', id: 1, result: {} }, ok).code, -32600);
  });

  it('names what replaces each removed method', () => {
    assert.match(removedMethodMessage('initialize')!, /server\/discover/);
    assert.match(removedMethodMessage('resources/subscribe')!, /subscriptions\/listen/);
    assert.match(removedMethodMessage('tasks/get')!, /tasks/);
    assert.equal(removedMethodMessage('tools/list'), undefined);
  });
});

describe('2026-07-28 encodings', () => {
  it('Base64-encodes header values that are not plain visible ASCII, or look like the sentinel', () => {
    assert.equal(headerValue('us-west1'), 'us-west1');
    assert.equal(headerValue(' padded '), '=?base64?IHBhZGRlZCA=?=');
    assert.equal(headerValue('=?base64?literal?='), '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
    assert.deepEqual(statelessHeaders({ method: 'resources/read', params: { uri: 'file:///a b' } }, '2026-07-28'), {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'resources/read',
      'mcp-name': 'file:///a b',
    });
  });

  it('splices resultType into an upstream result kept as its own bytes, without parsing it', () => {
    const bytes = Buffer.from('{"content":[{"type":"text","text":"x"}]}');
    const out = withResultType(rawResult(bytes));
    const spliced = rememberedJson(out);
    assert.ok(Buffer.isBuffer(spliced));
    assert.deepEqual(JSON.parse(spliced.toString()), {
      resultType: 'complete',
      content: [{ type: 'text', text: 'x' }],
    });
    const empty = withResultType(rawResult(Buffer.from('{ }')));
    assert.deepEqual(JSON.parse(rememberedJson(empty)!.toString()), { resultType: 'complete' });
    const text = {};
    rememberJson(text, '{"tools":[]}');
    assert.equal(rememberedJson(withResultType(text)), '{"resultType":"complete","tools":[]}');
    assert.deepEqual(withResultType({ a: 1 }), { resultType: 'complete', a: 1 });
    const modern = rawResult(Buffer.from('{"content":[],"resultType":"complete"}'));
    assert.equal(withResultType(modern), modern, 'a result that has it already is passed as it is');
  });

  it('reads a DiscoverResult as connection info, and nothing else as one', () => {
    const info = infoFromDiscover({
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '2' } },
    });
    assert.deepEqual(info, {
      serverName: 's',
      serverVersion: '2',
      instructions: undefined,
      capabilities: { tools: {} },
      protocol: '2026-07-28',
    });
    assert.equal(infoFromDiscover({ supportedVersions: ['2025-11-25'] }), undefined);
    assert.equal(infoFromDiscover({}), undefined);
  });
});
