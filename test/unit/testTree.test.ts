// The test tree's own rules (test/README.md): no two test files share a name, and none sits loose at
// the top of test/unit/ where a module's test belongs in its subsystem's folder.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/broker';

const TEST_DIR = path.join(REPO, 'test');

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(full);
    return entry.name.endsWith('.test.ts') ? [path.relative(TEST_DIR, full)] : [];
  });
}

describe('the test tree', () => {
  const files = testFiles(TEST_DIR);

  it('gives every test file a name no other test file has', () => {
    // Enough files were found that the check means something.
    assert.ok(files.length > 100, `only ${files.length} test files found under ${TEST_DIR}`);
    const byName = new Map<string, string[]>();
    for (const file of files) byName.set(path.basename(file), [...(byName.get(path.basename(file)) ?? []), file]);
    const shared = [...byName.values()].filter((paths) => paths.length > 1);
    assert.deepEqual(shared, [], 'rename one of each pair so the name says what it tests');
  });

  it('keeps module tests in test/unit/<subsystem>/ (only the whole-tree checks at its top)', () => {
    const loose = files.filter((f) => path.dirname(f) === 'unit').map((f) => path.basename(f));
    assert.deepEqual(loose.sort(), ['layers.test.ts', 'testTree.test.ts']);
  });
});
