// Puts each stdio server's process tree in a Windows Job Object and ends the whole job when the server
// stops, through kernel32 called with koffi (an optional, native dependency: where it is not installed,
// or off Windows, nothing here does anything and the stop plan falls back to taskkill /T).
//
// Limit: Node cannot start a process suspended, so the leader runs for a moment before it joins the
// job; a process it starts in that moment is not in the job. cmd.exe (every .cmd shim) and node take
// far longer than that to start anything.
import type { ChildProcess } from 'node:child_process';
import {
  extendedLimitInformation,
  JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
  jobUnavailableNote,
  PROCESS_SET_QUOTA,
  PROCESS_TERMINATE,
  serverJobLimitFlags,
} from './jobObject';

type Handle = unknown;
interface Kernel32 {
  CreateJobObjectW(attributes: null, name: null): Handle;
  SetInformationJobObject(job: Handle, infoClass: number, info: Buffer, length: number): boolean;
  OpenProcess(access: number, inherit: boolean, pid: number): Handle;
  AssignProcessToJobObject(job: Handle, process: Handle): boolean;
  TerminateJobObject(job: Handle, exitCode: number): boolean;
  CloseHandle(handle: Handle): boolean;
  GetLastError(): number;
}
interface KoffiLibrary {
  func(definition: string): (...args: unknown[]) => unknown;
}
interface KoffiModule {
  load(name: string): KoffiLibrary;
}

let kernel32: Kernel32 | undefined;
let unavailable: string | undefined;

function bind(): Kernel32 | undefined {
  if (kernel32 || unavailable) return kernel32;
  try {
    // Optional and native: not bundled, so a name in a variable keeps esbuild from resolving it.
    const name = 'koffi';
    const koffi = (require as (id: string) => KoffiModule)(name);
    const lib = koffi.load('kernel32.dll');
    const f = (d: string): ((...args: unknown[]) => unknown) => lib.func(d);
    kernel32 = {
      CreateJobObjectW: f(
        'void *CreateJobObjectW(void *attributes, const char16_t *name)',
      ) as Kernel32['CreateJobObjectW'],
      SetInformationJobObject: f(
        'bool SetInformationJobObject(void *job, int infoClass, void *info, uint32_t length)',
      ) as Kernel32['SetInformationJobObject'],
      OpenProcess: f('void *OpenProcess(uint32_t access, bool inherit, uint32_t pid)') as Kernel32['OpenProcess'],
      AssignProcessToJobObject: f(
        'bool AssignProcessToJobObject(void *job, void *process)',
      ) as Kernel32['AssignProcessToJobObject'],
      TerminateJobObject: f('bool TerminateJobObject(void *job, uint32_t exitCode)') as Kernel32['TerminateJobObject'],
      CloseHandle: f('bool CloseHandle(void *handle)') as Kernel32['CloseHandle'],
      GetLastError: f('uint32_t GetLastError()') as Kernel32['GetLastError'],
    };
  } catch (err) {
    unavailable = `koffi could not be loaded: ${(err as Error).message.split('\n')[0]}`;
  }
  return kernel32;
}

const jobs = new WeakMap<ChildProcess, Handle>();

export interface ContainResult {
  contained: boolean;
  /** Why not, for the server's log (said once per broker: the reason does not change). */
  note?: string;
}

let noted = false;

/**
 * Puts a just-spawned child (and so everything it starts from now on) in a job of its own, which
 * ends when the broker does. Off Windows: nothing. Never throws: a server runs without a job rather
 * than not at all.
 */
export function containTree(child: ChildProcess): ContainResult {
  if (process.platform !== 'win32' || child.pid === undefined) return { contained: false };
  const k = bind();
  const fail = (reason: string): ContainResult => {
    if (noted) return { contained: false };
    noted = true;
    return { contained: false, note: jobUnavailableNote(reason) };
  };
  if (!k) return fail(unavailable ?? 'koffi is not installed');
  const job = k.CreateJobObjectW(null, null);
  if (!job) return fail(`CreateJobObject failed with error ${k.GetLastError()}`);
  const info = extendedLimitInformation(serverJobLimitFlags());
  if (!k.SetInformationJobObject(job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, info, info.length)) {
    const code = k.GetLastError();
    k.CloseHandle(job);
    return fail(`SetInformationJobObject failed with error ${code}`);
  }
  const proc = k.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, false, child.pid);
  if (!proc) {
    k.CloseHandle(job);
    // The child already exited (a start failure): nothing to contain, nothing to say.
    return { contained: false };
  }
  const assigned = k.AssignProcessToJobObject(job, proc);
  const code = assigned ? 0 : k.GetLastError();
  k.CloseHandle(proc);
  if (!assigned) {
    k.CloseHandle(job);
    return fail(`AssignProcessToJobObject failed with error ${code}`);
  }
  jobs.set(child, job);
  return { contained: true };
}

/** Whether `child` is in a job of ours that has not been ended yet. */
export function hasJob(child: ChildProcess): boolean {
  return jobs.has(child);
}

/**
 * Ends every process still in `child`'s job, the leader's leftovers included, and releases the job.
 * True when there was a job to end.
 */
export function endTree(child: ChildProcess): boolean {
  const job = jobs.get(child);
  if (job === undefined || !kernel32) return false;
  jobs.delete(child);
  kernel32.TerminateJobObject(job, 1);
  kernel32.CloseHandle(job);
  return true;
}
