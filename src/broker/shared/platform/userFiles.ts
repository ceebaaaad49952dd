// Where per-user state lives on each OS, and how a file is made readable by its owner alone there:
// POSIX modes (0700 directories, 0600 files) or, on Windows, an ACL that names only the user.
import * as path from 'node:path';
import { windowsEnvValue } from './windowsCommand';

/**
 * The per-user directory: `SWITCHBOARD_HOME` if set; on Windows `%LOCALAPPDATA%\Switchboard` (local,
 * not roaming: tokens must not follow the profile to other machines); elsewhere `~/.switchboard`.
 */
type Env = Readonly<Record<string, string | undefined>>;

export function perUserHome(platform: NodeJS.Platform, env: Env, homedir: string): string {
  const paths = platform === 'win32' ? path.win32 : path.posix;
  const override = platform === 'win32' ? windowsEnvValue(env, 'SWITCHBOARD_HOME') : env.SWITCHBOARD_HOME;
  if (override) return paths.resolve(override);
  if (platform === 'win32') {
    const local = windowsEnvValue(env, 'LOCALAPPDATA') || paths.join(homedir, 'AppData', 'Local');
    return paths.join(local, 'Switchboard');
  }
  return paths.join(homedir, '.switchboard');
}

/** The account an ACL grants to: `DOMAIN\user` when the domain is known, so a same-named local user is not meant. */
export function windowsAccount(env: Env): string | undefined {
  const user = windowsEnvValue(env, 'USERNAME');
  if (!user) return undefined;
  const domain = windowsEnvValue(env, 'USERDOMAIN');
  return domain ? `${domain}\\${user}` : user;
}

/**
 * `icacls` arguments (for execFile: no shell, so no quoting) that drop inherited entries and leave
 * full control to `account` alone — the Windows counterpart of mode 0600.
 */
export function icaclsPrivateArgs(file: string, account: string, kind: 'file' | 'directory' = 'file'): string[] {
  if (/[\r\n"]/.test(account) || account.trim() === '') {
    const shown = JSON.stringify(account);
    throw new Error(`Cannot restrict ${file}: the account name ${shown} is not usable; check USERNAME.`);
  }
  // (OI)(CI): files and folders created inside inherit the same single entry, so a new file is private
  // from its first byte, before its own ACL is narrowed.
  return [file, '/inheritance:r', '/grant:r', kind === 'directory' ? `${account}:(OI)(CI)F` : `${account}:F`];
}

/** How a per-user file or directory is made private on a platform: a POSIX mode, or an icacls run. */
export type PrivateProtection = { how: 'mode'; mode: number } | { how: 'acl'; command: 'icacls'; args: string[] };

/**
 * The protection for `target`: 0600 (files) or 0700 (directories) on POSIX; on Windows the icacls
 * arguments that leave the user alone on it. Throws, with what to set, when Windows names no user.
 */
export function privateProtection(
  platform: NodeJS.Platform,
  env: Env,
  target: string,
  kind: 'file' | 'directory' = 'file',
): PrivateProtection {
  if (platform !== 'win32') return { how: 'mode', mode: kind === 'directory' ? 0o700 : 0o600 };
  const account = windowsAccount(env);
  if (!account) throw new Error(`Cannot restrict ${target} to the current user: set USERNAME in the environment.`);
  return { how: 'acl', command: 'icacls', args: icaclsPrivateArgs(target, account, kind) };
}
