// Prompt templates: the placeholder syntax lives next to the schema that validates it, so the
// broker renders with exactly the rule the loader checked.

import { PLACEHOLDER_PATTERN, type PromptDef } from './schema';

export interface RenderedMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * Replaces every `{{arg}}` in the prompt's messages with `args[arg]`.
 * Throws if a required argument is missing; an optional one that is missing becomes ''.
 * Values are inserted verbatim (no re-expansion), so an argument containing `{{x}}` stays literal.
 */
export function renderPromptMessages(
  def: PromptDef,
  args: Readonly<Record<string, string | undefined>>,
): RenderedMessage[] {
  const missing = def.arguments.filter((a) => a.required && args[a.name] === undefined).map((a) => a.name);
  if (missing.length > 0) {
    throw new Error(
      `prompt '${def.name}' needs the argument${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')}`,
    );
  }
  return def.messages.map((m) => ({
    role: m.role,
    content: m.content.replace(PLACEHOLDER_PATTERN, (_whole, name: string) => args[name] ?? ''),
  }));
}
