// Who did what, when, how long it took and how it ended: one JSON line per event, per workspace,
// rotated by size. Arguments are never written (they may hold secrets); known secret values are
// scrubbed from anything that is. Lines are batched: a burst of calls costs one write.
import * as fs from 'node:fs';
import { openPrivateAppend, rotatePrivateFile } from '../shared/privateFiles';

/**
 * One line of the audit log (audit.jsonl), as written: `at` and `event` always; the rest by event.
 * `call` / `facade`: client, operator, server (calls), tool, ms, outcome, and on failure error and
 * code (the JSON-RPC error code; -32003 is a refusal), `isError` when the tool answered with an
 * error result. Never arguments or results.
 */
export interface AuditRecord {
  at: string;
  event: string;
  client?: string;
  operator?: boolean;
  server?: string;
  tool?: string;
  method?: string;
  ms?: number;
  outcome?: 'ok' | 'error';
  error?: string;
  code?: number;
  isError?: boolean;
  /** The OpenTelemetry trace the call belongs to, while telemetry is on. */
  traceId?: string;
  [field: string]: unknown;
}

/** How much of a file is read at a time when reading it backwards. */
const CHUNK = 64 * 1024;

/** The lines of a file from the last to the first, read backwards in chunks (none if it is missing). */
function* linesFromEnd(file: string): Generator<string> {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return;
  }
  try {
    let pos = fs.fstatSync(fd).size;
    // Bytes, not strings, across chunks: a chunk boundary may split a UTF-8 character.
    let carry = Buffer.alloc(0);
    while (pos > 0) {
      const n = Math.min(CHUNK, pos);
      pos -= n;
      const chunk = Buffer.alloc(n);
      fs.readSync(fd, chunk, 0, n, pos);
      const data = Buffer.concat([chunk, carry]);
      let end = data.length;
      for (let i = data.length - 1; i >= 0; i--) {
        if (data[i] !== 0x0a) continue;
        if (i + 1 < end) yield data.toString('utf8', i + 1, end);
        end = i;
      }
      carry = data.subarray(0, end);
    }
    if (carry.length) yield carry.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `new Date().toISOString()` for the time now, at a fraction of its cost: the text up to the minute
 * is made once a minute, the seconds and milliseconds are appended (every forwarded call asks).
 */
export class IsoClock {
  private minuteStart = 0;
  private minuteText = '';

  now(ms = Date.now()): string {
    const offset = ms - this.minuteStart;
    if (offset < 0 || offset >= 60_000) {
      this.minuteStart = ms - (ms % 60_000);
      this.minuteText = new Date(this.minuteStart).toISOString().slice(0, 17); // YYYY-MM-DDTHH:MM:
      return this.now(ms);
    }
    const seconds = Math.floor(offset / 1000);
    const millis = offset % 1000;
    return `${this.minuteText}${seconds < 10 ? '0' : ''}${seconds}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
  }
}

export class AuditLog {
  private readonly clock = new IsoClock();
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
    this.pending.push(`{"at":"${this.clock.now()}"${fields.length > 2 ? `,${fields.slice(1)}` : '}'}`);
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

  /**
   * The newest `limit` entries `keep` accepts, oldest first: from the current file, then the rotated
   * one (`.1`) if that is not enough. Pending entries are written first, so a call just answered is in.
   */
  tail(limit: number, keep: (entry: AuditRecord) => boolean = () => true): AuditRecord[] {
    this.flush();
    const out: AuditRecord[] = [];
    for (const file of [this.file, `${this.file}.1`]) {
      for (const line of linesFromEnd(file)) {
        let entry: AuditRecord;
        try {
          entry = JSON.parse(line) as AuditRecord;
        } catch {
          continue; // a line cut short by a crash mid-write
        }
        if (!entry || typeof entry !== 'object' || !keep(entry)) continue;
        out.push(entry);
        if (out.length >= limit) return out.reverse();
      }
    }
    return out.reverse();
  }

  /** Where the entries are written (the rotated file is this path + `.1`). */
  get path(): string {
    return this.file;
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
