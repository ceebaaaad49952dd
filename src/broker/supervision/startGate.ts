// How many upstreams already listed from the catalog cache may be in their start (spawn, handshake,
// first lists) at once. Fifty Node servers starting together on two cores leave the broker a fiftieth
// of the CPU, so the cached catalog it could serve waits behind their boot; a few at a time keeps it
// answering. Starts that someone waits for (no cache yet, a request, a crash restart) do not queue.
//
// At broker start the gate is also held shut until the first tools/list has been answered (or a
// short grace has passed): a new window's client is waiting for that list, while nobody waits for
// the cache-listed servers' boot, which would otherwise take both cores just as the list is asked.
import * as os from 'node:os';

export class StartGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private held?: { opened: Promise<void>; open: () => void; timer: NodeJS.Timeout };

  constructor(readonly limit = Math.max(4, 2 * os.availableParallelism())) {}

  /** Queued starts wait until open() is called, or at most `maxMs`. */
  hold(maxMs: number): void {
    if (this.held) return;
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const timer = setTimeout(() => this.open(), maxMs);
    timer.unref();
    this.held = { opened, open, timer };
  }

  /** Lets held starts through (idempotent). */
  open(): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    clearTimeout(held.timer);
    held.open();
  }

  /** Resolves with the release function once a slot is free (release is idempotent). */
  async enter(): Promise<() => void> {
    if (this.held) await this.held.opened;
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes to the next in line, or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}
