// Who did what, when, how long it took and how it ended: one JSON line per event, per workspace,
// rotated by size. Arguments are never written (they may hold secrets); known secret values are
// scrubbed from anything that is.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensurePrivateDir } from './runtime';

export class AuditLog {
  private fd?: number;
  private size = 0;

  constructor(private readonly file: string, private readonly secrets: () => readonly string[], private readonly maxBytes = 5 * 1024 * 1024) {}

  write(entry: Record<string, unknown>): void {
    let line = JSON.stringify({ at: new Date().toISOString(), ...entry });
    for (const secret of this.secrets()) if (secret.length >= 4 && line.includes(secret)) line = line.split(secret).join('[redacted]');
    try {
      if (this.fd === undefined) this.open();
      if (this.size + line.length + 1 > this.maxBytes) this.rotate();
      fs.writeSync(this.fd!, line + '\n');
      this.size += Buffer.byteLength(line) + 1;
    } catch {
      // Auditing must never break a call; the next write retries opening the file.
      this.close();
    }
  }

  private open(): void {
    ensurePrivateDir(path.dirname(this.file));
    this.fd = fs.openSync(this.file, 'a', 0o600);
    this.size = fs.fstatSync(this.fd).size;
  }

  private rotate(): void {
    this.close();
    fs.renameSync(this.file, `${this.file}.1`);
    this.open();
  }

  close(): void {
    if (this.fd !== undefined) {
      try { fs.closeSync(this.fd); } catch { /* already closed */ }
    }
    this.fd = undefined;
  }
}
