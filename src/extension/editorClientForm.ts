// Pure logic of the editor as fallback client (no vscode): a form elicitation's requested schema as a
// sequence of input steps with validation and the result content, the origin the broker attached,
// and the sampling request as plain messages. editorClient.ts puts these on VS Code's quick input.

import { ORIGIN_META } from '../broker/supervision/serverRequestDispatch';
import { trustBadge } from './presentation';

type Json = Record<string, unknown>;

/** Which server asks, its trust tier, and the client whose call caused it (when known). */
export interface Origin {
  server: string;
  trust: string;
  client?: string;
}

export function originOf(params: Json): Origin {
  const meta = (params._meta as Json | undefined)?.[ORIGIN_META] as Json | undefined;
  const server = typeof meta?.server === 'string' ? meta.server : 'an MCP server';
  const trust = typeof meta?.trust === 'string' ? meta.trust : 'community';
  const client = typeof meta?.client === 'string' ? meta.client : undefined;
  return { server, trust, ...(client ? { client } : {}) };
}

/** The trust tier as the Servers view shows it. */
export function trustLabel(trust: string): string {
  return trustBadge(trust as Parameters<typeof trustBadge>[0]);
}

export interface Option {
  value: string;
  label: string;
}

/** One question of a form: a quick pick (`boolean`, `enum`, `multi`) or an input box (`text`, `number`). */
export interface FormStep {
  key: string;
  label: string;
  description?: string;
  required: boolean;
  kind: 'text' | 'number' | 'boolean' | 'enum' | 'multi';
  options: Option[];
  /** The schema's default, as the input shows it first. */
  initial?: string | string[];
  /** Why the typed text is not acceptable, or undefined when it is (text and number steps). */
  validate(text: string): string | undefined;
  /** The value for the result's content; undefined leaves an optional field out. */
  toValue(answer: string | string[]): unknown;
}

/** A requested schema this client cannot put as questions (the spec allows only flat primitives). */
export class UnsupportedForm extends Error {}

const FORMATS: Record<string, { test(s: string): boolean; what: string }> = {
  email: { test: (s) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s), what: 'an email address' },
  uri: { test: (s) => /^[a-z][a-z0-9+.-]*:\S+$/i.test(s), what: 'a URI (https://…)' },
  date: { test: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)), what: 'a date (YYYY-MM-DD)' },
  'date-time': { test: (s) => !Number.isNaN(Date.parse(s)) && /\d{4}-\d{2}-\d{2}T/.test(s), what: 'a date and time' },
};

function options(prop: Json): Option[] | undefined {
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? (prop.enumNames as unknown[]) : [];
    return (prop.enum as unknown[]).map((v, i) => ({
      value: String(v),
      label: typeof names[i] === 'string' ? (names[i] as string) : String(v),
    }));
  }
  const titled = (prop.oneOf ?? prop.anyOf) as Json[] | undefined;
  if (Array.isArray(titled) && titled.every((o) => o && typeof o === 'object' && 'const' in o)) {
    return titled.map((o) => ({
      value: String(o.const),
      label: typeof o.title === 'string' ? o.title : String(o.const),
    }));
  }
  return undefined;
}

function lengthRule(prop: Json, text: string): string | undefined {
  const { minLength, maxLength } = prop;
  if (typeof minLength === 'number' && text.length < minLength) return `At least ${minLength} characters.`;
  if (typeof maxLength === 'number' && text.length > maxLength) return `At most ${maxLength} characters.`;
  const format = typeof prop.format === 'string' ? FORMATS[prop.format] : undefined;
  if (format && !format.test(text)) return `Enter ${format.what}.`;
  return undefined;
}

function numberRule(prop: Json, integer: boolean, text: string): string | undefined {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(n)) return integer ? 'Enter a whole number.' : 'Enter a number.';
  if (integer && !Number.isInteger(n)) return 'Enter a whole number.';
  if (typeof prop.minimum === 'number' && n < prop.minimum) return `At least ${prop.minimum}.`;
  if (typeof prop.maximum === 'number' && n > prop.maximum) return `At most ${prop.maximum}.`;
  return undefined;
}

function step(key: string, prop: Json, required: boolean): FormStep {
  const label = typeof prop.title === 'string' ? prop.title : key;
  const description = typeof prop.description === 'string' ? prop.description : undefined;
  const base = { key, label, description, required };
  const optionalEmpty = (text: string): boolean => !required && text === '';
  const type = prop.type;
  if (type === 'array') {
    const items = (prop.items ?? {}) as Json;
    const choices = options(items);
    if (!choices) throw new UnsupportedForm(`field '${key}' is a list without a fixed set of choices`);
    const initial = Array.isArray(prop.default) ? (prop.default as unknown[]).map(String) : undefined;
    return {
      ...base,
      kind: 'multi',
      options: choices,
      initial,
      validate: () => undefined,
      toValue: (answer) => {
        const picked = Array.isArray(answer) ? answer : [answer];
        return !required && picked.length === 0 ? undefined : picked;
      },
    };
  }
  if (type === 'boolean') {
    const yesNo = [
      { value: 'true', label: 'Yes' },
      { value: 'false', label: 'No' },
    ];
    const initial = typeof prop.default === 'boolean' ? String(prop.default) : undefined;
    return {
      ...base,
      kind: 'boolean',
      options: yesNo,
      initial,
      validate: () => undefined,
      toValue: (answer) => (answer === '' ? undefined : answer === 'true'),
    };
  }
  if (type === 'number' || type === 'integer') {
    const integer = type === 'integer';
    return {
      ...base,
      kind: 'number',
      options: [],
      initial: typeof prop.default === 'number' ? String(prop.default) : undefined,
      validate: (text) => (optionalEmpty(text) ? undefined : numberRule(prop, integer, text)),
      toValue: (answer) => (answer === '' ? undefined : Number(String(answer).trim())),
    };
  }
  if (type === 'string' || type === undefined) {
    const choices = options(prop);
    const initial = typeof prop.default === 'string' ? prop.default : undefined;
    if (choices) {
      const toValue = (answer: string | string[]): unknown => answer || undefined;
      return { ...base, kind: 'enum', options: choices, initial, validate: () => undefined, toValue };
    }
    return {
      ...base,
      kind: 'text',
      options: [],
      initial,
      validate: (text) => {
        if (optionalEmpty(text)) return undefined;
        if (required && text === '') return 'This field is required.';
        return lengthRule(prop, text);
      },
      toValue: (answer) => (answer === '' ? undefined : answer),
    };
  }
  throw new UnsupportedForm(`field '${key}' has type '${String(type)}', which a form cannot ask for`);
}

/** The questions of a form elicitation, one per property, in the schema's order. */
export function formSteps(requestedSchema: unknown): FormStep[] {
  const schema = (requestedSchema ?? {}) as Json;
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  if (typeof properties !== 'object' || Array.isArray(properties)) throw new UnsupportedForm('no properties to ask');
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([key, prop]) => step(key, (prop ?? {}) as Json, required.has(key)));
}

/** The title of one step: who asks (server and trust tier) and which field (the input shows the step count). */
export function stepTitle(origin: Origin, formStep: FormStep): string {
  const optional = formStep.required ? '' : ' (optional)';
  return `${origin.server} (${trustLabel(origin.trust)}) asks: ${formStep.label}${optional}`;
}

/** The line under the input: the server's message, the field's description, and for whom it asks. */
export function stepPrompt(message: string, origin: Origin, formStep: FormStep): string {
  const parts = [message];
  if (formStep.description) parts.push(formStep.description);
  if (origin.client) parts.push(`(for client '${origin.client}')`);
  return parts.join(' — ');
}

/** The result content from the answers by key; optional fields left empty are left out. */
export function formContent(steps: FormStep[], answers: Map<string, string | string[]>): Json {
  const content: Json = {};
  for (const s of steps) {
    const answer = answers.get(s.key);
    if (answer === undefined) continue;
    const value = s.toValue(answer);
    if (value !== undefined) content[s.key] = value;
  }
  return content;
}

/** The origin of a URL (what the person is asked to trust), or undefined for a URL that cannot be opened. */
export function urlOrigin(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/** A sampling request's messages as plain text turns (images and audio are described, not sent). */
export function samplingMessages(params: Json): { role: 'user' | 'assistant'; text: string }[] {
  const out: { role: 'user' | 'assistant'; text: string }[] = [];
  if (typeof params.systemPrompt === 'string' && params.systemPrompt) {
    out.push({ role: 'user', text: params.systemPrompt });
  }
  for (const m of (params.messages ?? []) as Json[]) {
    const parts = Array.isArray(m.content) ? (m.content as Json[]) : [m.content as Json];
    const text = parts
      .map((c) => (c?.type === 'text' && typeof c.text === 'string' ? c.text : `[${String(c?.type ?? 'content')}]`))
      .join('\n');
    out.push({ role: m.role === 'assistant' ? 'assistant' : 'user', text });
  }
  return out;
}

/** The sampling answer as MCP's CreateMessageResult. */
export function samplingResult(text: string, model: string): Json {
  return { role: 'assistant', content: { type: 'text', text }, model, stopReason: 'endTurn' };
}
