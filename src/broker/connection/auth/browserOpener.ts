// Opening a sign-in page in the desktop's browser from the CLI. The address comes from a remote
// server's metadata, so it is checked here too (the broker checks it first): the openers hand
// anything that is not a web page to whatever program the desktop registered for it.
import { spawn } from 'node:child_process';
import { webAddressProblem } from '../../../registry/webAddress';

/** The program that opens `url`, per platform: no shell in between (cmd's `start` would read `&`, `|`, `%`). */
export function openerCommand(platform: NodeJS.Platform, url: string): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}

/**
 * Opens `url` in a browser where there is a desktop; quietly does nothing without one (the URL is
 * printed anyway). Throws, opening nothing, when `url` is not an https: page (or http: on this computer).
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): void {
  const problem = webAddressProblem(url);
  if (problem) throw new Error(`the sign-in address is not opened: ${problem}`);
  const desktop = process.platform !== 'linux' || !!(env.DISPLAY || env.WAYLAND_DISPLAY);
  if (!desktop) return;
  const [command, args] = openerCommand(process.platform, url);
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true, windowsHide: true });
    child.on('error', () => undefined); // no such opener: the printed URL is enough
    child.unref();
  } catch {
    /* the printed URL is enough */
  }
}
