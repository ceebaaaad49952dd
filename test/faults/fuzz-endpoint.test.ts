// Bad input at the endpoint: a seeded fast-check generator sends thousands of malformed,
// oversized and wrongly typed HTTP requests and JSON-RPC messages — bad JSON, wrong content
// types and Accept headers, unknown methods, huge and invalid ids, deep nesting, invalid or
// foreign session ids, missing and bad protocol headers, bad batches, wrong HTTP methods and
// paths, bad tokens — while a well-behaved SDK client keeps calling tools.
// Proves: every request gets a proper answer (an HTTP error with a JSON-RPC error body, or a
// JSON-RPC response per request id, exactly once), never a 5xx, a hang or a dropped socket; the
// broker never crashes; the well-behaved client never sees a failure; sessions the fuzzer opened
// are all closed again and the broker's memory stays bounded.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import fc from 'fast-check';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  fixtureServer,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import {
  RawHttp,
  RawSession,
  connectBusy,
  facade,
  faultServer,
  isJsonRpcError,
  messagesOf,
  noteUpstreams,
  pool,
  report,
  rssMb,
  sessionCount,
  startBroker,
  type Json,
  type RawRequest,
  type RawResponse,
} from './lib';

const SEED = Number(process.env.FAULTS_SEED ?? 20261202);
const CASES = Number(process.env.FAULTS_FUZZ_CASES ?? 6000);
const MAX_BODY = 4 * 1024 * 1024;
const MAX_DEPTH = 512;
const HEAP_MB = 192;
const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
]);

/** One generated request: what to send, and what the answer must be (beyond the general rules). */
interface Case {
  kind: string;
  /** Which fuzz session the request runs in (-1: none). */
  session: number;
  request: RawRequest;
  /** Allowed HTTP statuses. */
  status: number[];
  /** For 200 answers: the JSON-RPC ids that must each be answered exactly once. */
  ids?: unknown[];
  /** Use another client's token (the session belongs to the operator). */
  foreignToken?: boolean;
  /** An initialize: the session it opens is closed again right after. */
  opensSession?: boolean;
}

const rpc = (method: string, params?: unknown, id?: unknown): Json => ({
  jsonrpc: '2.0',
  ...(id !== undefined ? { id } : {}),
  method,
  ...(params !== undefined ? { params } : {}),
});
const body = (v: unknown) => JSON.stringify(v);

function deep(depth: number, leaf: 'array' | 'object'): string {
  return leaf === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

// ---------------------------------------------------------------------------------------------
// Generators, one per kind of bad input.

const anyText = fc.string({ unit: 'binary', maxLength: 200 });
const sessionIndex = fc.integer({ min: 0, max: 3 });
const validId = fc.oneof(fc.integer(), fc.string({ maxLength: 40 }));

const badJson: fc.Arbitrary<Case> = fc
  .oneof(
    anyText.filter((t) => {
      try {
        JSON.parse(t);
        return false;
      } catch {
        return true;
      }
    }),
    fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat()).map(([v, cut]) => {
      const t = JSON.stringify(rpc('ping', { x: v }, 1));
      return t.slice(0, cut % t.length);
    }),
    fc.constantFrom(
      '{',
      '[',
      '{"jsonrpc":"2.0",',
      'nul',
      'tru',
      '{"a":1}}',
      '\u0000',
      '\ufeff{}',
      '{"id":1,"id":}',
      "{'jsonrpc':'2.0'}",
      '[1,]',
      '{"a":01}',
      '"\\x"',
      '1e400e',
    ),
  )
  .filter((t) => {
    try {
      JSON.parse(t);
      return false;
    } catch {
      return true;
    }
  })
  .chain((t) => sessionIndex.map((s) => ({ kind: 'bad-json', session: s, request: { body: t }, status: [400] })));

const wrongContentType: fc.Arbitrary<Case> = fc
  .tuple(
    fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/json',
      'application/jsonl',
      'application/xml',
      'json',
      '*/*',
      'application/',
      'APPLICATION/JSONX',
    ),
    sessionIndex,
  )
  .map(([type, s]) => ({
    kind: 'wrong-content-type',
    session: s,
    request: { headers: { 'content-type': type }, body: body(rpc('ping', undefined, 1)) },
    status: [415],
  }));

const missingContentType: fc.Arbitrary<Case> = sessionIndex.map((s) => ({
  kind: 'wrong-content-type',
  session: s,
  request: { headers: { 'content-type': undefined }, body: body(rpc('ping', undefined, 1)) },
  status: [415],
}));

const badAccept: fc.Arbitrary<Case> = fc
  .tuple(
    fc.constantFrom(
      'text/html',
      'application/json',
      'text/event-stream',
      'image/png',
      'application/xml, text/plain',
      '',
    ),
    sessionIndex,
  )
  .map(([accept, s]) => ({
    kind: 'bad-accept',
    session: s,
    request: { headers: { accept }, body: body(rpc('ping', undefined, 2)) },
    status: [406],
  }));

const unknownMethod: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(
      fc.string({ minLength: 1, maxLength: 256 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
      fc.constantFrom(
        'tools/delete',
        'admin/shutdown',
        'switchboard/exec',
        'rpc.discover',
        '__proto__',
        'constructor',
        'toString',
        'tools/call/../../etc',
        'resources/write',
      ),
    ),
    validId,
    sessionIndex,
  )
  .filter(([m]) => !KNOWN_METHODS.has(m) && !m.startsWith('notifications/'))
  .map(([method, id, s]) => ({
    kind: 'unknown-method',
    session: s,
    request: { body: body(rpc(method, {}, id)) },
    status: [200],
    ids: [id],
  }));

const overlongMethod: fc.Arbitrary<Case> = fc
  .tuple(fc.integer({ min: 257, max: 100_000 }), sessionIndex)
  .map(([n, s]) => ({
    kind: 'unknown-method',
    session: s,
    request: { body: body(rpc('m'.repeat(n), {}, 1)) },
    status: [400],
  }));

const hugeId: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(
        1e308,
        -1e308,
        Number.MAX_SAFE_INTEGER + 2,
        Number.MIN_SAFE_INTEGER - 2,
        0.5,
        -0,
        2 ** 53,
        5e-324,
      ),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: 1000, max: 1_000_000 }).map((n) => 'i'.repeat(n)),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 100 }),
    ),
    fc.constantFrom('ping', 'tools/list'),
    sessionIndex,
  )
  .map(([raw, method, s]) => {
    const id = JSON.parse(JSON.stringify(raw)) as unknown;
    // MCP ids are strings or integers; a fractional or unsafe number is an Invalid Request.
    const valid = typeof id === 'string' || Number.isSafeInteger(id);
    return {
      kind: 'huge-id',
      session: s,
      request: { body: body(rpc(method, undefined, id)) },
      status: valid ? [200] : [400],
      ids: valid ? [id] : undefined,
    };
  });

const invalidId: fc.Arbitrary<Case> = fc
  .tuple(fc.constantFrom('null', 'true', '{}', '[]', '[1]', '{"a":1}', '1e400', '-1e400'), sessionIndex)
  .map(([raw, s]) => ({
    kind: 'invalid-id',
    session: s,
    request: { body: `{"jsonrpc":"2.0","id":${raw},"method":"ping"}` },
    status: [400],
  }));

const deepNesting: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(fc.integer({ min: 50, max: 600 }), fc.integer({ min: 600, max: 200_000 })),
    fc.constantFrom<'array' | 'object'>('array', 'object'),
    fc.constantFrom('args', 'params', 'id', 'meta', 'facade'),
    sessionIndex,
  )
  .map(([depth, leaf, where, s]) => {
    const d = deep(depth, leaf);
    const text =
      where === 'args'
        ? `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":${d}}}}`
        : where === 'params'
          ? `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":${d}}}`
          : where === 'meta'
            ? `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"x"},"_meta":{"deep":${d}}}}`
            : where === 'facade'
              ? '{"jsonrpc":"2.0","id":7,"method":"tools/call",' +
                `"params":{"name":"switchboard__probe_server","arguments":{"definition":${d}}}}`
              : `{"jsonrpc":"2.0","id":${d},"method":"ping"}`;
    const tooBig = Buffer.byteLength(text) > MAX_BODY;
    // The endpoint refuses JSON nested deeper than 512 levels (the wrapper adds up to 3).
    const refused = tooBig || depth + 3 > MAX_DEPTH || where === 'id';
    const status = tooBig ? [413] : depth + 3 > MAX_DEPTH && depth <= MAX_DEPTH ? [200, 400] : refused ? [400] : [200];
    return {
      kind: 'deep-nesting',
      session: s,
      request: { body: text },
      status,
      ids: status.includes(200) ? [7] : undefined,
    };
  });

const invalidSession: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(
      fc.uuid(),
      fc.string({ minLength: 1, maxLength: 100 }).filter((v) => /^[\x21-\x7e]+$/.test(v)),
      fc.constantFrom('../../x', '%00', 'null', '0'),
    ),
    fc.constantFrom('POST', 'DELETE'),
  )
  .map(([sid, method]) => ({
    kind: 'invalid-session',
    session: -1,
    request: {
      method,
      headers: { 'mcp-session-id': sid },
      body: method === 'POST' ? body(rpc('ping', undefined, 3)) : undefined,
    },
    status: [404],
  }));

const missingSession: fc.Arbitrary<Case> = fc.constantFrom('POST', 'DELETE').map((method) => ({
  kind: 'invalid-session',
  session: -1,
  request: { method, body: method === 'POST' ? body(rpc('tools/list', undefined, 4)) : undefined },
  status: [400],
}));

const foreignSession: fc.Arbitrary<Case> = sessionIndex.map((s) => ({
  kind: 'foreign-session',
  session: s,
  foreignToken: true,
  request: { body: body(rpc('tools/list', undefined, 5)) },
  status: [403],
}));

const protocolHeader: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(
      fc.constant(undefined),
      fc.constantFrom('1999-01-01', '2025-13-45', 'latest', '', '2024-11-05x'),
      fc.string({ minLength: 1, maxLength: 30 }).filter((v) => /^[\x21-\x7e]+$/.test(v)),
    ),
    sessionIndex,
  )
  .map(([v, s]) => {
    const supported =
      v === undefined || ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2024-10-07'].includes(v);
    return {
      kind: 'protocol-header',
      session: s,
      request: { headers: { 'mcp-protocol-version': v }, body: body(rpc('ping', undefined, 6)) },
      status: supported ? [200, 400] : [400],
      ids: supported ? [6] : undefined,
    };
  });

const wrongTypes: fc.Arbitrary<Case> = fc
  .tuple(
    fc.constantFrom<Json>(
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: 2, id: 1, method: 'ping' },
      { id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 5 },
      { jsonrpc: '2.0', id: 1, method: null },
      { jsonrpc: '2.0', id: 1, method: { x: 1 } },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: 'str' },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: [1, 2] },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: 5 },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: null },
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', method: '' },
      { jsonrpc: '2.0', id: 1, result: 1, method: 5 },
    ),
    fc.oneof(fc.constant<unknown>(undefined), fc.jsonValue({ maxDepth: 2 })),
    sessionIndex,
  )
  .map(([m, extra, s]) => ({
    kind: 'wrong-types',
    session: s,
    request: { body: body(extra === undefined ? m : { ...m, extra }) },
    status: [400],
  }));

// Requests the SDK's own schema rejects although they look like JSON-RPC: extra top-level keys,
// a malformed _meta or progress token. The endpoint must answer them, not drop them.
const sdkRejected: fc.Arbitrary<Case> = fc
  .tuple(
    fc.constantFrom<Json>(
      { jsonrpc: '2.0', id: 1, method: 'ping', extra: true },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: 5 } },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { progressToken: 1.5 } } },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { progressToken: {} } } },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { 'io.modelcontextprotocol/related-task': 7 } } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bare__echo', _meta: [] } },
    ),
    sessionIndex,
  )
  .map(([m, s]) => ({ kind: 'sdk-rejected', session: s, request: { body: body(m) }, status: [200, 400], ids: [1] }));

const scalarBody: fc.Arbitrary<Case> = fc
  .tuple(fc.jsonValue({ maxDepth: 0 }), sessionIndex)
  .map(([v, s]) => ({ kind: 'wrong-types', session: s, request: { body: JSON.stringify(v) }, status: [400] }));

const badParams: fc.Arbitrary<Case> = fc
  .tuple(
    fc.constantFrom<Json>(
      { name: 5 },
      { name: null },
      { name: 'echo__echo', arguments: 'x' },
      { name: 'echo__echo', arguments: [1] },
      { name: 'no_such__tool' },
      { name: '' },
      { name: 'switchboard__nope' },
      { name: 'echo__echo', arguments: { text: 5 } },
      { name: '../../etc/passwd' },
      { name: 'echo__echo\u0000' },
    ),
    fc.constantFrom(
      'tools/call',
      'prompts/get',
      'resources/read',
      'resources/subscribe',
      'completion/complete',
      'logging/setLevel',
    ),
    validId,
    sessionIndex,
  )
  .map(([params, method, id, s]) => ({
    kind: 'bad-params',
    session: s,
    request: { body: body(rpc(method, params, id)) },
    status: [200],
    ids: [id],
  }));

const batches: fc.Arbitrary<Case> = fc.oneof(
  sessionIndex.map((s) => ({ kind: 'batch', session: s, request: { body: '[]' }, status: [400] })),
  fc.tuple(fc.integer({ min: 101, max: 400 }), sessionIndex).map(([n, s]) => ({
    kind: 'batch',
    session: s,
    request: { body: body(Array.from({ length: n }, (_, i) => rpc('ping', undefined, i))) },
    status: [400],
  })),
  fc.tuple(fc.integer({ min: 2, max: 40 }), sessionIndex).map(([n, s]) => {
    const ids = Array.from({ length: n }, (_, i) => `b${i}`);
    return {
      kind: 'batch',
      session: s,
      request: {
        body: body(
          ids.map((id, i) =>
            i % 3 === 0
              ? rpc('tools/call', { name: 'bare__echo', arguments: { text: id } }, id)
              : i % 3 === 1
                ? rpc('no/such', {}, id)
                : rpc('ping', undefined, id),
          ),
        ),
      },
      status: [200],
      ids,
    };
  }),
  fc.tuple(fc.integer({ min: 1, max: 20 }), sessionIndex).map(([n, s]) => ({
    kind: 'batch',
    session: s,
    request: {
      body: body([
        ...Array.from({ length: n }, (_, i) => rpc('ping', undefined, i)),
        { jsonrpc: '2.0', id: 'x', method: 7 },
      ]),
    },
    status: [400],
  })),
  fc.tuple(fc.integer({ min: 2, max: 10 }), sessionIndex).map(([n, s]) => ({
    kind: 'batch',
    session: s,
    request: { body: body(Array.from({ length: n }, () => rpc('ping', undefined, 'same'))) },
    status: [400],
  })),
  sessionIndex.map((s) => ({
    kind: 'batch',
    session: s,
    request: {
      body: body([
        rpc(
          'initialize',
          { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
          1,
        ),
        rpc('ping', undefined, 2),
      ]),
    },
    status: [400],
  })),
  fc.tuple(fc.integer({ min: 1, max: 30 }), sessionIndex).map(([n, s]) => ({
    kind: 'batch',
    session: s,
    request: {
      body: body(Array.from({ length: n }, (_, i) => rpc('notifications/cancelled', { requestId: i, reason: 'fuzz' }))),
    },
    status: [202],
  })),
);

const notifications: fc.Arbitrary<Case> = fc
  .tuple(
    fc.constantFrom(
      'notifications/cancelled',
      'notifications/progress',
      'notifications/initialized',
      'notifications/roots/list_changed',
      'notifications/whatever',
    ),
    fc.oneof(
      fc.constant<unknown>(undefined),
      fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
    ),
    sessionIndex,
  )
  .map(([method, params, s]) => ({
    kind: 'notification',
    session: s,
    request: { body: body(rpc(method, params)) },
    status: [202],
  }));

const clientResponses: fc.Arbitrary<Case> = fc
  .tuple(
    validId,
    fc.oneof(
      fc.record({ result: fc.jsonValue({ maxDepth: 2 }) }),
      fc.record({ error: fc.record({ code: fc.integer(), message: fc.string() }) }),
    ),
    sessionIndex,
  )
  .map(([id, rest, s]) => ({
    kind: 'client-response',
    session: s,
    request: { body: body({ jsonrpc: '2.0', id, ...rest }) },
    status: [202],
  }));

const httpMethods: fc.Arbitrary<Case> = fc
  .tuple(fc.constantFrom('PUT', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND'), sessionIndex)
  .map(([method, s]) => ({
    kind: 'http-method',
    session: s,
    request: { method, body: method === 'HEAD' || method === 'TRACE' ? undefined : '{}' },
    status: [405],
  }));

const badGet: fc.Arbitrary<Case> = fc
  .tuple(fc.constantFrom('text/html', 'application/json', ''), sessionIndex)
  .map(([accept, s]) => ({
    kind: 'bad-get',
    session: s,
    request: { method: 'GET', headers: { accept } },
    status: [406],
  }));

const paths: fc.Arbitrary<Case> = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 80 }).map((p) => '/' + encodeURIComponent(p)),
    fc.constantFrom(
      '/',
      '/mcp/',
      '/MCP',
      '/mcp/../mcp2',
      '/servers/echo',
      '/servers/Echo/mcp',
      '/servers/../mcp',
      '/servers/a__b/mcp',
      '/servers/switchboard/mcp/x',
      '/%2e%2e/mcp',
      '/servers/' + 'a'.repeat(40) + '/mcp',
      '//mcp',
      '/mcp%00',
    ),
  )
  .filter((p) => p !== '/mcp' && p !== '/health' && !/^\/servers\/[a-z][a-z0-9-]{0,30}\/mcp$/.test(p))
  .map((p) => ({
    kind: 'bad-path',
    session: -1,
    request: { path: p, body: body(rpc('ping', undefined, 1)) },
    status: [404],
  }));

const unknownServer: fc.Arbitrary<Case> = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,30}$/)
  .filter((n) => n !== 'echo' && n !== 'bare')
  .map((n) => ({
    kind: 'bad-path',
    session: -1,
    request: {
      path: `/servers/${n}/mcp`,
      body: body(
        rpc(
          'initialize',
          { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'f', version: '1' } },
          1,
        ),
      ),
    },
    status: [404],
  }));

const badAuth: fc.Arbitrary<Case> = fc
  .oneof(
    fc
      .string({ minLength: 1, maxLength: 64 })
      .filter((v) => /^[\x21-\x7e]+$/.test(v))
      .map((t) => `Bearer ${t}`),
    fc.constantFrom(
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'bearer x',
      'Token abc',
      '',
      'Bearer  ',
      `Bearer ${'a'.repeat(8000)}`,
    ),
  )
  .map((auth) => ({
    kind: 'bad-token',
    session: -1,
    request: { headers: { authorization: auth }, body: body(rpc('ping', undefined, 1)) },
    status: [401],
  }));

const noAuth: fc.Arbitrary<Case> = fc.constantFrom('POST', 'GET', 'DELETE').map((method) => ({
  kind: 'bad-token',
  session: -1,
  request: { method, headers: { authorization: undefined }, body: method === 'POST' ? '{}' : undefined },
  status: [401],
}));

const badHost: fc.Arbitrary<Case> = fc
  .constantFrom(
    'evil.example',
    '127.0.0.1.evil.example',
    '127.0.0.1',
    'localhost',
    'example.com:80',
    '[::2]',
    '0.0.0.0',
  )
  .map((host) => ({
    kind: 'bad-host',
    session: -1,
    request: { headers: { host }, body: body(rpc('ping', undefined, 1)) },
    status: [403],
  }));

const garbageInitialize: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(
      fc.constant<unknown>({}),
      fc.dictionary(
        fc.constantFrom('protocolVersion', 'capabilities', 'clientInfo', 'x'),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 4 },
      ),
    ),
    validId,
  )
  .map(([params, id]) => ({
    kind: 'garbage-initialize',
    session: -1,
    opensSession: true,
    request: { body: body(rpc('initialize', params, id)) },
    status: [200],
    ids: [id],
  }));

const oversized: fc.Arbitrary<Case> = fc
  .tuple(fc.integer({ min: MAX_BODY + 1, max: MAX_BODY + 512 * 1024 }), fc.boolean(), sessionIndex)
  .map(([n, chunked, s]) => ({
    kind: 'oversized',
    session: s,
    request: { body: Buffer.alloc(n, 0x20), chunked },
    status: [413],
  }));

function generate(): Case[] {
  const weighted = fc.oneof(
    { weight: 8, arbitrary: badJson },
    { weight: 3, arbitrary: wrongContentType },
    { weight: 1, arbitrary: missingContentType },
    { weight: 3, arbitrary: badAccept },
    { weight: 8, arbitrary: unknownMethod },
    { weight: 1, arbitrary: overlongMethod },
    { weight: 6, arbitrary: hugeId },
    { weight: 2, arbitrary: invalidId },
    { weight: 2, arbitrary: deepNesting },
    { weight: 4, arbitrary: invalidSession },
    { weight: 1, arbitrary: missingSession },
    { weight: 2, arbitrary: foreignSession },
    { weight: 3, arbitrary: protocolHeader },
    { weight: 5, arbitrary: wrongTypes },
    { weight: 2, arbitrary: scalarBody },
    { weight: 2, arbitrary: sdkRejected },
    { weight: 6, arbitrary: badParams },
    { weight: 4, arbitrary: batches },
    { weight: 3, arbitrary: notifications },
    { weight: 3, arbitrary: clientResponses },
    { weight: 2, arbitrary: httpMethods },
    { weight: 1, arbitrary: badGet },
    { weight: 3, arbitrary: paths },
    { weight: 1, arbitrary: unknownServer },
    { weight: 3, arbitrary: badAuth },
    { weight: 1, arbitrary: noAuth },
    { weight: 1, arbitrary: badHost },
    { weight: 2, arbitrary: garbageInitialize },
  );
  const cases = fc.sample(weighted, { seed: SEED, numRuns: CASES });
  // Oversized bodies are costly (4 MB each): a fixed, small number of them, both framings.
  cases.push(...fc.sample(oversized, { seed: SEED + 1, numRuns: 24 }));
  // FAULTS_FUZZ_KINDS=a,b (or -a,-b) narrows the run to some kinds, for investigating one.
  const only = process.env.FAULTS_FUZZ_KINDS?.split(',').filter(Boolean);
  if (only?.length)
    return cases.filter((c) => (only[0].startsWith('-') ? !only.includes(`-${c.kind}`) : only.includes(c.kind)));
  return cases;
}

/** The general rules every answer must follow, whatever was sent. */
function judge(c: Case, res: RawResponse): string | undefined {
  // Concurrent cases may reuse an id within a session: the broker rightly refuses the second.
  if (res.status === 400 && c.ids && /must not be reused while a request with that id is in flight/.test(res.body))
    return undefined;
  if (!c.status.includes(res.status))
    return `expected HTTP ${c.status.join('/')}, got ${res.status}: ${res.body.slice(0, 200)}`;
  if (res.status >= 500) return `server error ${res.status}`;
  if (res.status >= 400) {
    if (c.request.method === 'HEAD') return undefined;
    if (res.status === 413 && !res.body) return undefined; // answered before the body was read, then closed
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      return `HTTP ${res.status} without a JSON body: ${res.body.slice(0, 100)}`;
    }
    if (!isJsonRpcError(parsed)) return `HTTP ${res.status} body is not a JSON-RPC error: ${res.body.slice(0, 200)}`;
    return undefined;
  }
  if (res.status === 202) return res.body === '' ? undefined : `202 with a body: ${res.body.slice(0, 100)}`;
  let messages: Json[];
  try {
    messages = messagesOf(res);
  } catch (err) {
    return `200 with an unparseable body: ${(err as Error).message}`;
  }
  const responses = messages.filter((m) => !('method' in m));
  const want = c.ids ?? [];
  const seen = new Map<string, number>();
  for (const m of responses) {
    if (m.jsonrpc !== '2.0' || !('id' in m) || !('result' in m || 'error' in m))
      return `not a JSON-RPC response: ${JSON.stringify(m).slice(0, 200)}`;
    if ('error' in m && !isJsonRpcError(m)) return `malformed error: ${JSON.stringify(m).slice(0, 200)}`;
    const key = JSON.stringify(m.id);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const id of want) {
    const n = seen.get(JSON.stringify(id)) ?? 0;
    if (n !== 1) return `id ${JSON.stringify(id).slice(0, 60)} answered ${n} times`;
  }
  if (responses.length !== want.length) return `${responses.length} responses for ${want.length} requests`;
  return undefined;
}

describe('faults: endpoint fuzzing', function () {
  this.timeout(300_000);
  let broker: BrokerProcess;
  let wellBehaved: Client;
  let readerToken: string;

  before(async () => {
    const root = tempDir('sb-fault-fuzz-');
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
      'mcp-servers.d/bare.yaml': faultServer('bare', 'bare.mjs'),
      'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\n',
    });
    // A capped heap turns "memory stays bounded" into a crash if it is not.
    broker = await startBroker({ root, env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` } });
    wellBehaved = await connectBusy(broker.url, broker.token, 'well-behaved');
    await waitFor(
      async () => (await facade(wellBehaved, 'list_servers')).servers.every((s: Json) => s.state === 'running'),
      'upstreams',
      30_000,
    );
    readerToken = fs
      .readFileSync((await facade(wellBehaved, 'client_connection', { name: 'reader' })).tokenFile, 'utf8')
      .trim();
    noteUpstreams(broker);
  });

  after(async () => {
    await wellBehaved?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it(`answers ${CASES}+ malformed requests properly while a well-behaved client keeps working`, async () => {
    const cases = generate();
    const http = new RawHttp(broker.port, broker.token);
    const foreign = new RawHttp(broker.port, readerToken);
    const sessions = Array.from({ length: 4 }, (_, i) => new RawSession(http, `fuzz${i}`));
    for (const s of sessions) await s.initialize();
    const baselineSessions = await sessionCount(wellBehaved);
    const rssStart = rssMb(broker.proc.pid!);

    // The well-behaved client: calls in a loop for as long as the fuzzer runs.
    let fuzzing = true;
    let goodCalls = 0;
    const goodFailures: string[] = [];
    const goodLoop = (async () => {
      let n = 0;
      while (fuzzing && n < 100_000) {
        n++;
        try {
          const text = textOf(
            await wellBehaved.callTool({ name: n % 2 ? 'echo__echo' : 'bare__echo', arguments: { text: `good-${n}` } }),
          );
          if (text !== `echo: good-${n}`) goodFailures.push(`call ${n}: ${text}`);
          if (n % 50 === 0) assert.ok((await wellBehaved.listTools()).tools.length > 20);
          goodCalls++;
        } catch (err) {
          goodFailures.push(`call ${n}: ${(err as Error).message}`);
        }
      }
    })();

    const failures: string[] = [];
    const byKind = new Map<string, number>();
    const statuses = new Map<number, number>();
    let opened = 0;
    let closedAgain = 0;
    const t0 = Date.now();
    await pool(cases, 8, async (c) => {
      byKind.set(c.kind, (byKind.get(c.kind) ?? 0) + 1);
      const session = c.session >= 0 ? sessions[c.session] : undefined;
      const headers = { ...(session ? session.headers() : {}), ...c.request.headers };
      let res: RawResponse;
      try {
        res = await (c.foreignToken ? foreign : http).request({ ...c.request, headers, timeoutMs: 10_000 });
      } catch (err) {
        if (process.env.FAULTS_DEBUG_DIR)
          fs.writeFileSync(
            `${process.env.FAULTS_DEBUG_DIR}/case-${failures.length}.json`,
            JSON.stringify({ ...c, request: { ...c.request, body: String(c.request.body ?? '') }, headers }),
          );
        failures.push(
          `${c.kind}: no answer: ${(err as Error).message} | ` +
            `sent ${String(c.request.body ?? '').slice(0, 120)} (${String(c.request.body ?? '').length} bytes)`,
        );
        return;
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const verdict = judge(c, res);
      if (verdict) failures.push(`${c.kind}: ${verdict} | sent ${String(c.request.body ?? '').slice(0, 120)}`);
      const sid = res.headers['mcp-session-id'];
      if (c.opensSession && typeof sid === 'string') {
        opened++;
        const del = await http.request({ method: 'DELETE', headers: { 'mcp-session-id': sid } });
        if (del.status === 200) closedAgain++;
        else failures.push(`${c.kind}: DELETE of the opened session gave ${del.status}`);
      }
    });
    const ms = Date.now() - t0;
    fuzzing = false;
    await goodLoop;

    for (const s of sessions) assert.equal(await s.close(), 200);
    http.close();
    foreign.close();
    assert.equal(broker.proc.exitCode, null, 'the broker is alive');
    const sessionsEnd = await waitFor(
      async () => {
        const n = await sessionCount(wellBehaved);
        return n === baselineSessions - 4 ? n : undefined;
      },
      'the fuzz sessions to be gone',
      10_000,
    );
    const rssEnd = rssMb(broker.proc.pid!);
    report('endpoint-fuzz', {
      seed: SEED,
      brokerHeapCapMb: HEAP_MB,
      requests: cases.length,
      faultsInjected: cases.length,
      failures: failures.length,
      byKind: Object.fromEntries(byKind),
      statuses: Object.fromEntries(statuses),
      fuzzSeconds: Math.round(ms / 100) / 10,
      wellBehavedCalls: goodCalls,
      wellBehavedFailures: goodFailures.length,
      sessionsOpenedByFuzz: opened,
      sessionsClosedAgain: closedAgain,
      sessionsEnd,
      brokerRssMbStart: rssStart,
      brokerRssMbEnd: rssEnd,
    });
    if (process.env.FAULTS_DEBUG) for (const f of failures) console.log(f.slice(0, 300));
    assert.deepEqual(failures.slice(0, 30), [], `${failures.length} bad answers`);
    assert.deepEqual(goodFailures.slice(0, 10), []);
    assert.ok(goodCalls >= 100, `the well-behaved client kept calling (${goodCalls} calls)`);
    if (!process.env.FAULTS_FUZZ_KINDS) assert.ok(cases.length >= 5000);
    assert.ok(rssEnd < rssStart * 2 + 50, `RSS ${rssStart} → ${rssEnd} MB`);
  });

  it('a request id reused while the first request with it is in flight: both POSTs are answered', async () => {
    const http = new RawHttp(broker.port, broker.token);
    const session = new RawSession(http, 'dup');
    await session.initialize();
    const problems: string[] = [];
    const REPS = 40;
    for (let rep = 0; rep < REPS; rep++) {
      const id = `dup-${rep}`;
      const first = session
        .post(session.call('bare__sleep', { ms: 300 }, id), { timeoutMs: 10_000 })
        .catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 30));
      const second = session.post({ jsonrpc: '2.0', id, method: 'ping' }, { timeoutMs: 10_000 }).catch((e: Error) => e);
      for (const [which, res] of [
        ['first', await first],
        ['second', await second],
      ] as const) {
        if (res instanceof Error) {
          problems.push(`rep ${rep} ${which}: no answer (${res.message})`);
          continue;
        }
        if (res.status === 200 && res.messages.length === 1 && res.messages[0].id === id) continue;
        if (res.status === 400 && isJsonRpcError(JSON.parse(res.body))) continue;
        problems.push(`rep ${rep} ${which}: HTTP ${res.status} ${res.body.slice(0, 120)}`);
      }
    }
    assert.equal(await session.close(), 200);
    http.close();
    report('duplicate-inflight-ids', {
      repetitions: REPS,
      requests: REPS * 2,
      faultsInjected: REPS,
      failures: problems.length,
    });
    assert.deepEqual(problems.slice(0, 10), []);
  });
});
