// What each control operation (facade tool) takes, defined once with zod. From this one definition
// come the facade's input JSON Schema (what agents see in tools/list), the checking of a call's
// arguments (one readable sentence on bad input, InvalidParams as before) and the TypeScript types of
// the control API (controlApi.ts), which the operator client, the CLI and the extension call through.
import { z } from 'zod';
import { registryJsonSchemas } from '../../registry/jsonSchema';
import type { Kind } from '../../registry/schema';
import { MAX_QUERY_LENGTH } from '../catalog/toolSearch';
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';

/** How many tools find_tools returns unless told, and at most. */
export const DEFAULT_FOUND = 5;
export const MAX_FOUND = 25;
/** How many audit entries read_audit returns unless told, and at most. */
export const DEFAULT_AUDIT = 100;
export const MAX_AUDIT = 1000;
/** How many servers search_registry asks each registry for unless told, and at most. */
const DEFAULT_REGISTRY_PAGE = 10;
const MAX_REGISTRY_PAGE = 50;
/** How many log lines tail_logs returns unless told, and at most. */
const DEFAULT_LINES = 50;
const MAX_LINES = 500;

// Each schema carries the end of the sentence a caller reads when the value is wrong; the field's
// path starts it ("'limit' must be a whole number from 1 to 25"). See paramsProblem below.
const nonEmpty = () => {
  const error = 'must be a non-empty string';
  return z.string({ error }).min(1, { error });
};
const text = () => z.string({ error: 'must be a string' });
const flag = () => z.boolean({ error: 'must be true or false' });
const number = () => z.number({ error: 'must be a number' });
function whole(min: number, max: number) {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

/** Registry definitions: a JSON object here, checked against the registry schema by the operation. */
const definitionKinds = z.registry<{ kind: Kind }>();
function definitionOf(kind: Kind) {
  const schema = z.record(z.string(), z.unknown(), { error: 'must be an object (a registry definition)' });
  definitionKinds.add(schema, { kind });
  return z.object({ definition: schema });
}

const none = z.object({});
const byName = (what: string) => z.object({ name: nonEmpty().describe(what) });
const nameWithHash = (hash: string) =>
  z.object({ name: nonEmpty().describe('server name'), hash: nonEmpty().describe(hash) });

/** A root the editor hands over: a file:// URI with an optional name. */
const root = z.object(
  {
    uri: z
      .string({ error: 'must be a file:// URI' })
      .refine((uri) => uri.startsWith('file://'), { error: 'must be a file:// URI' }),
    name: text().optional(),
  },
  { error: 'must be an object { uri, name }' },
);

/** Every operation's params. The facade has one tool per key, the control API one entry per key. */
export const OPERATION_PARAMS = {
  list_servers: none,
  server_status: byName('server name'),
  // The operation rounds and clamps `lines` and `after` (the CLI and the editor ask for what they like):
  // any number passes, the schema advertises the range that is served.
  tail_logs: z.object({
    name: nonEmpty(),
    lines: number().default(DEFAULT_LINES).meta({ type: 'integer', minimum: 1, maximum: MAX_LINES }),
    after: number()
      .optional()
      .meta({ type: 'integer', minimum: 0, description: "a previous answer's `next`: only lines logged since" }),
  }),
  list_prompts: none,
  list_clients: none,
  registry_problems: none,
  enable_server: byName('server name'),
  disable_server: byName('server name'),
  restart_server: byName('server name'),
  upsert_server: definitionOf('server'),
  remove_server: byName('server name'),
  probe_server: definitionOf('server'),
  upsert_prompt: definitionOf('prompt'),
  remove_prompt: byName('prompt name'),
  approve_server: nameWithHash('approvalHash from the server status that was reviewed'),
  revoke_approval: byName('server name'),
  tool_changes: byName('server name'),
  accept_tool_changes: nameWithHash('toolsHash from the tool_changes result that was reviewed'),
  upsert_client: definitionOf('client'),
  remove_client: byName('client name'),
  client_connection: z.object({ name: nonEmpty(), rotate: flag().default(false) }),
  find_tools: z.object({
    // A few words, refused past MAX_QUERY_LENGTH characters (toolSearch.ts says why).
    query: nonEmpty()
      .max(MAX_QUERY_LENGTH, {
        error: (issue) =>
          `is ${String(issue.input).length} characters; find_tools takes at most ${MAX_QUERY_LENGTH}: ` +
          'say what you need in a few words',
      })
      .describe('what you need, in a few words (e.g. "read a file", "create issue")'),
    limit: whole(1, MAX_FOUND).default(DEFAULT_FOUND),
  }),
  call_tool: z.object({
    name: nonEmpty().describe('the tool name, e.g. filesystem__read_file'),
    // Checked by the router, which answers call_tool (it needs the caller's session).
    arguments: z.record(z.string(), z.unknown()).optional().describe("the tool's arguments, per its inputSchema"),
  }),
  search_registry: z.object({
    query: text().optional().describe('words to search for (e.g. "weather", "github")'),
    name: text().optional().describe('one server, name[@version], e.g. io.github.user/weather@1.2.0'),
    choice: text().optional().describe('with name: which way to run it, e.g. packages[0] or remotes[0]'),
    cursor: text().optional().describe('the nextCursor of the previous page'),
    limit: whole(1, MAX_REGISTRY_PAGE).default(DEFAULT_REGISTRY_PAGE),
  }),
  read_audit: z.object({
    limit: whole(1, MAX_AUDIT).default(DEFAULT_AUDIT),
    client: nonEmpty().optional().describe('only the entries of this client'),
  }),
  begin_sign_in: byName('server name'),
  sign_out: byName('server name'),
  set_account_token: z.object({
    name: nonEmpty().describe('server name'),
    provider: nonEmpty(),
    scopes: z.array(text(), { error: 'must be an array of strings' }),
    token: text().optional(),
    account: text().optional().describe("the account's label, shown in the state"),
  }),
  set_input: z.object({
    name: nonEmpty().describe('input name (the NAME of ${input:NAME})'),
    value: text().optional(),
    reload: flag().optional(),
  }),
  set_editor_roots: z.object({ roots: z.array(root, { error: 'must be an array of { uri, name }' }) }),
  set_editor_telemetry: z.object({ enabled: flag().describe("the editor's switchboard.telemetry.enabled") }),
  telemetry_export: none,
  approve_telemetry_export: z.object({
    endpoint: nonEmpty().describe(
      'the endpoint telemetry_export showed: if the file names another now, nothing is approved',
    ),
  }),
  list_policies: none,
  upsert_policy: definitionOf('policy'),
  remove_policy: byName('policy name'),
  approve_policy: z.object({
    name: nonEmpty().describe('policy name'),
    hash: nonEmpty().describe('hash from the list_policies entry that was reviewed'),
  }),
  revoke_policy: byName('policy name'),
};

type Operations = typeof OPERATION_PARAMS;
export type ParamsOperation = keyof Operations;
/** What a caller passes (defaults may be left out). */
export type ParamsInput<K extends ParamsOperation> = z.input<Operations[K]>;
/** What the operation receives after checking (defaults filled in). */
export type ParamsParsed<K extends ParamsOperation> = z.output<Operations[K]>;

/** `roots[0].uri`, `scopes[2]`, `limit`: where in the arguments an issue is. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

/** The issues as one sentence: "'name' must be a non-empty string; 'limit' must be …". */
function paramsProblem(error: z.ZodError): string {
  return error.issues.map((issue) => `'${pathText(issue.path)}' ${issue.message}`).join('; ');
}

/** The checked params of an operation, or InvalidParams with what is wrong. Unknown keys are dropped. */
export function parseParams<K extends ParamsOperation>(operation: K, args: JsonObject): ParamsParsed<K> {
  const parsed = OPERATION_PARAMS[operation].safeParse(args);
  if (!parsed.success) throw new McpFailure(ErrorCodes.InvalidParams, paramsProblem(parsed.error));
  return parsed.data as ParamsParsed<K>;
}

let registry: Record<Kind, JsonObject> | undefined;

/**
 * The input JSON Schema of an operation, as written before zod: what a caller may send (defaults
 * optional), unknown keys refused, a definition described by the registry schema of its kind and a
 * free-form object as just `type: object`. The facade makes it portable before listing it.
 */
export function paramsJsonSchema(operation: ParamsOperation): JsonObject {
  registry ??= registryJsonSchemas() as Record<Kind, JsonObject>;
  const schemas = registry;
  const schema = z.toJSONSchema(OPERATION_PARAMS[operation], {
    io: 'input',
    target: 'draft-7',
    override: ({ zodSchema, jsonSchema }) => {
      const out = jsonSchema as JsonObject;
      const def = zodSchema._zod.def;
      if (def.type === 'object') out.additionalProperties = false;
      if (def.type !== 'record') return;
      const kind = definitionKinds.get(zodSchema as unknown as z.ZodType)?.kind;
      const { description } = out;
      for (const key of Object.keys(out)) delete out[key];
      if (kind) {
        const { $schema: _drop, ...definition } = schemas[kind];
        Object.assign(out, definition);
      } else {
        Object.assign(out, { type: 'object' }, description === undefined ? {} : { description });
      }
    },
  }) as JsonObject;
  delete schema.$schema;
  return schema;
}
