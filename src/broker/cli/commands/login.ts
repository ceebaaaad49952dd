// `switchboard login`: sign in to a remote server (OAuth): prints the URL, opens a browser, waits for it.
import type { OperatorClient } from '../../daemon/operatorClient';
import { openBrowser } from '../../connection/auth/browserOpener';
import { webAddressProblem } from '../../../registry/webAddress';
import { isSettling } from '../../supervision/upstreamStates';
import { pollUntil, rootOf, rootOption, withOperator, type Command, print, printError } from '../command';

export const loginCommand: Command = {
  summary: 'sign in to a remote server (OAuth): prints the URL, opens a browser, waits for it',
  usage: `switchboard login <server> [--root <dir>] [--no-browser]

  Starts signing in to a remote server whose definition has 'auth: { type: oauth }'. Prints the
  authorization URL and opens it in a browser where one exists (xdg-open, open or rundll32). The
  browser returns to the broker on 127.0.0.1; the broker keeps the tokens for this user (OS
  keychain, else a 0600 file under ~/.switchboard) and every client of the broker can use the
  server. Waits until the sign-in completes (at most 10 minutes). Only an https: page (or http:
  on this computer) is printed or opened. The URL is this sign-in's secret: whoever completes it
  signs the broker in as their account, so do not share it.

  --no-browser  only print the URL (open it on any machine whose browser reaches this one)`,
  options: { ...rootOption, 'no-browser': { type: 'boolean' } },
  async run(values, positionals) {
    const name = positionals[0];
    if (!name) throw new Error('name the server to sign in to: switchboard login <server>');
    const root = rootOf(values);
    return withOperator(root, async (client) => {
      const { url } = await client.call('begin_sign_in', { name });
      const refused = webAddressProblem(url);
      if (refused) {
        printError(
          `The sign-in to '${name}' cannot go on: the broker gave an address that is not opened (${refused}).\n`,
        );
        return 1;
      }
      print(`To sign in to '${name}', open:\n\n  ${url}\n\n`);
      if (values['no-browser'] !== true && process.env.SWITCHBOARD_NO_BROWSER !== '1') openBrowser(url);
      print('Waiting for the sign-in to complete (Ctrl+C to stop waiting)...\n');
      const deadline = Date.now() + 10 * 60_000;
      while (Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 300));
        const status = await client.call('server_status', { name });
        if (status.auth?.inProgress) continue;
        if (status.auth?.lastError) {
          printError(`Sign-in to '${name}' failed: ${status.auth.lastError}\n`);
          return 1;
        }
        if (!status.auth?.signedIn) continue;
        const settled = await settledStatus(client, name, deadline);
        const tools = settled.state === 'running' ? ` with ${settled.tools.length} tools` : '';
        const error = settled.lastError && settled.state !== 'running' ? ` (${settled.lastError})` : '';
        print(`Signed in. '${name}' is ${settled.state}${tools}${error}.\n`);
        return settled.state === 'running' ? 0 : 1;
      }
      printError(`The sign-in to '${name}' was not completed in time; run switchboard login again.\n`);
      return 1;
    });
  },
};

/** The server's status once a reconnect after sign-in has settled (running, failed, ...). */
async function settledStatus(client: OperatorClient, name: string, deadline: number) {
  // The reconnect starts just after the tokens are stored: the old state may still show for a moment.
  const until = Math.min(deadline, Date.now() + 30_000);
  let last = await client.call('server_status', { name });
  const settled = await pollUntil(async () => {
    last = await client.call('server_status', { name });
    return isSettling(last.state) ? undefined : last;
  }, until);
  return settled ?? last;
}
