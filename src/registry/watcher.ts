// Watches a registry root and emits a whole new snapshot whenever what the loader sees changes.
//
// fs.watch is fast but unreliable in the ways that matter here: directories that do not exist yet
// cannot be watched, a watched directory that is deleted (or replaced) goes silent, and some file
// systems drop events. So the watcher
//   - watches directories, never files: an editor that saves by writing a temp file and renaming
//     it over the target keeps the directory's identity, so the event still arrives;
//   - watches the root too, to notice a kind directory being created, deleted or replaced, and
//     re-arms its directory watchers whenever that happens (compared by inode);
//   - runs a cheap safety rescan (stat only: names, sizes, mtimes, inodes) every couple of
//     seconds and reloads only when that fingerprint moved;
//   - emits only when the loader reports a different snapshot (generation moved), never for an
//     event that changed nothing (a touch, a temp file, a save with identical content).

import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import { CompleteRenames } from './completeRenames';
import { isDefinitionFileName, type RegistryLoader, type RegistrySnapshot } from './loader';
import { childPath, sameEntryName } from './rootPaths';
import { KIND_DIRS, KINDS } from './schema';

export interface RegistryWatcherOptions {
  /**
   * Quiet time after the last event before reloading. Default 15 ms: an in-place write of a small
   * YAML file ends well within it. A file renamed into place whole is read without it
   * (completeRenames.ts), on Linux.
   */
  debounceMs?: number;
  /** Safety rescan interval. Default 2000 ms; 0 disables it. */
  rescanMs?: number;
}

export interface RegistryWatcherEvents {
  snapshot: [RegistrySnapshot];
  error: [Error];
}

const KIND_DIR_NAMES = Object.values(KIND_DIRS);

/** Whether an entry of the root is a kind directory; on Windows and macOS `MCP-Servers.d` is one too. */
function isKindDirName(name: string): boolean {
  return KIND_DIR_NAMES.some((k) => sameEntryName(k, name, process.platform));
}

interface Armed {
  watcher: fs.FSWatcher;
  ino: number;
}

export class RegistryWatcher extends EventEmitter<RegistryWatcherEvents> {
  private readonly debounceMs: number;
  private readonly rescanMs: number;
  /** A steady stream of events must not postpone a reload forever. */
  private readonly maxWaitMs: number;
  private readonly watched = new Map<string, Armed>();
  private debounceTimer: NodeJS.Timeout | undefined;
  private firstPendingAt: number | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  /** The pending window's events, to read a whole-file rename without waiting for the quiet time. */
  private readonly renames = new CompleteRenames();
  /** Counts events: an early read checks only the window's last event (see early()). */
  private eventCount = 0;
  private fingerprint = '';
  private last: RegistrySnapshot | undefined;
  private started = false;
  private closed = false;

  constructor(
    private readonly loader: RegistryLoader,
    opts: RegistryWatcherOptions = {},
  ) {
    super();
    this.debounceMs = Math.max(0, opts.debounceMs ?? 15);
    this.rescanMs = Math.max(0, opts.rescanMs ?? 2000);
    this.maxWaitMs = Math.max(this.debounceMs * 10, 500);
  }

  /** The latest snapshot (the one returned by start() or last emitted). */
  get current(): RegistrySnapshot | undefined {
    return this.last;
  }

  /** Loads once, starts watching, and returns the initial snapshot (which is not emitted). */
  start(): RegistrySnapshot {
    if (this.closed) throw new Error('RegistryWatcher: start() after close()');
    if (this.started && this.last) return this.last;
    this.started = true;
    this.arm();
    this.last = this.loader.load();
    this.fingerprint = this.computeFingerprint();
    if (this.rescanMs > 0) {
      this.rescanTimer = setInterval(() => this.rescan(), this.rescanMs);
    }
    return this.last;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.debounceTimer);
    clearInterval(this.rescanTimer);
    for (const { watcher } of this.watched.values()) watcher.close();
    this.watched.clear();
  }

  private get root(): string {
    return this.loader.root;
  }

  private dirs(): string[] {
    return KINDS.map((k) => childPath(this.root, KIND_DIRS[k], process.platform));
  }

  /** Makes the set of live fs.watch handles match the directories that exist right now. */
  private arm(): void {
    if (this.closed) return;
    for (const dir of [this.root, ...this.dirs()]) {
      let ino: number | undefined;
      try {
        const st = fs.statSync(dir);
        ino = st.isDirectory() ? st.ino : undefined;
      } catch {
        ino = undefined;
      }
      const armed = this.watched.get(dir);
      if (armed && armed.ino === ino) continue;
      if (armed) {
        armed.watcher.close();
        this.watched.delete(dir);
      }
      if (ino === undefined) continue;
      try {
        const watcher = fs.watch(dir, { persistent: true }, (event, filename) => this.onEvent(dir, event, filename));
        // A watched directory that vanishes errors on some platforms; drop it and let the next
        // arm() (from the root's event or the rescan) decide what to watch.
        watcher.on('error', () => {
          watcher.close();
          if (this.watched.get(dir)?.watcher === watcher) this.watched.delete(dir);
          this.schedule();
        });
        this.watched.set(dir, { watcher, ino });
      } catch {
        // Raced with a deletion, or out of watch handles: the rescan still covers this directory.
      }
    }
  }

  private onEvent(dir: string, event: string, filename: string | Buffer | null): void {
    if (this.closed) return;
    const name = filename === null ? null : String(filename);
    if (dir !== this.root && this.debounceMs > 0 && this.renames.note(dir, event, name)) {
      this.schedule();
      this.early(++this.eventCount);
      return;
    }
    // Anything else waits for the quiet time: what note() refused, and a kind directory itself changing.
    if (dir !== this.root || name === null || isKindDirName(name)) this.renames.taint();
    if (dir === this.root) {
      // The root is usually the workspace folder, busy with unrelated files; only the kind
      // directories matter there. (No file name means the platform did not say: assume it does.)
      if (name !== null && !isKindDirName(name)) return;
      // A kind directory appeared or was replaced: arm right away so events for the files written
      // into it next are not lost.
      this.arm();
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    const now = Date.now();
    this.firstPendingAt ??= now;
    clearTimeout(this.debounceTimer);
    const wait = now - this.firstPendingAt >= this.maxWaitMs ? 0 : this.debounceMs;
    this.debounceTimer = setTimeout(() => this.reload(), wait);
  }

  /**
   * Reads a window of whole-file renames after the event loop's next poll (two turns of the check
   * phase: the first is this poll's), by which any `change` queued before our stat has arrived.
   * Only the window's last event reads: an earlier one's turn may come before the later file's poll.
   */
  private early(event: number): void {
    setImmediate(() =>
      setImmediate(() => {
        if (this.closed || event !== this.eventCount || this.firstPendingAt === undefined) return;
        if (this.renames.confirm()) this.reload();
      }),
    );
  }

  private rescan(): void {
    if (this.closed) return;
    this.arm();
    if (this.computeFingerprint() !== this.fingerprint) this.reload();
  }

  private reload(): void {
    if (this.closed) return;
    this.firstPendingAt = undefined;
    clearTimeout(this.debounceTimer);
    this.renames.reset();
    let snap: RegistrySnapshot;
    try {
      this.arm();
      // Fingerprint first: a change landing during load() then shows up at the next rescan.
      this.fingerprint = this.computeFingerprint();
      snap = this.loader.load();
    } catch (err) {
      // load() reports file problems in the snapshot; reaching here is a bug or a hard I/O fault.
      if (this.listenerCount('error') > 0) this.emit('error', err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (snap !== this.last) {
      this.last = snap;
      this.emit('snapshot', snap);
    }
  }

  /** Cheap identity of everything the loader would read: directory inodes, file names, sizes, mtimes. */
  private computeFingerprint(): string {
    const parts: string[] = [];
    for (const dir of this.dirs()) {
      let names: string[];
      try {
        names = fs.readdirSync(dir).filter(isDefinitionFileName).sort();
        parts.push(`${dir}#${fs.statSync(dir).ino}`);
      } catch (err) {
        parts.push(`${dir}!${(err as NodeJS.ErrnoException).code ?? 'error'}`);
        continue;
      }
      for (const name of names) {
        try {
          const st = fs.statSync(childPath(dir, name, process.platform));
          parts.push(`${name}:${st.ino}:${st.size}:${st.mtimeMs}`);
        } catch {
          parts.push(`${name}:gone`);
        }
      }
    }
    return parts.join('\n');
  }
}
