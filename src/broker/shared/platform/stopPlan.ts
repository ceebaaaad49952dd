// The order in which a stdio server is stopped, per OS, as data: the MCP stdio shutdown (close its
// stdin, wait, then SIGTERM, then SIGKILL) with the whole process tree going, not just the leader.
// processGroup.ts carries a plan out; keeping it pure lets every OS's plan be tested on any OS.

export type StopStep =
  | { kind: 'close-stdin' }
  /** Wait up to `ms` for the leader to exit; the plan ends early once it has (but see `always`). */
  | { kind: 'wait'; ms: number }
  /** POSIX: signal the process group (-pid), falling back to the pid alone when there is no group. */
  | { kind: 'signal-group'; signal: 'SIGTERM' | 'SIGKILL'; always?: boolean }
  /** Windows: run a program (taskkill) that stops the tree; `always` runs it even after the leader exited. */
  | { kind: 'run'; file: string; args: string[]; always?: boolean }
  /** Windows: TerminateProcess on the leader alone, for when taskkill could not run. */
  | { kind: 'kill-leader' }
  /** Windows: TerminateJobObject on the server's job (windowsJob.ts): every member, the leader gone or not. */
  | { kind: 'end-job'; always: true };

export interface StopTiming {
  /** After stdin is closed: how long a server gets to exit on its own. */
  stdinGraceMs: number;
  /** After the polite signal: how long before the forced one. */
  termGraceMs: number;
  /** Windows: the server's tree is in a Job Object of ours (windowsJob.ts). */
  job?: boolean;
}

/** `taskkill` arguments that end a process and every process it started, without asking. */
export function taskkillTreeArgs(pid: number): string[] {
  return ['/T', '/F', '/PID', String(pid)];
}

/**
 * The steps that stop process `pid` (started detached, so on POSIX it leads its own group).
 * POSIX: stdin, wait, SIGTERM to the group, wait, SIGKILL; then SIGKILL to the group once more even if
 * the leader is gone, for a grandchild that ignored SIGTERM. Windows has no signals a console program
 * can catch, so after the stdin grace the tree is ended with `taskkill /T /F` while the leader still
 * lives (/T finds children through it; after it exited, its pid may already belong to someone else).
 * With a Job Object the job is ended instead, and always: it holds the processes the leader left
 * behind when it exited, which taskkill can no longer find.
 */
export function stopPlan(platform: NodeJS.Platform, pid: number, timing: StopTiming): StopStep[] {
  if (platform === 'win32' && timing.job) {
    return [
      { kind: 'close-stdin' },
      { kind: 'wait', ms: timing.stdinGraceMs },
      { kind: 'end-job', always: true },
      { kind: 'wait', ms: timing.termGraceMs },
      { kind: 'kill-leader' },
      { kind: 'wait', ms: Number.POSITIVE_INFINITY },
    ];
  }
  if (platform === 'win32') {
    return [
      { kind: 'close-stdin' },
      { kind: 'wait', ms: timing.stdinGraceMs },
      { kind: 'run', file: 'taskkill', args: taskkillTreeArgs(pid) },
      { kind: 'wait', ms: timing.termGraceMs },
      { kind: 'kill-leader' },
      { kind: 'wait', ms: Number.POSITIVE_INFINITY },
    ];
  }
  const steps: StopStep[] = [{ kind: 'close-stdin' }];
  if (timing.stdinGraceMs > 0) steps.push({ kind: 'wait', ms: timing.stdinGraceMs });
  steps.push(
    { kind: 'signal-group', signal: 'SIGTERM' },
    { kind: 'wait', ms: timing.termGraceMs },
    { kind: 'signal-group', signal: 'SIGKILL' },
    { kind: 'wait', ms: Number.POSITIVE_INFINITY },
    { kind: 'signal-group', signal: 'SIGKILL', always: true },
  );
  return steps;
}
