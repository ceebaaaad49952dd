// The registry's data model: one zod schema per kind of file.
//
// These schemas are the single source of truth: the loader validates with them, the writer
// refuses anything they reject, and the editor's JSON Schemas are generated from them. Every
// object is strict because a misspelt key ("comand") silently ignored is a server that does
// not start for no visible reason.
//
// Field descriptions become hover text in the editor (via the generated JSON Schema), so they
// are written for the person editing the YAML.
// The server schema is in serverSchema.ts (the largest kind); prompts and clients are here.

import { z } from 'zod';
import { OPERATOR_NAME } from './names';
import { quoted } from './quote';
import { globList, nameSchema, noDuplicates } from './schemaParts';
import { ServerDefSchema, type ServerDef } from './serverSchema';
import { PolicyDefSchema, type PolicyDef } from './policySchema';

export { NAME_PATTERN } from './names';
export * from './serverSchema';
export * from './policySchema';

export type Kind = 'server' | 'prompt' | 'client' | 'policy';

export const KINDS: readonly Kind[] = ['server', 'prompt', 'client', 'policy'];

/** Directory (under the registry root) that holds each kind's files. */
export const KIND_DIRS: Record<Kind, string> = {
  server: 'mcp-servers.d',
  prompt: 'prompts.d',
  client: 'clients.d',
  policy: 'policies.d',
};

/** A definition's file relative to the registry root (`/`-separated; `path.join` it onto the root). */
export function definitionPath(kind: Kind, name: string): string {
  return `${KIND_DIRS[kind]}/${name}.yaml`;
}

/** The word used for a kind in messages ("a server", "this prompt"). */
export const KIND_NOUNS: Record<Kind, string> = {
  server: 'server',
  prompt: 'prompt',
  client: 'client',
  policy: 'policy',
};

// Placeholders look like {{argName}} (spaces inside the braces are allowed).
export const PLACEHOLDER_PATTERN = /\{\{\s*([^{}\s]*)\s*\}\}/g;

const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

export const PromptDefSchema = z
  .object({
    name: nameSchema,
    description: z.string().optional().meta({ description: 'Shown to clients listing prompts.' }),
    arguments: z
      .array(
        z
          .object({
            name: z.string().regex(ARG_NAME, {
              error: 'an argument name must be letters, digits, _ or -, starting with a letter or _',
            }),
            description: z.string().optional(),
            required: z.boolean().default(false),
          })
          .strict(),
      )
      .default([])
      .meta({ description: 'Arguments a client fills in; refer to them in messages as {{name}}.' }),
    messages: z
      .array(
        z
          .object({
            role: z.enum(['user', 'assistant']),
            content: z.string().meta({ description: 'Message text; {{argName}} is replaced by the argument value.' }),
          })
          .strict(),
      )
      .min(1, { error: "a prompt needs at least one entry in 'messages'" }),
  })
  .strict()
  .superRefine((p, ctx) => {
    const declared = new Set<string>();
    p.arguments.forEach((a, i) => {
      if (declared.has(a.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['arguments', i, 'name'],
          message: `argument '${a.name}' is declared twice`,
        });
      }
      declared.add(a.name);
    });
    p.messages.forEach((m, i) => {
      for (const match of m.content.matchAll(PLACEHOLDER_PATTERN)) {
        const arg = match[1];
        if (!declared.has(arg)) {
          const known = declared.size > 0 ? `declared: ${[...declared].join(', ')}` : 'no arguments are declared';
          ctx.addIssue({
            code: 'custom',
            path: ['messages', i, 'content'],
            message:
              arg === ''
                ? `empty placeholder '{{}}' in messages[${i}]`
                : `placeholder ${quoted(`{{${arg}}}`)} names no declared argument (${known})`,
          });
        }
      }
    });
  });

export const ClientDefSchema = z
  .object({
    name: nameSchema,
    description: z.string().optional(),
    mcp_allow: z
      .array(z.enum(['read', 'write']))
      .default(['read'])
      .superRefine(noDuplicates('mcp_allow'))
      .meta({
        description:
          'Which Switchboard control tools this client may call: read (list, status, logs) ' +
          'and/or write (enable, restart, upsert, ...).',
        uniqueItems: true,
      }),
    tools: z
      .object({
        allow: globList(
          'Only namespaced tools (server__tool) matching one of these globs are offered to this client.',
        ).optional(),
        deny: globList(
          'Namespaced tools matching any of these globs are hidden from this client (wins over allow).',
        ).optional(),
      })
      .strict()
      .optional()
      .meta({ description: "Tool profile, e.g. to stay under a client's tool limit (VS Code: 128)." }),
    toolMode: z
      .enum(['all', 'search'])
      .optional()
      .meta({
        description:
          'all (the default): every tool of the profile is listed. search: a session starts with the switchboard__ tools and ' +
          'pinnedTools, and each switchboard__find_tools call adds the tools it found to that session.',
      }),
    maxResultBytes: z
      .number()
      .int()
      .min(1024)
      .optional()
      .meta({
        description:
          'Largest tool result this client receives, in bytes: a larger one is cut to its head, with a note and a ' +
          'switchboard://results/<id> resource link to read the rest in pages of this size (kept for its session only).',
      }),
    maxResultTokens: z.number().int().min(256).optional().meta({
      description:
        'The same limit in tokens (cl100k_base, estimated past 256 KiB of text); with maxResultBytes too, pages are cut in bytes.',
    }),
    pinnedTools: globList(
      'In toolMode search, namespaced tools (server__tool) matching one of these globs are listed from the start ' +
        '(still within the tool profile).',
    ).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    // A client called 'operator' would read as the editor in logs and audit entries.
    if (c.name === OPERATOR_NAME) {
      const message = `the name '${OPERATOR_NAME}' is reserved for the editor's own identity`;
      ctx.addIssue({ code: 'custom', path: ['name'], message });
    }
  });

export type PromptDef = z.output<typeof PromptDefSchema>;
export type ClientDef = z.output<typeof ClientDefSchema>;

export interface DefByKind {
  server: ServerDef;
  prompt: PromptDef;
  client: ClientDef;
  policy: PolicyDef;
}
export type Definition = DefByKind[Kind];

export const SCHEMAS: { readonly [K in Kind]: z.ZodType<DefByKind[K]> } = {
  server: ServerDefSchema,
  prompt: PromptDefSchema,
  client: ClientDefSchema,
  policy: PolicyDefSchema,
};
