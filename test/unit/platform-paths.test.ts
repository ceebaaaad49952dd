// Registry roots as Windows and macOS spell them, and files that one case-insensitive system merges.
import assert from 'node:assert/strict';
import { isInsideRoot, isUncPath, normalizeRoot, rootKey } from '../../src/broker/platform/paths';
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
