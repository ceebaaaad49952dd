// `switchboard clients [add|remove] <agent>` as a real process on real files under a temp home:
// each agent's file parsed back in its own format, add twice changes nothing, remove restores the
// file byte for byte (comments and all), a foreign entry or a broken file is refused untouched, and
// the command line written into an agent's file starts the bridge and lists the broker's tools.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseYaml } from 'yaml';
import { liveRecord } from '../../../src/broker/daemon/discovery';
import { stopBroker } from '../../../src/broker/daemon/brokerLauncher';
import { runtimePaths } from '../../../src/broker/shared/userState';
import { BROKER_JS, fixtureServer, removeTempDirs, tempDir, writeRegistry } from '../../helpers/broker';

type Json = Record<string, any>;

interface Setup {
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
}

function setup(): Setup {
  const root = tempDir('sb-agents-root-');
  writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
  const env: NodeJS.ProcessEnv = { ...process.env, SWITCHBOARD_HOME: tempDir('sb-agents-sbhome-') };
  // The agents' own variables must not send a test to the real home.
  for (const v of ['CODEX_HOME', 'COPILOT_HOME', 'XDG_CONFIG_HOME', 'APPDATA']) delete env[v];
  return { root, home: tempDir('sb-agents-home-'), env };
}

function cli(s: Setup, ...args: string[]) {
  const r = spawnSync(process.execPath, [BROKER_JS, 'clients', ...args, '--root', s.root, '--home', s.home], {
    env: s.env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Each agent's file under the temp home, and how to read the entry back in that agent's format. */
const FILES: Record<string, { file: string; read(text: string): Json | undefined }> = {
  'claude-code': { file: '.claude.json', read: (t) => JSON.parse(t).mcpServers?.switchboard },
  codex: { file: '.codex/config.toml', read: (t) => tomlParse(t).mcp_servers?.switchboard },
  'gemini-cli': { file: '.gemini/settings.json', read: (t) => parseJsonc(t).mcpServers?.switchboard },
  cursor: { file: '.cursor/mcp.json', read: (t) => JSON.parse(t).mcpServers?.switchboard },
  'copilot-cli': { file: '.copilot/mcp-config.json', read: (t) => JSON.parse(t).mcpServers?.switchboard },
  windsurf: { file: '.codeium/windsurf/mcp_config.json', read: (t) => JSON.parse(t).mcpServers?.switchboard },
  continue: {
    file: '.continue/config.yaml',
    read: (t) => (parseYaml(t).mcpServers as Json[] | undefined)?.find((s) => s.name === 'switchboard'),
  },
  cline: {
    file: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
    read: (t) => JSON.parse(t).mcpServers?.switchboard,
  },
};

let tomlParse: (text: string) => Json;

describe('switchboard clients: every agent on the machine', function () {
  this.timeout(60_000);
  before(async () => {
    tomlParse = (await import('smol-toml')).parse as (text: string) => Json;
  });
  after(() => removeTempDirs());

  it('lists every agent with its file, and whether it is connected', () => {
    const s = setup();
    const r = cli(s, '--json');
    assert.equal(r.code, 0, r.err);
    const rows = JSON.parse(r.out) as Json[];
    assert.deepEqual(
      rows.map((x) => x.id),
      Object.keys(FILES),
    );
    for (const row of rows) {
      assert.equal(row.file, path.join(s.home, FILES[row.id].file));
      assert.equal(row.configured, 'no');
      assert.equal(row.installed, false);
      assert.match(row.docs, /^https:\/\//);
    }
    fs.mkdirSync(path.join(s.home, '.codex'));
    assert.equal(cli(s, 'add', 'codex').code, 0);
    const after = JSON.parse(cli(s, '--json').out) as Json[];
    const codex = after.find((x) => x.id === 'codex')!;
    assert.equal(codex.installed, true);
    assert.equal(codex.configured, 'yes');
    assert.deepEqual(codex.scopes, ['read']);
    assert.match(cli(s).out, /^codex\s+Codex CLI\s+yes\s+yes\s+read\s/m);
  });

  it("writes each agent's own format, as its own client with its own token; twice changes nothing", () => {
    const s = setup();
    for (const [agent, f] of Object.entries(FILES)) {
      const r = cli(s, 'add', agent, ...(agent === 'cursor' ? ['--scope', 'write'] : []));
      assert.equal(r.code, 0, `${agent}: ${r.err}`);
      assert.match(r.out, new RegExp(`declared the client '${agent}'`));
      const file = path.join(s.home, f.file);
      const text = fs.readFileSync(file, 'utf8');
      const entry = f.read(text);
      assert.ok(entry, `${agent}: no entry in ${text}`);
      assert.equal(entry.command, process.execPath);
      assert.deepEqual(entry.args, [BROKER_JS, 'connect', '--root', s.root, '--client', agent]);
      // What each format adds of its own.
      if (agent === 'claude-code') assert.equal(entry.type, 'stdio');
      if (agent === 'copilot-cli') assert.deepEqual([entry.type, entry.tools], ['local', ['*']]);
      if (agent === 'cline') assert.equal(entry.disabled, false);
      if (agent === 'continue') assert.deepEqual(parseYaml(text).schema, 'v1');
      // No token in the agent's file: the bridge reads it from the per-user token file.
      const token = fs.readFileSync(
        path.join(runtimePaths(s.root, s.env).tokensDir, 'clients', `${agent}.token`),
        'utf8',
      );
      assert.ok(token.trim().length >= 32);
      assert.ok(!text.includes(token.trim()));
      const client = parseYaml(fs.readFileSync(path.join(s.root, 'clients.d', `${agent}.yaml`), 'utf8'));
      assert.deepEqual(client.mcp_allow ?? ['read'], agent === 'cursor' ? ['read', 'write'] : ['read']);

      const again = cli(s, 'add', agent);
      assert.equal(again.code, 0, again.err);
      assert.match(again.out, /nothing changed/);
      assert.equal(fs.readFileSync(file, 'utf8'), text);
    }
    const tokens = fs.readdirSync(path.join(runtimePaths(s.root, s.env).tokensDir, 'clients'));
    assert.equal(
      new Set(
        tokens.map((t) => fs.readFileSync(path.join(runtimePaths(s.root, s.env).tokensDir, 'clients', t), 'utf8')),
      ).size,
      8,
    );
  });

  it('remove restores a file with other servers and comments byte for byte, and drops the client and token', () => {
    const s = setup();
    const originals: Record<string, string> = {
      'claude-code':
        '{\n  "numStartups": 12,\n  "mcpServers": {\n    "memory": { "command": "npx", "args": ["-y", "m"] }\n  },\n  "projects": {}\n}\n',
      codex:
        '# my settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "uvx" # pinned\nargs = ["docs-mcp"]\n\n' +
        '[profiles.fast]\nmodel = "o4-mini"\n',
      'gemini-cli': '{\n\t// the theme I like\n\t"theme": "GitHub",\n\t"mcpServers": {},\n}\n',
      cursor: '{\n    "mcpServers": {\n        "git": { "command": "uvx", "args": ["mcp-server-git"] }\n    }\n}\n',
      'copilot-cli': '{"mcpServers":{"gh":{"type":"http","url":"https://api.githubcopilot.com/mcp/","tools":["*"]}}}',
      windsurf: '{\n  "mcpServers": {}\n}\n',
      continue:
        '# Continue config\nname: Local Config\nversion: 1.0.0\nschema: v1\n' +
        'models:\n  - name: Llama # local\n    provider: ollama\n    model: llama3\n' +
        'mcpServers:\n  - name: time\n    command: uvx\n    args: [mcp-server-time]\n',
      cline:
        '{\n  "mcpServers": {\n    "fetch": {\n      "command": "uvx",\n      "args": ["mcp-server-fetch"],\n' +
        '      "disabled": true,\n      "autoApprove": []\n    }\n  }\n}\n',
    };
    for (const [agent, original] of Object.entries(originals)) {
      const file = path.join(s.home, FILES[agent].file);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, original);
      const add = cli(s, 'add', agent);
      assert.equal(add.code, 0, `${agent}: ${add.err}`);
      const added = fs.readFileSync(file, 'utf8');
      assert.ok(FILES[agent].read(added), `${agent}: ${added}`);
      if (agent === 'codex') assert.match(added, /# my settings[\s\S]*command = "uvx" # pinned/);
      if (agent === 'continue') assert.match(added, /name: Llama # local/);
      if (agent === 'gemini-cli') assert.match(added, /\/\/ the theme I like/);

      const rm = cli(s, 'remove', agent);
      assert.equal(rm.code, 0, `${agent}: ${rm.err}`);
      assert.match(rm.out, new RegExp(`removed the client '${agent}'`));
      assert.match(rm.out, new RegExp(`deleted the token of '${agent}'`));
      const restored = fs.readFileSync(file, 'utf8');
      assert.equal(restored, original, agent);
      assert.equal(fs.existsSync(path.join(s.root, 'clients.d', `${agent}.yaml`)), false);
      assert.equal(fs.existsSync(path.join(runtimePaths(s.root, s.env).tokensDir, 'clients', `${agent}.token`)), false);
      const again = cli(s, 'remove', agent);
      assert.equal(again.code, 0);
      assert.match(again.out, /nothing to remove/);
    }
    // A file that add created and that holds nothing else is removed again.
    const fresh = setup();
    assert.equal(cli(fresh, 'add', 'cursor').code, 0);
    assert.equal(cli(fresh, 'remove', 'cursor').code, 0);
    assert.equal(fs.existsSync(path.join(fresh.home, FILES.cursor.file)), false);
  });

  it('keeps a client the user declared, and refuses a foreign entry or a broken file without writing', () => {
    const s = setup();
    writeRegistry(s.root, { 'clients.d/codex.yaml': '# mine\nname: codex\nmcp_allow: [read]\n' });
    assert.equal(cli(s, 'add', 'codex', '--scope', 'write').code, 0);
    assert.match(fs.readFileSync(path.join(s.root, 'clients.d/codex.yaml'), 'utf8'), /# mine[\s\S]*write/);
    const rm = cli(s, 'remove', 'codex');
    assert.equal(rm.code, 0, rm.err);
    assert.ok(fs.existsSync(path.join(s.root, 'clients.d/codex.yaml')), 'a client add did not create stays');

    const cursor = path.join(s.home, FILES.cursor.file);
    fs.mkdirSync(path.dirname(cursor), { recursive: true });
    const foreign = '{ "mcpServers": { "switchboard": { "command": "some-other-gateway" } } }\n';
    fs.writeFileSync(cursor, foreign);
    const r = cli(s, 'add', 'cursor');
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /already has an MCP server named 'switchboard' that runs something else \(some-other-gateway\)/,
    );
    assert.equal(fs.readFileSync(cursor, 'utf8'), foreign);
    assert.equal(fs.existsSync(path.join(s.root, 'clients.d/cursor.yaml')), false, 'nothing declared either');
    assert.equal(cli(s, 'remove', 'cursor').code, 1);
    assert.equal(fs.readFileSync(cursor, 'utf8'), foreign);
    const named = cli(s, 'add', 'cursor', '--name', 'switchboard-work');
    assert.equal(named.code, 0, named.err);
    assert.deepEqual(Object.keys(JSON.parse(fs.readFileSync(cursor, 'utf8')).mcpServers), [
      'switchboard',
      'switchboard-work',
    ]);

    const gemini = path.join(s.home, FILES['gemini-cli'].file);
    fs.mkdirSync(path.dirname(gemini), { recursive: true });
    fs.writeFileSync(gemini, '{\n  "theme": "x",\n  "mcpServers": {\n');
    const broken = cli(s, 'add', 'gemini-cli');
    assert.equal(broken.code, 1);
    assert.match(broken.err, /settings\.json is not valid JSON \(line 4: .*\); fix it first/);
    assert.equal(fs.existsSync(path.join(s.root, 'clients.d/gemini-cli.yaml')), false);

    assert.match(cli(s, 'add', 'emacs').err, /unknown agent 'emacs'; the agents are: claude-code, codex/);
    assert.match(cli(s, 'add', 'codex', '--scope', 'admin').err, /--scope must be read or write/);
    const noRegistry = spawnSync(
      process.execPath,
      [BROKER_JS, 'clients', 'add', 'codex', '--root', s.home, '--home', s.home],
      {
        env: s.env,
        encoding: 'utf8',
      },
    );
    assert.match(noRegistry.stderr, /has no mcp-servers\.d\/: is --root the folder that holds the registry\?/);
  });

  it('the command line written into the agent file starts the bridge and lists the tools through it', async () => {
    const s = setup();
    assert.equal(cli(s, 'add', 'claude-code').code, 0);
    const entry = FILES['claude-code'].read(fs.readFileSync(path.join(s.home, '.claude.json'), 'utf8'))!;
    const env = { ...s.env, SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1' } as Record<string, string>;
    const client = new Client({ name: 'claude-code', version: '1' });
    try {
      await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, env, stderr: 'pipe' }));
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('echo__echo'), names.join(', '));
      assert.ok(names.includes('switchboard__list_servers'), names.join(', '));
      const result = await client.callTool({ name: 'echo__echo', arguments: { text: 'hi' } });
      assert.match(JSON.stringify(result.content), /hi/);
      // The bridge calls as the declared client: its read scope refuses a write tool.
      await assert.rejects(
        client.callTool({ name: 'switchboard__restart_server', arguments: { name: 'echo' } }),
        /needs the 'write' scope; client 'claude-code' has mcp_allow: \[read\]/,
      );
    } finally {
      await client.close();
      const record = await liveRecord(runtimePaths(s.root, env), s.root);
      if (record) await stopBroker(record.pid, runtimePaths(s.root, env));
    }
  });
});
