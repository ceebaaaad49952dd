// The one way Switchboard replaces a file: the registry's definitions, the workspace's lockfile, agents'
// config files and every per-user file (tokens, approvals, pins). A reader never sees it half-written,
// even with several processes writing at once, and a crash leaves the old file or the new one:
// the text goes to a unique temp file in the same directory, is fsynced, renamed over the target
// (atomic on POSIX and NTFS), and the directory is fsynced so the rename itself survives a crash.
// The new file keeps the replaced one's mode, and its owner when root writes someone else's file.
// Sync and async forms: per-user state is written from places that cannot wait (token creation).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface AtomicWriteOptions {
  /** The new file's mode; default: the mode of the file it replaces, else 0644 (umask applies). */
  mode?: number;
  /** Runs on the finished temp file before it takes the target's name (Windows: narrow its ACL). */
  beforeRename?(tmp: string): void;
}

const RETRYABLE_RENAME = new Set(['EPERM', 'EACCES', 'EBUSY']);
const RENAME_ATTEMPTS = 20;

/** A temp file next to `target`, hidden and unique to this write. */
function tempPathFor(target: string): string {
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
}

/** On Windows a reader holding the target open makes a rename fail for a moment; POSIX never retries. */
function retriesRename(err: unknown, attempt: number): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return process.platform === 'win32' && RETRYABLE_RENAME.has(code) && attempt < RENAME_ATTEMPTS;
}

function modeFor(target: string, opts: AtomicWriteOptions): number {
  if (opts.mode !== undefined) return opts.mode;
  try {
    return fs.statSync(target).mode & 0o777;
  } catch {
    return 0o644;
  }
}

/**
 * The owner to give the new file: the replaced file's, when this process runs as root and it
 * belonged to someone else (a container, `sudo`), so the user can still write their own file.
 */
function ownerToKeep(target: string): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const { uid, gid } = fs.statSync(target);
    return uid !== 0 || gid !== 0 ? { uid, gid } : undefined;
  } catch {
    return undefined; // a new file
  }
}

function fsyncDirSync(dir: string): void {
  // Directories cannot be opened for fsync on Windows; there the rename itself is durable enough.
  if (process.platform === 'win32') return;
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Atomically replaces `target` with `text` (see the header). */
export async function writeFileAtomic(target: string, text: string, opts: AtomicWriteOptions = {}): Promise<void> {
  const tmp = tempPathFor(target);
  let renamed = false;
  try {
    const owner = ownerToKeep(target);
    const fh = await fs.promises.open(tmp, 'wx', modeFor(target, opts));
    try {
      if (owner) await fh.chown(owner.uid, owner.gid);
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    opts.beforeRename?.(tmp);
    for (let attempt = 0; ; attempt++) {
      try {
        await fs.promises.rename(tmp, target);
        break;
      } catch (err) {
        if (!retriesRename(err, attempt)) throw err;
        await new Promise((r) => setTimeout(r, 5 * (attempt + 1)));
      }
    }
    renamed = true;
    await fsyncDir(path.dirname(target));
  } finally {
    if (!renamed) await fs.promises.rm(tmp, { force: true });
  }
}

/** The same as writeFileAtomic, for callers that cannot wait. */
export function writeFileAtomicSync(target: string, text: string, opts: AtomicWriteOptions = {}): void {
  const tmp = tempPathFor(target);
  let renamed = false;
  try {
    const owner = ownerToKeep(target);
    const fd = fs.openSync(tmp, 'wx', modeFor(target, opts));
    try {
      if (owner) fs.fchownSync(fd, owner.uid, owner.gid);
      fs.writeFileSync(fd, text, 'utf8');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    opts.beforeRename?.(tmp);
    for (let attempt = 0; ; attempt++) {
      try {
        fs.renameSync(tmp, target);
        break;
      } catch (err) {
        if (!retriesRename(err, attempt)) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 * (attempt + 1));
      }
    }
    renamed = true;
    fsyncDirSync(path.dirname(target));
  } finally {
    if (!renamed) fs.rmSync(tmp, { force: true });
  }
}

/** Makes a removal in `dir` (or a rename into it) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await fs.promises.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
