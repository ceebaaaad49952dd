// Windows launching as pure logic: PATHEXT lookup, and cmd.exe command lines that carry hostile
// arguments through unchanged (checked against cross-spawn's maintained escaping, and by hand).
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import {
  resolveWindowsCommand,
  windowsCommandLine,
  windowsEnvValue,
  windowsSpawn,
} from '../../../../src/broker/shared/platform/windowsCommand';
import { spawnTarget } from '../../../../src/broker/shared/platform/spawnTarget';

// cross-spawn (what the SDK's own stdio transport uses) as the reference for cmd.exe escaping.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crossEscape = require('cross-spawn/lib/util/escape') as {
  command(s: string): string;
  argument(s: string): string;
  batchCommand(s: string): string;
  batchArgument(s: string): string;
};

const HOSTILE = [
  'a&b',
  'x | del /q C:\\',
  'caret^',
  '%PATH%',
  '%USERPROFILE%\\x',
  'say "hi"',
  'two words',
  'C:\\Program Files\\dir\\',
  'trailing\\\\',
  '\\"',
  '!DELAYED!',
  '(paren) <in >out',
  '',
];

/** Windows file names ignore case, and the extension comes back as PATHEXT spells it (.CMD). */
function assertSameFile(actual: string | undefined, expected: string): void {
  assert.equal(actual?.toLowerCase(), expected.toLowerCase());
}

function files(...paths: string[]): (p: string) => boolean {
  const set = new Set(paths.map((p) => p.toLowerCase()));
  return (p) => set.has(p.toLowerCase());
}

describe('platform: Windows command resolution', () => {
  const pathVar = 'C:\\Windows\\system32;"C:\\Program Files\\nodejs";C:\\Users\\op\\AppData\\Roaming\\npm';

  it('finds npx as npx.cmd through PATHEXT, in PATH order, even in a quoted PATH entry with spaces', () => {
    const isFile = files('C:\\Program Files\\nodejs\\npx.cmd', 'C:\\Users\\op\\AppData\\Roaming\\npm\\npx.cmd');
    const found = resolveWindowsCommand('npx', { pathVar, pathExt: '.COM;.EXE;.BAT;.CMD', cwd: 'C:\\ws', isFile });
    assertSameFile(found, 'C:\\Program Files\\nodejs\\npx.cmd');
  });

  it('prefers an earlier PATHEXT extension in one directory (node.exe before node.cmd)', () => {
    const isFile = files('C:\\tools\\node.cmd', 'C:\\tools\\node.exe');
    assertSameFile(
      resolveWindowsCommand('node', { pathVar: 'C:\\tools', pathExt: undefined, cwd: 'C:\\', isFile }),
      'C:\\tools\\node.exe',
    );
  });

  it('takes a name with a known extension as it is, and a relative path against cwd', () => {
    const isFile = files('C:\\ws\\bin\\server.bat', 'C:\\tools\\uvx.exe');
    const lookup = { pathVar: 'C:\\tools', pathExt: '.EXE;.BAT', cwd: 'C:\\ws', isFile };
    assertSameFile(resolveWindowsCommand('uvx.exe', lookup), 'C:\\tools\\uvx.exe');
    assertSameFile(resolveWindowsCommand('bin\\server', lookup), 'C:\\ws\\bin\\server.bat');
    assertSameFile(resolveWindowsCommand('.\\bin/server.bat', lookup), 'C:\\ws\\bin\\server.bat');
  });

  it('does not let a workspace shadow a bare command: npx.cmd in cwd is not npx', () => {
    const isFile = files('C:\\ws\\npx.cmd', 'C:\\nodejs\\npx.cmd');
    const lookup = { pathVar: 'C:\\nodejs', pathExt: undefined, cwd: 'C:\\ws', isFile };
    assertSameFile(resolveWindowsCommand('npx', lookup), 'C:\\nodejs\\npx.cmd');
    assert.equal(resolveWindowsCommand('npx', { ...lookup, pathVar: '' }), undefined);
  });

  it('reports a missing command as not found (undefined), so the broker says "command not found"', () => {
    assert.equal(
      resolveWindowsCommand('nosuch', { pathVar, pathExt: undefined, cwd: 'C:\\', isFile: () => false }),
      undefined,
    );
  });

  it('reads Path, PATH or path alike, as Windows does', () => {
    assert.equal(windowsEnvValue({ Path: 'C:\\a' }, 'PATH'), 'C:\\a');
    assert.equal(windowsEnvValue({ pathext: '.EXE' }, 'PATHEXT'), '.EXE');
    assert.equal(windowsEnvValue({}, 'PATH'), undefined);
  });
});

describe('platform: cmd.exe command lines', () => {
  it('escapes every hostile argument exactly as cross-spawn does, for programs and for batch files', () => {
    for (const arg of HOSTILE) {
      assert.equal(
        windowsCommandLine('C:\\bin\\tool.com', [arg], false),
        `${crossEscape.command('C:\\bin\\tool.com')} ${crossEscape.argument(arg)}`,
        `program argument ${arg}`,
      );
      assert.equal(
        windowsCommandLine('C:\\npm\\npx.cmd', [arg], true),
        `${crossEscape.batchCommand('C:\\npm\\npx.cmd')} ${crossEscape.batchArgument(arg)}`,
        `batch argument ${arg}`,
      );
    }
  });

  it('agrees with cross-spawn on any printable argument list (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'binary' }).filter((s) => !/[\r\n]/.test(s)),
          { maxLength: 5 },
        ),
        fc.boolean(),
        (args, batch) => {
          const expected = args.map((a) => (batch ? crossEscape.batchArgument(a) : crossEscape.argument(a)));
          const line = windowsCommandLine('C:\\x\\y.cmd', args, batch);
          assert.equal(line, [crossEscape.batchCommand('C:\\x\\y.cmd'), ...expected].join(' '));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves no bare meta character or %VAR% in a batch argument: quotes balanced, % broken up', () => {
    const line = windowsCommandLine('C:\\npm\\npx.cmd', ['-y', 'a&b|c', '%PATH%', 'say "hi"', 'dir\\'], true);
    assert.equal(line, '"C:\\npm\\npx.cmd" "-y" "a&b|c" "%%cd:~,%PATH%%cd:~,%" "say ""hi""" "dir\\\\"');
    assert.equal((line.match(/"/g) ?? []).length % 2, 0);
  });

  it('doubles trailing backslashes so the closing quote stays a quote', () => {
    assert.equal(windowsCommandLine('C:\\t.cmd', ['C:\\Program Files\\'], true), '"C:\\t.cmd" "C:\\Program Files\\\\"');
  });

  it('refuses a line break rather than let cmd.exe run a second command', () => {
    assert.throws(() => windowsCommandLine('C:\\t.cmd', ['ok\r\ncalc.exe']), /line break/);
    assert.throws(() => windowsCommandLine('C:\\t.cmd\ncalc', []), /line break/);
  });
});

describe('platform: what is spawned on Windows', () => {
  it('runs an .exe directly, with its arguments as they are', () => {
    assert.deepEqual(windowsSpawn('C:\\nodejs\\node.exe', ['server.js', 'a b']), {
      file: 'C:\\nodejs\\node.exe',
      args: ['server.js', 'a b'],
      windowsVerbatimArguments: false,
    });
  });

  it('runs a .cmd shim through cmd.exe (no AutoRun, no delayed expansion) with a verbatim, quoted line', () => {
    const cmd = 'C:\\Windows\\system32\\cmd.exe';
    const spawned = windowsSpawn('C:\\nodejs\\npx.cmd', ['-y', '@scope/server', 'a&b'], cmd);
    assert.equal(spawned.file, cmd);
    assert.deepEqual(spawned.args.slice(0, 5), ['/d', '/e:on', '/v:off', '/s', '/c']);
    assert.equal(spawned.args[5], '""C:\\nodejs\\npx.cmd" "-y" "@scope/server" "a&b""');
    assert.equal(spawned.windowsVerbatimArguments, true);
  });

  it('puts the sandbox wrapper in front on POSIX and never on Windows', () => {
    const wrapper = ['unshare', '--net', '--'];
    assert.deepEqual(spawnTarget('linux', { command: 'npx', args: ['-y', 'x'], wrapper }), {
      file: 'unshare',
      args: ['--net', '--', 'npx', '-y', 'x'],
      windowsVerbatimArguments: false,
    });
    assert.deepEqual(spawnTarget('linux', { command: 'node', args: ['s.js'] }), {
      file: 'node',
      args: ['s.js'],
      windowsVerbatimArguments: false,
    });
    const resolved = 'C:\\n\\npx.cmd';
    const win = spawnTarget('win32', { command: 'npx', args: ['x'], resolved, comspec: 'C:\\cmd.exe' });
    assert.equal(win.file, 'C:\\cmd.exe');
    assert.equal(win.args[5], '""C:\\n\\npx.cmd" "x""');
  });
});
