// The guardrail policies (policies.d/) as control operations: list them, propose one (anyone with
// the write scope: it waits for the operator), remove one, and the operator's approve and revoke.
import type { PolicyDef } from '../../registry/schema';
import type { RegistryWriter } from '../../registry/writer';
import { validateName } from '../../registry/names';
import type { PolicyStatus } from '../trust/guardrails/guardrails';
import { ErrorCodes, failureFrom, McpFailure } from '../shared/mcpTypes';
import type { ControlledBroker } from './controlledBroker';

export type { PolicyStatus };

/** What an agent is told after writing a policy: it is a proposal until the operator approves it. */
const PROPOSED =
  'written as a proposal: nothing of it is in force until the operator approves it (approve_policy); ' +
  'the version approved before, if any, stays in force';

export class PolicyOperations {
  constructor(
    private readonly broker: ControlledBroker,
    private readonly writer: RegistryWriter,
  ) {}

  list(): PolicyStatus[] {
    return this.broker.guardrails.statuses();
  }

  status(name: string): PolicyStatus {
    const found = this.list().find((p) => p.name === name);
    if (!found) throw new McpFailure(ErrorCodes.InvalidParams, `No policy named '${name}' in policies.d/.`);
    return found;
  }

  async upsert(definition: unknown): Promise<{ file: string; name: string; note: string; status: PolicyStatus }> {
    let written;
    try {
      written = await this.writer.upsert('policy', definition);
    } catch (err) {
      throw failureFrom(err);
    }
    const def = written.def as PolicyDef;
    const printed = JSON.stringify(def);
    await this.broker.waitForSnapshot((s) => JSON.stringify(s.policies.get(def.name)) === printed);
    return { file: written.path, name: def.name, note: PROPOSED, status: this.status(def.name) };
  }

  async remove(name: string): Promise<{ removed: boolean; note?: string }> {
    let removed: boolean;
    try {
      removed = await this.writer.remove('policy', name);
    } catch (err) {
      throw failureFrom(err);
    }
    if (!removed) throw new McpFailure(ErrorCodes.InvalidParams, `No policy named '${name}' to remove.`);
    await this.broker.waitForSnapshot((s) => !s.policies.has(name));
    const inForce = this.list().some((p) => p.name === name && p.inForce);
    return inForce
      ? { removed, note: 'the approved version stays in force until the operator revokes it (revoke_policy)' }
      : { removed };
  }

  approve(name: string, hash: string): PolicyStatus {
    checkName(name);
    const status = this.broker.guardrails.approve(name, hash);
    this.broker.audit.write({ event: 'policy', policy: name, approved: hash });
    return status;
  }

  revoke(name: string): { revoked: boolean } {
    checkName(name);
    const result = this.broker.guardrails.revoke(name);
    if (!result.revoked) throw new McpFailure(ErrorCodes.InvalidParams, `Policy '${name}' is not in force.`);
    this.broker.audit.write({ event: 'policy', policy: name, revoked: true });
    return result;
  }
}

/** A policy's name is a registry name: anything else names no policy, and is said so plainly. */
function checkName(name: string): void {
  const why = validateName(name);
  if (why !== undefined) throw new McpFailure(ErrorCodes.InvalidParams, `Invalid policy name: ${why}.`);
}
