// The audit table's rows: a call's trace id (telemetry on) is offered for copying, and only a real one.
import assert from 'node:assert/strict';
import { rowOf } from '../../webview/auditRows';

describe('audit rows', () => {
  const call = { at: '2026-12-05T10:00:00Z', event: 'call', client: 'agent', server: 'echo', tool: 'echo', ms: 3 };

  it('carries the trace id of a traced call', () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    assert.equal(rowOf({ ...call, traceId }).traceId, traceId);
  });

  it('has none without telemetry, and drops what is not a trace id', () => {
    assert.equal(rowOf(call).traceId, undefined);
    assert.equal(rowOf({ ...call, traceId: '<img src=x>' }).traceId, undefined);
  });
});
