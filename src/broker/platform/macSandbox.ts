// macOS network enforcement: a stdio server without the network grant runs under `sandbox-exec` with a
// profile that allows everything except network sockets (Unix-domain sockets stay usable for local IPC).
// sandbox-exec is deprecated by Apple but still shipped (macOS 15); where it is missing, nothing is claimed.

export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/**
 * A Seatbelt (SBPL) profile. Without the network grant: every inet/inet6 socket operation is denied,
 * inbound and outbound, loopback included (as a fresh Linux network namespace does).
 */
export function sandboxProfile(grants: { network: boolean }): string {
  const lines = ['(version 1)', '(allow default)'];
  if (!grants.network) {
    lines.push('(deny network*)', '(allow network* (local unix-socket))', '(allow network* (remote unix-socket))');
  }
  return lines.join('\n');
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
