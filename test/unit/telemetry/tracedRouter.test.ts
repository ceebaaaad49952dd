// The traced router: while telemetry is off there is no layer between the endpoint and the router
// (each method found is the router's own); once telemetry starts each request is a SERVER span,
// lists too, their parent read from the _meta they were given; it stops, the layer is gone again.
import assert from 'node:assert/strict';
import { startTelemetry, stopTelemetry, telemetry } from '../../../src/broker/telemetry/telemetry';
import { tracedRouter, type TracedMethods } from '../../../src/broker/telemetry/tracedRouter';

type Ctx = Parameters<TracedMethods['listTools']>[0];

class PlainRouter implements TracedMethods {
  traceIds: (string | undefined)[] = [];
  private seen(): unknown[] {
    this.traceIds.push(telemetry()?.traceId());
    return [];
  }
  callTool(): Promise<Record<string, never>> {
    this.seen();
    return Promise.resolve({});
  }
  getPrompt(): Promise<Record<string, never>> {
    return Promise.resolve({});
  }
  readResource(): Promise<Record<string, never>> {
    return Promise.resolve({});
  }
  complete(): Promise<Record<string, never>> {
    return Promise.resolve({});
  }
  listTools(_ctx: Ctx): unknown[] {
    return this.seen();
  }
  listPrompts(): unknown[] {
    return [];
  }
  listResources(): unknown[] {
    return [];
  }
  listResourceTemplates(): unknown[] {
    return [];
  }
}

describe('tracedRouter', () => {
  afterEach(() => stopTelemetry());
  const ctx: Ctx = { sessionId: 's', identity: { client: 'agent' } };
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const meta = { traceparent: `00-${traceId}-00f067aa0ba902b7-01` };

  it('is no layer at all while telemetry is off, a SERVER span per request while it is on', async () => {
    const router = new PlainRouter();
    const traced: TracedMethods = tracedRouter(router);
    assert.equal(traced.listTools, PlainRouter.prototype.listTools as unknown, 'off: the router method itself');
    assert.ok(!Object.prototype.hasOwnProperty.call(traced, 'callTool'));
    traced.listTools(ctx, meta);
    assert.deepEqual(router.traceIds, [undefined]);

    startTelemetry({ serviceName: 't', turnedOnBy: 'test', notes: [] });
    assert.notEqual(traced.listTools, PlainRouter.prototype.listTools as unknown, 'on: the traced layer');
    traced.listTools(ctx, meta);
    await traced.callTool(ctx, 'x', {}, meta);
    assert.deepEqual(router.traceIds, [undefined, traceId, traceId], "a list's parent is its _meta's traceparent");

    await stopTelemetry();
    assert.equal(traced.listTools, PlainRouter.prototype.listTools as unknown, 'off again: the layer is gone');
    traced.listTools(ctx, meta);
    assert.equal(router.traceIds.at(-1), undefined);
  });
});
