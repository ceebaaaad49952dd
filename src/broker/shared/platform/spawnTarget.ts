// What a stdio launch becomes as one spawn call on a given OS: the sandbox wrapper in front on POSIX,
// cmd.exe with an escaped command line for .cmd/.bat shims on Windows.
import { windowsSpawn } from './windowsCommand';

export interface SpawnTarget {
  file: string;
  args: string[];
  windowsVerbatimArguments: boolean;
}

export interface SpawnRequest {
  command: string;
  args: readonly string[];
  /** A sandbox prefix (unshare, sandbox-exec) that runs the command; POSIX only. */
  wrapper?: readonly string[];
  /** Where the command was found (findExecutable); on Windows needed to tell .exe from .cmd. */
  resolved?: string;
  /** cmd.exe's path (%ComSpec%) on Windows. */
  comspec?: string;
}

export function spawnTarget(platform: NodeJS.Platform, request: SpawnRequest): SpawnTarget {
  const { command, args, wrapper, resolved } = request;
  if (platform === 'win32' && resolved) return windowsSpawn(resolved, args, request.comspec || 'cmd.exe');
  if (wrapper && wrapper.length > 0) {
    return { file: wrapper[0], args: [...wrapper.slice(1), command, ...args], windowsVerbatimArguments: false };
  }
  return { file: command, args: [...args], windowsVerbatimArguments: false };
}
