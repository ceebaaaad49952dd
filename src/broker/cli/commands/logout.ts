// `switchboard logout`: sign out of a remote server: delete the broker's tokens for it.
import { type Command, rootOption, rootOf, withOperator, print } from '../command';

export const logoutCommand: Command = {
  summary: "sign out of a remote server: delete the broker's tokens for it",
  usage: `switchboard logout <server> [--root <dir>]

  Deletes the tokens the broker keeps for the server; it then waits for a new sign-in.`,
  options: { ...rootOption },
  async run(values, positionals) {
    const name = positionals[0];
    if (!name) throw new Error('name the server to sign out of: switchboard logout <server>');
    const root = rootOf(values);
    return withOperator(root, async (client) => {
      const status = await client.call('sign_out', { name });
      print(`Signed out of '${name}'; its tokens are deleted and it is now ${status.state}.\n`);
      return 0;
    });
  },
};
