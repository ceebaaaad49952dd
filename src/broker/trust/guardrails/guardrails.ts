// The guardrails on the tools/call path: the rule that decides a call (allow, deny, ask the
// operator), then the limits on how often and how many at once. One object for the broker, one
// call on the router's path (`around`), and what the state shows per policy and per server.
import { EventEmitter } from 'node:events';
import type { PolicyDef } from '../../../registry/schema';
import { ErrorCodes, McpFailure, type JsonObject } from '../../shared/mcpTypes';
import { askOperator, type EditorAsker } from './askOperator';
import { PolicyApprovalMismatch, PolicyApprovals, policyHash, type PolicyApprovalStatus } from './policyApprovals';
import { RateLimits, type LimitUsage, type RateRefusal } from './rateLimits';
import { globsMatch, RuleSet, type GuardedCall } from './ruleSet';

export type { GuardedCall } from './ruleSet';
export type { EditorAsker } from './askOperator';

/** Ends an admitted call's slot in the limits; calling it again does nothing. */
export type Release = () => void;

/** One policy as the operator sees it: where it stands and what they would approve. */
export interface PolicyStatus {
  name: string;
  status: PolicyApprovalStatus;
  /** The hash of the file as written now: approve_policy must send it back (absent: the file is gone). */
  hash?: string;
  /** The version in force (absent: nothing of this policy is in force). */
  inForce?: PolicyDef;
  /** The version written in policies.d/ (absent: the file is gone). */
  written?: PolicyDef;
}

/** One rule or limit in force that names a server, for its row in the tree and the console. */
export interface ServerGuardrail {
  policy: string;
  name: string;
  /** allow, deny, ask, or `limit` for a rate limit. */
  action: 'allow' | 'deny' | 'ask' | 'limit';
  tools?: string[];
  clients?: string[];
  when?: string;
  detail?: string;
  /** A limit's budgets that counted calls to this server in the last minute or hold calls now. */
  usage?: LimitUsage[];
}

interface GuardrailEvents {
  /** What is in force changed (an approval, a revocation): the state is pushed again. */
  changed: [];
}

export class Guardrails extends EventEmitter<GuardrailEvents> {
  private readonly approvals: PolicyApprovals;
  private written: ReadonlyMap<string, PolicyDef> = new Map();
  private inForce: ReadonlyMap<string, PolicyDef> = new Map();
  private rules = new RuleSet(new Map());
  private readonly rates: RateLimits;

  constructor(
    approvalsFile: string,
    root: string,
    private readonly editor: () => EditorAsker | undefined,
    now?: () => number,
  ) {
    super();
    this.approvals = new PolicyApprovals(approvalsFile, root);
    this.rates = new RateLimits(now);
    this.reload();
  }

  /** The policy files as the registry now has them (a reload); what is in force changes only by approval. */
  update(written: ReadonlyMap<string, PolicyDef>): void {
    this.written = written;
  }

  private reload(): void {
    this.inForce = new Map([...this.approvals.approved()].map(([name, entry]) => [name, entry.def]));
    this.rules = new RuleSet(this.inForce);
    this.rates.update(this.inForce);
    this.emit('changed');
  }

  /**
   * Admits a call or throws the refusal the agent sees (-32003 for a rule, -32006 with
   * retryAfterSeconds for a limit); `audit` gains the deciding rule. Admitted: what ends its slot in
   * the limits, undefined when nothing is in force (no promise unless the operator is asked).
   */
  admit(
    call: GuardedCall,
    audit: JsonObject,
    signal: AbortSignal | (() => AbortSignal),
  ): Release | Promise<Release> | undefined {
    if (this.rules.size === 0 && this.rates.size === 0) return undefined;
    const decision = this.rules.decide(call);
    if (!decision) return this.limit(call, audit);
    const { policy, rule } = decision;
    audit.rule = `${policy}/${rule.name}`;
    audit.ruleAction = rule.action;
    const refusal = (why: string) =>
      new McpFailure(ErrorCodes.Forbidden, rule.message ? `${rule.message} (${why})` : why, {
        policy,
        rule: rule.name,
      });
    if (rule.action === 'deny') {
      throw refusal(
        decision.conditionError
          ? `rule '${rule.name}' of policy '${policy}' refuses calls its condition cannot judge: ${decision.conditionError}`
          : `refused by rule '${rule.name}' of policy '${policy}'`,
      );
    }
    if (rule.action === 'allow') return this.limit(call, audit);
    // The call's signal is read only here (the per-call path makes none otherwise).
    const cancelled = typeof signal === 'function' ? signal() : signal;
    return askOperator(this.editor(), call, policy, rule, cancelled).then((answer) => {
      audit.operatorAnswer = answer;
      if (answer === 'accept') return this.limit(call, audit);
      throw refusal(
        answer === 'no-editor'
          ? `rule '${rule.name}' of policy '${policy}' needs the operator to confirm this call, and no VS Code window is connected`
          : `the operator declined this call (rule '${rule.name}' of policy '${policy}')`,
      );
    });
  }

  private limit(call: GuardedCall, audit: JsonObject): Release {
    const admitted = this.rates.admit(call);
    if ('refused' in admitted) {
      audit.rateLimited = `${admitted.refused.policy}/${admitted.refused.limit}`;
      throw rateRefusal(admitted.refused);
    }
    return admitted.release;
  }

  /** Every policy written or in force, and where it stands. */
  statuses(): PolicyStatus[] {
    const names = new Set([...this.written.keys(), ...this.inForce.keys()]);
    return [...names].sort().map((name) => {
      const written = this.written.get(name);
      return {
        name,
        status: this.approvals.status(name, written),
        ...(written ? { hash: policyHash(written), written } : {}),
        ...(this.inForce.has(name) ? { inForce: this.inForce.get(name) } : {}),
      };
    });
  }

  /** The rules and limits in force that can apply to a server's calls. */
  forServer(server: string): ServerGuardrail[] {
    const rows: ServerGuardrail[] = this.rules.forServer(server).map(({ policy, rule }) => ({
      policy,
      name: rule.name,
      action: rule.action,
      ...(rule.tools ? { tools: rule.tools } : {}),
      ...(rule.clients ? { clients: rule.clients } : {}),
      ...(rule.when ? { when: rule.when } : {}),
    }));
    for (const [policy, def] of this.inForce)
      for (const limit of def.limits) {
        if (!globsMatch(limit.servers, server)) continue;
        const usage = this.rates.usage(policy, limit.name, server);
        rows.push({
          policy,
          name: limit.name,
          action: 'limit',
          ...(limit.tools ? { tools: limit.tools } : {}),
          ...(limit.clients ? { clients: limit.clients } : {}),
          detail: [
            limit.callsPerMinute !== undefined ? `${limit.callsPerMinute}/min` : undefined,
            limit.concurrent !== undefined ? `${limit.concurrent} at once` : undefined,
            `per ${limit.per.replace(/-/g, ' ')}`,
          ]
            .filter(Boolean)
            .join(', '),
          ...(usage.length ? { usage } : {}),
        });
      }
    return rows;
  }

  /** The operator approves the policy as written now (hash: what they were shown). */
  approve(name: string, hash: string): PolicyStatus {
    const written = this.written.get(name);
    if (!written)
      throw new McpFailure(
        ErrorCodes.InvalidParams,
        `No policy file named '${name}' in policies.d/; to take a removed policy out of force, revoke it.`,
      );
    try {
      this.approvals.approve(written, hash);
    } catch (err) {
      if (err instanceof PolicyApprovalMismatch) throw new McpFailure(ErrorCodes.InvalidParams, err.message);
      throw err;
    }
    this.reload();
    return this.statuses().find((s) => s.name === name)!;
  }

  /** The operator takes a policy out of force (a removed file's rules end here). */
  revoke(name: string): { revoked: boolean } {
    const revoked = this.approvals.revoke(name);
    this.reload();
    return { revoked };
  }
}

function rateRefusal(r: RateRefusal): McpFailure {
  const what =
    r.kind === 'per-minute'
      ? `${r.allowed} calls per minute are allowed for ${r.counted}`
      : `${r.allowed} calls at once are allowed for ${r.counted}`;
  return new McpFailure(
    ErrorCodes.RateLimited,
    `Too many calls: ${what} (limit '${r.limit}' of policy '${r.policy}'). Try again in ${r.retryAfterSeconds} s.`,
    { policy: r.policy, limit: r.limit, kind: r.kind, allowed: r.allowed, retryAfterSeconds: r.retryAfterSeconds },
  );
}
