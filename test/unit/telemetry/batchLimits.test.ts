// The span batches' bounds: 2048 spans a batch from a queue of 4096 where the environment sets
// none (each export's HTTP request costs the same whatever its size: fewer of them, less CPU per
// call; docs/performance.md "Telemetry cost, stop 46"), each OTEL_BSP_* variable winning when set.
// Checked on the bounds and on the library's real batch processor exporting to the collector fixture.
import assert from 'node:assert/strict';
import { batchLimits } from '../../../src/broker/telemetry/otelSdk';
import { startTelemetry, stopTelemetry } from '../../../src/broker/telemetry/telemetry';
import { OtlpCollector } from '../../helpers/otlpCollector';

describe('span batch bounds', function () {
  this.timeout(30_000);
  const collector = new OtlpCollector();
  let endpoint: string;
  const savedEnv = { ...process.env };

  before(async () => {
    endpoint = await collector.start();
  });
  after(() => collector.stop());
  afterEach(async () => {
    await stopTelemetry();
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
    Object.assign(process.env, savedEnv);
    collector.spans.length = 0;
  });

  it('are 2048 of 4096 unless set; a variable that is set is left to the processor', () => {
    assert.deepEqual(batchLimits({}), { maxQueueSize: 4096, maxExportBatchSize: 2048 });
    assert.deepEqual(batchLimits({ OTEL_BSP_MAX_QUEUE_SIZE: '4' }), { maxExportBatchSize: 4 });
    assert.deepEqual(batchLimits({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512' }), { maxQueueSize: 4096 });
    assert.deepEqual(batchLimits({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8000' }), { maxQueueSize: 8000 });
    assert.deepEqual(batchLimits({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10' }), {});
    assert.deepEqual(batchLimits({ OTEL_BSP_MAX_QUEUE_SIZE: 'many', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '' }), {
      maxQueueSize: 4096,
      maxExportBatchSize: 2048,
    });
  });

  /**
   * Serves `count` requests with the schedule 60 s away; the spans the collector has once it has
   * `until` of them, or after `waitMs`.
   */
  async function exportedSoon(
    env: Record<string, string>,
    count: number,
    until: number,
    waitMs: number,
  ): Promise<number> {
    for (const key of Object.keys(process.env)) if (key.startsWith('OTEL_BSP_')) delete process.env[key];
    Object.assign(process.env, { OTEL_BSP_SCHEDULE_DELAY: '60000' }, env);
    const running = startTelemetry({
      serviceName: 'batches',
      traces: { url: `${endpoint}/v1/traces`, protocol: 'http/protobuf' },
      turnedOnBy: 'test',
      notes: [],
    });
    for (let i = 0; i < count; i++) running.serve({ method: 'tools/list', client: 'c' }, () => []);
    const exported = () => collector.spans.filter((s) => s.serviceName === 'batches').length;
    const deadline = Date.now() + waitMs;
    while (exported() < until && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return exported();
  }

  it('send 600 spans as one batch later, not 512 at once (the SDK default, set by its variable, does)', async () => {
    // Positive control first: with the SDK's default batch size set, 512 of the 600 go at once.
    assert.equal(await exportedSoon({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512' }, 600, 512, 10_000), 512);
    await stopTelemetry();
    collector.spans.length = 0;
    assert.equal(
      await exportedSoon({}, 600, 1, 1_500),
      0,
      'no batch is full yet: nothing exported before the schedule',
    );
    await stopTelemetry(); // flushes what is queued
    assert.equal(collector.spans.filter((s) => s.serviceName === 'batches').length, 600, 'all of them at the flush');
  });

  it('send a full batch of 2048 at once', async () => {
    assert.equal(await exportedSoon({}, 2048, 2048, 15_000), 2048);
  });
});
