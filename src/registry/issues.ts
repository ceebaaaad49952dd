// Turns zod's issues into sentences a person editing YAML wants to read, e.g.
//   unknown key 'comand' (did you mean 'command'?)
//   'restart.maxRetries' must be a whole number, not the string 'x'
// Kept apart from the loader so message wording can change without touching file handling.

import type { z } from 'zod';
import type { DataPath } from './positions';
import { jsonQuoted, quoted } from './quote';
import type { ProblemFix } from './problems';

export type ZodIssue = z.ZodError['issues'][number];

export interface ExplainedIssue {
  /** Where in the data the problem is. */
  path: DataPath;
  /** Whether the key (unknown key, bad record key) or the value (wrong type) is at fault. */
  at: 'key' | 'value';
  message: string;
  /** The word at fault and its likely correction (a misspelt key or enum value). */
  fix?: ProblemFix;
}

/** `restart.maxRetries`, `args[0]`, `messages[1].content`. */
export function formatPath(p: DataPath): string {
  let out = '';
  for (const seg of p) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/** A path as messages show it: quoted, and cut short when a hostile key makes it long. */
function quotedPath(p: DataPath): string {
  return quoted(formatPath(p));
}

function valueAt(data: unknown, p: DataPath): unknown {
  let cur: unknown = data;
  for (const seg of p) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg as string];
  }
  return cur;
}

function short(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** How a YAML author would name what they wrote. */
function describeValue(v: unknown): string {
  if (v === null) return 'empty (null)';
  if (Array.isArray(v)) return 'a list';
  switch (typeof v) {
    case 'string':
      return `the string '${short(v)}'`;
    case 'number':
      return `the number ${v}`;
    case 'boolean':
      return `${v}`;
    case 'object':
      return 'a mapping';
    default:
      return typeof v;
  }
}

const EXPECTED_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping (key: value pairs)',
  record: 'a mapping (key: value pairs)',
};

function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** The closest candidate within a typo's distance, or undefined. */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDist = Infinity;
  for (const c of candidates) {
    const cl = c.toLowerCase();
    // A truncated key ('backof' for 'backoffMs') counts as a near miss too.
    const d = cl === lower ? 0 : lower.length >= 4 && cl.startsWith(lower) ? 1 : levenshtein(lower, cl);
    if (d < bestDist) {
      best = c;
      bestDist = d;
    }
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  return best !== undefined && bestDist <= limit ? best : undefined;
}

// zod 4 exposes each schema's definition as `_zod.def`; only the wrapper shapes that appear in
// the registry schemas are unwrapped here.
interface SchemaDef {
  type: string;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  shape?: Record<string, unknown>;
  valueType?: unknown;
}
function defOf(schema: unknown): SchemaDef | undefined {
  return (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;
}
function unwrap(schema: unknown): unknown {
  for (let d = defOf(schema); d; d = defOf(schema)) {
    if (d.innerType !== undefined) schema = d.innerType;
    else if (d.type === 'pipe' && d.in !== undefined) schema = d.in;
    else break;
  }
  return schema;
}

/** The keys an object schema accepts at `p`, for "did you mean" suggestions. */
export function knownKeysAt(schema: unknown, p: DataPath): string[] {
  let s = unwrap(schema);
  for (const seg of p) {
    const d = defOf(s);
    if (!d) return [];
    if (d.type === 'object' && d.shape) s = unwrap(d.shape[String(seg)]);
    else if (d.type === 'array') s = unwrap(d.element);
    else if (d.type === 'record') s = unwrap(d.valueType);
    else return [];
  }
  const d = defOf(s);
  return d?.type === 'object' && d.shape ? Object.keys(d.shape) : [];
}

// zod's built-in messages start like this; anything else was written by us in schema.ts and is
// already a sentence.
const ZOD_DEFAULT_MESSAGE = /^(Invalid|Too (small|big)|Unrecognized|Expected)/;

function explainDefault(issue: ZodIssue, data: unknown): string {
  const where = quotedPath(issue.path);
  const value = valueAt(data, issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      const expected = EXPECTED_WORDS[issue.expected] ?? issue.expected;
      if (value === undefined)
        return issue.path.length === 0 ? `the file must contain ${expected}` : `${where} is required`;
      if (issue.path.length === 0) return `the file must contain ${expected}, not ${describeValue(value)}`;
      const quoteHint =
        issue.expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')
          ? ` (quote it: "${String(value)}")`
          : '';
      return `${where} must be ${expected}, not ${describeValue(value)}${quoteHint}`;
    }
    case 'invalid_value': {
      const options = issue.values.map((v) => `'${String(v)}'`).join(', ');
      const guess = typeof value === 'string' ? suggest(value, issue.values.map(String)) : undefined;
      return `${where} must be one of ${options}, not ${describeValue(value)}${guess ? ` (did you mean '${guess}'?)` : ''}`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string')
        return min <= 1 ? `${where} must not be empty` : `${where} must be at least ${min} characters`;
      if (issue.origin === 'array') return `${where} needs at least ${min} entr${min === 1 ? 'y' : 'ies'}`;
      const not = value !== undefined ? `, not ${short(value)}` : '';
      return `${where} must be ${issue.inclusive ? 'at least' : 'greater than'} ${min}${not}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `${where} must be at most ${max} characters`;
      if (issue.origin === 'array') return `${where} may have at most ${max} entries`;
      return `${where} must be ${issue.inclusive ? 'at most' : 'less than'} ${max}${value !== undefined ? `, not ${short(value)}` : ''}`;
    }
    case 'invalid_format':
      return `${where} is not a valid ${issue.format}${typeof value === 'string' ? ` ('${short(value)}')` : ''}`;
    default:
      return issue.path.length === 0 ? issue.message : `${where}: ${issue.message}`;
  }
}

/** Our own messages read as sentences; attach the field only when the sentence does not name it. */
function withField(issue: ZodIssue, message: string): string {
  if (issue.path.length === 0) return message;
  const field = formatPath(issue.path);
  const named = [field, String(issue.path[0]), String(issue.path[issue.path.length - 1])];
  if (named.some((n) => message.includes(`'${n}'`))) return message;
  return message.startsWith('must ') ? `${quoted(field)} ${message}` : `${quoted(field)}: ${message}`;
}

/** One readable entry per problem (an unrecognized_keys issue yields one per key). */
export function explainIssues(issues: readonly ZodIssue[], schema: unknown, data: unknown): ExplainedIssue[] {
  const out: ExplainedIssue[] = [];
  // A misspelt key ('comand') also makes the real one missing; that second complaint is noise
  // once the first says "did you mean 'command'?".
  const explainedByTypo = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const known = knownKeysAt(schema, issue.path);
    for (const key of issue.keys) {
      const guess = suggest(key, known);
      if (guess !== undefined) explainedByTypo.add(formatPath([...issue.path, guess]));
    }
  }
  for (const issue of issues) {
    if (
      issue.code !== 'unrecognized_keys' &&
      explainedByTypo.has(formatPath(issue.path)) &&
      valueAt(data, issue.path) === undefined
    )
      continue;
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, issue.path);
      const inside = issue.path.length > 0 ? ` in ${quotedPath(issue.path)}` : '';
      for (const key of issue.keys) {
        const guess = suggest(key, known);
        const hint = guess ? ` (did you mean '${guess}'?)` : known.length > 0 ? ` (allowed: ${known.join(', ')})` : '';
        out.push({
          path: [...issue.path, key],
          at: 'key',
          message: `unknown key ${quoted(key)}${inside}${hint}`,
          ...(guess ? { fix: { replace: key, with: guess } } : {}),
        });
      }
      continue;
    }
    if (issue.code === 'invalid_key') {
      const key = String(issue.path[issue.path.length - 1]);
      const parent = quotedPath(issue.path.slice(0, -1));
      const reason = issue.issues.map((i) => i.message).join('; ');
      out.push({ path: issue.path, at: 'key', message: `invalid key ${quoted(key)} in ${parent}: ${reason}` });
      continue;
    }
    const value = valueAt(data, issue.path);
    // validateName's reasons are written about "the name"; show which name they are about.
    const isNameRule =
      issue.code === 'custom' && issue.path.length === 1 && issue.path[0] === 'name' && typeof value === 'string';
    const message = isNameRule
      ? `invalid name ${jsonQuoted(value)}: ${issue.message}`
      : issue.code !== 'custom' && ZOD_DEFAULT_MESSAGE.test(issue.message)
        ? explainDefault(issue, data)
        : withField(issue, issue.message);
    // The same guess explainDefault names in words ("did you mean 'community'?"), as a fix.
    const guess =
      issue.code === 'invalid_value' && typeof value === 'string' && message.includes('did you mean')
        ? suggest(value, issue.values.map(String))
        : undefined;
    out.push({
      path: issue.path,
      at: 'value',
      message,
      ...(guess ? { fix: { replace: value as string, with: guess } } : {}),
    });
  }
  return out;
}
