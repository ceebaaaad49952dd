// `switchboard approve`: approve a community server, or accept one the workspace marks trusted, as it is now (operator).
import { approvalSummaryBlock } from '../../trust/approvalSummary';
import { type Command, rootOption, rootOf, withOperator, print } from '../command';

export const approveCommand: Command = {
  summary: 'approve a community server, or accept one the workspace marks trusted, as it is now (operator)',
  usage: `switchboard approve <server> [--root <dir>] [--revoke]

  Shows everything the approval covers (command and arguments or URL, working directory, env
  variables with secret-looking values masked, env file, header names, grants, tool filters;
  paths outside the registry root are flagged) and records the approval of exactly that, for this
  user, outside the workspace. If the definition changes between showing and approving, nothing is
  approved. A later change to any of those fields (or to the env file's contents) needs a new approval.

  --revoke  withdraw the approval instead`,
  options: { ...rootOption, revoke: { type: 'boolean' } },
  async run(values, positionals) {
    const name = positionals[0];
    if (!name) throw new Error('name the server to approve: switchboard approve <server>');
    const root = rootOf(values);
    return withOperator(root, async (client) => {
      if (values.revoke) {
        const status = await client.call('revoke_approval', { name });
        print(`Approval of '${name}' withdrawn; it is now ${status.state}.\n`);
        return 0;
      }
      const before = await client.call('server_status', { name });
      if (before.approval === 'not-needed') {
        const tier = before.trust;
        print(`'${name}' is ${tier} and this broker accepts the workspace's ${tier} servers: nothing to approve.\n`);
        return 0;
      }
      print(`Approving '${name}':\n${approvalSummaryBlock(before.approvalItems, '  ')}\n`);
      // The hash of what was just printed: the broker refuses if the definition is no longer that.
      const args = { name, hash: before.approvalHash };
      const status = await client.call('approve_server', args);
      const error = status.lastError ? ` (${status.lastError})` : '';
      print(`Approved. '${name}' is now ${status.state}${error}.\n`);
      return 0;
    });
  },
};
