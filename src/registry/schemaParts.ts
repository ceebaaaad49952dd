// The building blocks every kind of registry file shares: the entry name, glob lists, duplicate
// checks and durations. One place, so a name is validated the same way in a server, a prompt and a client.

import { z } from 'zod';
import { NAME_PATTERN, RESERVED_NAME, validateName } from './names';

// validateName gives one precise reason; the regex is chained only so the JSON Schema carries a
// `pattern` for the editor. `abort` keeps the regex from repeating a failure already explained.
export const nameSchema = z
  .string()
  .refine((s) => validateName(s) === undefined, { abort: true, error: (iss) => validateName(iss.input as string) })
  .regex(NAME_PATTERN)
  .meta({
    description:
      "Key of this entry: lowercase letters, digits and '-', starting with a letter, at most 31 characters, no '__'. " +
      'Must equal the file name without its extension; may be omitted, in which case the file name is used.',
    not: { const: RESERVED_NAME },
  });

export const globList = (what: string) =>
  z.array(z.string().min(1, { error: 'a glob must not be empty' })).meta({
    description: `${what} Globs: '*' matches any run of characters, '?' one character.`,
  });

export const noDuplicates =
  <T>(label: string) =>
  (items: readonly T[], ctx: z.RefinementCtx) => {
    const seen = new Set<T>();
    items.forEach((item, i) => {
      if (seen.has(item))
        ctx.addIssue({ code: 'custom', path: [i], message: `'${String(item)}' is listed twice in '${label}'` });
      seen.add(item);
    });
  };

export const positiveMs = (description: string, dflt: number) =>
  z.number().int().positive().default(dflt).meta({ description });
