// Cutting and adding the codex table (tomlTables.ts) on valid TOML that a line-based edit gets
// wrong: table-like lines inside multi-line strings and arrays, quoted and spaced headers, CRLF,
// sub-tables spread over the file; and a comment that cannot break out of its line.
import assert from 'node:assert/strict';
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import { commentText, TOML_MARK, tomlAdd, tomlRemove } from '../../../src/broker/cli/tomlTables';

type Toml = typeof SmolToml;
let toml: Toml;
/** smol-toml builds tables without a prototype; compared as plain objects. */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
const entry = { command: '/usr/bin/node', args: ['broker.js', 'connect', '--root', '/w'] };

describe('the codex table in config.toml', () => {
  before(async () => {
    toml = await import('smol-toml');
  });

  const roundTrip = (original: string): void => {
    const added = tomlAdd(toml, original, 'switchboard', entry, 'Codex CLI -> "/w"');
    const parsed = plain(toml.parse(added)) as { mcp_servers: Record<string, unknown> };
    assert.deepEqual(parsed.mcp_servers.switchboard, entry);
    assert.equal(tomlRemove(toml, added, 'switchboard'), original, 'remove gives the file back byte for byte');
  };

  it('a table-like line inside a multi-line string or array is not a table', () => {
    roundTrip(
      '# mine\nmodel = "o3"\ninstructions = """\nRemember:\n[mcp_servers.switchboard]\ncommand = "text"\n"""\n' +
        "notes = '''\n[mcp_servers.switchboard.env]\n'''\n" +
        'matrix = [\n  [1, 2],\n  [3, 4],\n]\n\n[mcp_servers.docs]\ncommand = "uvx"\n',
    );
  });

  it('keeps CRLF files, other tables and the comments that belong to the next table', () => {
    roundTrip(
      'a = 1\r\n\r\n[mcp_servers.docs]\r\ncommand = "uvx"\r\n\r\n# about profiles\r\n[profiles.fast]\r\nm = 1\r\n',
    );
    const spread =
      '[mcp_servers."switchboard"]\ncommand = "x"\n\n# the next one is mine\n[ mcp_servers . other ]\ncommand = "y"\n' +
      '[mcp_servers.switchboard.env]\nA = "1"\n';
    assert.equal(
      tomlRemove(toml, spread, 'switchboard'),
      '\n# the next one is mine\n[ mcp_servers . other ]\ncommand = "y"\n',
      'every table of the entry goes (quoted or spaced headers too); the next table keeps its comment',
    );
  });

  it('removes the note it wrote, and nothing when there is no such table', () => {
    const added = tomlAdd(toml, 'x = 1\n', 'switchboard', entry, 'Codex CLI -> "/w"');
    assert.match(added, new RegExp(`\\n${TOML_MARK.replace(/[()]/g, '\\$&')}Codex CLI`));
    assert.equal(tomlRemove(toml, added, 'switchboard'), 'x = 1\n');
    assert.equal(tomlRemove(toml, 'x = 1\n[mcp_servers.other]\n', 'switchboard'), 'x = 1\n[mcp_servers.other]\n');
  });

  it('a note with line breaks, quotes or brackets stays one comment line', () => {
    const root = '/tmp/a "b" ]\n[mcp_servers.evil]\ncommand = "sh"\r\u007f';
    const added = tomlAdd(toml, '', 'switchboard', { ...entry, args: ['--root', root] }, `Codex CLI -> ${root}`);
    const parsed = plain(toml.parse(added)) as { mcp_servers: Record<string, { args: string[] }> };
    assert.deepEqual(Object.keys(parsed.mcp_servers), ['switchboard'], 'no table came out of the comment');
    assert.deepEqual(parsed.mcp_servers.switchboard.args, ['--root', root], 'the path itself is kept exactly');
    assert.equal(added.split('\n').filter((l) => l.startsWith('#')).length, 1);
    assert.equal(commentText('a\nb\u0001'), 'a\\u000ab\\u0001');
  });
});
