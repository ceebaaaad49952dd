// When a registry change can be read at once instead of after the watcher's quiet time.
//
// The quiet time (RegistryWatcher's debounce) exists so a definition written in place is never read
// half-way: a truncated YAML file that still parses would start a server without the settings below
// the cut. One kind of change cannot be half-way: a file renamed (or linked) into a kind directory
// already has all its content, as editors' and the extension's atomic saves do. fs.watch reports it
// as `rename`, exactly as it reports a file created in place, so this tells them apart from what
// the inotify event stream guarantees on Linux:
//
//   - a file created in place is empty when its `rename` (IN_CREATE) event is queued, and each write
//     queues a `change` (IN_MODIFY) event synchronously, before the write returns;
//   - so if the file is already non-empty when we stat it after its `rename` event, either it was
//     renamed in whole, or a write came first and its `change` event is already queued: the event
//     loop's next poll delivers it, and we look again only after that poll.
//
// A change qualifies when every event of the pending window was a `rename` of a definition file that
// is, at the event and again after the next poll, a non-empty regular file with one link (a symbolic
// or hard link could be written through another name, which this directory would not hear about),
// with the same inode, size and mtime, and no `change` event for a definition file came meanwhile.
// Anything else (a `change`, a vanished file, an empty one, an event without a file name, the root's
// events, another platform whose events are batched or coalesced) waits for the quiet time as before.
// A vanished file waits too: a backup-then-write save moves the old file away first, and acting on
// that would stop a server its next write brings back.

import * as fs from 'node:fs';
import { isDefinitionFileName } from './loader';
import { childPath } from './rootPaths';

interface Seen {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Whether this platform queues file events synchronously with the write (inotify). */
export const EVENTS_ARE_SYNCHRONOUS = process.platform === 'linux';

export class CompleteRenames {
  private readonly files = new Map<string, Seen>();
  private tainted = false;

  /** Forgets the window (a reload read everything). */
  reset(): void {
    this.files.clear();
    this.tainted = false;
  }

  /** Marks the window as one that must wait for the quiet time. */
  taint(): void {
    this.tainted = true;
  }

  /**
   * Records an event in a kind directory; true while the whole window may still be read early.
   */
  note(dir: string, event: string, filename: string | null): boolean {
    if (this.tainted) return false;
    if (!EVENTS_ARE_SYNCHRONOUS || filename === null) return this.fail();
    // Temp files and other names the loader ignores: their writes end before any rename over a
    // definition, and a write after that rename is a `change` of the definition's own name.
    if (!isDefinitionFileName(filename)) return true;
    if (event !== 'rename') return this.fail();
    const file = childPath(dir, filename, process.platform);
    const seen = whole(file);
    if (!seen) return this.fail();
    this.files.set(file, seen);
    return true;
  }

  /** After a poll of the event loop: true when every renamed file is as it was and nothing tainted the window. */
  confirm(): boolean {
    if (this.tainted || this.files.size === 0) return false;
    for (const [file, before] of this.files) {
      const now = whole(file);
      if (!now || now.ino !== before.ino || now.size !== before.size || now.mtimeMs !== before.mtimeMs)
        return this.fail();
    }
    return true;
  }

  private fail(): false {
    this.tainted = true;
    return false;
  }
}

/** A non-empty regular file with a single link, or undefined. */
function whole(file: string): Seen | undefined {
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size === 0 || st.nlink !== 1) return undefined;
    return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}
