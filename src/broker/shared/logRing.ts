/** A bounded log of lines: old lines fall off so a chatty upstream cannot grow the broker's memory. */
export interface LogLine {
  at: number;
  stream: 'stderr' | 'broker';
  text: string;
}

export class LogRing {
  private readonly lines: LogLine[] = [];
  private partial = '';
  /**
   * Counts lines pushed (not capped), so a caller can mark where a launch began and a follower where
   * it stopped reading. It starts at the creation time in µs rather than 0: a ring that replaces
   * another (the server redefined) continues above every cursor handed out by the old one.
   */
  private pushed = Date.now() * 1000;
  private readonly base = this.pushed;

  constructor(
    private readonly maxLines = 500,
    private readonly maxLineLength = 2000,
  ) {}

  /** Appends a raw chunk, splitting on newlines; an unterminated tail waits for the next chunk. */
  appendChunk(chunk: string, stream: LogLine['stream'] = 'stderr'): void {
    const text = this.partial + chunk;
    const parts = text.split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    if (this.partial.length > this.maxLineLength) {
      parts.push(this.partial);
      this.partial = '';
    }
    for (const part of parts) this.push(part, stream);
  }

  push(text: string, stream: LogLine['stream'] = 'broker'): void {
    const line = text.length > this.maxLineLength ? text.slice(0, this.maxLineLength) + ' …[truncated]' : text;
    this.lines.push({ at: Date.now(), stream, text: line });
    this.pushed++;
    if (this.lines.length > this.maxLines) this.lines.splice(0, this.lines.length - this.maxLines);
  }

  tail(n = 50): LogLine[] {
    return this.lines.slice(-n);
  }

  /**
   * The lines pushed after `cursor` (a previous `next`, or mark()), at most `n` of the newest, for a
   * follower: `next` is where to continue, `skipped` how many it missed (fell off the ring, or beyond `n`).
   */
  since(cursor: number, n = 500): { lines: LogLine[]; next: number; skipped: number } {
    const from = Math.max(this.base, Math.min(cursor, this.pushed));
    const fresh = this.pushed - from;
    const kept = Math.min(fresh, this.lines.length, n);
    return { lines: this.lines.slice(this.lines.length - kept), next: this.pushed, skipped: fresh - kept };
  }

  /** A mark for stderrSince(): the count of lines pushed so far. */
  mark(): number {
    return this.pushed;
  }

  /**
   * The last `n` lines the process wrote to stderr after `mark`: what one launch said, without the
   * broker's own lifecycle lines ("stopped: …") of earlier launches, which would otherwise nest.
   */
  stderrSince(mark: number, n = 5): string {
    const fresh = Math.min(this.pushed - mark, this.lines.length);
    return this.lines
      .slice(this.lines.length - fresh)
      .filter((l) => l.stream === 'stderr')
      .slice(-n)
      .map((l) => l.text)
      .join('\n');
  }

  lastLines(n = 5): string {
    return this.tail(n)
      .map((l) => l.text)
      .join('\n');
  }
}
