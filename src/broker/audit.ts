// Who did what, when, how long it took and how it ended: one JSON line per event, per workspace,
// rotated by size. Arguments are never written (they may hold secrets); known secret values are
// scrubbed from anything that is. Lines are batched: a burst of calls costs one write.
import * as fs from 'node:fs';
import { openPrivateAppend, rotatePrivateFile } from './privateFiles';

export class AuditLog {
  private fd?: number;
  private size = 0;
  private pending: string[] = [];
  private scheduled = false;

  constructor(
    private readonly file: string,
    private readonly secrets: () => readonly string[],
    private readonly maxBytes = 5 * 1024 * 1024,
  ) {}

  write(entry: Record<string, unknown>): void {
    // `at` first, without copying the entry: this runs on every forwarded call.
    const fields = JSON.stringify(entry);
    this.pending.push(`{"at":"${new Date().toISOString()}"${fields.length > 2 ? `,${fields.slice(1)}` : '}'}`);
    if (!this.scheduled) {
      this.scheduled = true;
      // One write per 50 ms at most, not one per call; close() flushes, so only a SIGKILL can
      // lose the last 50 ms of entries.
      setTimeout(() => this.flush(), 50).unref();
    }
  }

  /** Writes what is pending now (also called on close, so nothing is lost at shutdown). */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    let text = this.pending.join('\n') + '\n';
    this.pending = [];
    for (const secret of this.secrets())
      if (secret.length >= 4 && text.includes(secret)) text = text.split(secret).join('[redacted]');
    try {
      if (this.fd === undefined) this.open();
      if (this.size + text.length > this.maxBytes) this.rotate();
      fs.writeSync(this.fd!, text);
      this.size += Buffer.byteLength(text);
    } catch {
      // Auditing must never break a call; the next flush retries opening the file.
      this.closeFile();
    }
  }

  private open(): void {
    this.fd = openPrivateAppend(this.file);
    this.size = fs.fstatSync(this.fd).size;
  }

  private rotate(): void {
    this.closeFile();
    rotatePrivateFile(this.file);
    this.open();
  }

  private closeFile(): void {
    if (this.fd !== undefined) {
      try {
        fs.closeSync(this.fd);
      } catch {
        /* already closed */
      }
    }
    this.fd = undefined;
  }

  close(): void {
    this.flush();
    this.closeFile();
  }
}
