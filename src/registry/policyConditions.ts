// The `when` conditions of guardrail rules (policies.d/): CEL, checked here so that a mistake is
// reported with its file, line and column by the loader and live in the editor, and compiled here
// so the broker evaluates exactly what was checked. @marcbachmann/cel-js was chosen by measurement
// (docs/stack.md): the fastest to compile and evaluate, the smallest, and its errors carry a position.
import type * as Cel from '@marcbachmann/cel-js' with { 'resolution-mode': 'import' };

/** What a condition sees of a call. */
export interface ConditionInput {
  args: Record<string, unknown>;
  client: string;
  server: string;
  tool: string;
}

export type CompiledCondition = (input: ConditionInput) => boolean;

export type ConditionCheck =
  | { ok: true; evaluate: CompiledCondition }
  /** `offset`: where in the condition's text the problem is (0-based), when the evaluator knows. */
  | { ok: false; message: string; offset?: number };

let environment: Cel.Environment | undefined;

/** One environment for every condition: the four variables, typed, so a typo is caught when the file loads. */
function celEnvironment(): Cel.Environment {
  if (environment) return environment;
  // Loaded on first use: only a registry with policies pays for the evaluator. The package is ESM;
  // Node 20.19+ and the bundler both load it with require().
  /* eslint-disable @typescript-eslint/no-require-imports */
  const cel = require('@marcbachmann/cel-js') as typeof Cel;
  /* eslint-enable @typescript-eslint/no-require-imports */
  environment = new cel.Environment()
    .registerVariable('args', 'map')
    .registerVariable('client', 'string')
    .registerVariable('server', 'string')
    .registerVariable('tool', 'string');
  return environment;
}

/** The evaluator's message without its drawn excerpt (the problem already says where). */
function firstLine(message: string): string {
  return message.split('\n')[0].trim();
}

const compiled = new Map<string, ConditionCheck>();
const COMPILED_KEPT = 1000;

/** Checks and compiles one condition (cached by its text: a reload re-checks only what changed). */
export function compileCondition(text: string): ConditionCheck {
  const known = compiled.get(text);
  if (known) return known;
  const result = compileUncached(text);
  if (compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
  compiled.set(text, result);
  return result;
}

function compileUncached(text: string): ConditionCheck {
  const env = celEnvironment();
  let checked: ReturnType<Cel.Environment['check']>;
  try {
    checked = env.check(text);
  } catch (err) {
    return { ok: false, message: firstLine((err as Error).message), offset: positionOf(err) };
  }
  if (!checked.valid) {
    const error = checked.error;
    return { ok: false, message: firstLine(error?.message ?? 'not a valid CEL expression'), offset: positionOf(error) };
  }
  if (checked.type !== 'bool' && checked.type !== 'dyn')
    return { ok: false, message: `a condition must be true or false; this one gives a value of type ${checked.type}` };
  const program = env.parse(text);
  return { ok: true, evaluate: (input) => program(input as unknown as Record<string, unknown>) === true };
}

function positionOf(error: unknown): number | undefined {
  const pos = (error as { node?: { pos?: unknown } } | undefined)?.node?.pos;
  return typeof pos === 'number' ? pos : undefined;
}

/** A rule whose condition does not compile, as the loader reports it. */
export interface ConditionProblem {
  path: (string | number)[];
  message: string;
  offset?: number;
}

/** Every rule's `when` that does not compile, with where in it the evaluator stopped. */
export function conditionProblems(rules: readonly { name: string; when?: string }[]): ConditionProblem[] {
  const problems: ConditionProblem[] = [];
  rules.forEach((rule, i) => {
    if (rule.when === undefined) return;
    const check = compileCondition(rule.when);
    if (!check.ok)
      problems.push({
        path: ['rules', i, 'when'],
        message: `rule '${rule.name}': its condition is not valid CEL: ${check.message}`,
        offset: check.offset,
      });
  });
  return problems;
}
