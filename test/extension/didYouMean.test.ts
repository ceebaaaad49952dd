// The Quick Fix for "did you mean …?" problems: the edit computed from the registry's own problems
// (parseDefinition on real YAML text), applied to the text, must give a file without that problem.

import assert from 'node:assert/strict';
import { didYouMeanFix } from '../../src/extension/didYouMean';
import { terminalText, plain } from '../../src/extension/logLines';
import { parseDefinition } from '../../src/registry/parse';

/** Applies every fix the file's problems offer, as the editor would one at a time. */
function fixAll(text: string): { text: string; titles: string[] } {
  const titles: string[] = [];
  for (let round = 0; round < 5; round++) {
    const { problems } = parseDefinition('server', '/r/mcp-servers.d/x.yaml', text);
    const lines = text.split('\n');
    const fix = problems
      .map((p) => ({ p, f: didYouMeanFix(lines[p.line - 1] ?? '', p.column - 1, p.fix) }))
      .find((x) => x.f);
    if (!fix?.f) break;
    const line = lines[fix.p.line - 1];
    lines[fix.p.line - 1] = line.slice(0, fix.f.start) + fix.f.newText + line.slice(fix.f.end);
    titles.push(fix.f.title);
    text = lines.join('\n');
  }
  return { text, titles };
}

describe('Quick Fix: did you mean', () => {
  it('renames a misspelt key, and the file then parses without problems', () => {
    const before = 'name: x\ncomand: node\nargs: [a.js]\n';
    const { problems } = parseDefinition('server', '/r/mcp-servers.d/x.yaml', before);
    assert.match(problems[0].message, /did you mean 'command'\?/);
    assert.deepEqual(problems[0].fix, { replace: 'comand', with: 'command' }, 'the same suggestion, as data');
    const { text, titles } = fixAll(before);
    assert.equal(text, 'name: x\ncommand: node\nargs: [a.js]\n');
    assert.deepEqual(titles, ["Change 'comand' to 'command'"]);
    assert.deepEqual(parseDefinition('server', '/r/mcp-servers.d/x.yaml', text).problems, []);
  });

  it('fixes a nested key and a misspelt enum value, keeping quotes', () => {
    const before = 'name: x\ncommand: node\ntrust: "comunity"\nrestart:\n  maxRetrys: 3\n';
    const { text } = fixAll(before);
    assert.equal(text, 'name: x\ncommand: node\ntrust: "community"\nrestart:\n  maxRetries: 3\n');
    assert.deepEqual(parseDefinition('server', '/r/mcp-servers.d/x.yaml', text).problems, []);
  });

  it('offers nothing without a suggestion, or when the word is no longer the one the problem names', () => {
    const comand = { replace: 'comand', with: 'command' };
    const unknown = parseDefinition('server', '/r/mcp-servers.d/x.yaml', 'name: x\ncommand: n\nzzz: 1\n').problems;
    assert.equal(unknown[0].fix, undefined, 'nothing close to zzz: no fix, only the allowed keys in words');
    assert.equal(didYouMeanFix('zzz: 1', 0, undefined), undefined);
    assert.equal(didYouMeanFix('command: node', 0, comand), undefined);
    assert.equal(didYouMeanFix('other: node', 0, comand), undefined);
    assert.equal(didYouMeanFix('x', 5, { replace: 'x', with: 'y' }), undefined);
    assert.deepEqual(didYouMeanFix("  - 'comand': 1", 4, comand), {
      start: 5,
      end: 11,
      newText: 'command',
      title: "Change 'comand' to 'command'",
    });
  });
});

describe('live log lines', () => {
  it('shows stderr as written, broker lines marked, control characters escaped, CRLF endings', () => {
    const text = terminalText(
      [
        { at: '2026-01-01T10:00:00.000Z', stream: 'broker', text: 'running (pid 7)' },
        { at: '2026-01-01T10:00:01.000Z', stream: 'stderr', text: 'hello \x1b[2Jworld' },
      ],
      3,
    );
    const lines = plain(text).split('\r\n');
    assert.equal(lines.length, 4);
    assert.match(lines[0], /3 lines not shown/);
    assert.match(lines[1], /^\d\d:\d\d:\d\d\.000 \[broker\] running \(pid 7\)$/);
    assert.match(lines[2], /^\d\d:\d\d:\d\d\.000 hello \\x1b\[2Jworld$/);
    assert.equal(lines[3], '');
    assert.ok(!text.includes('\x1b[2J'), 'a server cannot clear the terminal');
  });
});
