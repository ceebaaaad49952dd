// Importing other tools' MCP configurations into registry definitions (pure parsing, plus a check
// that every produced definition is accepted by the registry's own schema).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { candidateFiles, parseJsonc, parseMcpConfig, toRegistryName } from '../../src/registry/importConfig';
import { ServerDefSchema } from '../../src/registry/schema';

const folder = '/home/ann/project';
const ctx = { workspaceFolder: folder, registryRoot: path.join(folder, 'registry'), home: '/home/ann' };

function valid(def: Record<string, unknown>): void {
  const r = ServerDefSchema.safeParse({ ...def, trust: 'community' });
  assert.ok(r.success, `registry rejects ${JSON.stringify(def)}: ${r.success ? '' : r.error.message}`);
}

describe('extension: import from other tools', () => {
  it('reads VS Code .vscode/mcp.json (JSONC, inputs, workspaceFolder, http)', () => {
    const text = `{
      // my servers
      "inputs": [{ "type": "promptString", "id": "gh-token", "password": true, "description": "GitHub token" }],
      "servers": {
        "GitHub": { "type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": { "Authorization": "Bearer \${input:gh-token}" } },
        "files": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "\${workspaceFolder}"], },
        "db": {
          "command": "node", "args": ["server.js"], "cwd": "\${workspaceFolder}/tools",
          "env": { "API_KEY": "\${input:key}", "MODE": "dev" }
        },
      },
    }`;
    const r = parseMcpConfig(text, ctx);
    assert.deepEqual(r.skipped, []);
    const byName = new Map(r.servers.map((s) => [s.name, s]));
    const gh = byName.get('github')!;
    assert.equal(gh.definition.transport, 'http');
    assert.equal(gh.definition.url, 'https://api.githubcopilot.com/mcp/');
    // An input stays an input: asked once, kept per user, never written to the workspace.
    assert.deepEqual(gh.definition.headers, { Authorization: 'Bearer ${input:gh-token}' });
    assert.deepEqual(gh.definition.inputs, { 'gh-token': { description: 'GitHub token', password: true } });
    assert.deepEqual(gh.definition.grants, ['secrets'], 'entered secrets need the secrets grant');
    assert.ok(
      gh.notes.some((n) => n.includes("'gh-token'") && n.includes('Enter Secret')),
      gh.notes.join('; '),
    );
    const files = byName.get('files')!;
    assert.deepEqual(files.definition.args, ['-y', '@modelcontextprotocol/server-filesystem', folder]);
    assert.deepEqual(files.definition.grants, ['network'], 'npx downloads: network grant');
    const db = byName.get('db')!;
    assert.equal(db.definition.cwd, '../tools', 'cwd becomes relative to the registry root');
    assert.deepEqual(db.definition.env, { API_KEY: '${input:key}', MODE: 'dev' });
    assert.deepEqual(db.definition.inputs, { key: { password: true } }, 'an undeclared input is a password');
    assert.deepEqual(db.definition.grants, ['secrets']);
    for (const s of r.servers) valid(s.definition);
  });

  it('leaves an input outside env and headers as a placeholder to fill by hand, and says so', () => {
    const text = JSON.stringify({
      servers: {
        tool: { command: 'node', args: ['server.js', '--key', '${input:api}'], env: { X: '${input:bad name}' } },
      },
    });
    const tool = parseMcpConfig(text, ctx).servers[0];
    assert.deepEqual(tool.definition.args, ['server.js', '--key', '<api>']);
    assert.equal((tool.definition.env as Record<string, string>).X, '<bad name>', 'not a registry input name');
    assert.equal(tool.definition.inputs, undefined);
    assert.ok(
      tool.notes.some((n) => n.includes("'api'") && n.includes('placeholder')),
      tool.notes.join('; '),
    );
  });

  it('reads Claude Desktop / Cursor mcpServers and never copies a secret into the workspace', () => {
    const text = JSON.stringify({
      mcpServers: {
        'brave-search': {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-brave-search'],
          env: { BRAVE_API_KEY: 'sk-live-123' },
        },
        remote: { url: 'https://example.com/sse', type: 'sse' },
        off: { command: 'uvx', args: ['mcp-server-time'], disabled: true },
      },
    });
    const r = parseMcpConfig(text, ctx);
    const brave = r.servers.find((s) => s.name === 'brave-search')!;
    assert.deepEqual(brave.definition.env, { BRAVE_API_KEY: '${env:BRAVE_API_KEY}' });
    assert.ok(!JSON.stringify(brave.definition).includes('sk-live-123'));
    assert.deepEqual(brave.definition.grants, ['network', 'secrets']);
    assert.ok(brave.notes.some((n) => n.includes('not copied')));
    const remote = r.servers.find((s) => s.name === 'remote')!;
    assert.equal(remote.definition.transport, 'sse');
    assert.equal(r.servers.find((s) => s.name === 'off')!.definition.enabled, false);
    for (const s of r.servers) valid(s.definition);
  });

  it('gives registry names, avoiding existing ones and the reserved namespace', () => {
    assert.equal(toRegistryName('My Server__X'), 'my-server-x');
    assert.equal(toRegistryName('123abc'), 'abc');
    assert.equal(toRegistryName('switchboard'), 'switchboard-upstream');
    assert.equal(toRegistryName('x'.repeat(40)).length, 31);
    const r = parseMcpConfig(JSON.stringify({ mcpServers: { echo: { command: 'node' }, Echo: { command: 'node' } } }), {
      ...ctx,
      existing: new Set(['echo']),
    });
    assert.deepEqual(
      r.servers.map((s) => s.name),
      ['echo-2', 'echo-3'],
    );
    assert.ok(r.servers[0].notes[0].includes('already taken'));
  });

  it('explains entries it cannot import and files it cannot read', () => {
    const r = parseMcpConfig(JSON.stringify({ mcpServers: { bad: { args: ['x'] }, worse: 3 } }), ctx);
    assert.equal(r.servers.length, 0);
    assert.deepEqual(
      r.skipped.map((s) => s.name),
      ['bad', 'worse'],
    );
    assert.match(r.skipped[0].reason, /command/);
    assert.throws(() => parseMcpConfig('{"other": {}}', ctx), /no MCP servers found/);
    assert.throws(() => parseMcpConfig('{', ctx), /not valid JSON/);
    assert.throws(
      () => parseMcpConfig('{\n  "servers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}', ctx),
      /not valid JSON: line 4, column 5: ',' was expected/,
    );
    assert.throws(() => parseJsonc('{ "a": "open'), /line 1, column 8: a string is not closed/);
  });

  it('parses JSONC without touching strings that look like comments', () => {
    assert.deepEqual(parseJsonc('{"a": "http://x//y", /* c */ "b": [1, 2,], // end\n}'), {
      a: 'http://x//y',
      b: [1, 2],
    });
  });

  it('knows where each tool keeps its configuration', () => {
    const files = candidateFiles({ platform: 'linux', home: '/home/ann', folders: [folder] }).map((c) => c.file);
    assert.ok(files.includes('/home/ann/project/.vscode/mcp.json'));
    assert.ok(files.includes('/home/ann/.config/Claude/claude_desktop_config.json'));
    assert.ok(files.includes('/home/ann/.cursor/mcp.json'));
    const mac = candidateFiles({ platform: 'darwin', home: '/Users/ann', folders: [] }).map((c) => c.file);
    assert.ok(mac.includes('/Users/ann/Library/Application Support/Claude/claude_desktop_config.json'));
  });

  it('writes Windows paths for Windows, whatever OS it runs on (drive letters, spaces, %APPDATA%)', () => {
    const win = candidateFiles({
      platform: 'win32',
      home: 'C:\\Users\\Ann Lee',
      appData: 'C:\\Users\\Ann Lee\\AppData\\Roaming',
      folders: ['D:\\work\\my project'],
    });
    const files = win.map((c) => c.file);
    assert.ok(files.includes('D:\\work\\my project\\.vscode\\mcp.json'), files.join(' | '));
    assert.ok(files.includes('C:\\Users\\Ann Lee\\AppData\\Roaming\\Claude\\claude_desktop_config.json'));
    assert.ok(files.includes('C:\\Users\\Ann Lee\\.cursor\\mcp.json'));
    assert.equal(win[0].scope, 'my project');
    const linux = candidateFiles({ platform: 'linux', home: '/home/ann', folders: ['/home/ann/a b'] });
    assert.equal(linux[0].file, '/home/ann/a b/.vscode/mcp.json', 'POSIX paths stay POSIX on Windows too');
  });
});
