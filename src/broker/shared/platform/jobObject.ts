// Windows Job Objects as data: the numbers and the one structure the broker hands to kernel32, built
// here as bytes so their layout is unit-tested on any OS. windowsJob.ts makes the calls.
//
// A job holds a server's whole process tree: a process started by a member is a member too (unless the
// job allows breakaway, which this one does not), so TerminateJobObject ends the grandchildren that a
// leader left behind when it exited, which `taskkill /T` cannot find any more (it walks parent pids
// from a living leader). Layouts: JOBOBJECT_EXTENDED_LIMIT_INFORMATION and
// JOBOBJECT_BASIC_LIMIT_INFORMATION in winnt.h, 64-bit Windows (the only Windows Node 20+ ships for x64).

/** JOBOBJECTINFOCLASS JobObjectExtendedLimitInformation. */
export const JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9;
/** Every process of the job ends when its last handle closes: the broker dying takes its servers along. */
export const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
/** A crash in a member ends it instead of opening Windows Error Reporting's dialog on a hidden console. */
export const JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION = 0x400;
/** OpenProcess rights AssignProcessToJobObject needs. */
export const PROCESS_SET_QUOTA = 0x0100;
export const PROCESS_TERMINATE = 0x0001;

/** sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) on x64: the basic limits (64), IO_COUNTERS (48), four SIZE_Ts. */
export const EXTENDED_LIMIT_INFORMATION_SIZE = 144;
/** Offset of BasicLimitInformation.LimitFlags: after two LARGE_INTEGER time limits. */
export const LIMIT_FLAGS_OFFSET = 16;

/** The limits a server's job gets: its tree ends with the broker, and a crash ends a process quietly. */
export function serverJobLimitFlags(): number {
  return JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
}

/** The JOBOBJECT_EXTENDED_LIMIT_INFORMATION bytes that set `flags` and no other limit (zero means none). */
export function extendedLimitInformation(flags: number): Buffer {
  const info = Buffer.alloc(EXTENDED_LIMIT_INFORMATION_SIZE);
  info.writeUInt32LE(flags >>> 0, LIMIT_FLAGS_OFFSET);
  return info;
}

/** What the stop of a server can count on, said once in the broker's log when the job cannot be had. */
export function jobUnavailableNote(reason: string): string {
  return (
    `Windows Job Objects are not available (${reason}): a server's processes are stopped with taskkill /T ` +
    'while it runs, and a process it left behind when it exited is not found.'
  );
}
