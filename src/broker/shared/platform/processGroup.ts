import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stopPlan } from './stopPlan';
import { runStopPlan } from './stopProcess';
import { resolveWindowsCommand, windowsEnvValue } from './windowsCommand';
import { hasJob } from './windowsJob';

/**
 * Stops a child started with `detached: true` together with everything it spawned: on POSIX its
 * process group (SIGTERM first, SIGKILL after a grace period for servers that ignore it), on Windows
 * its process tree (stdin closed, the grace period, then its Job Object ended, or `taskkill /T /F`
 * where it has none).
 */
export async function killProcessGroup(child: ChildProcess, graceMs = 2000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  // POSIX: no wait after closing stdin (callers already closed it), so Linux stops exactly as before.
  const stdinGraceMs = process.platform === 'win32' ? graceMs : 0;
  const timing = { stdinGraceMs, termGraceMs: graceMs, job: hasJob(child) };
  await runStopPlan(child, stopPlan(process.platform, pid, timing));
}

/**
 * Resolves a command the way the OS would (absolute, relative to cwd, or on PATH; on Windows with
 * PATHEXT), so "command not found" is reported as such even when the command runs behind a wrapper
 * like `unshare`, or through cmd.exe.
 */
export function findExecutable(command: string, pathVar: string | undefined, cwd: string): string | undefined {
  const isFile = (p: string): boolean => {
    try {
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (process.platform === 'win32') {
    return resolveWindowsCommand(command, { pathVar, pathExt: windowsEnvValue(process.env, 'PATHEXT'), cwd, isFile });
  }
  const isExec = (p: string): boolean => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return isFile(p);
    } catch {
      return false;
    }
  };
  if (command.includes('/')) {
    const full = path.resolve(cwd, command);
    return isExec(full) ? full : undefined;
  }
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(path.resolve(cwd, dir), command);
    if (isExec(candidate)) return candidate;
  }
  return undefined;
}
