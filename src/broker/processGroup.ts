import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

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

/**
 * Resolves a command the way the OS would (absolute, relative to cwd, or on PATH), so "command not
 * found" is reported as such even when the command runs behind a wrapper like `unshare`.
 */
export function findExecutable(command: string, pathVar: string | undefined, cwd: string): string | undefined {
  const isExec = (p: string): boolean => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/') || (process.platform === 'win32' && command.includes('\\'))) {
    const full = path.resolve(cwd, command);
    return isExec(full) ? full : undefined;
  }
  const exts = process.platform === 'win32' ? ['', '.exe', '.cmd', '.bat'] : [''];
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(path.resolve(cwd, dir), command + ext);
      if (isExec(candidate)) return candidate;
    }
  }
  return undefined;
}
