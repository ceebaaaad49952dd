// The console form's model, without the DOM: form fields ⇄ a registry definition, validated by
// the registry's zod schema. Shared by the webview and its unit tests.
import { explainIssues } from '../src/registry/issues';
import { lintDefinition } from '../src/registry/lint';
import { ServerDefSchema } from '../src/registry/schema';
import type { ConsoleState, Definition } from './protocol';

export const FIELDS = [
  'name',
  'description',
  'trust',
  'transport',
  'command',
  'args',
  'cwd',
  'env',
  'envFile',
  'url',
  'headers',
  'grants',
  'allowedTools',
  'excludeTools',
  'enabled',
  'lifecycle',
] as const;
export type Field = (typeof FIELDS)[number];
/** Keys the form shows; any other key of a loaded definition (restart, timeouts, idleStopMs) is kept as is. */
export const SHOWN = new Set<string>(FIELDS);

/** A warning, not a reason to refuse: saving a new server under an existing name replaces it. */
export const REPLACES = 'saving replaces it';

export function formFromDefinition(def: Definition | undefined): ConsoleState['form'] {
  const d = def ?? {};
  const lines = (v: unknown): string => (Array.isArray(v) ? v.join('\n') : '');
  const kv = (v: unknown, sep: string): string =>
    v && typeof v === 'object'
      ? Object.entries(v as Record<string, string>)
          .map(([k, x]) => `${k}${sep}${x}`)
          .join('\n')
      : '';
  return {
    name: String(d.name ?? ''),
    description: String(d.description ?? ''),
    trust: String(d.trust ?? 'community'),
    transport: String(d.transport ?? 'stdio'),
    command: String(d.command ?? ''),
    args: lines(d.args),
    cwd: String(d.cwd ?? ''),
    env: kv(d.env, '='),
    envFile: String(d.envFile ?? ''),
    url: String(d.url ?? ''),
    headers: kv(d.headers, ': '),
    grants: Array.isArray(d.grants) ? (d.grants as string[]) : [],
    allowedTools: lines(d.allowedTools),
    excludeTools: lines(d.excludeTools),
    enabled: d.enabled !== false,
    lifecycle: d.lifecycle === 'eager' || d.lifecycle === 'lazy' ? d.lifecycle : '',
  };
}

export function extrasOf(def: Definition | undefined): Definition {
  const out: Definition = {};
  for (const [k, v] of Object.entries(def ?? {})) if (!SHOWN.has(k)) out[k] = v;
  return out;
}

export interface Built {
  definition: Definition;
  errors: Map<string, string[]>;
  /** The registry's warnings (valid, but probably not meant): shown, never blocking. */
  warnings: Map<string, string[]>;
}

function splitLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

function globs(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((l) => l.trim())
    .filter(Boolean);
}

export interface BuildContext {
  /** Fields of the loaded definition the form does not show (restart, timeouts): kept as they were. */
  extras: Definition;
  mode: 'new' | 'edit';
  existingNames: readonly string[];
}

/**
 * Form → definition, plus every problem with it: what the form itself sees (a malformed KEY=value
 * line) and what the registry's own zod schema says (the same check the broker's writer makes),
 * keyed by the field to show it under (`form` for the rest).
 */
export function buildDefinition(form: ConsoleState['form'], ctx: BuildContext): Built {
  const errors = new Map<string, string[]>();
  const add = (field: string, msg: string): void => {
    errors.set(field, [...(errors.get(field) ?? []), msg]);
  };
  const str = (k: Field): string => String(form[k] ?? '').trim();
  const def: Definition = {
    ...ctx.extras,
    name: str('name'),
    trust: str('trust') || 'community',
    transport: str('transport') || 'stdio',
  };
  if (str('description')) def.description = str('description');
  if (def.transport === 'stdio') {
    if (str('command')) def.command = str('command');
    const args = String(form.args ?? '')
      .split('\n')
      .map((a) => a.trim())
      .filter((a) => a !== '');
    if (args.length) def.args = args;
    if (str('cwd')) def.cwd = str('cwd');
    if (str('envFile')) def.envFile = str('envFile');
    const env: Record<string, string> = {};
    splitLines(String(form.env ?? '')).forEach((line, i) => {
      const m = /^([^=\s]+)\s*=\s*(.*)$/.exec(line);
      if (!m) add('env', `line ${i + 1}: write KEY=value`);
      else env[m[1]] = m[2];
    });
    if (Object.keys(env).length) def.env = env;
  } else {
    if (str('url')) def.url = str('url');
    const headers: Record<string, string> = {};
    splitLines(String(form.headers ?? '')).forEach((line, i) => {
      const m = /^([^:\s]+)\s*:\s*(.*)$/.exec(line);
      if (!m) add('headers', `line ${i + 1}: write Name: value`);
      else headers[m[1]] = m[2];
    });
    if (Object.keys(headers).length) def.headers = headers;
  }
  const grants = (form.grants as string[] | undefined) ?? [];
  if (grants.length) def.grants = ['network', 'secrets', 'filesystem'].filter((g) => grants.includes(g));
  const allowed = globs(String(form.allowedTools ?? ''));
  if (allowed.length) def.allowedTools = allowed;
  const excluded = globs(String(form.excludeTools ?? ''));
  if (excluded.length) def.excludeTools = excluded;
  if (form.enabled === false) def.enabled = false;
  // Empty: the trust tier's default (lifecycleOf in the registry schema).
  if (str('lifecycle')) def.lifecycle = str('lifecycle');

  // The same zod schema the broker's writer and loader use: what passes here saves.
  const parsed = ServerDefSchema.safeParse(def);
  const warnings = new Map<string, string[]>();
  if (parsed.success) {
    // The same warnings the Problems view shows for the YAML file.
    for (const lint of lintDefinition('server', parsed.data)) {
      const top = String(lint.path[0] ?? 'form');
      const field = SHOWN.has(top) ? top : 'form';
      warnings.set(field, [...(warnings.get(field) ?? []), lint.message]);
    }
  } else {
    for (const issue of explainIssues(parsed.error.issues, ServerDefSchema, def)) {
      const top = String(issue.path[0] ?? 'name');
      const field = SHOWN.has(top) ? top : 'form';
      add(field, issue.message);
    }
  }
  if (ctx.mode === 'new' && def.name && ctx.existingNames.includes(String(def.name))) {
    add('name', `a server named '${String(def.name)}' exists already; ${REPLACES}`);
  }
  return { definition: def, errors, warnings };
}

/** Whether the problems should stop a Save or a Probe (a name clash alone does not). */
export function isBlocking(built: Built): boolean {
  return [...built.errors.entries()].some(([f, msgs]) => !(f === 'name' && msgs.every((m) => m.includes(REPLACES))));
}
