// The persisted catalog's own logic: which entries of a file are used, when an entry counts for a
// definition, atomic private writes; and each trust tier's default lifecycle. No processes.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CatalogCache, parseCacheFile, type CatalogLists } from '../../../src/broker/catalog/catalogCache';
import { IdleClock } from '../../../src/broker/supervision/idleClock';
import { StartGate } from '../../../src/broker/supervision/startGate';
import { lifecycleOf, ServerDefSchema } from '../../../src/registry/schema';

const lists = (tool: string): CatalogLists => ({
  tools: [{ name: tool, inputSchema: { type: 'object' } }],
  prompts: [{ name: 'p' }],
  resources: [{ uri: 'x://r', name: 'r' }],
  resourceTemplates: [{ uriTemplate: 'x://t/{id}', name: 't' }],
});

const def = (more: Record<string, unknown> = {}) =>
  ServerDefSchema.parse({ name: 'srv', trust: 'trusted', command: 'node', args: ['a.js'], ...more });

describe('unit: catalog cache', () => {
  let dir: string;
  let logs: string[];
  const cache = (): CatalogCache =>
    new CatalogCache({
      file: path.join(dir, 'ws', 'catalog.json'),
      keyFile: path.join(dir, 'ws', 'catalog.key'),
      root: path.join(dir, 'root'),
      debounceMs: 5,
      log: (l) => logs.push(l),
    });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-unit-cache-'));
    logs = [];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parses a cache file, dropping malformed entries only', () => {
    const good = { hash: 'h', savedAt: 'now', lists: lists('a') };
    const parsed = parseCacheFile(JSON.stringify({ version: 1, servers: { good, bad: { hash: 'h', lists: {} } } }));
    assert.ok(!(parsed instanceof Error));
    assert.deepEqual(Object.keys(parsed.servers), ['good']);
    assert.deepEqual(parsed.dropped, ['bad']);
    const noSchema = { ...good, lists: { ...lists('a'), tools: [{ name: 'x' }] } };
    const refused = parseCacheFile(JSON.stringify({ version: 1, servers: { noSchema } }));
    assert.ok(!(refused instanceof Error) && refused.dropped[0] === 'noSchema', 'a tool needs its inputSchema');
    assert.ok(parseCacheFile('{oops') instanceof Error);
    assert.ok(parseCacheFile('{"version": 2, "servers": {}}') instanceof Error);
    assert.ok(parseCacheFile('[]') instanceof Error);
  });

  it('writes atomically (0600, no temp file left) and reads back only for the same definition', async () => {
    const a = cache();
    const hash = a.hashOf(def());
    assert.equal(hash, a.hashOf(def({ description: 'words do not change what runs' })));
    assert.notEqual(hash, a.hashOf(def({ args: ['b.js'] })));
    a.record('srv', hash, lists('one'));
    a.flush();
    const file = path.join(dir, 'ws', 'catalog.json');
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(path.dirname(file)).sort(), ['catalog.json', 'catalog.key']);
    const b = cache();
    assert.deepEqual(b.lookup('srv', hash), lists('one'));
    assert.equal(b.lookup('srv', b.hashOf(def({ args: ['b.js'] }))), undefined, 'another definition');
    assert.equal(b.lookup('srv', hash), undefined, 'a miss for a changed definition drops the entry');
  });

  it('debounces writes and keeps other entries when one is forgotten', async () => {
    const a = cache();
    a.record('one', 'h1', lists('x'));
    a.record('two', 'h2', lists('y'));
    const file = path.join(dir, 'ws', 'catalog.json');
    assert.ok(!fs.existsSync(file), 'nothing written yet');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')).servers).sort(), ['one', 'two']);
    a.retain(new Set(['two']));
    a.flush();
    assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')).servers), ['two']);
  });

  it('ignores a corrupt file with a log line', () => {
    fs.mkdirSync(path.join(dir, 'ws'));
    fs.writeFileSync(path.join(dir, 'ws', 'catalog.json'), '\u0000garbage');
    const a = cache();
    assert.equal(a.lookup('srv', 'h'), undefined);
    assert.match(logs.join('\n'), /catalog cache: ignoring .*catalog\.json: not JSON/);
  });

  it('defaults the lifecycle by trust tier: community lazy, trusted and builtin eager', () => {
    assert.equal(lifecycleOf(def({ trust: 'community' })), 'lazy');
    assert.equal(lifecycleOf(def({ trust: 'trusted' })), 'eager');
    assert.equal(lifecycleOf(def({ trust: 'builtin' })), 'eager');
    assert.equal(lifecycleOf(def({ trust: 'community', lifecycle: 'eager' })), 'eager');
    assert.equal(def().idleStopMs, 600_000);
    assert.equal(ServerDefSchema.safeParse({ name: 'x', command: 'n', lifecycle: 'sometimes' }).success, false);
  });
});

describe('unit: idle clock of a lazy server', () => {
  const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('fires once unused for the delay; a request in flight or a subscription holds it', async () => {
    const fired: string[] = [];
    const clock = new IdleClock((why) => fired.push(why));
    clock.begin();
    clock.arm(1);
    await tick(20);
    assert.deepEqual(fired, [], 'a request in flight holds it up');
    clock.end('tools/call', true);
    clock.begin();
    clock.end('resources/subscribe', true);
    clock.arm(1);
    await tick(20);
    assert.deepEqual(fired, [], 'a subscription holds it up');
    clock.begin();
    clock.end('resources/unsubscribe', true);
    clock.arm(1, 'test');
    await tick(20);
    assert.deepEqual(fired, ['test']);
    clock.begin();
    clock.end('resources/subscribe', false);
    assert.ok(clock.unused, 'a failed subscribe holds nothing');
    clock.begin();
    clock.end('resources/subscribe', true);
    clock.reset();
    assert.ok(clock.unused, 'a lost connection drops its subscriptions');
  });
});

describe('unit: start gate', () => {
  it('admits at most its limit at once, in order, and passes a released slot on', async () => {
    const gate = new StartGate(2);
    const order: string[] = [];
    const a = await gate.enter();
    const b = await gate.enter();
    const c = gate.enter().then((release) => (order.push('c'), release));
    const d = gate.enter().then((release) => (order.push('d'), release));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, [], 'both slots are taken');
    a();
    a();
    const releaseC = await c;
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['c'], 'one release admits one waiter, however often it is called');
    b();
    (await d)();
    releaseC();
    const e = await gate.enter();
    const f = await gate.enter();
    e();
    f();
  });
});
