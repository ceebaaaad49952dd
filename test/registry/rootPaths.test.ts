// Registry roots as Windows and macOS spell them, and files that one case-insensitive system merges.
import assert from 'node:assert/strict';
import { validateName } from '../../src/registry/names';
import {
  childPath,
  isFullyQualified,
  isInsideRoot,
  isUncPath,
  isWindowsDeviceName,
  normalizeRoot,
  rootKey,
  sameEntryName,
  withoutLongPathPrefix,
} from '../../src/registry/rootPaths';
import { caseCollisionProblems } from '../../src/registry/caseCollisions';

describe('platform: registry roots', () => {
  it('normalizes drive letters, forward slashes, spaces and trailing separators', () => {
    assert.equal(normalizeRoot('c:/Work Space/repo/', 'C:\\', 'win32'), 'C:\\Work Space\\repo');
    assert.equal(normalizeRoot('workspace', 'D:\\My Repos\\sb', 'win32'), 'D:\\My Repos\\sb\\workspace');
    assert.equal(normalizeRoot('C:\\', 'C:\\', 'win32'), 'C:\\');
    assert.equal(normalizeRoot('ws/', '/home/op/repo', 'linux'), '/home/op/repo/ws');
  });

  it('keeps UNC shares whole', () => {
    assert.ok(isUncPath('\\\\fileserver\\team share\\repo'));
    assert.ok(isUncPath('//fileserver/share'));
    assert.ok(!isUncPath('C:\\repo'));
    const share = '\\\\fileserver\\team share\\repo';
    assert.equal(normalizeRoot(`${share}\\`, 'C:\\', 'win32'), share);
    assert.equal(normalizeRoot('ws', '\\\\fs\\share\\repo', 'win32'), '\\\\fs\\share\\repo\\ws');
  });

  it('gives one key to two spellings of one root where case is ignored, and two on Linux', () => {
    assert.equal(rootKey('c:\\Work\\WS\\', 'win32'), rootKey('C:/work/ws', 'win32'));
    assert.equal(rootKey('/Users/op/Repo', 'darwin'), rootKey('/users/op/repo/', 'darwin'));
    assert.notEqual(rootKey('/home/op/Repo', 'linux'), rootKey('/home/op/repo', 'linux'));
  });

  it('tells inside from outside by the rules of each OS', () => {
    assert.ok(isInsideRoot('C:\\Repo', 'c:\\repo\\mcp-servers.d\\echo.yaml', 'win32'));
    assert.ok(isInsideRoot('C:\\Repo', 'C:\\Repo', 'win32'));
    assert.ok(!isInsideRoot('C:\\Repo', 'D:\\Repo\\x.yaml', 'win32'), 'another drive');
    assert.ok(!isInsideRoot('C:\\Repo', 'C:\\Repo2\\x.yaml', 'win32'), 'a sibling with a longer name');
    assert.ok(!isInsideRoot('C:\\Repo', 'C:\\Repo\\..\\x.yaml', 'win32'));
    assert.ok(isInsideRoot('C:\\Repo', 'C:\\Repo\\..foo\\x.yaml', 'win32'), 'a folder named ..foo is inside');
    assert.ok(!isInsideRoot('\\\\fs\\share\\repo', '\\\\fs\\other\\repo\\x', 'win32'), 'another share');
    assert.ok(isInsideRoot('\\\\fs\\share\\repo', '\\\\FS\\Share\\repo\\x', 'win32'));
    assert.ok(!isInsideRoot('/home/op/Repo', '/home/op/repo/x', 'linux'));
  });
});

describe('platform: file names that differ only in case', () => {
  const files = ['/r/mcp-servers.d/Echo.yaml', '/r/mcp-servers.d/echo.yaml', '/r/mcp-servers.d/other.yaml'];

  it('is an error on each file of the pair on Windows and macOS', () => {
    for (const platform of ['win32', 'darwin'] as const) {
      const problems = caseCollisionProblems('server', files, platform);
      assert.deepEqual(
        problems.map((p) => [p.file, p.severity]),
        [
          ['/r/mcp-servers.d/Echo.yaml', 'error'],
          ['/r/mcp-servers.d/echo.yaml', 'error'],
        ],
      );
      assert.match(problems[0].message, /Echo\.yaml and echo\.yaml are the same file/);
      assert.equal(problems[0].kind, 'server');
    }
  });

  it('is nothing on Linux, or a warning when asked to warn for other systems', () => {
    assert.deepEqual(caseCollisionProblems('server', files, 'linux'), []);
    const warned = caseCollisionProblems('prompt', files, 'linux', true);
    assert.deepEqual(
      warned.map((p) => p.severity),
      ['warning', 'warning'],
    );
    assert.match(warned[1].message, /echo\.yaml and Echo\.yaml differ only in case/);
  });

  it('does not mix up different names or extensions', () => {
    assert.deepEqual(caseCollisionProblems('server', ['/r/a.yaml', '/r/a.yml', '/r/b.yaml'], 'win32'), []);
  });
});

describe('registry: root paths under hostile input', () => {
  it('never puts a climbing, other-drive, other-share or half-qualified path inside a Windows root', () => {
    const outside: Array<[string, string, string]> = [
      ['C:\\Repo', 'C:\\Repo\\mcp-servers.d\\..\\..\\Windows\\win.ini', 'climbs out through ..'],
      ['C:\\Repo', 'C:/Repo/../Other/x.yaml', 'forward slashes'],
      ['C:\\Repo', 'C:\\Repo\\.. \\x.yaml', '".. " is ".." once Windows drops the space'],
      ['C:\\Repo', 'C:\\Repo\\...\\x.yaml', 'a run of dots is refused, not trusted'],
      ['C:\\Repo', 'C:Repo\\x.yaml', 'drive-relative'],
      ['C:\\Repo', '\\Repo\\x.yaml', 'on the current drive, whichever it is'],
      ['C:\\Repo', 'Repo\\x.yaml', 'relative'],
      ['C:\\Repo', 'C:\\Repo\\x\0\\..\\..\\y', 'a NUL'],
      ['C:\\Repo', '\\\\?\\D:\\Repo\\x.yaml', 'a long path on another drive'],
      ['C:\\', 'D:\\x.yaml', 'another drive root'],
      ['\\\\fs\\share\\repo', '\\\\fs\\share2\\repo\\x', 'a share with a longer name'],
      ['\\\\fs\\share\\repo', '\\\\fs2\\share\\repo\\x', 'another server'],
      ['\\\\fs\\share\\repo', '\\\\fs\\share\\repo\\..\\..\\other\\x', 'climbs out of the share'],
      ['\\\\fs\\share\\repo', 'C:\\fs\\share\\repo\\x', 'a drive, not the share'],
    ];
    for (const [root, file, why] of outside) assert.ok(!isInsideRoot(root, file, 'win32'), `${why}: ${file}`);
  });

  it('puts other spellings of a Windows root and its files inside it', () => {
    const inside: Array<[string, string]> = [
      ['C:\\Repo', 'c:/repo/mcp-servers.d/echo.yaml'],
      ['C:\\Repo', '\\\\?\\C:\\Repo\\mcp-servers.d\\echo.yaml'],
      ['C:\\Repo', 'C:\\REPO\\sub\\..\\x.yaml'],
      ['C:\\Repo', 'C:\\Repo\\...foo\\x.yaml'],
      ['C:\\', 'C:\\x.yaml'],
      ['C:\\My Repos\\sb ws', 'C:\\my repos\\SB WS\\x.yaml'],
      ['\\\\fs\\share\\repo', '//FS/Share/repo/x.yaml'],
      ['\\\\fs\\share\\repo', '\\\\?\\UNC\\fs\\share\\repo\\x.yaml'],
    ];
    for (const [root, file] of inside) assert.ok(isInsideRoot(root, file, 'win32'), file);
  });

  it('follows POSIX rules on Linux and macOS: a backslash is a character, case counts only on Linux', () => {
    assert.ok(!isInsideRoot('/r', '/r/../etc/passwd', 'linux'));
    assert.ok(!isInsideRoot('/r', '/r2/x', 'linux'));
    assert.ok(!isInsideRoot('/r', 'r/x', 'linux'), 'relative');
    assert.ok(!isInsideRoot('/r', '/r/x\0/../../etc', 'linux'));
    assert.ok(isInsideRoot('/r', '/r/..\\..\\x', 'linux'), 'one file name with backslashes in it');
    assert.ok(isInsideRoot('/r', '/r/..foo/x', 'linux'));
    assert.ok(isInsideRoot('/Users/op/Repo', '/users/op/repo/x', 'darwin'));
    assert.ok(!isInsideRoot('/Users/op/Repo', '/Users/op/Repo2/x', 'darwin'));
  });

  it('drops the long-path prefix and keeps a root whole', () => {
    assert.equal(withoutLongPathPrefix('\\\\?\\C:\\Repo', 'win32'), 'C:\\Repo');
    assert.equal(withoutLongPathPrefix('\\\\?\\UNC\\fs\\share\\x', 'win32'), '\\\\fs\\share\\x');
    assert.equal(withoutLongPathPrefix('\\\\?\\C:\\Repo', 'linux'), '\\\\?\\C:\\Repo');
    assert.equal(normalizeRoot('\\\\?\\c:\\Repo\\', 'D:\\', 'win32'), 'C:\\Repo');
    assert.equal(rootKey('\\\\?\\UNC\\FS\\Share\\Repo', 'win32'), rootKey('\\\\fs\\share\\repo\\', 'win32'));
    assert.ok(isFullyQualified('\\\\fs\\share', 'win32'));
    assert.ok(!isFullyQualified('C:', 'win32'));
    assert.ok(!isFullyQualified('C:\\x', 'linux'));
  });

  it('joins only a plain file name to a directory, by the rules of each OS', () => {
    const dir = 'C:\\Repo\\mcp-servers.d';
    assert.equal(childPath(dir, 'echo.yaml', 'win32'), 'C:\\Repo\\mcp-servers.d\\echo.yaml');
    assert.equal(childPath(dir, 'console.yaml', 'win32'), 'C:\\Repo\\mcp-servers.d\\console.yaml');
    assert.equal(childPath(dir, 'nullable.yml', 'win32'), 'C:\\Repo\\mcp-servers.d\\nullable.yml');
    const refused: Array<[string, RegExp]> = [
      ['', /not a file name/],
      ['..', /not a file name/],
      ['..\\x.yaml', /path separator/],
      ['a/b.yaml', /path separator/],
      ['C:x.yaml', /':'/],
      ['echo.yaml:secret', /alternate data stream/],
      ['echo.yaml.', /dot or a space/],
      ['echo.yaml ', /dot or a space/],
      ['nul.yaml', /device name/],
      ['CON', /device name/],
      ['com1.yaml', /device name/],
      ['Lpt9.yml', /device name/],
      ['aux .yaml', /device name/],
      ['a\0.yaml', /NUL/],
    ];
    for (const [base, why] of refused) assert.throws(() => childPath(dir, base, 'win32'), why, JSON.stringify(base));
    assert.equal(childPath('/r/d', 'a\\b.yaml', 'linux'), '/r/d/a\\b.yaml', 'a backslash is a character there');
    assert.throws(() => childPath('/r/d', '../x.yaml', 'linux'), /path separator/);
    assert.throws(() => childPath('/r/d', '..', 'darwin'), /not a file name/);
  });

  it('knows Windows device names, and keeps them out of registry names on every OS', () => {
    // The superscript digits count too (names.ts writes them as \u escapes: the bundle stays ASCII).
    for (const n of [
      'con',
      'PRN',
      'aux.yaml',
      'nul',
      'com9.yml',
      'lpt1',
      'conin$',
      'CONOUT$.txt',
      'com\u00b9',
      'LPT\u00b3.yaml',
    ])
      assert.ok(isWindowsDeviceName(n), n);
    for (const n of ['console', 'nullable.yaml', 'com', 'lpt10', 'auxiliary', 'com\u2074'])
      assert.ok(!isWindowsDeviceName(n), n);
    assert.match(validateName('nul') ?? '', /device name on Windows/);
    assert.match(validateName('com1') ?? '', /device name on Windows/);
    assert.equal(validateName('console'), undefined);
  });

  it('compares entry names as the file system does', () => {
    assert.ok(sameEntryName('mcp-servers.d', 'MCP-Servers.d', 'win32'));
    assert.ok(sameEntryName('mcp-servers.d', 'MCP-Servers.d', 'darwin'));
    assert.ok(!sameEntryName('mcp-servers.d', 'MCP-Servers.d', 'linux'));
  });
});
