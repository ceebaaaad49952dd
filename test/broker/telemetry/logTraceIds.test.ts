// Issue 32 item 5, the broker's log lines carry the trace id of the request they belong to, for the
// lines written after a request has waited (no AsyncLocalStorage follows a call through its awaits:
// its span is handed down, RequestExtra.trace). A real broker exporting over OTLP/HTTP to a loopback
// collector, real upstream fixtures (SDK) that hang, stop mid-call, answer large or hand back a
// secret, and a real SDK client: each call is sent with a traceparent of its own, its SERVER span is
// found among the exported ones, and the server's log (tail_logs) must hold the call's line ending
// with that span's trace id. Controls: the same lines are found by their text, each call's line
// carries its own trace id (two timed-out calls, two ids), and a call that succeeds writes none.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, facade, fixtureServer, waitFor, type BrokerProcess } from '../../helpers/broker';
import { OtlpCollector } from '../../helpers/otlpCollector';
import { startTelemetryBroker, stopTelemetryBroker } from '../../helpers/telemetryBroker';

const SERVER_KIND = 2;
const LIMIT = 4096;
const SECRET = 'sk-logtrace-9Vq2Lm7Zp4Xw';

const traceparentOf = (traceId: string): string => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;

describe('telemetry: log lines written after a call waited carry its trace id', function () {
  this.timeout(120_000);
  const collector = new OtlpCollector();
  let broker: BrokerProcess;
  let operator: Client;
  let agent: Client;

  before(async () => {
    let agentToken: string;
    ({ broker, operator, agentToken } = await startTelemetryBroker(collector, {
      prefix: 'sb-logtrace-',
      files: () => ({
        // A short call limit: `hang` never answers, so the broker times the call out and cancels it.
        'mcp-servers.d/stuck.yaml': fixtureServer('stuck', 'slow.mjs', [], 'timeouts:\n  callMs: 400\n'),
        'mcp-servers.d/slow.yaml': fixtureServer('slow', 'slow.mjs'),
        'mcp-servers.d/crashy.yaml': fixtureServer('crashy', 'crashy.mjs'),
        'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs'),
        'mcp-servers.d/keeper.yaml': fixtureServer(
          'keeper',
          'echoes-secrets.mjs',
          [],
          'grants: [secrets]\nenv:\n  KEEPER_SECRET: ${env:SB_LOGTRACE_SECRET}\n',
        ),
        'clients.d/agent.yaml': `mcp_allow: [read, write]\nmaxResultBytes: ${LIMIT}\n`,
      }),
      env: { OTEL_METRIC_EXPORT_INTERVAL: '200', SB_LOGTRACE_SECRET: SECRET },
      running: ['stuck', 'slow', 'crashy', 'echo', 'keeper'],
    }));
    agent = await connect(broker.url, agentToken, 'agent');
    // Listed first, as an agent does (the SDK client checks results against the tools' schemas).
    await agent.listTools();
  });

  after(() => stopTelemetryBroker(collector, broker, [agent, operator]));

  /** The exported SERVER span of the call sent with `traceId`: the trace id the log line must carry. */
  async function exportedTraceOf(traceId: string, tool: string): Promise<string> {
    const span = await waitFor(
      () => collector.spans.find((s) => s.traceId === traceId && s.kind === SERVER_KIND),
      `the SERVER span of the ${tool} call exported`,
      20_000,
    );
    assert.equal(span.name, `tools/call ${tool}`);
    return span.traceId;
  }

  /** The server's log line matching `text`, once it is there. */
  async function lineOf(server: string, text: RegExp): Promise<string> {
    return waitFor(
      async () => {
        const logs = await facade(operator, 'tail_logs', { name: server, lines: 500 });
        return (logs.lines as { text: string }[]).map((l) => l.text).find((t) => text.test(t));
      },
      `a line ${text} in ${server}'s log`,
      20_000,
    );
  }

  async function traced(tool: string, args: Record<string, unknown>, options = {}): Promise<string> {
    const traceId = randomBytes(16).toString('hex');
    await agent
      .callTool({ name: tool, arguments: args, _meta: { traceparent: traceparentOf(traceId) } }, undefined, options)
      .catch(() => undefined);
    return traceId;
  }

  it('a timed-out call: its line names its own trace (two calls, two ids)', async () => {
    const first = await traced('stuck__hang', {});
    const second = await traced('stuck__hang', {});
    assert.notEqual(first, second);
    for (const id of [first, second]) {
      assert.equal(await exportedTraceOf(id, 'stuck__hang'), id);
      const line = await lineOf('stuck', new RegExp(`call of 'hang' timed out: .*\\(trace ${id}\\)$`));
      assert.match(line, /did not answer within 400 ms/);
    }
  });

  it('a call its caller cancelled', async () => {
    const abort = new AbortController();
    const traceId = await traced(
      'slow__slow',
      { steps: 1000, delayMs: 50 },
      // Cancelled once it is running upstream: its first progress says so.
      { signal: abort.signal, onprogress: () => abort.abort('the test cancels it') },
    );
    assert.equal(await exportedTraceOf(traceId, 'slow__slow'), traceId);
    await lineOf('slow', new RegExp(`^call of 'slow' cancelled by its caller \\(trace ${traceId}\\)$`));
  });

  it('a call whose server stopped under it', async () => {
    const traceId = await traced('crashy__crash', {});
    assert.equal(await exportedTraceOf(traceId, 'crashy__crash'), traceId);
    const line = await lineOf('crashy', new RegExp(`call of 'crash' failed: .*\\(trace ${traceId}\\)$`));
    assert.match(line, /stopped while handling this call/);
  });

  it("a result cut to the client's limit", async () => {
    const traceId = await traced('echo__echo', { text: 'x'.repeat(LIMIT * 4) });
    assert.equal(await exportedTraceOf(traceId, 'echo__echo'), traceId);
    await lineOf('echo', new RegExp(`^result of 'echo' cut to client 'agent''s limit.*\\(trace ${traceId}\\)$`));
  });

  it('a result whose secret values were redacted', async () => {
    const traceId = await traced('keeper__reveal', { name: 'KEEPER_SECRET', as: 'plain' });
    assert.equal(await exportedTraceOf(traceId, 'keeper__reveal'), traceId);
    await lineOf(
      'keeper',
      new RegExp(`^redacted its secret values from \\d+ string\\(s\\) of a result \\(trace ${traceId}\\)$`),
    );
  });

  it('control: a call that succeeds within its limit writes no call line', async () => {
    const traceId = await traced('echo__echo', { text: 'short' });
    assert.equal(await exportedTraceOf(traceId, 'echo__echo'), traceId);
    const logs = await facade(operator, 'tail_logs', { name: 'echo', lines: 500 });
    assert.ok(!(logs.lines as { text: string }[]).some((l) => l.text.includes(traceId)), 'no line names it');
  });
});
