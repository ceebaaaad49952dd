// macOS enforcement with sandbox-exec (Seatbelt). A stdio server without the network grant gets a profile
// that denies network sockets (Unix-domain sockets stay usable for local IPC); with confined files the same
// profile also confines its file system, as bubblewrap does on Linux (see bwrapArgs.ts). sandbox-exec is
// deprecated by Apple but still shipped (macOS 15); where it is missing or refuses, nothing is claimed.
//
// The SBPL shapes follow the profile generator of anthropic-experimental/sandbox-runtime
// (src/sandbox/macos-sandbox-utils.ts, the runtime VS Code's MCP sandbox uses on macOS): later rules win,
// so a broad `(deny file-read* (subpath …))` is followed by the `(allow file-read* (subpath …))` that
// re-admits paths inside it; `file-read-metadata` is allowed on the directories above a re-admitted path so
// realpath() can walk to it; `file-write-unlink` is denied on the ancestors of a hidden directory so it
// cannot be renamed out from under its rule; string literals escape backslash and double quote. Plain `(allow default)`
// with `(deny file-write*)` then `(allow file-write* (subpath …))` is the common pattern in sandbox-exec
// wrappers (e.g. WesleyMFrederick/cc-workflows packages/sandbox/minimal-seatbelt.sh). None of this has run
// on a Mac in this project's tests: the profiles are checked as text here.
import * as path from 'node:path';

export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** What the server may touch when its files are confined; every path absolute. */
export interface SeatbeltFiles {
  /** The user's home directory: unreadable, except what is re-admitted below. */
  home: string;
  /** The broker's per-user directory (tokens, approvals): unreadable and unwritable whatever else is granted. */
  switchboardHome: string;
  /** Other directories to make unreadable (the shared temp directories: other programs' files and sockets). */
  hidden?: readonly string[];
  /** The server's own temp directory and npm cache: readable and writable. */
  tempDir: string;
  cacheDir: string;
  /** The registry root, the server's working directory and where its command is installed: readable. */
  root: string;
  cwd: string;
  installDirs: readonly string[];
  /** Absolute paths the filesystem grant names, read-only and read-write. */
  read: readonly string[];
  write: readonly string[];
  /**
   * The real path of a path (symlinks resolved, also for a path that does not exist yet): Seatbelt matches
   * the path the kernel resolved, so /tmp/x is only matched as /private/tmp/x. Identity when not given.
   */
  realpath?: (p: string) => string;
}

export interface SeatbeltGrants {
  network: boolean;
  /** Confine the file system as described; absent: the file system is not restricted. */
  files?: SeatbeltFiles;
}

/** Devices every program writes to (stdio redirected to /dev/null, a terminal, dyld's dtrace helper). */
const DEVICE_LITERALS = ['/dev/null', '/dev/zero', '/dev/tty', '/dev/dtracehelper', '/dev/stdout', '/dev/stderr'];

/**
 * A Seatbelt (SBPL) profile. Without the network grant: every inet/inet6 socket operation is denied,
 * inbound and outbound, loopback included (as a fresh Linux network namespace does). With `files`: writes
 * only to the server's temp and cache dirs and the granted write paths; HOME and the hidden directories
 * unreadable but for the registry root, the working directory, the install location and the granted paths;
 * SWITCHBOARD_HOME unreadable and unwritable last of all, so nothing granted can re-admit it.
 * Throws when a path cannot be written safely into the profile (relative, or with a control character).
 */
export function sandboxProfile(grants: SeatbeltGrants): string {
  const lines = ['(version 1)', '(allow default)'];
  if (!grants.network) {
    lines.push('(deny network*)', '(allow network* (local unix-socket))', '(allow network* (remote unix-socket))');
  }
  if (grants.files) lines.push(...fileRules(grants.files));
  return lines.join('\n');
}

function fileRules(files: SeatbeltFiles): string[] {
  const real = files.realpath ?? ((p: string) => p);
  const forms = (p: string): string[] => pathForms(p, real);
  const subpaths = (ps: readonly string[]): string[] =>
    unique(ps.flatMap(forms)).map((p) => `(subpath ${sbplPath(p)})`);
  const literals = (ps: readonly string[]): string[] =>
    unique(ps.flatMap(forms)).map((p) => `(literal ${sbplPath(p)})`);
  const rule = (head: string, filters: string[]): string[] =>
    filters.length ? [`(${head} ${filters.join(' ')})`] : [];

  const own = [files.tempDir, files.cacheDir];
  const hidden = [files.home, ...(files.hidden ?? [])].filter((d) => d !== '/');
  const readable = [files.root, files.cwd, ...files.installDirs, ...files.read, ...files.write, ...own];
  // Refuse a relative path before any walking: path.posix.relative() would resolve it against the
  // broker's own working directory, and the walk below would then never reach its hidden directory.
  for (const p of [...readable, ...hidden, files.switchboardHome]) sbplPath(p);
  // The directories between a hidden directory and a path re-admitted inside it: stat-able, not listable.
  const walk = unique(
    readable.flatMap(forms).flatMap((p) => hidden.flatMap(forms).flatMap((h) => (isInside(p, h) ? between(h, p) : []))),
  );
  const guarded = [files.switchboardHome, ...hidden];
  return [
    '(deny file-write*)',
    ...rule('allow file-write*', [
      ...literals(DEVICE_LITERALS),
      '(subpath "/dev/fd")',
      ...subpaths([...own, ...files.write]),
    ]),
    ...rule('deny file-read*', subpaths(hidden)),
    ...rule('allow file-read*', subpaths(readable)),
    ...rule(
      'allow file-read-metadata',
      walk.map((p) => `(literal ${sbplPath(p)})`),
    ),
    ...rule('deny file-read* file-write*', subpaths([files.switchboardHome])),
    ...rule('deny file-write-unlink', literals(unique(guarded.flatMap((d) => ancestors(d))))),
  ];
}

/**
 * `s` as an SBPL string literal: backslash and double quote escaped. Control characters (a newline in a
 * path, say) are refused rather than escaped: no profile we cite writes one, so its meaning is not assured.
 */
export function sbplString(s: string): string {
  if ([...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw new Error(`a path with a control character cannot be named in a macOS sandbox profile: ${JSON.stringify(s)}`);
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function sbplPath(p: string): string {
  if (!path.posix.isAbsolute(p))
    throw new Error(`a macOS sandbox profile names absolute paths only, not ${JSON.stringify(p)}`);
  return sbplString(p);
}

/** The forms Seatbelt may see a path in: as given, its real path, and /tmp, /var, /etc with and without /private. */
export function pathForms(p: string, realpath: (p: string) => string = (x) => x): string[] {
  const out = [p, realpath(p)];
  for (const q of [...out]) {
    const m = /^(\/private)?(\/(?:tmp|var|etc)(?:\/.*)?)$/.exec(q);
    if (m) out.push(m[1] ? m[2] : `/private${m[2]}`);
  }
  return unique(out.map((q) => (q.length > 1 ? q.replace(/\/+$/, '') : q)));
}

function isInside(p: string, dir: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.posix.isAbsolute(rel));
}

/** `dir` and the directories from it down to `p`'s parent. */
function between(dir: string, p: string): string[] {
  const out: string[] = [];
  for (let d = path.posix.dirname(p); isInside(d, dir); d = path.posix.dirname(d)) {
    out.push(d);
    if (d === dir || d === path.posix.dirname(d)) break;
  }
  return out;
}

/** `p` and every directory above it, `/` excluded. */
function ancestors(p: string): string[] {
  const out: string[] = [];
  for (let d = p; d !== '/' && d !== '.'; d = path.posix.dirname(d)) out.push(d);
  return out;
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

/** The server's environment inside a confined profile: its own temp dir, and npm's cache in its own cache dir. */
export function seatbeltEnvironment(files: Pick<SeatbeltFiles, 'tempDir' | 'cacheDir'>): Record<string, string> {
  return {
    TMPDIR: files.tempDir,
    TMP: files.tempDir,
    TEMP: files.tempDir,
    npm_config_cache: files.cacheDir,
    NPM_CONFIG_CACHE: files.cacheDir,
  };
}

/** The prefix that runs a command under `profile`: sandbox-exec takes the command and its arguments after it. */
export function sandboxExecPrefix(profile: string): string[] {
  return [SANDBOX_EXEC, '-p', profile];
}

/** Why a platform cannot cut a server off the network, in words for the console. */
export function networkNotEnforcedReason(platform: NodeJS.Platform): string {
  switch (platform) {
    case 'linux':
      return 'unshare --net is not permitted for this user';
    case 'darwin':
      return `${SANDBOX_EXEC} is missing or refused to run`;
    case 'win32':
      return (
        'Windows has no per-process network block an ordinary user can set up (a firewall rule per ' +
        'program needs administrator rights)'
      );
    default:
      return `no network sandbox is implemented for ${platform}`;
  }
}
