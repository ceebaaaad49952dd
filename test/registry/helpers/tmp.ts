// Real temp directories for registry tests; each test gets its own root, removed afterwards.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { underWine } from '../../helpers/platform';

export function makeRoot(label = 'registry'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `sb-${label}-`));
}

export function removeRoot(root: string): void {
  try {
    // Windows: a watcher that is closing may still hold the folder open for a moment (EBUSY, ENOTEMPTY).
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  } catch (err) {
    // Under Wine the folder a closed fs.watch watched stays ENOTEMPTY past the retries (seen in every
    // run); it is in the temp dir of a Wine prefix that the next run replaces. Elsewhere: a real failure.
    if (!underWine) throw err;
  }
}

/** Writes `text` at `rel` under root (creating directories) and returns the absolute path. */
export function put(root: string, rel: string, text: string): string {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** A helper that gives every test a fresh root and cleans it up. */
export function useRoot(label?: string): { readonly root: string } {
  const box = { root: '' };
  beforeEach(() => {
    box.root = makeRoot(label);
  });
  afterEach(() => {
    removeRoot(box.root);
  });
  return box;
}
