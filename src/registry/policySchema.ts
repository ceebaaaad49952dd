// The guardrail policy files (policies.d/<name>.yaml): rules that decide how a tool may be called
// (allow, deny with a message, ask the operator) and limits on how often. The registry only checks
// their shape; the broker compiles each `when` condition (CEL) and reports a bad one with its
// file and line like any other problem (src/broker/trust/guardrails/).

import { z } from 'zod';
import { globList, nameSchema } from './schemaParts';

const RULE_NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** What a rule or limit applies to: every glob list absent means "any". */
const matchFields = {
  clients: globList('Registry client names (clients.d/) this applies to; absent: every client.').optional(),
  servers: globList('Server names this applies to (the facade is `switchboard`); absent: every server.').optional(),
  tools: globList("The tool's own name on its server (not the namespaced one); absent: every tool.").optional(),
};

export const PolicyRuleSchema = z
  .object({
    name: z
      .string()
      .regex(RULE_NAME, { error: "a rule name is lowercase letters, digits and '-', starting with a letter" })
      .meta({ description: 'Names the rule in refusals, the audit log, the tree and the console.' }),
    ...matchFields,
    when: z
      .string()
      .min(1, { error: "'when' must not be empty; leave it out to match every call" })
      .optional()
      .meta({
        description:
          'A CEL condition over the call: args (the arguments), client, server, tool. ' +
          'Example: args.path.startsWith("docs/"). Absent: every matching call.',
      }),
    action: z.enum(['allow', 'deny', 'ask']).meta({
      description:
        'allow: the call goes on (later rules are not consulted). deny: refused with message. ' +
        'ask: the operator confirms in VS Code; refused when no editor is connected.',
    }),
    message: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'What the agent is told when this rule refuses a call (deny, or ask declined).' }),
  })
  .strict();

export const RateLimitSchema = z
  .object({
    name: z
      .string()
      .regex(RULE_NAME, { error: "a limit name is lowercase letters, digits and '-', starting with a letter" }),
    ...matchFields,
    per: z
      .enum(['client', 'tool', 'client-and-tool'])
      .default('client-and-tool')
      .meta({
        description:
          'Who shares one budget: each client (all its matching tools together), each tool (all clients ' +
          'together), or each client on each tool (the default).',
      }),
    callsPerMinute: z.number().int().positive().optional().meta({ description: 'Calls started in any 60 seconds.' }),
    concurrent: z.number().int().positive().optional().meta({ description: 'Calls in flight at once.' }),
  })
  .strict()
  .refine((l) => l.callsPerMinute !== undefined || l.concurrent !== undefined, {
    error: "a limit needs 'callsPerMinute', 'concurrent' or both",
  });

export const PolicyDefSchema = z
  .object({
    name: nameSchema,
    description: z.string().optional(),
    rules: z.array(PolicyRuleSchema).default([]).meta({
      description:
        'Checked in order, files in name order; the first rule that matches decides. No match: the call goes on.',
    }),
    limits: z.array(RateLimitSchema).default([]).meta({ description: 'Every matching limit applies.' }),
  })
  .strict()
  .superRefine((p, ctx) => {
    // A refusal and the audit log name the rule: two of one name would leave the reader guessing.
    for (const key of ['rules', 'limits'] as const) {
      const seen = new Set<string>();
      p[key].forEach((item, i) => {
        if (seen.has(item.name))
          ctx.addIssue({
            code: 'custom',
            path: [key, i, 'name'],
            message: `'${item.name}' names two entries of '${key}'`,
          });
        seen.add(item.name);
      });
    }
  });

export type PolicyDef = z.output<typeof PolicyDefSchema>;
export type PolicyRule = z.output<typeof PolicyRuleSchema>;
export type RateLimit = z.output<typeof RateLimitSchema>;
