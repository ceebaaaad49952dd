// The administrator's policy as registry problems: the policy file's own errors, and each server
// it blocks at the line of the rule, listed with the registry's problems (status, Problems view).
import type { RegistrySnapshot } from '../../registry/loader';
import { currentPolicy, serverBlock } from '../../registry/policy';
import { formatProblem, type Problem } from '../../registry/problems';
import type { RegistryProblem } from './controlApi';

/** The administrator's policy file's own errors, and each server it blocks, at the line of the rule. */
export function policyProblems(snapshot: RegistrySnapshot): RegistryProblem[] {
  const policy = currentPolicy();
  if (!policy) return [];
  const problems: Problem[] = policy.errors.map((e) => ({
    file: policy.file,
    line: e.line,
    column: 1,
    message: `policy file: ${e.message}`,
    kind: 'server',
    severity: 'error',
  }));
  for (const def of snapshot.servers.values()) {
    const block = serverBlock(policy, def);
    if (block && !policy.errors.length)
      problems.push({
        file: block.file,
        line: block.line,
        column: 1,
        message: `server '${def.name}' is blocked: ${block.message}`,
        kind: 'server',
        severity: 'warning',
      });
  }
  return problems.map((p) => ({ ...p, text: formatProblem(p) }));
}
