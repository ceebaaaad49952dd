// The endpoint's limits, as pure logic: which session makes room for a new one under the session
// caps (or why none can), and the per-upstream log token bucket with its count of drops.
import assert from 'node:assert/strict';
import { LogRateLimiter, parseLogRate } from '../../../src/broker/http/logRateLimit';
import { makeRoom, type SessionSlot } from '../../../src/broker/http/sessionLimits';

interface Slot extends SessionSlot {
  name: string;
}

const slot = (name: string, client: string, lastSeen: number, busy = false, operator = false): Slot => ({
  name,
  ctx: { identity: { client, operator } },
  transport: { busy },
  lastSeen,
});
const reader = { client: 'reader', operator: false };
const names = (r: Slot[] | { status: number }) => (Array.isArray(r) ? r.map((s) => s.name) : r.status);

describe('http session limits', () => {
  it('makes no room while both caps have space', () => {
    assert.deepEqual(names(makeRoom([slot('a', 'reader', 1)], reader, { perClient: 2, total: 3 })), []);
  });

  it("closes the client's oldest idle session at its cap, and refuses (429) when all are in use", () => {
    const sessions = [
      slot('busy', 'reader', 1, true),
      slot('new', 'reader', 5),
      slot('old', 'reader', 3),
      slot('x', 'w', 0),
    ];
    assert.deepEqual(names(makeRoom(sessions, reader, { perClient: 3, total: 10 })), ['old']);
    const allBusy = [slot('a', 'reader', 1, true), slot('b', 'reader', 2, true), slot('idle', 'writer', 0)];
    const refused = makeRoom(allBusy, reader, { perClient: 2, total: 10 });
    assert.ok(!Array.isArray(refused));
    assert.equal(refused.status, 429);
    assert.match(refused.message, /client 'reader' has 2 open sessions, the limit.*DELETE/);
  });

  it('closes the oldest idle session of anyone at the total cap, and refuses (503) when all are in use', () => {
    const sessions = [slot('w1', 'writer', 4), slot('w0', 'writer', 2, true), slot('r', 'reader', 3)];
    assert.deepEqual(names(makeRoom(sessions, reader, { perClient: 5, total: 3 })), ['r']);
    const refused = makeRoom([slot('a', 'w', 1, true), slot('b', 'x', 2, true)], reader, { perClient: 5, total: 2 });
    assert.ok(!Array.isArray(refused));
    assert.equal(refused.status, 503);
    assert.match(refused.message, /limit of 2 open sessions/);
  });

  it("frees one slot for both caps when the client's oldest idle session is the one to go", () => {
    const sessions = [slot('r0', 'reader', 1), slot('r1', 'reader', 2), slot('w', 'writer', 0, true)];
    assert.deepEqual(names(makeRoom(sessions, reader, { perClient: 2, total: 3 })), ['r0']);
    const twoNeeded = [slot('r0', 'reader', 5), slot('r1', 'reader', 6), slot('w', 'writer', 0)];
    assert.deepEqual(names(makeRoom(twoNeeded, reader, { perClient: 2, total: 2 })), ['r0', 'w']);
  });

  it('counts a declared client named "operator" apart from the operator', () => {
    const sessions = [slot('op', 'operator', 1, true, true), slot('op2', 'operator', 2, true, true)];
    const fake = { client: 'operator', operator: false };
    assert.deepEqual(names(makeRoom(sessions, fake, { perClient: 2, total: 10 })), []);
    assert.equal(names(makeRoom(sessions, { client: 'operator', operator: true }, { perClient: 2, total: 10 })), 429);
  });
});

describe('http log rate limit', () => {
  it('reads serve --log-rate as <per-second> or <per-second>/<burst>, and says the form when wrong', () => {
    assert.deepEqual(parseLogRate('10/20'), { perSecond: 10, burst: 20 });
    assert.deepEqual(parseLogRate(' 25 '), { perSecond: 25, burst: 50 });
    for (const bad of ['', '0', '5/0', '-1', 'ten', '1.5', '5/', '/5'])
      assert.throws(() => parseLogRate(bad), /--log-rate takes <messages per second>\[\/<burst>\]/, bad);
  });

  it('lets a burst through, then the steady rate, per server, and counts what it drops', () => {
    let now = 1_000;
    const limiter = new LogRateLimiter({ perSecond: 10, burst: 5 }, () => now);
    let admitted = 0;
    for (let i = 0; i < 50; i++) if (limiter.admit('a')) admitted++;
    assert.equal(admitted, 5);
    assert.ok(limiter.admit('b'), 'another server has its own bucket');
    assert.equal(limiter.takeDropped('a'), 45);
    assert.equal(limiter.takeDropped('a'), 0, 'the count starts again');
    now += 300; // three tokens back
    admitted = 0;
    for (let i = 0; i < 10; i++) if (limiter.admit('a')) admitted++;
    assert.equal(admitted, 3);
    assert.equal(limiter.takeDropped('a'), 7);
    now += 60_000; // never more than the burst
    admitted = 0;
    for (let i = 0; i < 10; i++) if (limiter.admit('a')) admitted++;
    assert.equal(admitted, 5);
    assert.equal(limiter.refillMs, 500);
    assert.equal(limiter.takeDropped('unknown'), 0);
  });
});
