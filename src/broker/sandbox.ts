// OS-level enforcement of grants. Linux can cut a stdio server off the network with a fresh
// network namespace, macOS with sandbox-exec; nothing here pretends to enforce what the OS cannot.
import { spawnSync } from 'node:child_process';
import { networkNotEnforcedReason, sandboxExecPrefix, sandboxProfile } from './platform/macSandbox';

export interface Enforcement {
  network: 'enforced' | 'granted' | 'not-enforced';
  filesystem: 'granted' | 'not-enforced';
  secrets: 'enforced' | 'granted';
  notes: string[];
}

let unshareArgs: string[] | null | undefined;

/** The `unshare` invocation that works for this user here, or null when none does. Probed once. */
export function networkIsolationPrefix(): string[] | null {
  if (unshareArgs !== undefined) return unshareArgs;
  unshareArgs = null;
  if (process.env.SWITCHBOARD_NO_NETNS === '1') return unshareArgs;
  if (process.platform === 'darwin') return (unshareArgs = macSandboxPrefix());
  if (process.platform !== 'linux') return unshareArgs;
  const candidates =
    process.getuid?.() === 0
      ? [['--net'], ['--net', '--map-root-user']]
      : [
          ['--net', '--map-current-user'],
          ['--net', '--map-root-user'],
        ];
  for (const flags of candidates) {
    const probe = spawnSync('unshare', [...flags, '--', 'true'], { stdio: 'ignore', timeout: 5000 });
    if (probe.status === 0) {
      unshareArgs = ['unshare', ...flags, '--'];
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

/** `isolation` is the prefix `networkIsolationPrefix()` found (passed in by tests that spawn nothing). */
export function describeEnforcement(
  transport: string,
  grants: readonly string[],
  isolation: string[] | null = transport === 'stdio' && !grants.includes('network') ? networkIsolationPrefix() : null,
): Enforcement {
  const notes: string[] = [];
  let network: Enforcement['network'];
  if (grants.includes('network')) network = 'granted';
  else if (transport !== 'stdio') {
    network = 'not-enforced';
    notes.push('a remote server is reached over the network by definition; the network grant is informational');
  } else if (isolation) network = 'enforced';
  else {
    network = 'not-enforced';
    const why = networkNotEnforcedReason(process.platform);
    notes.push(`network access cannot be blocked on this system (${why}); the server can reach the network`);
  }
  const filesystem: Enforcement['filesystem'] = grants.includes('filesystem') ? 'granted' : 'not-enforced';
  if (!grants.includes('filesystem'))
    notes.push('filesystem access is not restricted by the OS here; the grant is recorded and audited only');
  const secrets: Enforcement['secrets'] = grants.includes('secrets') ? 'granted' : 'enforced';
  return { network, filesystem, secrets, notes };
}
