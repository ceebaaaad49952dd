// A forwarded call's time limit that can be paused: it must not run out while a person answers a
// request the server sent for that call (an elicitation, a sampling consent), and goes on after.

export class CallTimer {
  private timer?: NodeJS.Timeout;
  private deadline = 0;
  private remaining: number;
  private holds = 0;
  private done = false;

  constructor(
    private readonly ms: number,
    private readonly fire: () => void,
  ) {
    this.remaining = ms;
    this.arm(ms);
  }

  private arm(ms: number): void {
    this.deadline = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.done = true;
      this.fire();
    }, ms);
  }

  /** Progress came in: the full time again (from when it resumes, if paused). */
  refresh(): void {
    if (this.done) return;
    if (this.holds > 0) {
      this.remaining = this.ms;
      return;
    }
    clearTimeout(this.timer);
    this.arm(this.ms);
  }

  /** Stops the clock until every pause is matched by a resume. */
  pause(): void {
    if (this.done || this.holds++ > 0) return;
    clearTimeout(this.timer);
    this.remaining = Math.max(0, this.deadline - Date.now());
  }

  /** Goes on with the time that was left when the first pause came. */
  resume(): void {
    if (this.done || this.holds === 0) return;
    if (--this.holds === 0) this.arm(this.remaining);
  }

  clear(): void {
    this.done = true;
    clearTimeout(this.timer);
  }
}
