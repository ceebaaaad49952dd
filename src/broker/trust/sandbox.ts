// OS-level enforcement of grants, and the state that says what is enforced. On Linux bubblewrap
// confines a stdio server's file system and network (`unshare --net` is the network-only fallback),
// on macOS sandbox-exec cuts the network and, with a per-server profile, confines the file system the same
// way; nothing here pretends to enforce what the OS cannot.
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { isolationArgs } from '../shared/platform/bwrapArgs';
import { networkNotEnforcedReason, sandboxExecPrefix, sandboxProfile } from '../shared/platform/macSandbox';
import { switchboardHome } from '../shared/userState';

export interface Enforcement {
  network: 'enforced' | 'granted' | 'not-enforced';
  filesystem: 'enforced' | 'granted' | 'not-enforced';
  secrets: 'enforced' | 'granted';
  /** With a network allow-list enforced: the only hosts the server reaches (through the broker's proxy). */
  allowedHosts?: string[];
  /** With the filesystem enforced: what the server may read and write beyond the defaults (absolute paths). */
  readPaths?: string[];
  writePaths?: string[];
  notes: string[];
}

/** What this system offers to confine a server; probed once (tests pass their own). */
export interface SandboxTools {
  /** null when bubblewrap runs here; otherwise why it does not, in words. */
  bwrapUnavailable: string | null;
  /**
   * Whether bubblewrap makes a user namespace here (absent: it does). Without one (root where none
   * can be made, a setuid bubblewrap) every capability is still dropped.
   */
  bwrapUserNamespace?: boolean;
  /** A network-only prefix (`unshare --net`, sandbox-exec), or null when none runs here. */
  networkOnly: string[] | null;
  /**
   * macOS only (absent elsewhere): null when sandbox-exec runs a file-confining profile here, so each
   * server gets its own profile; otherwise why not, in words.
   */
  seatbeltUnavailable?: string | null;
}

/** The part of a definition that decides its sandbox. */
export interface SandboxedDef {
  transport: string;
  grants: readonly string[];
  filesystem?: { read: readonly string[]; write: readonly string[] };
  network?: { allow: readonly string[] };
}

let unshareArgs: string[] | null | undefined;

/**
 * `setpriv` arguments that empty every capability set before the command runs: root keeps none
 * across its exec (the bounding set is empty) and cannot gain any back (no_new_privs).
 */
const DROP_CAPABILITIES = ['setpriv', '--bounding-set', '-all', '--inh-caps', '-all', '--no-new-privs', '--'];

/**
 * The network-only prefixes to try, best first. Each must leave the server unable to undo its
 * isolation: a server with CAP_SYS_ADMIN over the host (root, plain `unshare --net`) rejoins the
 * host's network with `nsenter --net=/proc/1/ns/net`. So a user namespace (its root is root of its
 * own namespaces only, and cannot reach into the host's processes through /proc), or, as root where
 * none can be made, no capabilities at all. Plain `unshare --net` as root is never used.
 */
export function networkOnlyCandidates(root: boolean): string[][] {
  if (root)
    return [
      ['unshare', '--user', '--map-root-user', '--net', '--'],
      ['unshare', '--net', '--', ...DROP_CAPABILITIES],
    ];
  return [
    ['unshare', '--user', '--map-current-user', '--net', '--'],
    ['unshare', '--user', '--map-root-user', '--net', '--'],
  ];
}

/** The `unshare` invocation that works for this user here, or null when none does. Probed once. */
export function networkIsolationPrefix(): string[] | null {
  if (unshareArgs !== undefined) return unshareArgs;
  unshareArgs = null;
  if (process.env.SWITCHBOARD_NO_NETNS === '1') return unshareArgs;
  if (process.platform === 'darwin') return (unshareArgs = macSandboxPrefix());
  if (process.platform !== 'linux') return unshareArgs;
  for (const prefix of networkOnlyCandidates(process.getuid?.() === 0)) {
    const probe = spawnSync(prefix[0], [...prefix.slice(1), 'true'], { stdio: 'ignore', timeout: 5000 });
    if (probe.status === 0) {
      unshareArgs = prefix;
      break;
    }
  }
  return unshareArgs;
}

/** sandbox-exec with the no-network profile, if it runs here. */
function macSandboxPrefix(): string[] | null {
  const prefix = sandboxExecPrefix(sandboxProfile({ network: false }));
  const probe = spawnSync(prefix[0], [...prefix.slice(1), '/usr/bin/true'], { stdio: 'ignore', timeout: 5000 });
  return probe.status === 0 ? prefix : null;
}

let seatbeltReason: string | null | undefined;

/**
 * null when sandbox-exec accepts and runs a profile that confines files (probed once with the rules a launch
 * writes, so a profile macOS refuses shows up here instead of as servers that do not start), or why not.
 * `SWITCHBOARD_NO_SEATBELT=1` makes the probe fail, to see the fallback.
 */
export function seatbeltUnavailableReason(): string | null {
  if (seatbeltReason !== undefined) return seatbeltReason;
  if (process.platform !== 'darwin')
    return (seatbeltReason = `sandbox-exec is macOS only (this is ${process.platform})`);
  if (process.env.SWITCHBOARD_NO_SEATBELT === '1')
    return (seatbeltReason = 'the macOS sandbox is switched off (SWITCHBOARD_NO_SEATBELT=1)');
  const tmp = os.tmpdir();
  const profile = sandboxProfile({
    network: false,
    files: {
      home: os.homedir(),
      switchboardHome: switchboardHome(process.env),
      hidden: [tmp, '/private/tmp'],
      // Inside a hidden directory, as a server's own are, so the probe writes every kind of rule a launch does.
      tempDir: path.join(tmp, 'switchboard-sandbox'),
      cacheDir: path.join(tmp, 'switchboard-sandbox', '.npm'),
      root: '/usr',
      cwd: '/usr',
      installDirs: ['/usr/bin'],
      read: [],
      write: [],
    },
  });
  const prefix = sandboxExecPrefix(profile);
  const probe = spawnSync(prefix[0], [...prefix.slice(1), '/usr/bin/true'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 5000,
    encoding: 'utf8',
  });
  if (probe.error && (probe.error as NodeJS.ErrnoException).code === 'ENOENT')
    seatbeltReason = `${prefix[0]} is missing`;
  else if (probe.status !== 0) {
    const said = (probe.stderr ?? '').trim().split('\n')[0] || `exit ${probe.status ?? probe.signal}`;
    seatbeltReason = `sandbox-exec refused the file-confining profile: ${said}`;
  } else seatbeltReason = null;
  return seatbeltReason;
}

let bwrapProbe: { reason: string | null; userNamespace: boolean } | undefined;

/**
 * null when bubblewrap can build the sandbox here (probed once with the flags a launch uses), or why
 * not. `SWITCHBOARD_NO_BWRAP=1` makes the probe fail, to see (and test) the fallback.
 */
export function bwrapUnavailableReason(): string | null {
  return probeBwrap().reason;
}

function probeBwrap(): { reason: string | null; userNamespace: boolean } {
  if (bwrapProbe) return bwrapProbe;
  if (process.platform !== 'linux')
    return (bwrapProbe = { reason: `bubblewrap is Linux only (this is ${process.platform})`, userNamespace: false });
  if (process.env.SWITCHBOARD_NO_BWRAP === '1')
    return (bwrapProbe = { reason: 'bubblewrap is switched off (SWITCHBOARD_NO_BWRAP=1)', userNamespace: false });
  const run = (userNamespace: boolean): ReturnType<typeof spawnSync> => {
    const flags = [...isolationArgs(userNamespace), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
    return spawnSync('bwrap', [...flags, '--tmpfs', '/tmp', '--unshare-net', '--', 'true'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 5000,
      encoding: 'utf8',
    });
  };
  const probe = run(true);
  if (probe.status === 0) return (bwrapProbe = { reason: null, userNamespace: true });
  // Without a user namespace (root where none can be made; a setuid bubblewrap where unprivileged
  // ones are off) bubblewrap still drops every capability and makes the PID namespace.
  if (!probe.error) {
    const without = run(false);
    if (without.status === 0) return (bwrapProbe = { reason: null, userNamespace: false });
  }
  let reason: string;
  if (probe.error && (probe.error as NodeJS.ErrnoException).code === 'ENOENT')
    reason = 'bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt-get install bubblewrap)';
  else {
    const said =
      String(probe.stderr ?? '')
        .trim()
        .split('\n')[0] || `exit ${probe.status ?? probe.signal}`;
    reason = `bubblewrap cannot create a sandbox for this user (user namespaces off?): ${said}`;
  }
  return (bwrapProbe = { reason, userNamespace: false });
}

/** The tools this system offers, probed once each. */
export function sandboxTools(): SandboxTools {
  const bwrap = probeBwrap();
  const tools: SandboxTools = {
    bwrapUnavailable: bwrap.reason,
    bwrapUserNamespace: bwrap.userNamespace,
    networkOnly: networkIsolationPrefix(),
  };
  if (process.platform === 'darwin') tools.seatbeltUnavailable = seatbeltUnavailableReason();
  return tools;
}

/** How a stdio server is confined: the pieces launch.ts turns into a command line. */
export interface SandboxDecision {
  enforcement: Enforcement;
  /** Run under bubblewrap (file system and network as `network` says). */
  bwrap: boolean;
  /** bwrap's network: none, the host's, or only the allow-list through the proxy. */
  network: 'none' | 'full' | 'proxy';
  /** Without bwrap: the network-only prefix to put in front, if any. */
  networkOnlyPrefix?: string[];
  /** macOS: run under sandbox-exec with a profile built for this server (files confined; network as `network`). */
  seatbelt?: boolean;
}

/** `tools` are the probed ones unless a test passes its own (then nothing is spawned). */
export function describeEnforcement(def: SandboxedDef, tools?: SandboxTools): Enforcement {
  return decideSandbox(def, tools).enforcement;
}

export function decideSandbox(def: SandboxedDef, given?: SandboxTools): SandboxDecision {
  const notes: string[] = [];
  const secrets: Enforcement['secrets'] = def.grants.includes('secrets') ? 'granted' : 'enforced';
  const hasNetwork = def.grants.includes('network');
  const hasFiles = def.grants.includes('filesystem');
  if (def.transport !== 'stdio') {
    if (!hasNetwork)
      notes.push('a remote server is reached over the network by definition; the network grant is informational');
    notes.push('a remote server runs elsewhere: its file system is not this machine’s to restrict');
    const network = hasNetwork ? 'granted' : 'not-enforced';
    const filesystem = hasFiles ? 'granted' : 'not-enforced';
    return { enforcement: { network, filesystem, secrets, notes }, bwrap: false, network: 'full' };
  }
  const tools = given ?? sandboxTools();
  const allow = hasNetwork && def.network?.allow.length ? [...def.network.allow] : undefined;
  const paths = hasFiles ? def.filesystem : undefined;
  const fullFiles = hasFiles && !paths;
  // Bubblewrap is used whenever it has something to restrict: files, the network, or both.
  const bwrap = tools.bwrapUnavailable === null && !(fullFiles && hasNetwork && !allow);
  // Without bubblewrap, a macOS profile confines the files; with full file access the network-only prefix does.
  const seatbelt = !bwrap && !fullFiles && tools.seatbeltUnavailable === null;
  const enforcement: Enforcement = { network: 'granted', filesystem: 'granted', secrets, notes };

  if (fullFiles) notes.push('the filesystem grant names no paths: full access to the file system');
  else if (bwrap || seatbelt) {
    enforcement.filesystem = 'enforced';
    if (paths) {
      enforcement.readPaths = [...paths.read];
      enforcement.writePaths = [...paths.write];
    }
  } else {
    enforcement.filesystem = 'not-enforced';
    const what = paths ? 'the paths the filesystem grant names are not enforced' : 'file access is not restricted';
    const why = tools.seatbeltUnavailable ?? tools.bwrapUnavailable;
    notes.push(`${what}: ${why}; the server can read and write what its user can`);
  }

  let network: SandboxDecision['network'] = 'full';
  let networkOnlyPrefix: string[] | undefined;
  if (hasNetwork && !allow) enforcement.network = 'granted';
  else if (bwrap) {
    enforcement.network = 'enforced';
    network = allow ? 'proxy' : 'none';
    if (allow) enforcement.allowedHosts = allow;
  } else if (seatbelt) {
    // The allow-list's proxy is reached through a bridge inside a Linux network namespace; no macOS
    // equivalent is built, so an allow-list fails closed here too.
    enforcement.network = 'enforced';
    network = 'none';
    if (allow)
      notes.push('the network allow-list is not built on macOS (its proxy needs bubblewrap): no network at all');
  } else if (tools.networkOnly) {
    // Fail closed: an allow-list that cannot be enforced becomes no network at all.
    enforcement.network = 'enforced';
    notes.push(
      'without bubblewrap there is no PID namespace: the server sees the host’s processes, and reads what its user can of them',
    );
    networkOnlyPrefix = tools.networkOnly;
    network = 'none';
    if (allow) notes.push(`the network allow-list needs bubblewrap (${tools.bwrapUnavailable}): no network at all`);
  } else {
    enforcement.network = 'not-enforced';
    const why = networkNotEnforcedReason(process.platform);
    notes.push(`network access cannot be blocked on this system (${why}); the server can reach the network`);
  }
  const decision: SandboxDecision = { enforcement, bwrap, network, networkOnlyPrefix };
  if (seatbelt) decision.seatbelt = true;
  return decision;
}
