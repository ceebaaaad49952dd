import type { ChildProcess } from 'node:child_process';

/**
 * Stops a child started with `detached: true` together with everything it spawned (its process
 * group): SIGTERM first, SIGKILL after a grace period for servers that ignore it.
 */
export async function killProcessGroup(child: ChildProcess, graceMs = 2000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  signalGroup(pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  // The leader may exit on SIGTERM while a grandchild ignores it; the group must still go.
  signalGroup(pid, 'SIGKILL');
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try { process.kill(pid, signal); } catch { /* already gone */ }
  }
}
