// `switchboard approve`: approve a community server, or accept one the workspace marks trusted, as it is now (operator).
import * as path from 'node:path';
import { readTelemetryFile, TELEMETRY_FILE } from '../../../registry/telemetryConfig';
import { liveRecord } from '../../daemon/discovery';
import { OperatorClient } from '../../daemon/operatorClient';
import { runtimePaths } from '../../shared/userState';
import { approvalSummaryBlock } from '../../trust/approvalSummary';
import { isLoopbackEndpoint, TelemetryExportApprovals, telemetryApprovalsFile } from '../../trust/telemetryExport';
import { type Command, rootOption, rootOf, withOperator, print } from '../command';

export const approveCommand: Command = {
  summary: 'approve a community server, or accept one the workspace marks trusted, as it is now (operator)',
  usage: `switchboard approve <server> [--root <dir>] [--revoke]
       switchboard approve --telemetry [--root <dir>] [--revoke]

  Shows everything the approval covers (command and arguments or URL, working directory, env
  variables with secret-looking values masked, env file, header names, grants, tool filters;
  paths outside the registry root are flagged) and records the approval of exactly that, for this
  user, outside the workspace. If the definition changes between showing and approving, nothing is
  approved. A later change to any of those fields (or to the env file's contents) needs a new approval.

  --telemetry  approve the export endpoint the workspace's telemetry.yaml names: until then, an
               endpoint off this machine is not sent anything (a loopback one needs no approval).
               For this user and this workspace, that endpoint only; a running broker exports there at once.
  --revoke     withdraw the approval instead`,
  options: { ...rootOption, revoke: { type: 'boolean' }, telemetry: { type: 'boolean' } },
  async run(values, positionals) {
    if (values.telemetry) return approveTelemetry(rootOf(values), values.revoke === true);
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

/** `approve --telemetry`: the operator lets telemetry.yaml's endpoint receive this workspace's telemetry. */
async function approveTelemetry(root: string, revoke: boolean): Promise<number> {
  const approvals = new TelemetryExportApprovals(telemetryApprovalsFile(), root);
  if (revoke) {
    print(
      approvals.revoke()
        ? `Telemetry export approval for ${root} withdrawn; it applies when the broker starts again.\n`
        : `No telemetry export endpoint was approved for ${root}.\n`,
    );
    return 0;
  }
  const { block, problems } = readTelemetryFile(root);
  if (problems.length) {
    throw new Error(
      `${TELEMETRY_FILE} has mistakes; fix them first:\n${problems.map((p) => `  ${p.file}:${p.line}: ${p.message}`).join('\n')}`,
    );
  }
  const endpoint = block?.endpoint;
  if (!endpoint) throw new Error(`${root} has no ${TELEMETRY_FILE} with an endpoint: nothing to approve.`);
  if (isLoopbackEndpoint(endpoint)) {
    print(`${TELEMETRY_FILE} exports to ${endpoint}, on this machine: nothing to approve.\n`);
    return 0;
  }
  const what =
    `Approved: the traces and metrics of the broker for ${root} may be exported to ${endpoint}, as ` +
    `${TELEMETRY_FILE} says (span and metric names and attributes: tool, prompt and server names, ` +
    `resource URIs, client names, timings; never arguments, results or secrets). A different endpoint ` +
    `needs a new approval.`;
  // A running broker records it and exports there at once; else the next one reads the approval.
  const abs = path.resolve(root);
  const running = await liveRecord(runtimePaths(abs), abs);
  if (running) {
    const client = await OperatorClient.connect(running);
    try {
      await client.call('approve_telemetry_export', { endpoint });
    } finally {
      await client.close();
    }
    print(`${what} The running broker exports there from now on.\n`);
    return 0;
  }
  approvals.approve(endpoint);
  print(`${what} It applies when the broker for this workspace starts.\n`);
  return 0;
}
