// Carries out a stop plan (platform/stopPlan.ts) on a real child: the only part that signals, runs taskkill
// or ends a Job Object.
import { execFile, type ChildProcess } from 'node:child_process';
import type { StopStep } from './stopPlan';
import { endTree } from './windowsJob';

/** Runs `steps` in order; once the leader has exited only the steps marked `always` still run. */
export async function runStopPlan(child: ChildProcess, steps: readonly StopStep[]): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  let exited = child.exitCode !== null || child.signalCode !== null;
  const exit = new Promise<void>((resolve) => {
    if (exited) resolve();
    else
      child.once('exit', () => {
        exited = true;
        resolve();
      });
  });
  for (const step of steps) {
    const always = 'always' in step && step.always === true;
    if (exited && !always) continue;
    switch (step.kind) {
      case 'close-stdin':
        child.stdin?.end();
        break;
      case 'wait':
        await waitForExit(exit, step.ms);
        break;
      case 'signal-group':
        signalGroup(pid, step.signal);
        break;
      case 'run':
        await runQuietly(step.file, step.args);
        break;
      case 'end-job':
        endTree(child);
        break;
      case 'kill-leader':
        try {
          child.kill('SIGKILL');
        } catch {
          /* already gone */
        }
        break;
    }
  }
}

function waitForExit(exit: Promise<void>, ms: number): Promise<void> {
  if (ms === Number.POSITIVE_INFINITY) return exit;
  if (ms <= 0) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    exit,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => {
    clearTimeout(timer);
  });
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** Runs a helper (taskkill) and waits for it; its failure (the tree already gone) is not an error here. */
function runQuietly(file: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve) => {
    execFile(file, args, { windowsHide: true, timeout: 10_000 }, () => resolve());
  });
}
