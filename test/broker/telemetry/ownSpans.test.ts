// Spans of what the broker does beyond serving and forwarding a request, through a real broker
// exporting to a loopback OTLP collector (test/helpers/otlpCollector.ts): a request an upstream sends
// its client (elicitation answered by the caller, over a stdio pipe and on a remote call's own
// stream, and by the editor), a launch with its sandbox's kind (a lazy one inside the call that woke
// it), and lists, reads and prompts taking their parent from the caller's _meta on both endpoints in
// both eras. Nothing of the arguments, the command line, the environment or an answer is exported.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { OperatorClient } from '../../../src/broker/daemon/operatorClient';
import type { BrokerRecord } from '../../../src/broker/daemon/runtime';
import {
  connect,
  fixtureServer,
  removeTempDirs,
  startBrokerProcess,
  startHttpFixture,
  status,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../../helpers/broker';
import { OtlpCollector, type CollectedSpan } from '../../helpers/otlpCollector';
import { exportedTrace, startTelemetryBroker, stopTelemetryBroker } from '../../helpers/telemetryBroker';

const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const ARGUMENT_CANARY = 'canary-own-argument-5d1c';
const ANSWER_CANARY = 'canary-own-answer-a93e';
const ENV_CANARY = 'canary-own-env-77b0';
const COMMAND_CANARY = '--canary-own-command-line-31f2';
const SANDBOX_KINDS = ['bubblewrap', 'sandbox-exec', 'network-only', 'none'];

const hexId = (bytes: number): string => randomBytes(bytes).toString('hex');

/** A 2025-11-25 client that declares form elicitation, sampling and roots, and answers with the canary. */
async function elicitingClient(url: string, token: string): Promise<Client> {
  const client = new Client(
    { name: 'eliciting-agent', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { answer: ANSWER_CANARY } }));
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    role: 'assistant',
    content: { type: 'text', text: ANSWER_CANARY },
    model: 'test-model',
  }));
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///canary-own-root', name: 'r' }] }));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** The list, read and prompt requests of one era's SDK client, each with `_meta`. */
interface Lister {
  list(kind: 'tools' | 'prompts' | 'resources', meta: Record<string, unknown>): Promise<unknown>;
  read(uri: string, meta: Record<string, unknown>): Promise<{ contents: { uri: string; text?: string }[] }>;
  prompt(name: string, meta: Record<string, unknown>): Promise<unknown>;
  call(name: string, meta: Record<string, unknown>): Promise<unknown>;
  resources(): Promise<{ uri: string }[]>;
  close(): Promise<void>;
}

async function listerOf(era: '2025-11-25' | '2026-07-28', url: string, token: string): Promise<Lister> {
  const client =
    era === '2025-11-25'
      ? await connect(url, token, 'listing-agent')
      : new ClientV2(
          { name: 'listing-agent', version: '1.0.0' },
          { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: {} },
        );
  if (client instanceof ClientV2) {
    await client.connect(
      new TransportV2(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
  }
  // Both SDKs' clients have the same request methods; typed here as the one the test needs.
  const c = client as unknown as {
    listTools(p: object): Promise<unknown>;
    listPrompts(p: object): Promise<unknown>;
    listResources(p?: object): Promise<{ resources: { uri: string }[] }>;
    readResource(p: object): Promise<{ contents: { uri: string; text?: string }[] }>;
    getPrompt(p: object): Promise<unknown>;
    callTool(p: object): Promise<unknown>;
    close(): Promise<void>;
  };
  return {
    list: (kind, _meta) =>
      kind === 'tools'
        ? c.listTools({ _meta })
        : kind === 'prompts'
          ? c.listPrompts({ _meta })
          : c.listResources({ _meta }),
    read: (uri, _meta) => c.readResource({ uri, _meta }),
    prompt: (name, _meta) => c.getPrompt({ name, _meta }),
    call: (name, _meta) => c.callTool({ name, arguments: { text: 'x' }, _meta }),
    resources: async () => (await c.listResources()).resources,
    close: () => c.close(),
  };
}

describe("telemetry: the broker's own spans (server→client requests, launches) and lists traced from _meta", function () {
  this.timeout(120_000);
  const collector = new OtlpCollector();
  let remote: { url: string; stop(): Promise<void> };
  let broker: BrokerProcess;
  let operator: Client;
  let agentToken: string;

  before(async () => {
    remote = await startHttpFixture('asks-client.mjs');
    const canaryEnv = `env: { OWN_CANARY: ${ENV_CANARY} }\n`;
    ({ broker, operator, agentToken } = await startTelemetryBroker(collector, {
      prefix: 'sb-otel-own-',
      files: () => ({
        'mcp-servers.d/classic.yaml': fixtureServer('classic', 'traceparent.mjs', [COMMAND_CANARY], canaryEnv),
        'mcp-servers.d/modern.yaml': fixtureServer('modern', 'traceparent.mjs', ['--modern']),
        'mcp-servers.d/sleepy.yaml': fixtureServer(
          'sleepy',
          'traceparent.mjs',
          [COMMAND_CANARY],
          `lifecycle: lazy\n${canaryEnv}`,
        ),
        'mcp-servers.d/asks.yaml': fixtureServer('asks', 'asks-client.mjs'),
        'mcp-servers.d/rasks.yaml': `name: rasks\ntrust: trusted\ntransport: http\nurl: ${remote.url}\n`,
        'mcp-servers.d/toeditor.yaml': fixtureServer(
          'toeditor',
          'asks-client.mjs',
          [],
          'clientFeatures: { elicitation: editor, sampling: editor }\n',
        ),
        'clients.d/agent.yaml': 'name: agent\nmcp_allow: [read, write]\n',
      }),
      env: { OTEL_METRIC_EXPORT_INTERVAL: '500' },
      running: ['classic', 'modern', 'asks', 'rasks', 'toeditor'],
    }));
    // The lazy server has learned its catalog and rests: the traced call below is what launches it.
    await waitFor(async () => (await status(operator, 'sleepy')).state === 'idle', 'sleepy idle', 30_000);
  });

  after(async () => {
    await remote?.stop();
    await stopTelemetryBroker(collector, broker, [operator]);
  });

  function inTrace(traceId: string, count: number, what: string): Promise<CollectedSpan[]> {
    return waitFor(
      () => {
        const spans = collector.spans.filter((s) => s.traceId === traceId);
        return spans.length >= count ? spans : undefined;
      },
      what,
      20_000,
    );
  }

  it('a launch is a span with its sandbox kind; a start outside any request is a trace of its own', async () => {
    const launch = await waitFor(
      () => collector.spans.find((s) => s.name === 'launch classic'),
      'the launch span of classic',
      20_000,
    );
    assert.equal(launch.kind, INTERNAL);
    assert.equal(launch.parentSpanId, '', 'an eager start has no request as its parent');
    assert.equal(launch.attributes['switchboard.server'], 'classic');
    assert.equal(launch.attributes['switchboard.transport'], 'stdio');
    assert.ok(SANDBOX_KINDS.includes(String(launch.attributes['switchboard.sandbox'])), JSON.stringify(launch));
    // Spans leave in batches: the remote server's launch may be in a later one than classic's.
    const remoteLaunch = await waitFor(
      () => collector.spans.find((s) => s.name === 'launch rasks'),
      'the launch span of rasks',
      20_000,
    );
    assert.equal(remoteLaunch?.attributes['switchboard.sandbox'], 'remote');
    assert.equal(remoteLaunch?.attributes['switchboard.transport'], 'http');
  });

  it('a lazy server launched for a call: its launch span is a child of that call', async () => {
    const client = await connect(broker.url, agentToken, 'traced-agent');
    const traceId = hexId(16);
    try {
      await client.callTool({
        name: 'sleepy__trace',
        arguments: { text: ARGUMENT_CANARY },
        _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
      });
    } finally {
      await client.close();
    }
    const spans = await inTrace(traceId, 4, 'the SERVER, start, launch and CLIENT spans');
    const server = spans.find((s) => s.kind === SERVER)!;
    const launch = spans.find((s) => s.name === 'launch sleepy');
    assert.ok(launch, spans.map((s) => s.name).join(', '));
    assert.equal(launch.parentSpanId, server.spanId);
    assert.ok(SANDBOX_KINDS.includes(String(launch.attributes['switchboard.sandbox'])));
    assert.equal(spans.find((s) => s.name === 'start sleepy')?.parentSpanId, server.spanId);
  });

  for (const server of ['asks', 'rasks']) {
    const how = server === 'asks' ? 'over a stdio pipe' : "on a remote call's own stream";
    it(`an elicitation ${how} is a SERVER span, child of the call that caused it, answered by the caller`, async () => {
      const client = await elicitingClient(broker.url, agentToken);
      const traceId = hexId(16);
      try {
        const result = await client.callTool({
          name: `${server}__elicit`,
          arguments: { message: ARGUMENT_CANARY },
          _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
        });
        assert.match(
          textOf(result),
          new RegExp(ANSWER_CANARY),
          'the caller answered (the canary search is not vacuous)',
        );
      } finally {
        await client.close();
      }
      const spans = await inTrace(traceId, 3, 'the call and elicitation spans');
      const call = spans.find((s) => s.kind === CLIENT && s.name === 'tools/call elicit')!;
      const asked = spans.find((s) => s.name === 'elicitation/create');
      assert.ok(asked, spans.map((s) => s.name).join(', '));
      assert.equal(asked.kind, SERVER);
      assert.equal(asked.parentSpanId, call.spanId, "the request's parent is the broker's call to the upstream");
      assert.equal(asked.attributes['mcp.method.name'], 'elicitation/create');
      assert.equal(asked.attributes['switchboard.server'], server);
      assert.equal(asked.attributes['switchboard.client'], 'agent');
      assert.equal(asked.attributes['switchboard.routed_to'], 'client');
    });
  }

  it('sampling and roots asked over a stdio pipe are spans of the call too', async () => {
    const client = await elicitingClient(broker.url, agentToken);
    try {
      for (const [tool, method, args] of [
        ['sample', 'sampling/createMessage', { prompt: ARGUMENT_CANARY }],
        ['roots', 'roots/list', {}],
      ] as const) {
        const traceId = hexId(16);
        await client.callTool({
          name: `asks__${tool}`,
          arguments: args,
          _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
        });
        const spans = await inTrace(traceId, 3, `the call and ${method} spans`);
        const asked = spans.find((s) => s.name === method);
        assert.ok(asked, spans.map((s) => s.name).join(', '));
        assert.equal(asked.parentSpanId, spans.find((s) => s.kind === CLIENT)!.spanId);
        assert.equal(asked.attributes['switchboard.routed_to'], 'client');
      }
    } finally {
      await client.close();
    }
  });

  it('an elicitation answered by the editor says so, in the trace of the call', async () => {
    const record = { url: broker.url, operatorTokenFile: broker.tokenFile, pid: broker.proc.pid } as BrokerRecord;
    const editor = await OperatorClient.connect(record, {
      answerAsEditor: () => Promise.resolve({ action: 'accept', content: { answer: ANSWER_CANARY } }),
    });
    const agent = await connect(broker.url, agentToken, 'terminal-agent');
    try {
      await waitFor(
        async () => {
          const res = (await operator.readResource({ uri: 'switchboard://state' })) as { contents: { text: string }[] };
          return JSON.parse(res.contents[0].text).broker.editorConnected === true;
        },
        'the editor to be reachable',
        20_000,
      );
      const traceId = hexId(16);
      const result = await agent.callTool({
        name: 'toeditor__elicit',
        arguments: { message: ARGUMENT_CANARY },
        _meta: { traceparent: `00-${traceId}-${hexId(8)}-01` },
      });
      assert.match(textOf(result), new RegExp(ANSWER_CANARY));
      const spans = await inTrace(traceId, 3, 'the call and elicitation spans');
      const asked = spans.find((s) => s.name === 'elicitation/create');
      assert.ok(asked, spans.map((s) => s.name).join(', '));
      assert.equal(asked.attributes['switchboard.routed_to'], 'editor');
      assert.equal(asked.parentSpanId, spans.find((s) => s.kind === CLIENT)!.spanId);
    } finally {
      await agent.close();
      await editor.close();
    }
  });

  const endpoints = [
    { label: '/mcp', path: '/mcp', prompt: 'classic__hello' },
    { label: '/servers/classic/mcp', path: '/servers/classic/mcp', prompt: 'hello' },
  ];
  for (const ep of endpoints) {
    for (const era of ['2025-11-25', '2026-07-28'] as const) {
      it(`lists, a read and a prompt of a ${era} caller on ${ep.label} take their parent from _meta`, async () => {
        const lister = await listerOf(era, `http://127.0.0.1:${broker.port}${ep.path}`, agentToken);
        try {
          for (const kind of ['tools', 'prompts', 'resources'] as const) {
            const traceId = hexId(16);
            const callerSpan = hexId(8);
            await lister.list(kind, { traceparent: `00-${traceId}-${callerSpan}-01` });
            const [span] = await inTrace(traceId, 1, `the ${kind}/list span`);
            assert.equal(span.name, `${kind}/list`);
            assert.equal(span.kind, SERVER);
            assert.equal(span.parentSpanId, callerSpan);
          }
          const uri = (await lister.resources()).find((r) => r.uri === 'trace://context')?.uri;
          assert.ok(uri, 'the trace context resource is listed');
          const readTrace = hexId(16);
          const readParent = hexId(8);
          const read = await lister.read(uri, { traceparent: `00-${readTrace}-${readParent}-01` });
          const received = JSON.parse(read.contents[0].text!) as { traceparent: string };
          const spans = await inTrace(readTrace, 2, 'the resources/read spans');
          const served = spans.find((s) => s.kind === SERVER)!;
          const sent = spans.find((s) => s.kind === CLIENT)!;
          assert.equal(served.name, 'resources/read');
          assert.equal(served.parentSpanId, readParent);
          assert.equal(sent.parentSpanId, served.spanId);
          assert.equal(received.traceparent, `00-${readTrace}-${sent.spanId}-01`, 'the server heard the CLIENT span');

          const promptTrace = hexId(16);
          const promptParent = hexId(8);
          await lister.prompt(ep.prompt, { traceparent: `00-${promptTrace}-${promptParent}-01` });
          const prompt = (await inTrace(promptTrace, 2, 'the prompts/get spans')).find((s) => s.kind === SERVER)!;
          assert.equal(prompt.name, `prompts/get ${ep.prompt}`);
          assert.equal(prompt.parentSpanId, promptParent);
        } finally {
          await lister.close();
        }
      });
    }
  }

  it("a 2026-07-28 tools/call is no tools/list: the broker's own look-up of the tool has no span", async () => {
    const lists = () => collector.spans.filter((s) => s.name === 'tools/list').length;
    const before = lists();
    const caller = await listerOf('2026-07-28', broker.url, agentToken);
    try {
      const traceId = hexId(16);
      await caller.call('classic__trace', { traceparent: `00-${traceId}-${hexId(8)}-01` });
      // The look-ups ran before the call's spans ended: they would be exported with them or before.
      await inTrace(traceId, 2, "the call's SERVER and CLIENT spans");
      assert.equal(lists(), before);
    } finally {
      await caller.close();
    }
  });

  it('never exports an argument, an answer, a command line or an environment value', async () => {
    const bodies = collector.rawBodies.map((b) => b.toString('latin1'));
    // Positive control: names and attributes of the spans above are in what was exported.
    for (const exported of ['elicitation/create', 'switchboard.sandbox', 'switchboard.routed_to', 'resources/list'])
      assert.ok(
        bodies.some((b) => b.includes(exported)),
        exported,
      );
    const root = 'canary-own-root';
    for (const canary of [ARGUMENT_CANARY, ANSWER_CANARY, ENV_CANARY, COMMAND_CANARY, root, broker.token, agentToken]) {
      assert.ok(!bodies.some((b) => b.includes(canary)), `exported telemetry holds ${canary.slice(0, 14)}…`);
    }
  });
});

describe('telemetry over OTLP/gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc)', function () {
  this.timeout(90_000);
  const collector = new OtlpCollector();
  let broker: BrokerProcess;

  before(async () => {
    const endpoint = await collector.startGrpc();
    const root = tempDir('sb-otel-grpc-');
    writeRegistry(root, { 'mcp-servers.d/classic.yaml': fixtureServer('classic', 'traceparent.mjs') });
    broker = await startBrokerProcess({
      root,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_METRIC_EXPORT_INTERVAL: '300',
      },
    });
  });

  after(async () => {
    await broker?.stop();
    await collector.stop();
    removeTempDirs();
  });

  it("sends a call's spans and the duration histograms to a gRPC collector", async () => {
    const operator = await connect(broker.url, broker.token, 'operator');
    try {
      await waitFor(async () => (await status(operator, 'classic')).state === 'running', 'classic running', 30_000);
      const traceId = hexId(16);
      const callerSpan = hexId(8);
      await operator.callTool({
        name: 'classic__trace',
        arguments: { text: 'x' },
        _meta: { traceparent: `00-${traceId}-${callerSpan}-01` },
      });
      const spans = await exportedTrace(collector, traceId, 2, 'the SERVER and CLIENT spans over gRPC');
      const served = spans.find((s) => s.kind === SERVER)!;
      assert.equal(served.parentSpanId, callerSpan);
      assert.equal(spans.find((s) => s.kind === CLIENT)!.parentSpanId, served.spanId);
      await waitFor(
        () =>
          collector.latest('mcp.client.operation.duration').find((p) => p.attributes['gen_ai.tool.name'] === 'trace'),
        'the client duration histogram over gRPC',
        20_000,
      );
      assert.ok(collector.grpcCalls.includes('/opentelemetry.proto.collector.trace.v1.TraceService/Export'));
      assert.ok(collector.grpcCalls.includes('/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'));
      assert.ok(!broker.stderr.some((l) => /not supported|not one of/.test(l)), 'no protocol complaint in the log');
    } finally {
      await operator.close();
    }
  });
});
