// A forwarded call's time limit that can be paused: it must not run out while a person answers a
// request the server sent for that call (an elicitation, a sampling consent). The answer counts as
// progress: once it is given, the server has its whole time limit again to finish the call.

export class CallTimer {
  private timer?: NodeJS.Timeout;
  private holds = 0;
  private done = false;

  constructor(
    private readonly ms: number,
    private readonly fire: () => void,
  ) {
    this.arm();
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.done = true;
      this.fire();
    }, this.ms);
  }

  /** Progress came in: the full time again (from when it resumes, if paused). */
  refresh(): void {
    if (this.done || this.holds > 0) return;
    clearTimeout(this.timer);
    this.arm();
  }

  /** Stops the clock until every pause is matched by a resume. */
  pause(): void {
    if (this.done || this.holds++ > 0) return;
    clearTimeout(this.timer);
  }

  /** The last pause ended (the person answered): the full time limit from now. */
  resume(): void {
    if (this.done || this.holds === 0) return;
    if (--this.holds === 0) this.arm();
  }

  clear(): void {
    this.done = true;
    clearTimeout(this.timer);
  }
}
