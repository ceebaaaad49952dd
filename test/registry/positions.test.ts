// positionOf (src/registry/positions.ts): where a data path was written in the YAML text.

import assert from 'node:assert/strict';
import { LineCounter, parseDocument } from 'yaml';
import { positionOf, type DataPath } from '../../src/registry/positions';

function at(text: string, dataPath: DataPath, where: 'key' | 'value' = 'value'): [number, number] {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const { line, column } = positionOf(doc, lc, dataPath, where);
  return [line, column];
}

const TEXT = [
  '# a comment',
  'command: npx',
  'args:',
  '  - one',
  '  - two',
  'restart:',
  '  maxRetries: x',
  'env: { A: "1", B: 2 }',
  'cwd:',
  '',
].join('\n');

describe('registry: positions', () => {
  it('points at a value, or at its key when asked', () => {
    assert.deepEqual(at(TEXT, ['command']), [2, 10]);
    assert.deepEqual(at(TEXT, ['command'], 'key'), [2, 1]);
    assert.deepEqual(at(TEXT, ['restart', 'maxRetries']), [7, 15]);
    assert.deepEqual(at(TEXT, ['restart', 'maxRetries'], 'key'), [7, 3]);
  });

  it('follows list indices and flow mappings', () => {
    assert.deepEqual(at(TEXT, ['args', 1]), [5, 5]);
    assert.deepEqual(at(TEXT, ['env', 'B']), [8, 19]);
    assert.deepEqual(at(TEXT, ['env', 'B'], 'key'), [8, 16]);
  });

  it('falls back to the deepest node that exists', () => {
    assert.deepEqual(at(TEXT, ['restart', 'backoffMs']), [7, 3], 'a missing key: the mapping it belongs in');
    assert.deepEqual(at(TEXT, ['args', 9]), [4, 3], 'an index past the end: the list');
    assert.deepEqual(at(TEXT, ['command', 'x']), [2, 10], 'a path through a scalar: the scalar');
    assert.deepEqual(at(TEXT, ['nope']), [2, 1], 'a missing top-level key: the document');
  });

  it('points an empty value at its key', () => {
    assert.deepEqual(at(TEXT, ['cwd']), [9, 1]);
  });

  it('answers line 1, column 1 for an empty document', () => {
    assert.deepEqual(at('', ['name']), [1, 1]);
    assert.deepEqual(at('# only a comment\n', ['name']), [1, 1]);
  });
});
