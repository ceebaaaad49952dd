// The output file of a detached broker (`<workspace dir>/broker.log`): rotated at launch, its last
// lines quoted when a launch fails, and followed line by line for the editor's log channel.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openPrivateAppend, rotatePrivateFile } from '../shared/privateFiles';
import type { RuntimePaths } from '../shared/userState';

/** Past this size the next launch moves the log to `broker.log.1` (one old copy is kept). */
export const MAX_LOG_BYTES = 2 * 1024 * 1024;

export function brokerLogFile(paths: RuntimePaths): string {
  return path.join(paths.workspaceDir, 'broker.log');
}

export function rotateLog(file: string, maxBytes = MAX_LOG_BYTES): void {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    return; // no log yet
  }
  if (size > maxBytes) rotatePrivateFile(file);
}

/**
 * Opens the log a new broker writes to (rotated first), private to the user like every per-user
 * file: it holds the broker's messages, which name servers, files and errors. Returns the descriptor
 * the child inherits and the offset its output starts at.
 */
export function openBrokerLog(file: string, maxBytes = MAX_LOG_BYTES): { fd: number; startOffset: number } {
  rotateLog(file, maxBytes);
  const fd = openPrivateAppend(file);
  return { fd, startOffset: fs.fstatSync(fd).size };
}

/**
 * The last `count` human-readable lines written after `from`, joined with ` | ` for an error
 * message. The broker's JSON lines (`--json` ready events) say nothing a person needs there.
 */
export function readTail(file: string, from: number, count = 5): string {
  try {
    const text = fs.readFileSync(file, 'utf8').slice(from).trim();
    const lines = text.split('\n').filter((l) => !l.startsWith('{'));
    return lines.slice(-count).join(' | ');
  } catch {
    return '';
  }
}

/** Follows a growing file (fs.watch, no polling) and hands each complete line to `sink`. */
export class LogTail {
  private watcher?: fs.FSWatcher;
  private partial = '';
  private reading = false;
  private again = false;

  constructor(
    private readonly file: string,
    private offset: number,
    private readonly sink: (line: string) => void,
  ) {
    try {
      this.watcher = fs.watch(file, () => this.read());
      this.watcher.on('error', () => this.close());
    } catch {
      /* no log to follow */
    }
    this.read();
  }

  private read(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        let size: number;
        try {
          size = fs.statSync(this.file).size;
        } catch {
          return;
        }
        if (size < this.offset) this.offset = 0; // rotated
        if (size === this.offset) continue;
        const fd = fs.openSync(this.file, 'r');
        try {
          const buf = Buffer.alloc(Math.min(size - this.offset, 1024 * 1024));
          const n = fs.readSync(fd, buf, 0, buf.length, this.offset);
          this.offset += n;
          const text = this.partial + buf.subarray(0, n).toString('utf8');
          const lines = text.split('\n');
          this.partial = lines.pop() ?? '';
          for (const line of lines) if (line.trim()) this.sink(line);
        } finally {
          fs.closeSync(fd);
        }
      } while (this.again);
    } finally {
      this.reading = false;
    }
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}
