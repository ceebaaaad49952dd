// Files only their owner may read: tokens, approvals, discovery records, the audit and the broker log.
// On POSIX that is mode 0700 for directories and 0600 for files; on Windows, where modes mean nothing,
// an ACL naming the user alone (platform/userFiles.ts says which, as pure logic).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomicSync } from '../../registry/atomicWrite';
import { privateProtection } from './platform/userFiles';

/** Directories this process already narrowed on Windows: each icacls run is a process start. */
const restrictedDirs = new Set<string>();

/** Makes `target` readable by its owner alone (POSIX mode or Windows ACL). */
function protect(target: string, kind: 'file' | 'directory', fd?: number): void {
  const how = privateProtection(process.platform, process.env, target, kind);
  if (how.how === 'acl') execFileSync(how.command, how.args, { stdio: 'ignore', windowsHide: true });
  else if (fd !== undefined) fs.fchmodSync(fd, how.mode);
  else fs.chmodSync(target, how.mode);
}

export function ensurePrivateDir(dir: string): void {
  const created = fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') {
    if (created === undefined && restrictedDirs.has(dir)) return;
    protect(dir, 'directory');
    restrictedDirs.add(dir);
    return;
  }
  try {
    protect(dir, 'directory');
  } catch {
    /* not ours to fix (e.g. a shared tmp); files stay 0600 */
  }
}

/** Writes a file readable only by the current user, atomically (registry/atomicWrite.ts). */
export function writePrivateFile(file: string, content: string): void {
  ensurePrivateDir(path.dirname(file));
  writeFileAtomicSync(file, content, {
    mode: 0o600,
    // Windows ignores the mode: narrow the ACL before the file takes its name, so no reader sees it open.
    beforeRename: process.platform === 'win32' ? (tmp) => protect(tmp, 'file') : undefined,
  });
}

/**
 * Opens `file` for appending, private to the user. A new file is private from its first byte (0600 at
 * creation; on Windows it inherits the private directory's single entry); one that already existed,
 * perhaps from a version that did not narrow it, is narrowed before anything more is written to it.
 */
export function openPrivateAppend(file: string): number {
  ensurePrivateDir(path.dirname(file));
  const fd = fs.openSync(file, 'a', 0o600);
  try {
    protect(file, 'file', fd);
  } catch (err) {
    fs.closeSync(fd);
    throw new Error(`cannot make ${file} private to the current user: ${(err as Error).message}`, { cause: err });
  }
  return fd;
}

/**
 * Moves `file` to `<file>.1` (replacing an older one) and keeps the moved copy private too: a rename
 * keeps a file's mode and ACL, but a copy left by an older version may be wider than 0600.
 */
export function rotatePrivateFile(file: string): void {
  const old = `${file}.1`;
  fs.renameSync(file, old);
  protect(old, 'file');
}
