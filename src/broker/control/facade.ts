// The broker's own MCP tools ("facade"), under the reserved `switchboard__` namespace. Each tool
// names the scope it needs; the scope is checked on every call against the client's current
// definition, so editing `mcp_allow` takes effect without reconnecting. What each tool takes and
// returns is the control API (controlApi.ts); the table below is typed against it.
import { registryJsonSchemas } from '../../registry/jsonSchema';
import type { ControlOperation, DefinitionInput, ParamsOf, ResultOf } from './controlApi';
import type { ControlOperations } from './controlOperations';
import type { Identity } from '../routing/requestContext';
import { FACADE_NAMESPACE } from '../catalog/catalog';
import { MAX_QUERY_LENGTH } from '../catalog/toolSearch';
import { ERROR_META_KEY, ErrorCodes, failureFrom, McpFailure, type JsonObject, type Tool } from '../shared/mcpTypes';
import { toPortableSchema } from './portableSchema';
import { searchRegistry } from './registrySearch';
import type { ToolScope } from '../routing/accessPolicy';

/** `operator` tools change who may run what (approvals, client tokens): the human's, never an agent's. */
export type Scope = ToolScope;

/** One facade tool, typed against the control API: `params` checks the raw arguments, `run` does it. */
interface FacadeTool<K extends ControlOperation> {
  scope: Scope;
  description: string;
  input: JsonObject;
  destructive?: boolean;
  idempotent?: boolean;
  params(args: JsonObject): ParamsOf<K>;
  run(ops: ControlOperations, params: ParamsOf<K>, identity: Identity): Promise<ResultOf<K>> | ResultOf<K>;
  /** The result as the text a model reads, where indented JSON would waste its context. */
  text?(result: ResultOf<K>): string;
}

/** Exactly one tool per operation of the control API: a missing or an extra one does not compile. */
type FacadeTools = { [K in ControlOperation]: FacadeTool<K> };

/** A tool as the dispatcher holds it: arguments in, result out (the typing stays inside `register`). */
interface RegisteredTool {
  name: ControlOperation;
  scope: Scope;
  description: string;
  input: JsonObject;
  destructive?: boolean;
  idempotent?: boolean;
  invoke(ops: ControlOperations, args: JsonObject, identity: Identity): Promise<unknown>;
  text?(result: unknown): string;
}

function register<K extends ControlOperation>(name: K, tool: FacadeTool<K>): RegisteredTool {
  const { params, run, text, ...meta } = tool;
  return {
    name,
    ...meta,
    invoke: async (ops, args, identity) => run(ops, params(args), identity),
    ...(text ? { text: (result: unknown) => text(result as ResultOf<K>) } : {}),
  };
}

const nameArg = (what: string) => ({
  type: 'object',
  properties: { name: { type: 'string', description: what } },
  required: ['name'],
  additionalProperties: false,
});
const none = { type: 'object', properties: {}, additionalProperties: false };
const definitionArg = (schema: JsonObject) => ({
  type: 'object',
  properties: { definition: schema },
  required: ['definition'],
  additionalProperties: false,
});

function str(args: JsonObject, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || !v)
    throw new McpFailure(ErrorCodes.InvalidParams, `'${key}' must be a non-empty string`);
  return v;
}

function obj(args: JsonObject, key: string): DefinitionInput {
  const v = args[key];
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new McpFailure(ErrorCodes.InvalidParams, `'${key}' must be an object (a registry definition)`);
  return v as DefinitionInput;
}

function optionalInt(args: JsonObject, key: string, min: number, max: number): number | undefined {
  const v = args[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new McpFailure(ErrorCodes.InvalidParams, `'${key}' must be a whole number from ${min} to ${max}`);
  return v;
}

/** How many tools find_tools returns unless told, and at most. */
const DEFAULT_FOUND = 5;
const MAX_FOUND = 25;
/** How many servers search_registry asks each registry for unless told, and at most. */
const DEFAULT_REGISTRY_PAGE = 10;
const MAX_REGISTRY_PAGE = 50;

/** find_tools' query: a few words, refused past MAX_QUERY_LENGTH characters (toolSearch.ts says why). */
function searchQuery(args: JsonObject): string {
  const query = str(args, 'query');
  if (query.length > MAX_QUERY_LENGTH) {
    throw new McpFailure(
      ErrorCodes.InvalidParams,
      `'query' is ${query.length} characters; find_tools takes at most ${MAX_QUERY_LENGTH}: say what you need in a few words`,
    );
  }
  return query;
}

/** How many audit entries read_audit returns unless told, and at most. */
const DEFAULT_AUDIT = 100;
const MAX_AUDIT = 1000;

/** The scope of a facade tool by its own name (`restart_server`); undefined for no such tool. */
function scopeOf(tools: FacadeTools, name: string): Scope | undefined {
  return Object.prototype.hasOwnProperty.call(tools, name) ? tools[name as ControlOperation].scope : undefined;
}

/** A list of roots: file:// URIs with an optional name. */
function rootsArg(v: unknown): { uri: string; name?: string }[] {
  if (!Array.isArray(v)) throw new McpFailure(ErrorCodes.InvalidParams, "'roots' must be an array of { uri, name }");
  return v.map((r: unknown, i) => {
    const root = r as { uri?: unknown; name?: unknown } | null;
    if (!root || typeof root.uri !== 'string' || !root.uri.startsWith('file://'))
      throw new McpFailure(ErrorCodes.InvalidParams, `roots[${i}].uri must be a file:// URI`);
    if (root.name !== undefined && typeof root.name !== 'string')
      throw new McpFailure(ErrorCodes.InvalidParams, `roots[${i}].name must be a string`);
    return { uri: root.uri, ...(typeof root.name === 'string' ? { name: root.name } : {}) };
  });
}

function stringList(args: JsonObject, key: string): string[] {
  const v = args[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw new McpFailure(ErrorCodes.InvalidParams, `'${key}' must be an array of strings`);
  return v as string[];
}

/** `{ key: value }` when the argument is a string, `{}` when absent. */
function optionalString<K extends string>(args: JsonObject, key: K): { [P in K]?: string } {
  const v = args[key];
  if (v === undefined) return {};
  if (typeof v !== 'string') throw new McpFailure(ErrorCodes.InvalidParams, `'${key}' must be a string`);
  return { [key]: v } as { [P in K]?: string };
}

const noParams = (): Record<string, never> => ({});
const byName = (a: JsonObject): { name: string } => ({ name: str(a, 'name') });
const withDefinition = (a: JsonObject): { definition: DefinitionInput } => ({ definition: obj(a, 'definition') });

function definitions(): RegisteredTool[] {
  const schemas = registryJsonSchemas() as Record<string, JsonObject>;
  const serverSchema = { ...schemas.server };
  delete serverSchema.$schema;
  const promptSchema = { ...schemas.prompt };
  delete promptSchema.$schema;
  const clientSchema = { ...schemas.client };
  delete clientSchema.$schema;
  const tools: FacadeTools = {
    list_servers: {
      scope: 'read',
      description:
        'List every server in the registry with its state (running, stopped, failed, awaiting-approval...), ' +
        'pid, uptime, restarts, last error, trust tier, grants and tools.',
      input: none,
      params: noParams,
      run: (ops) => ({ servers: ops.listServers() }),
    },
    server_status: {
      scope: 'read',
      description:
        'Full status of one server: state, pid, uptime, restarts, last error, tools, grants and how they are enforced, trust and approval.',
      input: nameArg('server name'),
      params: byName,
      run: (ops, p) => ops.serverStatus(p.name),
    },
    tail_logs: {
      scope: 'read',
      description:
        "The last lines of a server's stderr and lifecycle log (secrets redacted). To follow it, pass the " +
        "previous answer's `next` as `after`: only newer lines come back.",
      input: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          lines: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
          after: { type: 'integer', minimum: 0, description: "a previous answer's `next`: only lines logged since" },
        },
        required: ['name'],
        additionalProperties: false,
      },
      params: (a) => ({
        name: str(a, 'name'),
        lines: typeof a.lines === 'number' ? a.lines : undefined,
        after: typeof a.after === 'number' ? a.after : undefined,
      }),
      run: (ops, p) => ops.tailLogs(p.name, p.lines ?? 50, p.after),
    },
    list_prompts: {
      scope: 'read',
      description: 'List the fleet prompts from prompts.d/ (served to every client as switchboard__<name>).',
      input: none,
      params: noParams,
      run: (ops) => ({ prompts: ops.listPrompts() }),
    },
    list_clients: {
      scope: 'read',
      description: 'List the declared clients and their scopes (mcp_allow) and tool profiles.',
      input: none,
      params: noParams,
      run: (ops) => ({ clients: ops.listClients() }),
    },
    registry_problems: {
      scope: 'read',
      description: 'Problems found in the registry files, with file, line and column.',
      input: none,
      params: noParams,
      run: (ops) => ({ problems: ops.problems() }),
    },
    enable_server: {
      scope: 'write',
      description: "Set enabled: true in a server definition (a community server still needs the operator's approval).",
      input: nameArg('server name'),
      idempotent: true,
      params: byName,
      run: (ops, p) => ops.setEnabled(p.name, true),
    },
    disable_server: {
      scope: 'write',
      description: 'Set enabled: false in a server definition and stop it.',
      input: nameArg('server name'),
      idempotent: true,
      destructive: true,
      params: byName,
      run: (ops, p) => ops.setEnabled(p.name, false),
    },
    restart_server: {
      scope: 'write',
      description: 'Restart one server (also clears a failed state).',
      input: nameArg('server name'),
      destructive: true,
      params: byName,
      run: (ops, p) => ops.restart(p.name),
    },
    upsert_server: {
      scope: 'write',
      idempotent: true,
      description:
        'Create or replace a server definition (written to mcp-servers.d/<name>.yaml). ' +
        'Definitions written by agents are always the community tier: they start only after the operator approves them.',
      input: definitionArg(serverSchema),
      params: withDefinition,
      run: async (ops, p, identity) => {
        const definition = { ...p.definition };
        const downgraded = !identity.operator && definition.trust !== undefined && definition.trust !== 'community';
        if (!identity.operator) definition.trust = 'community';
        const written = await ops.upsert('server', definition);
        return {
          ...written,
          ...(downgraded
            ? { note: 'trust set to community: only the operator can add builtin or trusted servers' }
            : {}),
          status: ops.serverStatus(written.name),
        };
      },
    },
    remove_server: {
      scope: 'write',
      destructive: true,
      description: 'Delete a server definition file and stop the server.',
      input: nameArg('server name'),
      params: byName,
      run: (ops, p) => ops.remove('server', p.name),
    },
    probe_server: {
      scope: 'write',
      description:
        'Start a server definition that is not saved yet, list its tools, prompts and resources with their schemas, ' +
        'measure connect and list latency, then stop it. ' +
        'Explains failures (command not found, exit code and stderr, HTTP status, timeout).',
      input: definitionArg(serverSchema),
      params: withDefinition,
      run: (ops, p, identity) => ops.probe(p.definition, identity),
    },
    upsert_prompt: {
      scope: 'write',
      idempotent: true,
      description: 'Create or replace a fleet prompt (prompts.d/<name>.yaml).',
      input: definitionArg(promptSchema),
      params: withDefinition,
      run: (ops, p) => ops.upsert('prompt', p.definition),
    },
    remove_prompt: {
      scope: 'write',
      destructive: true,
      description: 'Delete a fleet prompt.',
      input: nameArg('prompt name'),
      params: byName,
      run: (ops, p) => ops.remove('prompt', p.name),
    },
    approve_server: {
      scope: 'operator',
      description:
        'Operator only: approve a community server, or accept a server the workspace marks trusted, as it is ' +
        "defined now. 'hash' is the approvalHash of the status the operator reviewed; if the definition changed " +
        'since (command, args, cwd, env, env file contents, url, headers, grants, tool filters, trust), the ' +
        'approval is refused. Any later change needs a new approval.',
      input: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'server name' },
          hash: { type: 'string', description: 'approvalHash from the server status that was reviewed' },
        },
        required: ['name', 'hash'],
        additionalProperties: false,
      },
      params: (a) => ({ name: str(a, 'name'), hash: str(a, 'hash') }),
      run: (ops, p) => ops.approve(p.name, p.hash),
    },
    revoke_approval: {
      scope: 'operator',
      destructive: true,
      description: 'Operator only: withdraw the approval of a community server and stop it.',
      input: nameArg('server name'),
      params: byName,
      run: (ops, p) => ops.revoke(p.name),
    },
    tool_changes: {
      scope: 'operator',
      description:
        "Operator only: how a running server's tools differ from the ones pinned at approval (or in " +
        'mcp-servers.lock): per tool, the pinned and the current definition. Quarantined tools are not ' +
        'listed to clients until the operator accepts them with accept_tool_changes.',
      input: nameArg('server name'),
      params: byName,
      run: (ops, p) => ops.toolChanges(p.name),
    },
    accept_tool_changes: {
      scope: 'operator',
      description:
        "Operator only: accept the tools a server lists now as its new pin. 'hash' is the toolsHash of the " +
        'tool_changes result that was reviewed; if the tools changed since, nothing is accepted.',
      input: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'server name' },
          hash: { type: 'string', description: 'toolsHash from the tool_changes result that was reviewed' },
        },
        required: ['name', 'hash'],
        additionalProperties: false,
      },
      params: (a) => ({ name: str(a, 'name'), hash: str(a, 'hash') }),
      run: (ops, p) => ops.acceptToolChanges(p.name, p.hash),
    },
    upsert_client: {
      scope: 'operator',
      idempotent: true,
      description: 'Operator only: create or replace a client definition (clients.d/<name>.yaml) and its scopes.',
      input: definitionArg(clientSchema),
      params: withDefinition,
      run: (ops, p) => ops.upsert('client', p.definition),
    },
    remove_client: {
      scope: 'operator',
      destructive: true,
      description: 'Operator only: delete a client definition; its token stops working at once.',
      input: nameArg('client name'),
      params: byName,
      run: (ops, p) => ops.remove('client', p.name),
    },
    client_connection: {
      scope: 'operator',
      description:
        'Operator only: the URL and token file for a client ' +
        '(the token is created on first use; it is never returned in a result). rotate: true replaces the token.',
      input: {
        type: 'object',
        properties: { name: { type: 'string' }, rotate: { type: 'boolean', default: false } },
        required: ['name'],
        additionalProperties: false,
      },
      params: (a) => ({ name: str(a, 'name'), rotate: a.rotate === true }),
      run: (ops, p) => ops.clientConnection(p.name, p.rotate === true),
    },
    find_tools: {
      scope: 'read',
      idempotent: true,
      description:
        'Find tools by what they do: ranks every tool you may call by name, title, description, parameter names ' +
        "and its server's description, and says why each matched. If your client uses toolMode search, the tools " +
        'found are added to your tool list (tools/list_changed follows): call them by name, or through ' +
        `${FACADE_NAMESPACE}__call_tool if your client does not re-list tools.`,
      input: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            maxLength: MAX_QUERY_LENGTH,
            description: 'what you need, in a few words (e.g. "read a file", "create issue")',
          },
          limit: { type: 'integer', minimum: 1, maximum: MAX_FOUND, default: DEFAULT_FOUND },
        },
        required: ['query'],
        additionalProperties: false,
      },
      params: (a) => ({ query: searchQuery(a), limit: optionalInt(a, 'limit', 1, MAX_FOUND) }),
      run: (ops, p, identity) => ops.findTools(p.query, p.limit ?? DEFAULT_FOUND, identity, (op) => scopeOf(tools, op)),
      // One line per tool: what a model needs to pick one, at a fraction of the JSON's tokens.
      text: (r) =>
        r.tools.length
          ? r.tools.map((t) => `${t.name}: ${t.description} (matched ${t.why})`).join('\n')
          : `No tool you may call matches '${r.query}'. Try other words.`,
    },
    call_tool: {
      scope: 'read',
      description:
        'Call any tool you may call by its name (as find_tools or tools/list gives it) with its arguments: for ' +
        'clients that do not pick up tools added to their list. The same checks apply as to a direct call.',
      input: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'the tool name, e.g. filesystem__read_file' },
          arguments: { type: 'object', description: "the tool's arguments, per its inputSchema" },
        },
        required: ['name'],
        additionalProperties: false,
      },
      params: (a) => ({ name: str(a, 'name'), arguments: (a.arguments ?? {}) as Record<string, unknown> }),
      run: () => {
        // The router answers call_tool before the facade sees it (it needs the caller's session).
        throw new McpFailure(ErrorCodes.InternalError, `${FACADE_NAMESPACE}__call_tool is answered by the router.`);
      },
    },
    search_registry: {
      scope: 'read',
      idempotent: true,
      description:
        'Search the MCP Registries this broker is configured with for servers to add: one line per server (name, ' +
        'version, transport, package or remote, whether it needs secrets). With `name` (and `choice` when it offers ' +
        'several ways to run), the definition to propose with upsert_server; it stays a community server until the ' +
        'operator approves it.',
      input: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'words to search for (e.g. "weather", "github")' },
          name: { type: 'string', description: 'one server, name[@version], e.g. io.github.user/weather@1.2.0' },
          choice: { type: 'string', description: 'with name: which way to run it, e.g. packages[0] or remotes[0]' },
          cursor: { type: 'string', description: 'the nextCursor of the previous page' },
          limit: { type: 'integer', minimum: 1, maximum: MAX_REGISTRY_PAGE, default: DEFAULT_REGISTRY_PAGE },
        },
        additionalProperties: false,
      },
      params: (a) => ({
        ...optionalString(a, 'query'),
        ...optionalString(a, 'name'),
        ...optionalString(a, 'choice'),
        ...optionalString(a, 'cursor'),
        limit: optionalInt(a, 'limit', 1, MAX_REGISTRY_PAGE) ?? DEFAULT_REGISTRY_PAGE,
      }),
      run: (_ops, p) => searchRegistry(p),
      text: (r) => {
        const rows = r.servers.map(
          (s) =>
            `${s.name}@${s.version} [${s.transport}; ${s.runs}; ${s.needsSecrets ? 'needs secrets' : 'no secrets'}]: ${s.description}`,
        );
        const lines = [...(rows.length ? rows : ['No server matches.'])];
        if (r.definition) lines.push(`Definition for upsert_server: ${JSON.stringify(r.definition)}`);
        for (const n of r.notes ?? []) lines.push(`Note: ${n}`);
        if (r.choices) lines.push(`Ways to run it (pass one as choice): ${r.choices.join('; ')}`);
        for (const p of r.problems) lines.push(`Problem: ${p}`);
        if (r.nextCursor) lines.push(`More: call again with cursor ${r.nextCursor}`);
        return lines.join('\n');
      },
    },
    read_audit: {
      scope: 'read',
      description:
        'The newest audit log entries, oldest first: when, which client, which tool or operation, how long it took ' +
        'and how it ended (never arguments or results). The operator reads every entry (client: one client only); ' +
        'any other client reads only the entries of its own calls.',
      input: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: MAX_AUDIT, default: DEFAULT_AUDIT },
          client: { type: 'string', description: 'only the entries of this client' },
        },
        additionalProperties: false,
      },
      params: (a) => ({
        limit: optionalInt(a, 'limit', 1, MAX_AUDIT),
        client: a.client === undefined ? undefined : str(a, 'client'),
      }),
      run: (ops, p, identity) => ops.readAudit(p.limit ?? DEFAULT_AUDIT, identity, p.client),
    },
    begin_sign_in: {
      scope: 'operator',
      description:
        'Operator only: start signing in to a remote server with auth (OAuth). Returns the URL to open in a ' +
        "browser; the browser returns to the broker's own loopback address and the tokens stay in the broker's " +
        'per-user token store (never returned).',
      input: nameArg('server name'),
      params: byName,
      run: (ops, p) => ops.beginSignIn(p.name),
    },
    sign_out: {
      scope: 'operator',
      destructive: true,
      description: "Operator only: delete a remote server's sign-in tokens; it needs a new sign-in to connect.",
      input: nameArg('server name'),
      params: byName,
      run: (ops, p) => ops.signOut(p.name),
    },
    set_account_token: {
      scope: 'operator',
      idempotent: true,
      description:
        "Operator only (the editor): hand over a VS Code account's access token for a server with " +
        'auth: { type: vscode }. The broker holds it in memory only and sends it to that server alone; without ' +
        "'token' it is withdrawn. 'provider' and 'scopes' must be the server's (a token for other scopes is refused).",
      input: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'server name' },
          provider: { type: 'string' },
          scopes: { type: 'array', items: { type: 'string' } },
          token: { type: 'string' },
          account: { type: 'string', description: "the account's label, shown in the state" },
        },
        required: ['name', 'provider', 'scopes'],
        additionalProperties: false,
      },
      params: (a) => ({
        name: str(a, 'name'),
        provider: str(a, 'provider'),
        scopes: stringList(a, 'scopes'),
        ...optionalString(a, 'token'),
        ...optionalString(a, 'account'),
      }),
      run: (ops, p) => ops.setAccountToken(p),
    },
    set_input: {
      scope: 'operator',
      idempotent: true,
      description:
        'Operator only (the editor or CLI): the value of ${input:NAME}, held in memory only (without value: ' +
        "forgotten); or reload: true to re-read it from the per-user store after 'switchboard secret set'. " +
        "Servers waiting for it start; it reaches only servers with the 'secrets' grant. The value is never returned.",
      input: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'input name (the NAME of ${input:NAME})' },
          value: { type: 'string' },
          reload: { type: 'boolean' },
        },
        required: ['name'],
        additionalProperties: false,
      },
      params: (a) => ({
        name: str(a, 'name'),
        ...optionalString(a, 'value'),
        ...(a.reload === true ? { reload: true } : {}),
      }),
      run: (ops, p) => ops.setInput(p),
    },
    set_editor_roots: {
      scope: 'operator',
      idempotent: true,
      description:
        "Operator only (the editor): the workspace folders, as file:// URIs, that upstreams get as their client's " +
        'roots (with the registry root) when the calling client declares none; running servers are told the roots changed.',
      input: {
        type: 'object',
        properties: {
          roots: {
            type: 'array',
            items: {
              type: 'object',
              properties: { uri: { type: 'string' }, name: { type: 'string' } },
              required: ['uri'],
              additionalProperties: false,
            },
          },
        },
        required: ['roots'],
        additionalProperties: false,
      },
      params: (a) => ({ roots: rootsArg(a.roots) }),
      run: (ops, p) => ops.setEditorRoots(p.roots),
    },
  };
  const operations = Object.keys(tools) as ControlOperation[];
  return operations.map(<K extends ControlOperation>(name: K) => register(name, tools[name] as FacadeTool<K>));
}

export const STATE_URI = 'switchboard://state';

let scopes: ReadonlyMap<string, Scope> | undefined;
/** The scope a facade tool needs, by its listed name (`switchboard__restart_server`). */
export function facadeToolScope(name: string): Scope | undefined {
  scopes ??= new Map(definitions().map((d) => [`${FACADE_NAMESPACE}__${d.name}`, d.scope]));
  return scopes.get(name);
}

export class Facade {
  private readonly byName: Map<string, RegisteredTool>;
  private readonly listed: Tool[];

  constructor() {
    const defs = definitions();
    this.byName = new Map(defs.map((d) => [`switchboard__${d.name}`, d]));
    this.listed = defs.map((d) => ({
      name: `switchboard__${d.name}`,
      title: d.name.replace(/_/g, ' '),
      description: `${d.description} [scope: ${d.scope}]`,
      // Advertised in the subset strict hosts accept; calls are still checked against the full schema.
      inputSchema: toPortableSchema(d.input),
      annotations: {
        readOnlyHint: d.scope === 'read',
        destructiveHint: d.destructive ?? false,
        idempotentHint: d.idempotent ?? d.scope === 'read',
        openWorldHint: d.name === 'probe_server',
      },
    }));
  }

  tools(): Tool[] {
    return this.listed;
  }

  async call(
    ops: ControlOperations,
    name: string,
    args: JsonObject,
    identity: Identity,
    allowed: readonly string[],
  ): Promise<JsonObject> {
    const tool = this.byName.get(name);
    if (!tool) throw new McpFailure(ErrorCodes.InvalidParams, `Unknown tool '${name}'.`);
    if (tool.scope === 'operator' && !identity.operator) {
      throw new McpFailure(
        ErrorCodes.Forbidden,
        `'${name}' is for the operator only (the person at the editor or CLI); client '${identity.client}' cannot call it.`,
      );
    }
    if (tool.scope !== 'operator' && !identity.operator && !allowed.includes(tool.scope)) {
      throw new McpFailure(
        ErrorCodes.Forbidden,
        `'${name}' needs the '${tool.scope}' scope; client '${identity.client}' has mcp_allow: [${allowed.join(', ')}]. ` +
          `Add '${tool.scope}' to clients.d/${identity.client}.yaml to allow it.`,
      );
    }
    let result: unknown;
    try {
      result = await tool.invoke(ops, args, identity);
    } catch (err) {
      // An operation that could not be done is a tool result the agent can read, not a protocol error;
      // its code and data ride along in _meta, so the operator client (CLI, extension) can tell them apart.
      const failure = failureFrom(err);
      const error = { code: failure.code, ...(failure.data !== undefined ? { data: failure.data } : {}) };
      return { content: [{ type: 'text', text: failure.message }], isError: true, _meta: { [ERROR_META_KEY]: error } };
    }
    const structured = (
      result && typeof result === 'object' && !Array.isArray(result) ? result : { result }
    ) as JsonObject;
    const text = tool.text ? tool.text(result) : JSON.stringify(structured, null, 2);
    return { content: [{ type: 'text', text }], structuredContent: structured };
  }
}
