// The rules in force, compiled once per change: which one decides a call. Policies in name order,
// rules in file order; the first rule whose globs and condition match decides, none: the call goes on.
import { matchesGlob } from '../../../registry/names';
import { compileCondition, type CompiledCondition, type ConditionInput } from '../../../registry/policyConditions';
import type { PolicyDef, PolicyRule } from '../../../registry/schema';

/** A call as the rules see it. */
export interface GuardedCall {
  client: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  args: Record<string, unknown>;
}

export interface CompiledRule {
  policy: string;
  rule: PolicyRule;
  condition?: CompiledCondition;
}

/** A rule that decided, with its condition's evaluation failure when that is why (fail closed). */
export interface Decision {
  policy: string;
  rule: PolicyRule;
  conditionError?: string;
}

/** Absent or empty-of-absence globs match everything; a listed glob must match. */
export function globsMatch(globs: readonly string[] | undefined, value: string): boolean {
  return globs === undefined || globs.some((g) => matchesGlob(value, g));
}

export class RuleSet {
  private readonly rules: CompiledRule[] = [];

  /** `policies`: the approved versions in force, by name. */
  constructor(policies: ReadonlyMap<string, PolicyDef>) {
    for (const name of [...policies.keys()].sort()) {
      for (const rule of policies.get(name)!.rules) {
        const compiled = rule.when === undefined ? undefined : compileCondition(rule.when);
        // An approved condition always compiled (the loader refuses a file whose condition does not);
        // were it ever not to, the rule is kept and its condition fails closed (below).
        const condition: CompiledCondition | undefined = !compiled
          ? undefined
          : compiled.ok
            ? compiled.evaluate
            : () => {
                throw new Error(compiled.message);
              };
        this.rules.push({ policy: name, rule, condition });
      }
    }
  }

  get size(): number {
    return this.rules.length;
  }

  /** The rules that name this server (or every server), for the tree and the console. */
  forServer(server: string): CompiledRule[] {
    return this.rules.filter((r) => globsMatch(r.rule.servers, server));
  }

  all(): readonly CompiledRule[] {
    return this.rules;
  }

  /**
   * The rule that decides this call, if any. A condition that cannot be evaluated (a field of the
   * wrong type, say) matches a deny or ask rule and not an allow rule: an error never lets a call through.
   */
  decide(call: GuardedCall): Decision | undefined {
    const input: ConditionInput = call;
    for (const { policy, rule, condition } of this.rules) {
      if (!globsMatch(rule.clients, call.client) || !globsMatch(rule.servers, call.server)) continue;
      if (!globsMatch(rule.tools, call.tool)) continue;
      if (!condition) return { policy, rule };
      try {
        if (condition(input)) return { policy, rule };
      } catch (err) {
        if (rule.action !== 'allow') return { policy, rule, conditionError: (err as Error).message.split('\n')[0] };
      }
    }
    return undefined;
  }
}
