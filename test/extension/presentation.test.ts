// What the tree, the approval dialog, the status bar and the MCP provider say about a state.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrokerState, ServerStatus } from '../../src/broker/control/controlApi';
import { planDefinitions } from '../../src/extension/mcpPlan';
import {
  approvalDetail,
  scanLabel,
  serverContextValue,
  serverDescription,
  serverIcon,
  serverTooltip,
  stateIcon,
  statusSummary,
  toolScanLabel,
  vscodeClientLine,
} from '../../src/extension/presentation';
import { consoleTitle } from '../../src/extension/consoleTitle';

function server(over: Partial<ServerStatus> = {}): ServerStatus {
  return {
    name: 'echo',
    description: 'Echo fixture',
    trust: 'builtin',
    transport: 'stdio',
    enabled: true,
    state: 'running',
    pid: 42,
    uptimeMs: 5000,
    restarts: 0,
    tools: [{ name: 'echo', exposedAs: 'echo__echo', description: 'Echo the text back' }],
    promptCount: 0,
    resourceCount: 0,
    grants: [],
    enforcement: { network: 'enforced', filesystem: 'not-enforced', secrets: 'enforced', notes: [] },
    approval: 'not-needed',
    approvalHash: 'h',
    approvalItems: [
      { label: 'Runs', value: 'node echo.mjs' },
      { label: 'Grants', value: 'none' },
    ],
    approvalSummary: 'Runs: node echo.mjs | Grants: none',
    withheldEnv: [],
    target: 'node echo.mjs',
    file: '/r/mcp-servers.d/echo.yaml',
    ...over,
  };
}

function state(servers: ServerStatus[], over: Partial<BrokerState> = {}): BrokerState {
  return {
    broker: {
      version: '0.1.0',
      pid: 7,
      root: '/r',
      url: 'http://127.0.0.1:4000/mcp',
      sessions: 1,
      untrusted: false,
      catalogVersion: 3,
      memory: { rssBytes: 60e6, heapUsedBytes: 9e6, idleCollections: 0 },
    },
    servers,
    prompts: [],
    clients: [{ name: 'copilot', mcp_allow: ['read', 'write'], tokenFile: '/t' }],
    problems: [],
    ...over,
  };
}

describe('extension: presentation', () => {
  it('shows a crash-looping server as such, with its restarts and the first line of its reason', () => {
    const looping = server({
      state: 'starting',
      pid: undefined,
      restarts: 3,
      lastError: 'process exited with code 1 before it finished the MCP handshake; last output:\nError: no token',
    });
    assert.equal(
      serverDescription(looping),
      '◆ builtin · crash-looping (3 restarts): process exited with code 1 before it finished the MCP hands…',
    );
    assert.equal(serverIcon(looping).id, 'warning');
    // A first start, or a restart after a clean run (lastError cleared), is just starting.
    assert.equal(serverIcon(server({ state: 'starting', restarts: 3 })).id, 'sync~spin');
    assert.match(serverDescription(server({ state: 'starting', restarts: 0, lastError: 'x' })), /starting$/);
  });

  it('describes a server with its trust badge, state and tool count', () => {
    assert.equal(serverDescription(server()), '◆ builtin · running · 1 tool');
    assert.equal(
      serverDescription(server({ trust: 'community', state: 'awaiting-approval', approval: 'required', tools: [] })),
      '⚠ community · awaiting approval',
    );
    assert.equal(stateIcon('running').id, 'pass-filled');
    assert.equal(stateIcon('starting').id, 'sync~spin');
    assert.equal(stateIcon('failed').id, 'error');
    assert.equal(stateIcon('awaiting-approval').id, 'shield');
  });

  it('drives the menus with contextValue tokens', () => {
    assert.equal(serverContextValue(server()), 'server enabled builtin restartable running');
    const community = serverContextValue(
      server({ trust: 'community', state: 'awaiting-approval', approval: 'required' }),
    );
    assert.match(community, /^server\b.*\bneedsApproval\b/);
    assert.doesNotMatch(community, /\brestartable\b/);
    assert.match(serverContextValue(server({ enabled: false, state: 'disabled' })), /^server disabled/);
  });

  it('gives each server row at most two inline actions, chosen by its state', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'));
    const inline = (pkg.contributes.menus['view/item/context'] as { command: string; when: string; group: string }[])
      .filter((m) => m.group.startsWith('inline') && m.when.startsWith('viewItem =~ /^server'))
      .map((m) => ({
        command: m.command.replace('switchboard.', ''),
        re: new RegExp(/=~ \/(.*?)\/(?: |$)/.exec(m.when)![1]),
      }));
    const shown = (over: Partial<ServerStatus>): string[] => {
      const value = serverContextValue(server(over));
      return inline.filter((m) => m.re.test(value)).map((m) => m.command);
    };
    assert.deepEqual(shown({}), ['showServerLogs']);
    assert.deepEqual(shown({ state: 'failed', lastError: 'boom' }), ['restartServer', 'showServerLogs']);
    assert.deepEqual(shown({ state: 'starting', restarts: 2, lastError: 'boom' }), ['restartServer', 'showServerLogs']);
    assert.deepEqual(shown({ trust: 'community', state: 'awaiting-approval', approval: 'required' }), [
      'approveServer',
    ]);
    assert.deepEqual(shown({ enabled: false, state: 'disabled' }), ['enableServer']);
    assert.deepEqual(shown({ state: 'starting' }), []);
  });

  it('shows exactly what an approval covers', () => {
    const text = approvalDetail(
      server({
        trust: 'community',
        target: 'npx --no-install mcp-server-memory',
        grants: ['network'],
        approvalItems: [
          { label: 'Runs', value: 'npx --no-install mcp-server-memory' },
          { label: 'Env file', value: '../other/creds', warning: '⚠ outside the registry root: ../other/creds' },
          { label: 'Env MEMORY_FILE_PATH', value: 'mem.json' },
          { label: 'Grants', value: 'network' },
        ],
      }),
    );
    assert.match(text, /^Runs: npx --no-install mcp-server-memory$/m);
    assert.match(text, /^Grants: network$/m);
    assert.match(text, /secrets: withheld/);
    assert.match(text, /^Env MEMORY_FILE_PATH: mem\.json$/m);
    assert.match(text, /^Env file: \.\.\/other\/creds\n {2}⚠ outside the registry root/m);
  });

  it('writes tooltips with the last error and honest enforcement', () => {
    const tip = serverTooltip(
      server({
        state: 'failed',
        lastError: 'spawn nope ENOENT',
        enforcement: { network: 'not-enforced', filesystem: 'not-enforced', secrets: 'enforced', notes: [] },
      }),
    );
    assert.match(tip, /spawn nope ENOENT/);
    assert.match(tip, /network: not granted, but not blockable here/);
  });

  it("shows a server's live numbers in its tooltip and the busiest server in the status bar", () => {
    const live = { requests: 12, errors: 1, errorRate: 1 / 12, p50Ms: 4.25, p95Ms: 1520 };
    assert.match(
      serverTooltip(server({ live })),
      /^- Calls: 12 calls in the last 5 min, 8% errors, p50 4\.3 ms, p95 1\.5 s$/m,
    );
    assert.doesNotMatch(serverTooltip(server()), /Calls:/);
    const quiet = { requests: 2, errors: 0, errorRate: 0, p50Ms: 30, p95Ms: 40 };
    const summary = statusSummary([
      {
        folder: 'main',
        phase: 'connected',
        state: state([
          server({ name: 'quiet', live: quiet }),
          server({ name: 'busy', live }),
          server({ name: 'idle' }),
        ]),
        untrusted: false,
      },
    ]);
    assert.match(summary.tooltip, /^ {2}Busiest: busy — 12 calls in the last 5 min/m);
    const none = statusSummary([{ folder: 'main', phase: 'connected', state: state([server()]), untrusted: false }]);
    assert.doesNotMatch(none.tooltip, /Busiest/);
  });

  it("explains VS Code's MCP client state next to the broker's", () => {
    assert.equal(vscodeClientLine(0, 3), undefined);
    assert.match(vscodeClientLine(1, 5)!, /^VS Code's MCP client: not connected yet — it connects on first use/);
    assert.match(vscodeClientLine(1, 5)!, /shows Switchboard as Stopped until then; the broker is running 5 servers/);
    assert.match(
      vscodeClientLine(1, 1, new Date(2026, 0, 1, 9, 5))!,
      /connected to the broker since 09:05 .*1 server\)/,
    );
  });

  it('summarises the brokers in the status bar', () => {
    const ok = statusSummary([
      {
        folder: 'main',
        phase: 'connected',
        state: state([server(), server({ name: 'b', state: 'stopped' })]),
        untrusted: false,
      },
    ]);
    assert.equal(ok.text, '$(plug) Switchboard 1/2');
    const bad = statusSummary([
      { folder: 'main', phase: 'connected', state: state([server({ state: 'failed' })]), untrusted: false },
    ]);
    assert.equal(bad.severity, 'warning');
    const lost = statusSummary([
      {
        folder: 'main',
        phase: 'reconnecting',
        state: state([]),
        untrusted: false,
        lastError: 'broker process 7 exited',
        retryInMs: 2000,
      },
    ]);
    assert.match(lost.text, /reconnecting/);
    assert.match(lost.tooltip, /retrying in 2 s/);
    const restricted = statusSummary([
      {
        folder: 'main',
        phase: 'connected',
        state: state([], { broker: { ...state([]).broker, untrusted: true } }),
        untrusted: true,
      },
    ]);
    assert.match(restricted.text, /restricted/);
  });
});

describe('extension: MCP provider plan', () => {
  it('offers /mcp as the declared editor client, versioned by the catalog', () => {
    const plan = planDefinitions(state([server()]), { editorClient: 'copilot', perServer: false });
    assert.deepEqual(plan, [
      { label: 'Switchboard', url: 'http://127.0.0.1:4000/mcp', path: '/mcp', version: '7.3', client: 'copilot' },
    ]);
  });

  it('falls back to one definition per runnable upstream (no control tools) when the client is not declared', () => {
    const s = state([
      server(),
      server({ name: 'mem', trust: 'community', state: 'awaiting-approval', approval: 'required' }),
      server({ name: 'off', enabled: false, state: 'disabled' }),
    ]);
    const plan = planDefinitions(s, { editorClient: 'nobody', perServer: false });
    assert.deepEqual(
      plan.map((p) => [p.label, p.path, p.client]),
      [['echo · Switchboard', '/servers/echo/mcp', undefined]],
    );
    const v1 = plan[0].version;
    const v2 = planDefinitions(state([server({ tools: [] })]), { editorClient: '', perServer: true })[0].version;
    assert.notEqual(v1, v2, 'the version changes with the tools');
  });

  it('with appServers, offers each server that has MCP Apps on its own endpoint next to /mcp', () => {
    const app = {
      uri: 'ui://counter/view.html',
      aggregatedUri: 'ui://shop/counter/view.html',
      tools: ['show'],
      appOnlyTools: [],
      held: false,
    };
    const s = state([server(), server({ name: 'shop', apps: [app] })]);
    const without = planDefinitions(s, { editorClient: 'copilot', perServer: false });
    assert.deepEqual(
      without.map((p) => p.path),
      ['/mcp'],
    );
    const plan = planDefinitions(s, { editorClient: 'copilot', perServer: false, appServers: true });
    assert.deepEqual(
      plan.map((p) => [p.label, p.path, p.client]),
      [
        ['Switchboard', '/mcp', 'copilot'],
        ['shop · Switchboard', '/servers/shop/mcp', undefined],
      ],
    );
  });

  it('offers nothing from a Restricted Mode broker', () => {
    assert.deepEqual(
      planDefinitions(state([server()], { broker: { ...state([]).broker, untrusted: true } }), {
        editorClient: 'copilot',
        perServer: false,
      }),
      [],
    );
  });
  it("the scanner's findings: a label for the server, the signs for a tool, every finding in the tooltip", () => {
    assert.equal(scanLabel(server()), undefined);
    assert.equal(toolScanLabel(server(), 'echo'), undefined);
    const scan = {
      flagged: 1,
      severity: 'high' as const,
      tools: ['echo'],
      findings: [
        {
          item: "tool 'echo'",
          sign: 'hidden-text' as const,
          severity: 'high' as const,
          where: 'description',
          excerpt: 'Echo ⟦hidden: x⟧',
        },
        {
          item: "tool 'echo'",
          sign: 'credential-access' as const,
          severity: 'high' as const,
          where: 'description',
          excerpt: '~/.ssh',
        },
      ],
    };
    const s = server({ scan });
    assert.equal(scanLabel(s), '1 item flagged (high)');
    assert.equal(toolScanLabel(s, 'echo'), 'hidden text, asks for credentials');
    assert.match(serverTooltip(s), /Scanner: 1 item flagged \(high\) in its descriptions/);
    assert.match(serverTooltip(s), /hidden text, high/);
  });

  it("the console's title names what its tab shows, not the Server tab's draft", () => {
    assert.equal(consoleTitle('tool', undefined, 'echo__echo'), 'Switchboard: Try echo__echo');
    assert.equal(consoleTitle('tool', 'echo', 'echo__echo'), 'Switchboard: Try echo__echo');
    assert.equal(consoleTitle('audit', 'echo'), 'Switchboard: Recent calls');
    assert.equal(consoleTitle('guardrails', 'echo'), 'Switchboard: echo guardrails');
    assert.equal(consoleTitle('server', 'echo', 'echo__echo'), 'Switchboard: echo');
    assert.equal(consoleTitle('server'), 'Switchboard: New Server');
  });
});
