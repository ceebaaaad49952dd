// Tool input schemas that every host accepts. Hosts differ in how much JSON Schema they take: some
// reject boolean subschemas (`"url": false`), conditionals (if/then/else, allOf, not), `const` or
// `propertyNames`, and some (Claude's API) any combinator at the top level. The broker validates
// every facade call against the registry schema itself, so the schemas it *advertises* can drop
// what a strict host would refuse without letting anything through.

type Json = unknown;
type JsonObject = Record<string, Json>;

/** Keywords a strict host refuses; the broker's own validation still applies them. */
const UNPORTABLE = [
  'if',
  'then',
  'else',
  'allOf',
  'oneOf',
  'not',
  '$ref',
  '$defs',
  'definitions',
  'dependencies',
  'dependentSchemas',
  'dependentRequired',
  'patternProperties',
  'propertyNames',
  'unevaluatedProperties',
  'contains',
  '$schema',
  '$id',
] as const;

/** Keywords whose value is one schema, and those whose value maps names (or lists) to schemas. */
const ONE_SCHEMA = ['items', 'additionalProperties', 'additionalItems'];
const SCHEMA_MAP = ['properties'];
const SCHEMA_LIST = ['anyOf'];
// Where the check also looks (so it can name what is wrong inside a conditional it flags).
const ONE_SCHEMA_SEEN = [...ONE_SCHEMA, 'not', 'if', 'then', 'else', 'contains'];
const SCHEMA_LIST_SEEN = [...SCHEMA_LIST, 'allOf', 'oneOf'];

function isObject(v: Json): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * What a strict host would reject in `schema`, one line per finding with its JSON pointer. Empty means
 * portable. `additionalProperties: false` is allowed (it is a keyword value, not a subschema, to
 * every host that matters, and strict hosts require it).
 */
export function portabilityProblems(schema: Json): string[] {
  const problems: string[] = [];
  if (!isObject(schema)) return ['/: the input schema must be an object schema'];
  if (schema.type !== 'object') problems.push("/: the top level must be 'type: object'");
  for (const k of ['anyOf', 'oneOf', 'allOf']) {
    if (k in schema) problems.push(`/${k}: a combinator at the top level`);
  }
  walk(schema, '', problems);
  return problems;
}

function walk(node: Json, at: string, problems: string[]): void {
  if (typeof node === 'boolean') {
    problems.push(`${at || '/'}: a bare '${node}' subschema`);
    return;
  }
  if (!isObject(node)) {
    problems.push(`${at || '/'}: a subschema must be an object`);
    return;
  }
  for (const k of UNPORTABLE) if (k in node) problems.push(`${at}/${k}: '${k}' is not portable`);
  if ('const' in node) problems.push(`${at}/const: 'const' is not portable (use a one-value 'enum')`);
  if (Array.isArray(node.type)) problems.push(`${at}/type: a list of types is not portable`);
  if (node.type === 'array' && !('items' in node)) problems.push(`${at}: an array without 'items'`);
  if (Array.isArray(node.required) && isObject(node.properties)) {
    for (const name of node.required) {
      if (typeof name === 'string' && !(name in node.properties)) {
        problems.push(`${at}/required: '${name}' is required but not among the properties`);
      }
    }
  }
  for (const k of ONE_SCHEMA_SEEN) {
    const v = node[k];
    if (v === undefined || (k === 'additionalProperties' && typeof v === 'boolean')) continue;
    walk(v, `${at}/${k}`, problems);
  }
  for (const k of SCHEMA_MAP) {
    const v = node[k];
    if (isObject(v)) for (const [name, sub] of Object.entries(v)) walk(sub, `${at}/${k}/${name}`, problems);
  }
  for (const k of SCHEMA_LIST_SEEN) {
    const v = node[k];
    if (Array.isArray(v)) v.forEach((sub, i) => walk(sub, `${at}/${k}/${i}`, problems));
  }
}

/**
 * `schema` with everything a strict host rejects removed: unportable keywords dropped, `const`
 * turned into a one-value `enum`, `true` subschemas into `{}` and properties whose schema is `false`
 * left out. The result accepts at least what the original accepts.
 */
export function toPortableSchema(schema: JsonObject): JsonObject {
  return portableNode(schema) as JsonObject;
}

function portableNode(node: Json): Json {
  if (node === true) return {};
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if ((UNPORTABLE as readonly string[]).includes(k)) continue;
    if (k === 'const') {
      if (!('enum' in node)) out.enum = [v];
    } else if (ONE_SCHEMA.includes(k)) {
      out[k] = k === 'additionalProperties' && typeof v === 'boolean' ? v : portableNode(v);
    } else if (SCHEMA_MAP.includes(k) && isObject(v)) {
      const props: JsonObject = {};
      for (const [name, sub] of Object.entries(v)) if (sub !== false) props[name] = portableNode(sub);
      out[k] = props;
    } else if (SCHEMA_LIST.includes(k) && Array.isArray(v)) {
      out[k] = v.filter((sub) => sub !== false).map(portableNode);
    } else {
      out[k] = v;
    }
  }
  return out;
}
