// A server's guardrails as the console's Guardrails tab shows them, without the DOM: the rules and
// limits in force that can apply to its calls (with each limit's current counts), and the recent
// calls to it that a guardrail decided, from the audit log. Shared by the webview and its unit tests.
import type { AuditRecord, ServerGuardrail } from '../src/broker/control/controlApi';

export interface GuardrailRuleRow {
  name: string;
  /** allow, deny, ask, or limit. */
  action: ServerGuardrail['action'];
  /** Which of the server's calls: "tools write_*, edit_file · clients copilot" or "every call". */
  applies: string;
  /** The CEL condition, or the limit's budget ("30/min, per client"); '' for none. */
  condition: string;
  /** The limit's counts now, in words; '' for a rule or an idle limit. */
  counts: string;
  /** The policy file it comes from, relative to the registry root. */
  source: string;
}

export type Decision = 'allow' | 'deny' | 'ask: accepted' | 'ask: refused' | 'over limit';

export interface GuardrailDecisionRow {
  at: string;
  /** `<policy>/<rule>` or `<policy>/<limit>`. */
  rule: string;
  decision: Decision;
  client: string;
  tool: string;
}

export function ruleRows(guardrails: readonly ServerGuardrail[] | undefined): GuardrailRuleRow[] {
  return (guardrails ?? []).map((g) => {
    const applies = [
      g.tools ? `tools ${g.tools.join(', ')}` : undefined,
      g.clients ? `clients ${g.clients.join(', ')}` : undefined,
    ].filter(Boolean);
    const counts = (g.usage ?? [])
      .map((u) => `${u.counted}: ${u.lastMinute} in the last minute${u.inFlight ? `, ${u.inFlight} running` : ''}`)
      .join('; ');
    return {
      name: g.name,
      action: g.action,
      applies: applies.length ? applies.join(' · ') : 'every call',
      condition: g.action === 'limit' ? (g.detail ?? '') : g.when ? `when ${g.when}` : '',
      counts,
      source: `policies.d/${g.policy}.yaml`,
    };
  });
}

/** What a guardrail decided about one audited call; undefined when none decided it. */
function decisionOf(e: AuditRecord): Decision | undefined {
  if (typeof e.rateLimited === 'string') return 'over limit';
  if (typeof e.rule !== 'string') return undefined;
  if (e.ruleAction === 'allow') return 'allow';
  if (e.ruleAction === 'deny') return 'deny';
  if (e.ruleAction === 'ask') return e.operatorAnswer === 'accept' ? 'ask: accepted' : 'ask: refused';
  return undefined;
}

/** The calls to `server` a rule or limit decided, newest first, at most `max`. */
export function decisionRows(entries: readonly AuditRecord[], server: string, max = 50): GuardrailDecisionRow[] {
  const rows: GuardrailDecisionRow[] = [];
  for (let i = entries.length - 1; i >= 0 && rows.length < max; i--) {
    const e = entries[i];
    if (e.event !== 'call' || e.server !== server) continue;
    const decision = decisionOf(e);
    if (!decision) continue;
    // A call a limit refused may also carry the rule that let it through: the limit decided it.
    const rule = decision === 'over limit' ? String(e.rateLimited) : String(e.rule);
    const client = e.operator === true ? 'operator' : typeof e.client === 'string' ? e.client : '—';
    rows.push({ at: e.at, rule, decision, client, tool: String(e.tool) });
  }
  return rows;
}
