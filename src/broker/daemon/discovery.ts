// Finding the broker that serves a workspace root, and agreeing on a single one when several
// starters (windows, terminals) race: an exclusive lock file decides who starts it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensurePrivateDir } from '../shared/privateFiles';
import { isProcessAlive, readRecord, type BrokerRecord } from './runtime';
import { rootId, type RuntimePaths } from '../shared/userState';

/** A record counts only if its process lives and its endpoint answers as the broker for this root. */
export async function liveRecord(paths: RuntimePaths, root: string): Promise<BrokerRecord | undefined> {
  const record = readRecord(paths.recordFile);
  if (!record || !isProcessAlive(record.pid)) return undefined;
  try {
    const res = await fetch(`http://127.0.0.1:${record.port}/health`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { instance?: string };
    return body.instance === rootId(root) ? record : undefined;
  } catch {
    return undefined;
  }
}

export type StartLock = { release(): void };

/**
 * Takes the start lock, or resolves `undefined` when another starter holds it (the caller then
 * waits for that starter's record). A lock whose holder died is taken over.
 */
export function tryLock(paths: RuntimePaths): StartLock | undefined {
  // The lock holds only a pid, but shares the directory of the discovery records: keep that private.
  ensurePrivateDir(path.dirname(paths.lockFile));
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(paths.lockFile, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return {
        release() {
          try {
            if (fs.readFileSync(paths.lockFile, 'utf8').trim() === String(process.pid)) fs.unlinkSync(paths.lockFile);
          } catch {
            /* gone already */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder: number;
      let age: number;
      try {
        holder = Number(fs.readFileSync(paths.lockFile, 'utf8').trim());
        age = Date.now() - fs.statSync(paths.lockFile).mtimeMs;
      } catch {
        continue; /* released meanwhile: retry */
      }
      // A holder that died (or a lock left by a crash and reused pid after a long time) is stale.
      if (!Number.isInteger(holder) || !isProcessAlive(holder) || age > 60_000) {
        try {
          fs.unlinkSync(paths.lockFile);
        } catch {
          /* someone else took it over */
        }
        continue;
      }
      return undefined;
    }
  }
  return undefined;
}

export async function waitForRecord(
  paths: RuntimePaths,
  root: string,
  timeoutMs: number,
): Promise<BrokerRecord | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const record = await liveRecord(paths, root);
    if (record) return record;
    // The starter we were waiting for may have died: let the caller try to start instead.
    if (!fs.existsSync(paths.lockFile)) return undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}
