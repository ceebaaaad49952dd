// How many upstreams already listed from the catalog cache may be in their start (spawn, handshake,
// first lists) at once. Fifty Node servers starting together on two cores leave the broker a fiftieth
// of the CPU, so the cached catalog it could serve waits behind their boot; a few at a time keeps it
// answering. Starts that someone waits for (no cache yet, a request, a crash restart) do not queue.
import * as os from 'node:os';

export class StartGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit = Math.max(4, 2 * os.availableParallelism())) {}

  /** Resolves with the release function once a slot is free (release is idempotent). */
  async enter(): Promise<() => void> {
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
