// A guardrail policy said in sentences, for the operator who approves it: what each rule does to
// which calls, and each limit's budget. The CLI prints it before `switchboard policies approve`; what
// the operator reads is exactly what the hash they send back covers.
import type { PolicyDef, PolicyRule, RateLimit } from '../../../registry/schema';

/** "any server", "server files", "servers files or git*". */
function which(noun: string, globs: string[] | undefined): string {
  if (!globs || globs.length === 0) return `any ${noun}`;
  const quoted = globs.map((g) => `'${g}'`);
  if (quoted.length === 1) return `${noun} ${quoted[0]}`;
  return `${noun}s ${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

/** To which calls a rule or limit applies: "calls to tool 'echo' of server 'echo' from any client". */
function scope(item: { clients?: string[]; servers?: string[]; tools?: string[] }): string {
  return `calls to ${which('tool', item.tools)} of ${which('server', item.servers)} from ${which('client', item.clients)}`;
}

const VERBS: Record<PolicyRule['action'], string> = {
  allow: 'allows',
  deny: 'refuses',
  ask: 'asks the operator in VS Code before',
};

export function ruleInWords(rule: PolicyRule): string {
  const when = rule.when ? ` when ${rule.when}` : '';
  const told = rule.message && rule.action !== 'allow' ? `; the agent is told "${rule.message}"` : '';
  return `rule '${rule.name}' ${VERBS[rule.action]} ${scope(rule)}${when}${told}`;
}

export function limitInWords(limit: RateLimit): string {
  const budget = [
    limit.callsPerMinute !== undefined ? `${limit.callsPerMinute} calls per minute` : undefined,
    limit.concurrent !== undefined ? `${limit.concurrent} at once` : undefined,
  ]
    .filter(Boolean)
    .join(' and ');
  const per = { client: 'each client', tool: 'each tool', 'client-and-tool': 'each client on each tool' }[limit.per];
  return `limit '${limit.name}' allows ${budget} for ${per}, counting ${scope(limit)}`;
}

/** Every rule (in the order they are checked) and limit of a policy, one sentence each. */
export function policyInWords(def: PolicyDef): string[] {
  return [...def.rules.map(ruleInWords), ...def.limits.map(limitInWords)];
}

/**
 * What approving `written` changes against the version in force, rule by rule and limit by limit
 * (by name): added, changed, removed. Empty when nothing is in force (everything is new).
 */
export function policyChanges(inForce: PolicyDef | undefined, written: PolicyDef): string[] {
  if (!inForce) return [];
  const lines: string[] = [];
  const compare = <T extends { name: string }>(kind: string, before: T[], after: T[]) => {
    const old = new Map(before.map((x) => [x.name, JSON.stringify(x)]));
    const now = new Map(after.map((x) => [x.name, JSON.stringify(x)]));
    for (const [name, text] of now) {
      if (!old.has(name)) lines.push(`new ${kind} '${name}'`);
      else if (old.get(name) !== text) lines.push(`changed ${kind} '${name}'`);
    }
    for (const name of old.keys()) if (!now.has(name)) lines.push(`removed ${kind} '${name}'`);
  };
  compare('rule', inForce.rules, written.rules);
  compare('limit', inForce.limits, written.limits);
  const order = (d: PolicyDef) => d.rules.map((r) => r.name).join(',');
  if (lines.length === 0 && order(inForce) !== order(written)) lines.push('the rules are checked in a new order');
  if (lines.length === 0 && (inForce.description ?? '') !== (written.description ?? ''))
    lines.push('only the description');
  return lines;
}
