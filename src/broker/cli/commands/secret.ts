// `switchboard secret`: set, unset or list the secrets ${input:NAME} refers to (per user).
import { liveRecord } from '../../daemon/discovery';
import { OperatorClient } from '../../daemon/operatorClient';
import { runtimePaths, switchboardHome } from '../../shared/userState';
import { SecretStore } from '../../connection/auth/secretStore';
import { type Command, rootOption, rootOf, readSecretValue, print } from '../command';

export const secretCommand: Command = {
  summary: 'set, unset or list the secrets ${input:NAME} refers to (per user)',
  usage: `switchboard secret set <NAME> [--root <dir>]
  switchboard secret unset <NAME> [--root <dir>]
  switchboard secret list

  Keeps the value of \${input:NAME} (used in a server's env or headers) in your per-user store:
  the OS keychain where one works, else a 0600 file under ~/.switchboard/secrets. 'set' reads
  the value from a hidden prompt, or from stdin when it is not a terminal (never from the
  command line). A running broker of the workspace (--root, default .) starts the servers that
  waited for it. Values reach only servers with the 'secrets' grant.`,
  options: { ...rootOption },
  async run(values, positionals) {
    const [action, name] = positionals;
    const store = SecretStore.open(switchboardHome());
    if (action === 'list') {
      const names = store.list();
      if (names.length === 0) print(`No secrets stored (${store.kind}).\n`);
      for (const n of names) print(`${n}\n`);
      return 0;
    }
    if ((action !== 'set' && action !== 'unset') || !name)
      throw new Error('usage: switchboard secret set|unset <NAME>, or switchboard secret list');
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      throw new Error(`'${name}' is not an input name (letters, digits, _, . or -)`);
    if (action === 'set') {
      const value = await readSecretValue(`Value of ${name} (hidden): `);
      if (!value) throw new Error(`no value given for ${name}; nothing stored`);
      store.set(name, value);
      print(`Stored ${name} (${store.kind === 'keychain' ? 'OS keychain' : 'private file'}).\n`);
    } else {
      const had = store.unset(name);
      print(had ? `Removed ${name}.\n` : `${name} was not stored.\n`);
    }
    const root = rootOf(values);
    const record = await liveRecord(runtimePaths(root), root);
    if (record) {
      const client = await OperatorClient.connect(record);
      try {
        const { servers } = await client.call('set_input', { name, reload: true });
        if (servers.length) print(`Servers using it: ${servers.join(', ')}.\n`);
      } finally {
        await client.close();
      }
    }
    return 0;
  },
};
