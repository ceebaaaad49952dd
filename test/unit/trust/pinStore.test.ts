// The pins' file: a pin is served at once and written a moment later (off a hot reload's path), in
// one write for the pins taken together, and never lost at close or to another writer of the file.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PinStore, type PinRecord } from '../../../src/broker/trust/pinStore';
import { waitFor } from '../../helpers/broker';

const pin = (tools: string): PinRecord => ({
  tools,
  definitions: {},
  pinnedAt: '2026-12-06T00:00:00Z',
  source: 'first-use',
});

describe('PinStore', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-pinstore-'));
    file = path.join(dir, 'tool-pins.json');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const onDisk = (root: string): PinStore => new PinStore(file, root);

  it('serves a pin at once and writes the pins taken together in one write, on its own', async () => {
    const store = new PinStore(file, '/ws');
    store.put('a', pin('A'));
    store.put('b', pin('B'));
    assert.equal(store.get('a')?.tools, 'A');
    assert.equal(fs.existsSync(file), false, 'not written on the path that took the pin');
    await waitFor(() => fs.existsSync(file) || undefined, 'the pins written');
    const reread = onDisk('/ws');
    assert.deepEqual([reread.get('a')?.tools, reread.get('b')?.tools], ['A', 'B']);
  });

  it('writes what is pending at flush (the broker closing), merged with what another writer put', () => {
    const store = new PinStore(file, '/ws');
    const other = new PinStore(file, '/ws');
    other.put('theirs', pin('T'));
    other.flush();
    store.put('mine', pin('M'));
    store.flush();
    const reread = onDisk('/ws');
    assert.equal(reread.get('mine')?.tools, 'M');
    assert.equal(reread.get('theirs')?.tools, 'T', "another broker's pin is kept");
    store.flush();
    assert.equal(onDisk('/ws').get('mine')?.tools, 'M', 'a second flush has nothing to write and loses nothing');
  });
});
