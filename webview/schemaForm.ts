// A tool's input schema (JSON Schema) as form fields, and the form's values back to the tool's
// arguments, without the DOM: shared by the console's Try-a-tool view and its unit tests. What a
// form cannot express (anyOf, $ref, arrays of objects, free-form objects) is a raw JSON field.

/** What a control holds: text (inputs, selects, textareas) or a checkbox's state. */
export type FormValue = string | boolean;
export type FormValues = Record<string, FormValue>;

type Primitive = 'string' | 'number' | 'integer' | 'boolean';

interface Common {
  /** Unique within the form: the property names from the root, joined by '.'. */
  path: string;
  key: string;
  label: string;
  description?: string;
  required: boolean;
  default?: unknown;
}

export type SchemaField =
  | (Common & { kind: 'string'; multiline: boolean; format?: string; minLength?: number; maxLength?: number })
  | (Common & { kind: 'enum'; options: (string | number | boolean | null)[] })
  | (Common & { kind: 'number' | 'integer'; minimum?: number; maximum?: number })
  | (Common & { kind: 'boolean' })
  /** An array of primitives: one item per line. */
  | (Common & { kind: 'list'; item: Primitive; minItems?: number; maxItems?: number })
  | (Common & { kind: 'object'; fields: SchemaField[] })
  /** Raw JSON, with the reason the form does not offer more. */
  | (Common & { kind: 'json'; why: string });

export interface SchemaForm {
  fields: SchemaField[];
  /** Set when the whole input is one raw JSON field (the schema is not an object with properties). */
  raw?: string;
}

type Schema = Record<string, unknown>;

/** Nested objects deeper than this become raw JSON: a form four levels deep helps nobody. */
const MAX_DEPTH = 3;

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The one non-null type of a schema (`["string", "null"]` → string), or undefined. */
function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const real = t.filter((x) => x !== 'null');
    return real.length === 1 && typeof real[0] === 'string' ? real[0] : undefined;
  }
  if (isObj(schema.properties)) return 'object';
  return undefined;
}

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean']);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export function formOfSchema(schema: unknown): SchemaForm {
  if (!isObj(schema) || typeOf(schema) !== 'object') {
    return { fields: [], raw: 'the input schema is not an object with properties' };
  }
  for (const k of ['anyOf', 'oneOf', 'allOf', '$ref', 'if', 'not'])
    if (k in schema) return { fields: [], raw: `the input schema uses '${k}'` };
  return { fields: fieldsOf(schema, '', 0) };
}

function fieldsOf(schema: Schema, prefix: string, depth: number): SchemaField[] {
  const props = isObj(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  return Object.entries(props).map(([key, sub]) =>
    fieldOf(key, isObj(sub) ? sub : {}, required.has(key), prefix ? `${prefix}.${key}` : key, depth),
  );
}

function fieldOf(key: string, schema: Schema, required: boolean, path: string, depth: number): SchemaField {
  const common: Common = {
    path,
    key,
    label: typeof schema.title === 'string' && schema.title ? schema.title : key,
    description: typeof schema.description === 'string' ? schema.description : undefined,
    required,
    ...('default' in schema ? { default: schema.default } : {}),
  };
  const json = (why: string): SchemaField => ({ ...common, kind: 'json', why });
  for (const k of ['anyOf', 'oneOf', 'allOf', '$ref', 'if', 'not'])
    if (k in schema) return json(`its schema uses '${k}'`);
  const options = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : undefined;
  if (options) {
    if (options.every((o) => o === null || ['string', 'number', 'boolean'].includes(typeof o)))
      return { ...common, kind: 'enum', options: options as (string | number | boolean | null)[] };
    return json('its choices are not plain values');
  }
  const type = typeOf(schema);
  switch (type) {
    case 'string':
      return {
        ...common,
        kind: 'string',
        multiline: schema.format === undefined && (num(schema.maxLength) ?? Infinity) > 200,
        ...(typeof schema.format === 'string' ? { format: schema.format } : {}),
        ...(num(schema.minLength) !== undefined ? { minLength: num(schema.minLength) } : {}),
        ...(num(schema.maxLength) !== undefined ? { maxLength: num(schema.maxLength) } : {}),
      };
    case 'number':
    case 'integer':
      return {
        ...common,
        kind: type,
        ...(num(schema.minimum) !== undefined ? { minimum: num(schema.minimum) } : {}),
        ...(num(schema.maximum) !== undefined ? { maximum: num(schema.maximum) } : {}),
      };
    case 'boolean':
      return { ...common, kind: 'boolean' };
    case 'array': {
      const items = isObj(schema.items) ? schema.items : undefined;
      const item = items ? typeOf(items) : undefined;
      if (!items || !item || !PRIMITIVES.has(item) || Array.isArray(items.enum) || 'anyOf' in items || 'oneOf' in items)
        return json('its items are not plain strings, numbers or booleans');
      return {
        ...common,
        kind: 'list',
        item: item as Primitive,
        ...(num(schema.minItems) !== undefined ? { minItems: num(schema.minItems) } : {}),
        ...(num(schema.maxItems) !== undefined ? { maxItems: num(schema.maxItems) } : {}),
      };
    }
    case 'object':
      if (!isObj(schema.properties) || Object.keys(schema.properties).length === 0) return json('it takes any keys');
      if (depth + 1 >= MAX_DEPTH) return json('it is nested too deep for a form');
      return { ...common, kind: 'object', fields: fieldsOf(schema, path, depth + 1) };
    default:
      return json(type ? `its type is '${type}'` : 'its schema gives no type');
  }
}

/** The form's first values: each field's default, else empty (an optional boolean: not set). */
export function initialValues(form: SchemaForm): FormValues {
  const out: FormValues = {};
  if (form.raw !== undefined) {
    out[RAW] = '{}';
    return out;
  }
  const walk = (fields: SchemaField[]): void => {
    for (const f of fields) {
      if (f.kind === 'object') walk(f.fields);
      else out[f.path] = valueOf(f, f.default);
    }
  };
  walk(form.fields);
  return out;
}

/** The key of the single raw JSON field of a schema the form cannot express. */
export const RAW = '$raw';

/** A field's control value for an argument value (undefined: empty). */
function valueOf(f: SchemaField, v: unknown): FormValue {
  if (f.kind === 'boolean') return f.required ? v === true : v === undefined ? '' : String(v === true);
  if (v === undefined) return '';
  switch (f.kind) {
    case 'list':
      return Array.isArray(v) ? v.map(String).join('\n') : '';
    case 'json':
      return JSON.stringify(v, null, 2);
    case 'enum':
      return JSON.stringify(v);
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}

/** The values that show a set of arguments (e.g. the last call's) in the form. */
export function valuesOfArguments(form: SchemaForm, args: Record<string, unknown>): FormValues {
  if (form.raw !== undefined) return { [RAW]: JSON.stringify(args, null, 2) };
  const out: FormValues = {};
  const walk = (fields: SchemaField[], obj: Record<string, unknown>): void => {
    for (const f of fields) {
      const v = obj[f.key];
      if (f.kind === 'object') walk(f.fields, isObj(v) ? v : {});
      else out[f.path] = valueOf(f, v);
    }
  };
  walk(form.fields, args);
  return out;
}

export interface BuiltArguments {
  arguments: Record<string, unknown>;
  /** Problems per field path (`form` for the raw JSON field). */
  errors: Map<string, string[]>;
}

/** Form values → the tool's arguments: empty optional fields are left out, the rest typed per schema. */
export function buildArguments(form: SchemaForm, values: FormValues): BuiltArguments {
  const errors = new Map<string, string[]>();
  const add = (path: string, msg: string): void => {
    errors.set(path, [...(errors.get(path) ?? []), msg]);
  };
  if (form.raw !== undefined) {
    const parsed = parseJson(String(values[RAW] ?? '').trim() || '{}');
    if ('error' in parsed) add(RAW, parsed.error);
    else if (!isObj(parsed.value)) add(RAW, 'the arguments must be a JSON object ({ … })');
    else return { arguments: parsed.value, errors };
    return { arguments: {}, errors };
  }
  const build = (fields: SchemaField[]): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      if (f.kind === 'object') {
        const inner = build(f.fields);
        if (Object.keys(inner).length || f.required) out[f.key] = inner;
        continue;
      }
      const raw = values[f.path];
      const text = typeof raw === 'string' ? raw : '';
      if (f.kind === 'boolean') {
        if (typeof raw === 'boolean') out[f.key] = raw;
        else if (text === 'true' || text === 'false') out[f.key] = text === 'true';
        else if (f.required) add(f.path, 'required');
        continue;
      }
      // Text of a string field is taken as typed; elsewhere surrounding blanks mean nothing.
      const empty = f.kind === 'string' ? text === '' : text.trim() === '';
      if (empty) {
        if (f.required) add(f.path, 'required');
        continue;
      }
      const value = coerce(f, text, (msg) => add(f.path, msg));
      if (value !== undefined) out[f.key] = value;
    }
    return out;
  };
  return { arguments: build(form.fields), errors };
}

function coerce(f: SchemaField, text: string, fail: (msg: string) => void): unknown {
  switch (f.kind) {
    case 'string':
      if (f.minLength !== undefined && text.length < f.minLength) fail(`at least ${f.minLength} characters`);
      if (f.maxLength !== undefined && text.length > f.maxLength) fail(`at most ${f.maxLength} characters`);
      return text;
    case 'enum': {
      // The select's values are the options as JSON, so 1 and "1" stay apart.
      const hit = f.options.find((o) => JSON.stringify(o) === text);
      if (hit === undefined) fail(`choose one of ${f.options.map(String).join(', ')}`);
      return hit;
    }
    case 'number':
    case 'integer':
      return numberOf(f, text.trim(), fail);
    case 'list': {
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      if (f.minItems !== undefined && lines.length < f.minItems) fail(`at least ${f.minItems} items (one per line)`);
      if (f.maxItems !== undefined && lines.length > f.maxItems) fail(`at most ${f.maxItems} items`);
      return lines.map((line, i) => {
        const at = (msg: string): void => fail(`line ${i + 1}: ${msg}`);
        if (f.item === 'string') return line;
        if (f.item === 'boolean') {
          const t = line.trim();
          if (t !== 'true' && t !== 'false') at('write true or false');
          return t === 'true';
        }
        return numberOf({ kind: f.item }, line.trim(), at);
      });
    }
    case 'json': {
      const parsed = parseJson(text);
      if ('error' in parsed) fail(parsed.error);
      return 'value' in parsed ? parsed.value : undefined;
    }
    default:
      return undefined;
  }
}

function numberOf(
  f: { kind: 'number' | 'integer'; minimum?: number; maximum?: number },
  text: string,
  fail: (msg: string) => void,
): number | undefined {
  const n = Number(text);
  if (text === '' || !Number.isFinite(n)) {
    fail(f.kind === 'integer' ? 'a whole number' : 'a number');
    return undefined;
  }
  if (f.kind === 'integer' && !Number.isInteger(n)) fail('a whole number');
  if (f.minimum !== undefined && n < f.minimum) fail(`at least ${f.minimum}`);
  if (f.maximum !== undefined && n > f.maximum) fail(`at most ${f.maximum}`);
  return n;
}

function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: `not valid JSON: ${(err as Error).message}` };
  }
}
