// Issue 21's two editor commands that write outside the editor, in a real VS Code: "Connect an Agent…"
// edits an agent's own MCP configuration (in a temp HOME, never this machine's) and declares the agent
// as a client; the agent's command, run as written, reaches the broker's tools. "Import from
// server.json…" writes a registry definition whose secret is an `${input:…}` reference, entered once
// into VS Code's secret storage and never written to the workspace. Screenshots for the README.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  api,
  connectedEntry,
  filesContaining,
  REPO,
  run,
  screenshot,
  sleep,
  useAbsoluteEcho,
  waitFor,
} from './switchboard.helpers';

type AgentReport = { file: string; client: string; changes: string[] };

describe('connect an agent and import a server.json (issue 21)', function () {
  this.timeout(120_000);
  let home: string;

  before(async function () {
    this.timeout(120_000);
    await useAbsoluteEcho(await api());
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-agent-home-'));
    fs.mkdirSync(path.join(home, '.cursor'));
  });

  after(() => home && fs.rmSync(home, { recursive: true, force: true }));

  it('offers every agent it can configure, then writes Cursor’s mcp.json; the agent’s command reaches the broker', async () => {
    const a = await api();
    const entry = await connectedEntry(a);

    // The picker a person sees (this machine's own HOME is only read for it), closed without a choice.
    const picking = run<AgentReport | undefined>('connectAgent');
    await sleep(1500);
    await screenshot('connect-agent.png');
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    assert.strictEqual(await picking, undefined, 'closing the picker changes nothing');

    const report = await run<AgentReport>('connectAgent', 'cursor', { home, scope: 'read' });
    assert.ok(report, 'connectAgent returned its report');
    const file = path.join(home, '.cursor', 'mcp.json');
    assert.strictEqual(report.file, file);
    assert.strictEqual(report.client, 'cursor');
    const written = fs.readFileSync(file, 'utf8');
    const server = (JSON.parse(written) as { mcpServers: Record<string, { command: string; args: string[] }> })
      .mcpServers.switchboard;
    assert.strictEqual(server.command, 'node');
    assert.deepStrictEqual(server.args.slice(-5), ['connect', '--root', entry.root, '--client', 'cursor']);
    const declared = fs.readFileSync(path.join(entry.root, 'clients.d', 'cursor.yaml'), 'utf8');
    // Read scope is the default: the declaration names no scope, and never write.
    assert.doesNotMatch(declared, /write/);
    await waitFor(a, () => entry.state?.clients?.some((c) => c.name === 'cursor'), 'the broker to know cursor');

    const again = await run<AgentReport>('connectAgent', 'cursor', { home, scope: 'read' });
    assert.deepStrictEqual(again.changes, [], 'a second run changes nothing');
    assert.strictEqual(fs.readFileSync(file, 'utf8'), written);

    // What Cursor would run, as written in its file: `node` from PATH, the bridge, the broker.
    const agent = new Client({ name: 'cursor-as-configured', version: '1' });
    await agent.connect(
      new StdioClientTransport({
        command: server.command,
        args: server.args,
        env: { ...process.env } as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      const names = (await agent.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('echo__echo'), `the agent lists the broker's tools: ${names.join(', ')}`);
      const out = await agent.callTool({ name: 'echo__echo', arguments: { text: 'from cursor' } });
      assert.match(JSON.stringify(out.content), /from cursor/);
      await assert.rejects(
        agent.callTool({ name: 'switchboard__restart_server', arguments: { name: 'echo' } }),
        /needs the 'write' scope; client 'cursor'/,
        'a read-scoped agent cannot restart servers',
      );
    } finally {
      await agent.close();
    }

    const removed = await run<AgentReport>('connectAgent', 'cursor', { home, remove: true });
    assert.ok(removed.changes.length > 0, 'removal says what it changed');
    const left = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { mcpServers?: object }) : {};
    assert.ok(!left.mcpServers || !('switchboard' in left.mcpServers), 'the entry is gone from mcp.json');
    assert.ok(!fs.existsSync(path.join(entry.root, 'clients.d', 'cursor.yaml')), 'the client is no longer declared');
  });

  it('imports a server.json: a community server whose secret is an input, entered once into VS Code', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const text = fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'server-json', 'pypi-weather.json'), 'utf8');
    const imported = await run<{ definition: { name: string }; inputs: string[] }>('importServerJson', undefined, {
      text,
    });
    assert.ok(imported, 'the import returned the definition');
    const name = imported.definition.name;
    assert.deepStrictEqual(imported.inputs, ['OPENWEATHER_API_KEY']);
    const yamlFile = path.join(entry.root, 'mcp-servers.d', `${name}.yaml`);
    const yaml = fs.readFileSync(yamlFile, 'utf8');
    assert.match(yaml, /\$\{input:OPENWEATHER_API_KEY\}/);
    assert.match(yaml, /trust: community/);
    await waitFor(a, () => entry.server(name)?.state === 'awaiting-approval', `${name} to await approval`);
    const problems = vscode.languages.getDiagnostics(vscode.Uri.file(yamlFile));
    assert.ok(
      problems.every((d) => d.severity !== vscode.DiagnosticSeverity.Error),
      `no errors in the imported file: ${problems.map((d) => d.message).join('; ')}`,
    );
    await vscode.commands.executeCommand('switchboard.servers.focus');
    await sleep(1500); // the tree renders the new row after the state change
    await screenshot('import-server-json.png');

    // The secret, entered once: VS Code keeps it; the workspace never sees it.
    const VALUE = `sb-weather-canary-${process.pid}`;
    const sub = a.secrets.onDidShowSecretInput((s) => {
      assert.strictEqual(s.box.password, true);
      s.box.value = VALUE;
      void vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    });
    try {
      const done = await run<{ name: string; servers: string[] }>('enterSecret', name, 'OPENWEATHER_API_KEY');
      assert.deepStrictEqual(done, { name: 'OPENWEATHER_API_KEY', servers: [name] });
    } finally {
      sub.dispose();
    }
    await waitFor(
      a,
      () => entry.server(name)?.inputs?.find((i) => i.name === 'OPENWEATHER_API_KEY')?.source === 'editor',
      'the broker to hold the entered value',
    );
    assert.deepStrictEqual(filesContaining(entry.root, VALUE), [], 'the value is nowhere in the workspace');

    await run('forgetSecret', name, 'OPENWEATHER_API_KEY');
    await run('removeServer', name, { skipConfirmation: true });
    assert.ok(!fs.existsSync(yamlFile), 'Remove deleted the imported file');
    await waitFor(a, () => !entry.server(name), `${name} to leave the registry`);
  });
});
