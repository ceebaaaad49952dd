// `switchboard token`: print where a client's token is (creating it), or rotate it.
import { type Command, rootOption, rootOf, withOperator, print } from '../command';

export const tokenCommand: Command = {
  summary: "print where a client's token is (creating it), or rotate it",
  usage: `switchboard token <client> [--root <dir>] [--rotate]

  Prints the endpoint and the token file of a client declared in clients.d/. The token is
  created on first use (mode 0600, outside the workspace). --rotate replaces it.`,
  options: { ...rootOption, rotate: { type: 'boolean' } },
  async run(values, positionals) {
    const name = positionals[0];
    if (!name) throw new Error('name the client: switchboard token <client>');
    const root = rootOf(values);
    return withOperator(root, async (client) => {
      const info = await client.call('client_connection', { name, rotate: values.rotate === true });
      print(
        `client      ${name}\nendpoint    ${info.url}\ntoken file  ${info.tokenFile}\nheader      ${info.header}\n`,
      );
      return 0;
    });
  },
};
