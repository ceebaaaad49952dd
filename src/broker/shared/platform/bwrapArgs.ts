// The bubblewrap (bwrap) command line that confines a stdio server on Linux: pure, with every path a
// parameter, so what a server can see is decided here and unit-tested without spawning anything.
import * as path from 'node:path';
import { compareOrdinal } from '../ordinal';

/** The sandbox's private temp dir: a tmpfs that ends with the sandbox, so nothing is left behind. */
export const SANDBOX_TMP = '/tmp';

export interface BwrapInput {
  /** `confined`: the rules below; `full` (a filesystem grant that names no paths): the host's file system. */
  files: 'confined' | 'full';
  /**
   * Whether bubblewrap can make a user namespace here (probed; sandbox.ts). Without one (root on a
   * system that refuses them, a setuid bubblewrap) the sandbox still drops every capability.
   */
  userNamespace: boolean;
  /** The user's home directory: replaced by an empty tmpfs. */
  home: string;
  /** The broker's per-user directory (tokens, approvals): always hidden, whatever else is granted. */
  switchboardHome: string;
  /**
   * Other directories to hide behind an empty tmpfs where they exist: the system's and the user's
   * runtime directories (/run, XDG_RUNTIME_DIR), where daemons keep their Unix sockets.
   */
  hidden?: readonly string[];
  /** Files the system needs from inside a hidden directory (the resolver's configuration): bound back read-only. */
  systemFiles?: readonly string[];
  /** The registry root and the server's working directory: readable (read-only). */
  root: string;
  cwd: string;
  /** Where the command (and its interpreter) is installed: bound back read-only when inside a hidden dir. */
  installDirs: readonly string[];
  /** Absolute paths the definition grants, read-only and read-write. */
  read: readonly string[];
  write: readonly string[];
  /**
   * `none`: a private network namespace with loopback only; `full`: the host's network;
   * `proxy`: no network but the proxy's socket directory, bound in at its own path.
   */
  network: { kind: 'none' } | { kind: 'full' } | { kind: 'proxy'; socketDir: string };
  /** Which of the paths above exist: bwrap refuses to hide or bind what is not there. */
  exists: (p: string) => boolean;
}

export interface BwrapPlan {
  /** `bwrap … --`: the server's command and arguments follow. */
  prefix: string[];
  /** Variables the server's environment must carry inside the sandbox (temp dir, npm cache). */
  env: Record<string, string>;
}

/**
 * Where daemons keep their Unix sockets (docker.sock, the D-Bus system bus, database sockets): hidden
 * from every server whose file system is confined. Connecting to a socket needs no write access to
 * its mount, so a read-only file system does not stop it, and no network namespace does either; as
 * root (or in the docker group) docker.sock alone is the whole machine. A grant that names a socket
 * (`filesystem: { write: [/run/docker.sock] }`) binds it back.
 */
export const RUNTIME_DIRS = ['/run', '/var/run'];

/** True when `p` is `dir` or inside it (both absolute, POSIX). */
export function isInside(p: string, dir: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.posix.isAbsolute(rel));
}

/**
 * What every sandbox shares with nothing, whatever its grants. Run by root, bubblewrap keeps every
 * capability unless told otherwise: a server could then unmount its empty HOME, remount / writable,
 * join the broker's network namespace, or read any process's files through /proc/<pid>/root. So:
 * no capabilities at all (the bounding set too), a user namespace where the system allows one (root
 * there is root of nothing on the host), its own PID namespace (it sees its own processes only; when
 * its first process ends, the kernel ends every process in it, one that left the process group too)
 * and its own System V IPC. `--die-with-parent`: the sandbox dies with the broker.
 */
export function isolationArgs(userNamespace: boolean): string[] {
  const user = userNamespace ? ['--unshare-user'] : [];
  return [...user, '--unshare-pid', '--unshare-ipc', '--cap-drop', 'ALL', '--die-with-parent'];
}

/**
 * The whole file system read-only; a minimal /dev; /tmp and HOME empty tmpfs; the registry root,
 * the working directory and the command's install location bound back read-only; granted paths
 * bound as named, the most specific path last so it decides; a /proc of its own PID namespace
 * mounted after them, so no grant brings the host's back; SWITCHBOARD_HOME hidden last of all.
 */
export function bwrapPlan(input: BwrapInput): BwrapPlan {
  const args = ['bwrap', ...isolationArgs(input.userNamespace)];
  if (input.files === 'full') args.push('--dev-bind', '/', '/', '--proc', '/proc');
  else args.push(...confinedFiles(input));
  if (input.network.kind !== 'full') args.push('--unshare-net');
  // Read-only: connecting to a Unix socket needs no write access to its mount, and the server must
  // not create, replace or delete files in the broker's directory.
  if (input.network.kind === 'proxy') args.push('--ro-bind', input.network.socketDir, input.network.socketDir);
  args.push('--chdir', input.cwd, '--');
  if (input.files === 'full') return { prefix: args, env: {} };
  const env = {
    TMPDIR: SANDBOX_TMP,
    TMP: SANDBOX_TMP,
    TEMP: SANDBOX_TMP,
    // npx looks packages up in its cache and writes there; the user's cache is in the hidden HOME.
    npm_config_cache: `${SANDBOX_TMP}/.npm`,
    NPM_CONFIG_CACHE: `${SANDBOX_TMP}/.npm`,
  };
  return { prefix: args, env };
}

function confinedFiles(input: BwrapInput): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--tmpfs', SANDBOX_TMP];
  const hiddenDirs = [SANDBOX_TMP];
  for (const dir of [input.home, ...(input.hidden ?? [])]) {
    if (dir === '/' || !input.exists(dir) || hiddenDirs.some((h) => isInside(dir, h))) continue;
    args.push('--tmpfs', dir);
    hiddenDirs.push(dir);
  }
  const inHidden = (p: string): boolean => hiddenDirs.some((h) => isInside(p, h));
  const mounts = new Map<string, 'ro' | 'rw'>();
  const needed = [input.root, input.cwd, ...input.installDirs, ...(input.systemFiles ?? [])];
  for (const p of needed) if (inHidden(p)) mounts.set(p, 'ro');
  for (const p of input.read) mounts.set(p, 'ro');
  for (const p of input.write) mounts.set(p, 'rw');
  // Paths of one depth never nest, so their order is only for a stable argument list: ordinal, not
  // localeCompare, which would load ICU's collation data into every broker that sandboxes (~2.5 MB).
  const ordered = [...mounts].sort(([a], [b]) => depth(a) - depth(b) || compareOrdinal(a, b));
  for (const [p, mode] of ordered) {
    if (p === '/' && mode === 'ro') continue;
    args.push(mode === 'rw' ? '--bind-try' : '--ro-bind-try', p, p);
  }
  args.push('--proc', '/proc');
  if (input.exists(input.switchboardHome)) args.push('--tmpfs', input.switchboardHome);
  return args;
}

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/**
 * The directories a command needs to run when it is installed inside a hidden directory: the one
 * it is found in (a `bin`), and for a file inside a `node_modules` tree (a package's bin script,
 * `npx` itself) that whole tree, as the script loads its package and its dependencies from there.
 * Never the parent of a `bin` in general: `~/.cargo/bin` must not expose `~/.cargo/credentials`.
 */
export function installDirsOf(files: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    const nm = parts.indexOf('node_modules');
    dirs.add(nm > 0 ? parts.slice(0, nm + 1).join('/') : path.posix.dirname(file));
  }
  return [...dirs];
}

/**
 * The package a script belongs to (`node server.js`, `python tool.py`): the nearest folder above it
 * with a package.json or pyproject.toml, so the script's own imports and node_modules come with it.
 * Without one, the script's own folder. Never one of `hidden` itself (a HOME with a stray
 * package.json must not be exposed whole): then the script's folder, or the file alone.
 */
export function scriptPackageDir(script: string, hidden: readonly string[], isFile: (p: string) => boolean): string {
  // A package's script inside a node_modules tree loads its dependencies from the whole tree.
  if (script.split('/').includes('node_modules')) return installDirsOf([script])[0];
  const own = path.posix.dirname(script);
  // A script right in HOME or /tmp: only the file itself, never the hidden folder.
  if (hidden.includes(own)) return script;
  for (let dir = own; dir !== path.posix.dirname(dir); dir = path.posix.dirname(dir)) {
    if (hidden.includes(dir)) return own;
    if (isFile(path.posix.join(dir, 'package.json')) || isFile(path.posix.join(dir, 'pyproject.toml'))) return dir;
  }
  return own;
}

/**
 * The node_modules folder a Node package runner finds `spec` in, looking up from `cwd` as npx does
 * (`<dir>/node_modules/.bin/<bin>` or `<dir>/node_modules/<package>`); undefined when none has it.
 * `spec` is what follows the runner: a bin or package name, possibly with a version
 * (`mcp-server-everything`, `@modelcontextprotocol/server-everything@2026.1.0`).
 */
export function runnerPackageDir(spec: string, cwd: string, exists: (p: string) => boolean): string | undefined {
  const m = /^(@[^/]+\/[^@/]+|[^@/]+)(?:@.*)?$/.exec(spec);
  if (!m) return undefined;
  const pkg = m[1];
  const bin = pkg.split('/').pop()!;
  for (let dir = cwd; ; dir = path.posix.dirname(dir)) {
    const nm = path.posix.join(dir, 'node_modules');
    if (exists(path.posix.join(nm, '.bin', bin)) || exists(path.posix.join(nm, pkg, 'package.json'))) return nm;
    if (path.posix.dirname(dir) === dir) return undefined;
  }
}

/**
 * Whether `p`, a path inside the registry root, really is (through a symbolic link the workspace can
 * commit: `docs -> ../../.ssh`) somewhere outside it that the sandbox hides. bubblewrap follows links
 * when it binds, so binding such a path back would show the hidden place: a grant of `./docs`, a
 * `cwd`, a script or a command that looks like the workspace's own must not reach HOME.
 */
export function leadsOutOfRoot(
  p: string,
  real: string,
  root: { path: string; real: string },
  hidden: readonly string[],
): boolean {
  return isInside(p, root.path) && !isInside(real, root.real) && hidden.some((h) => isInside(real, h));
}

/** A path the filesystem grant names: `~/x` in the home directory, relative ones against the registry root. */
export function resolveGrantPath(p: string, root: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.posix.join(home, p.slice(2));
  return path.posix.resolve(root, p);
}
