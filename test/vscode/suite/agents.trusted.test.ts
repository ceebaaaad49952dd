// Connect an Agent… and Import from server.json… in a real VS Code, answered through the workbench's
// own quick input: the agent's configuration file (in a temp home, never the real one) in its
// documented format, its client declared with a fresh token, the bridge it runs called like the agent
// would, idempotent, scope changed, disconnected; a server.json imported with its secret in VS Code's
// secret storage and only `${input:NAME}` in the YAML, Problems clean, the server in the tree.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { parse as parseYaml } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ChangeReport } from '../../../src/broker/cli/agentClients';
import type { ServerNode } from '../../../src/extension/servers';
import {
  answerQuickInputs,
  api,
  connectedEntry,
  REPO,
  run,
  screenshot,
  sleep,
  until,
  useAbsoluteEcho,
  waitFor,
  type QuickAnswer,
} from './switchboard.helpers';

const AGENT = /^Which agent should use this workspace's broker\?/;

/** Runs a command while answering its questions; resolves with its result and what it showed. */
async function withAnswers<T>(answers: QuickAnswer[], command: () => Thenable<T>) {
  const a = await api();
  const answering = answerQuickInputs(a, answers);
  const result = await command();
  await answering.done();
  return { result, shown: answering.shown };
}

const textOf = (r: unknown): string =>
  ((r as { content?: { type: string; text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');

describe('Connect an Agent and Import from server.json (issue 21)', function () {
  this.timeout(180_000);

  // As in the sample's own layout: this repository's node_modules and test/ beside the temp copy of
  // workspace/, so the sample's servers run and the screenshots show them as a user sees them.
  before(async function () {
    this.timeout(120_000);
    const a = await api();
    const entry = await connectedEntry(a);
    for (const dir of ['node_modules', 'test']) {
      const link = path.join(path.dirname(entry.root), dir);
      if (!fs.existsSync(link)) fs.symlinkSync(path.join(REPO, dir), link, 'dir');
    }
    await useAbsoluteEcho(a);
    await Promise.all(
      ['everything', 'files']
        .filter((n) => entry.server(n)?.state !== 'running')
        .map((n) => entry.conn.call('restart_server', { name: n }).catch(() => undefined)),
    );
  });

  it("Connect an Agent… writes Claude Code's own config, declares its client with a fresh token, and undoes it", async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    await useAbsoluteEcho(a);
    // A temp home, as the agent's user would have it: Claude Code and Codex installed, and a
    // ~/.claude.json that already holds settings and another MCP server, which must survive.
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-agent-home-'));
    fs.mkdirSync(path.join(home, '.claude'));
    fs.mkdirSync(path.join(home, '.codex'));
    const claudeJson = path.join(home, '.claude.json');
    const original = {
      numStartups: 12,
      theme: 'dark',
      mcpServers: { notes: { type: 'stdio', command: 'notes-mcp', args: ['--vault', '~/notes'], env: {} } },
    };
    fs.writeFileSync(claudeJson, JSON.stringify(original, null, 2) + '\n');
    const clientYaml = path.join(entry.root, 'clients.d', 'claude-code.yaml');
    assert.ok(!entry.state!.clients.some((c) => c.name === 'claude-code'), 'no claude-code client yet');
    let agent: Client | undefined;
    try {
      // 1. Connect, read scope.
      const first = await withAnswers(
        [
          { asks: AGENT, answer: 'Claude Code', screenshot: 'connect-agent.png' },
          { asks: /^What may the agent do with the broker itself\?/, answer: 'read' },
        ],
        () => run<ChangeReport>('connectAgent', undefined, { home }),
      );
      const rows = first.shown[0].items;
      assert.deepStrictEqual(
        rows.map((r) => r.label),
        ['Claude Code', 'Codex CLI', 'Gemini CLI', 'Cursor', 'GitHub Copilot CLI', 'Windsurf', 'Continue', 'Cline'],
      );
      assert.strictEqual(rows[0].description, 'found on this machine');
      assert.strictEqual(rows[0].detail, claudeJson.replace(home, '~'));
      assert.strictEqual(rows[2].description, 'not found');
      assert.ok(first.result, 'the command reported what it did');
      assert.strictEqual(first.result.client, 'claude-code');
      assert.strictEqual(first.result.changes.length, 3, first.result.changes.join('\n'));

      // The entry in Claude Code's documented user-scope format, the rest of the file untouched.
      const cli = a.ctx.brokerCli();
      const bridge = ['connect', '--root', entry.root, '--client', 'claude-code'];
      const written = JSON.parse(fs.readFileSync(claudeJson, 'utf8')) as typeof original & {
        mcpServers: Record<string, { type: string; command: string; args: string[]; env: object }>;
      };
      assert.deepStrictEqual(written.mcpServers.switchboard, {
        type: 'stdio',
        command: 'node',
        args: [cli, ...bridge],
        env: {},
      });
      assert.deepStrictEqual({ ...written, mcpServers: { notes: written.mcpServers.notes } }, original);

      // Declared in the registry with its scope; the broker serves it with a token of its own.
      // (`mcp_allow: [read]` is the default, which the registry writer leaves out of the file.)
      const declaredText = fs.readFileSync(clientYaml, 'utf8');
      const declared = parseYaml(declaredText) as { name: string; description: string; mcp_allow?: string[] };
      assert.strictEqual(declared.name, 'claude-code', declaredText);
      assert.deepStrictEqual(declared.mcp_allow ?? ['read'], ['read'], declaredText);
      const client = await waitFor(
        a,
        () => entry.state?.clients.find((c) => c.name === 'claude-code'),
        'the broker to declare claude-code',
      );
      assert.deepStrictEqual(client.mcp_allow, ['read']);
      const token = fs.readFileSync(client.tokenFile, 'utf8').trim();
      assert.strictEqual(fs.statSync(client.tokenFile).mode & 0o777, 0o600, 'the token file is private');
      const terminal = await entry.conn.call('client_connection', { name: 'terminal' });
      assert.notStrictEqual(token, fs.readFileSync(terminal.tokenFile, 'utf8').trim(), 'a token of its own');
      assert.ok(!fs.readFileSync(claudeJson, 'utf8').includes(token), "the token is not in the agent's file");
      const view = a.clients.getChildren().map((n) => a.clients.getTreeItem(n));
      const row = view.find((i) => i.label === 'claude-code');
      assert.match(String(row?.description), /Claude Code, connected by 'switchboard clients add' · scopes: read$/);
      // For the README: the agent's file as written, the new client in the Clients view, the message.
      await waitFor(a, () => entry.server('everything')?.state === 'running', 'everything', 60_000).catch(
        (err: Error) => console.log(`[agents] ${err.message}`),
      );
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(claudeJson), { preview: false });
      await vscode.commands.executeCommand('switchboard.clients.focus');
      await sleep(500);
      await vscode.commands.executeCommand('notifications.showList');
      await vscode.commands.executeCommand('notification.expand');
      await sleep(1500);
      await screenshot('connect-agent-done.png');
      await vscode.commands.executeCommand('notifications.hideList');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');

      // The agent's own command, run as Claude Code would run it: a tool call goes through.
      const entryCmd = written.mcpServers.switchboard;
      agent = new Client({ name: 'claude-code', version: '2.0.0' }, { capabilities: {} });
      await agent.connect(
        new StdioClientTransport({
          command: entryCmd.command,
          args: entryCmd.args,
          env: process.env as Record<string, string>,
          stderr: 'pipe',
        }),
      );
      const echoed = await agent.callTool({ name: 'echo__echo', arguments: { text: 'hello from Claude Code' } });
      assert.match(textOf(echoed), /hello from Claude Code/);
      const refused = await agent.callTool({ name: 'switchboard__enable_server', arguments: { name: 'echo' } }).then(
        (r) => (r.isError ? textOf(r) : undefined),
        (err: Error) => err.message,
      );
      assert.match(String(refused), /write/, 'read scope: a write tool is refused');

      // 2. The same agent again, "Keep it": nothing changes, byte for byte.
      const text = fs.readFileSync(claudeJson, 'utf8');
      const second = await withAnswers(
        [
          { asks: AGENT, answer: 'Claude Code' },
          { asks: /^Claude Code already runs this broker as 'claude-code'\.$/, answer: 'Keep it' },
        ],
        () => run<ChangeReport>('connectAgent', undefined, { home }),
      );
      assert.strictEqual(second.shown[0].items[0].description, "$(check) connected as 'claude-code' (read)");
      assert.deepStrictEqual(second.result.changes, []);
      assert.strictEqual(fs.readFileSync(claudeJson, 'utf8'), text);
      assert.strictEqual(fs.readFileSync(client.tokenFile, 'utf8').trim(), token, 'the same token');

      // 3. Allow write: the connected agent may now use a write tool, without reconnecting.
      const third = await withAnswers(
        [
          { asks: AGENT, answer: 'Claude Code' },
          { asks: /already runs this broker/, answer: 'Allow write too' },
        ],
        () => run<ChangeReport>('connectAgent', undefined, { home }),
      );
      assert.deepStrictEqual(third.result.changes, ["changed the scopes of 'claude-code' to read, write"]);
      await waitFor(
        a,
        () => entry.state?.clients.find((c) => c.name === 'claude-code')?.mcp_allow.includes('write'),
        'the write scope',
      );
      const allowed = await agent.callTool({ name: 'switchboard__enable_server', arguments: { name: 'echo' } });
      assert.ok(!allowed.isError, textOf(allowed));

      // 4. Disconnect: the entry, the client and its token go; the rest of the file is as it was.
      const fourth = await withAnswers(
        [
          { asks: AGENT, answer: 'Claude Code' },
          { asks: /already runs this broker/, answer: 'Disconnect' },
        ],
        () => run<ChangeReport>('connectAgent', undefined, { home }),
      );
      assert.strictEqual(fourth.result.changes.length, 3, fourth.result.changes.join('\n'));
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(claudeJson, 'utf8')), original);
      assert.ok(!fs.existsSync(clientYaml), 'clients.d/claude-code.yaml is removed');
      assert.ok(!fs.existsSync(client.tokenFile), 'the token is deleted');
      await waitFor(
        a,
        () => !entry.state?.clients.some((c) => c.name === 'claude-code'),
        'the broker to forget claude-code',
      );
      const after = await agent.callTool({ name: 'echo__echo', arguments: { text: 'still there?' } }).then(
        (r) => (r.isError ? textOf(r) : 'answered'),
        (err: Error) => err.message,
      );
      assert.notStrictEqual(after, 'answered', 'the disconnected agent is refused');
    } finally {
      await agent?.close().catch(() => undefined);
      if (fs.existsSync(clientYaml)) await run('connectAgent', 'claude-code', { home, remove: true });
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('Import from server.json… writes the YAML with ${input:…}, the secret to SecretStorage, and shows the server', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const canary = 'owm-canary-5d1e-not-for-the-yaml';
    const file = path.join(entry.root, 'mcp-servers.d', 'weather.yaml');
    const uri = vscode.Uri.file(file);
    const clipboard = await vscode.env.clipboard.readText();
    await vscode.commands.executeCommand('notifications.clearAll');
    await vscode.env.clipboard.writeText(
      fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'server-json', 'pypi-weather.json'), 'utf8'),
    );
    try {
      const { result } = await withAnswers(
        [
          { asks: /^Where is the server\.json/, answer: 'Use the JSON on the clipboard' },
          { asks: /^weather: API key from openweathermap\.org$/, answer: canary },
        ],
        () => run<{ entered: string[]; inputs: string[] }>('importServerJson'),
      );
      assert.deepStrictEqual(result.inputs, ['OPENWEATHER_API_KEY']);
      assert.deepStrictEqual(result.entered, ['OPENWEATHER_API_KEY']);

      // The YAML: a community server whose secret is only a reference.
      const yaml = fs.readFileSync(file, 'utf8');
      assert.ok(!yaml.includes(canary), 'the secret value is not in the YAML');
      const def = parseYaml(yaml) as Record<string, unknown> & { env: Record<string, string> };
      assert.strictEqual(def.trust, 'community');
      assert.strictEqual(def.command, 'uvx');
      assert.deepStrictEqual(def.args, ['weather-mcp-server@1.4.2', '--log-level', 'warning']);
      assert.deepStrictEqual(def.env, {
        OPENWEATHER_API_KEY: '${input:OPENWEATHER_API_KEY}',
        WEATHER_UNITS: 'metric',
      });
      assert.deepStrictEqual(def.grants, ['network', 'secrets']);
      assert.deepStrictEqual(def.inputs, {
        OPENWEATHER_API_KEY: { description: 'API key from openweathermap.org', password: true },
      });

      // The secret: in VS Code's secret storage and handed to the broker, nowhere in the workspace.
      assert.ok(await a.secrets.has('OPENWEATHER_API_KEY'), "in VS Code's secret storage");
      const server = await waitFor(a, () => entry.server('weather'), 'the broker to load weather');
      assert.strictEqual(server.state, 'awaiting-approval');
      await waitFor(
        a,
        () => entry.server('weather')?.inputs?.find((i) => i.name === 'OPENWEATHER_API_KEY')?.source === 'editor',
        'the broker to hold the entered secret',
      );
      const leaks = fs
        .readdirSync(entry.root, { recursive: true, encoding: 'utf8' })
        .map((f) => path.join(entry.root, f))
        .filter((f) => fs.statSync(f).isFile() && fs.readFileSync(f, 'utf8').includes(canary));
      assert.deepStrictEqual(leaks, [], 'no file in the workspace holds the secret');

      // Problems clean, and the server selected in the Servers view as it needs approval.
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
      await sleep(1500); // the live diagnostics of the open buffer
      assert.deepStrictEqual(
        vscode.languages.getDiagnostics(uri).map((d) => d.message),
        [],
        'no problem in weather.yaml',
      );
      const node = (a.servers.getChildren() as ServerNode[]).find(
        (n) => n.kind === 'server' && n.status.name === 'weather',
      );
      assert.ok(node, 'weather is in the Servers view');
      assert.match(String(a.servers.getTreeItem(node).description), /community · awaiting approval/);
      await until(() => {
        const selected = a.serversView.selection[0];
        return selected?.kind === 'server' && selected.status.name === 'weather';
      }, 'weather to be selected in the Servers view');
      await vscode.commands.executeCommand('notifications.showList');
      await sleep(1500);
      await screenshot('import-server-json.png');
      await vscode.commands.executeCommand('notifications.hideList');
    } finally {
      await vscode.env.clipboard.writeText(clipboard);
      await run('forgetSecret', 'weather', 'OPENWEATHER_API_KEY').then(undefined, () => undefined);
      await run('removeServer', 'weather', { skipConfirmation: true }).then(undefined, () => undefined);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.commands.executeCommand('notifications.clearAll');
    }
  });

  it('Import from server.json… takes pasted JSON, asks which package and each required value', async () => {
    const a = await api();
    const entry = await connectedEntry(a);
    const json = fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'server-json', 'several-packages.json'), 'utf8');
    const file = path.join(entry.root, 'mcp-servers.d', 'docs-search.yaml');
    try {
      const { result, shown } = await withAnswers(
        [
          { asks: /^Where is the server\.json/, answer: 'Paste the JSON…' },
          { asks: /^Paste the whole server\.json/, answer: json },
          {
            asks: /^io\.github\.example-org\/docs-search can run in 4 ways; which one\?$/,
            answer: 'npm @example-org/docs-search-mcp@0.9.1',
          },
          {
            asks: /^Folder of Markdown files \(required by packages\[0\]\.packageArguments\[0\]\)$/,
            answer: '/srv/docs',
          },
        ],
        () => run<{ definition: Record<string, unknown> }>('importServerJson'),
      );
      assert.deepStrictEqual(
        shown[2].items.map((i) => i.description),
        ['packages[0]', 'packages[1]', 'packages[2]', 'packages[3]'],
      );
      assert.ok(result, 'imported');
      const def = parseYaml(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      assert.strictEqual(def.command, 'npx');
      assert.deepStrictEqual(def.args, [
        '-y',
        '@example-org/docs-search-mcp@0.9.1',
        '--docs',
        '/srv/docs',
        '--max-results',
        '20',
      ]);
      assert.deepStrictEqual(def.grants, ['network']);
      await waitFor(
        a,
        () => entry.server('docs-search')?.state === 'awaiting-approval',
        'docs-search to await approval',
      );
      assert.deepStrictEqual(vscode.languages.getDiagnostics(vscode.Uri.file(file)), []);
    } finally {
      await run('removeServer', 'docs-search', { skipConfirmation: true }).then(undefined, () => undefined);
      await vscode.commands.executeCommand('notifications.clearAll');
    }
  });
});
