// A call's cancellation without an AbortSignal until one is asked for (shared/callCancel.ts): the
// hooks of the per-call path and a signal made late both see the one cancellation, once.
import assert from 'node:assert/strict';
import { CallCancel } from '../../../src/broker/shared/callCancel';

describe('CallCancel', () => {
  it('runs its hooks once, with the reason, and a signal made before aborts with them', () => {
    const cancel = new CallCancel();
    const seen: unknown[] = [];
    cancel.onAbort((reason) => seen.push(reason));
    const signal = cancel.signal;
    let heard: unknown;
    signal.addEventListener('abort', () => (heard = signal.reason));
    assert.equal(cancel.aborted, false);
    const why = new Error('the client closed the connection');
    cancel.abort(why);
    cancel.abort(new Error('again'));
    assert.deepEqual(seen, [why]);
    assert.equal(heard, why);
    assert.equal(cancel.aborted, true);
    assert.equal(cancel.reason, why);
  });

  it('a signal asked for after the cancellation is already aborted, with its reason', () => {
    const cancel = new CallCancel();
    const why = new Error('cancelled by the client');
    cancel.abort(why);
    assert.equal(cancel.signal.aborted, true);
    assert.equal(cancel.signal.reason, why);
    let late = false;
    cancel.onAbort(() => (late = true));
    assert.equal(late, false, 'a hook added after the cancellation is not called');
  });

  it('a removed hook is not called; without a reason it is an AbortError, as AbortController gives', () => {
    const cancel = new CallCancel();
    let called = false;
    const hook = (): void => {
      called = true;
    };
    cancel.onAbort(hook);
    cancel.offAbort(hook);
    cancel.abort();
    assert.equal(called, false);
    assert.equal((cancel.reason as Error).name, 'AbortError');
    assert.equal(cancel.signal.reason, cancel.reason);
  });
});
