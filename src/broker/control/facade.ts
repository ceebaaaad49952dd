// The broker's own MCP tools ("facade"), under the reserved `switchboard__` namespace. Each tool
// names the scope it needs; the scope is checked on every call against the client's current
// definition, so editing `mcp_allow` takes effect without reconnecting. What each tool takes and
// returns is the control API (controlApi.ts); the table below is typed against it. What each takes is
// defined once in operationParams.ts: the input schema listed and the checking of a call come from there.
import type { ControlOperation, ResultOf } from './controlApi';
import type { ControlOperations } from './controlOperations';
import type { Identity } from '../routing/requestContext';
import { FACADE_NAMESPACE } from '../catalog/catalog';
import { ERROR_META_KEY, ErrorCodes, failureFrom, McpFailure, type JsonObject, type Tool } from '../shared/mcpTypes';
import { toPortableSchema } from './portableSchema';
import { paramsJsonSchema, parseParams, type ParamsParsed } from './operationParams';
import { searchRegistry } from './registrySearch';
import type { ToolScope } from '../routing/accessPolicy';

/** `operator` tools change who may run what (approvals, client tokens): the human's, never an agent's. */
export type Scope = ToolScope;

/** One facade tool, typed against the control API: `run` gets the params checked by operationParams.ts. */
interface FacadeTool<K extends ControlOperation> {
  scope: Scope;
  description: string;
  destructive?: boolean;
  idempotent?: boolean;
  run(ops: ControlOperations, params: ParamsParsed<K>, identity: Identity): Promise<ResultOf<K>> | ResultOf<K>;
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
  destructive?: boolean;
  idempotent?: boolean;
  invoke(ops: ControlOperations, args: JsonObject, identity: Identity): Promise<unknown>;
  text?(result: unknown): string;
}

function register<K extends ControlOperation>(name: K, tool: FacadeTool<K>): RegisteredTool {
  const { run, text, ...meta } = tool;
  return {
    name,
    ...meta,
    invoke: async (ops, args, identity) => run(ops, parseParams(name, args), identity),
    ...(text ? { text: (result: unknown) => text(result as ResultOf<K>) } : {}),
  };
}

/** The scope of a facade tool by its own name (`restart_server`); undefined for no such tool. */
function scopeOf(tools: FacadeTools, name: string): Scope | undefined {
  return Object.prototype.hasOwnProperty.call(tools, name) ? tools[name as ControlOperation].scope : undefined;
}

function definitions(): RegisteredTool[] {
  const tools: FacadeTools = {
    list_servers: {
      scope: 'read',
      description:
        'List every server in the registry with its state (running, stopped, failed, awaiting-approval...), ' +
        'pid, uptime, restarts, last error, trust tier, grants and tools.',
      run: (ops) => ({ servers: ops.listServers() }),
    },
    server_status: {
      scope: 'read',
      description:
        'Full status of one server: state, pid, uptime, restarts, last error, tools, grants and how they are enforced, trust and approval.',
      run: (ops, p) => ops.serverStatus(p.name),
    },
    tail_logs: {
      scope: 'read',
      description:
        "The last lines of a server's stderr and lifecycle log (secrets redacted). To follow it, pass the " +
        "previous answer's `next` as `after`: only newer lines come back.",
      run: (ops, p) => ops.tailLogs(p.name, p.lines, p.after),
    },
    list_prompts: {
      scope: 'read',
      description: 'List the fleet prompts from prompts.d/ (served to every client as switchboard__<name>).',
      run: (ops) => ({ prompts: ops.listPrompts() }),
    },
    list_clients: {
      scope: 'read',
      description: 'List the declared clients and their scopes (mcp_allow) and tool profiles.',
      run: (ops) => ({ clients: ops.listClients() }),
    },
    registry_problems: {
      scope: 'read',
      description: 'Problems found in the registry files, with file, line and column.',
      run: (ops) => ({ problems: ops.problems() }),
    },
    enable_server: {
      scope: 'write',
      description: "Set enabled: true in a server definition (a community server still needs the operator's approval).",
      idempotent: true,
      run: (ops, p) => ops.setEnabled(p.name, true),
    },
    disable_server: {
      scope: 'write',
      description: 'Set enabled: false in a server definition and stop it.',
      idempotent: true,
      destructive: true,
      run: (ops, p) => ops.setEnabled(p.name, false),
    },
    restart_server: {
      scope: 'write',
      description: 'Restart one server (also clears a failed state).',
      destructive: true,
      run: (ops, p) => ops.restart(p.name),
    },
    upsert_server: {
      scope: 'write',
      idempotent: true,
      description:
        'Create or replace a server definition (written to mcp-servers.d/<name>.yaml). ' +
        'Definitions written by agents are always the community tier: they start only after the operator approves them.',
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
      run: (ops, p) => ops.remove('server', p.name),
    },
    probe_server: {
      scope: 'write',
      description:
        'Start a server definition that is not saved yet, list its tools, prompts and resources with their schemas, ' +
        'measure connect and list latency, then stop it. ' +
        'Explains failures (command not found, exit code and stderr, HTTP status, timeout).',
      run: (ops, p, identity) => ops.probe(p.definition, identity),
    },
    upsert_prompt: {
      scope: 'write',
      idempotent: true,
      description: 'Create or replace a fleet prompt (prompts.d/<name>.yaml).',
      run: (ops, p) => ops.upsert('prompt', p.definition),
    },
    remove_prompt: {
      scope: 'write',
      destructive: true,
      description: 'Delete a fleet prompt.',
      run: (ops, p) => ops.remove('prompt', p.name),
    },
    approve_server: {
      scope: 'operator',
      description:
        'Operator only: approve a community server, or accept a server the workspace marks trusted, as it is ' +
        "defined now. 'hash' is the approvalHash of the status the operator reviewed; if the definition changed " +
        'since (command, args, cwd, env, env file contents, url, headers, grants, tool filters, trust), the ' +
        'approval is refused. Any later change needs a new approval.',
      run: (ops, p) => ops.approve(p.name, p.hash),
    },
    revoke_approval: {
      scope: 'operator',
      destructive: true,
      description: 'Operator only: withdraw the approval of a community server and stop it.',
      run: (ops, p) => ops.revoke(p.name),
    },
    tool_changes: {
      scope: 'operator',
      description:
        "Operator only: how a running server's tools and prompts differ from the ones pinned at approval (or " +
        'in mcp-servers.lock): per tool (changes) and per prompt (prompts), the pinned and the current ' +
        'definition. Quarantined tools and prompts are not listed to clients until the operator accepts them ' +
        'with accept_tool_changes.',
      run: (ops, p) => ops.toolChanges(p.name),
    },
    accept_tool_changes: {
      scope: 'operator',
      description:
        "Operator only: accept the tools and prompts a server lists now as its new pin. 'hash' is the " +
        'toolsHash of the tool_changes result that was reviewed; if the tools or prompts changed since, ' +
        'nothing is accepted.',
      run: (ops, p) => ops.acceptToolChanges(p.name, p.hash),
    },
    upsert_client: {
      scope: 'operator',
      idempotent: true,
      description: 'Operator only: create or replace a client definition (clients.d/<name>.yaml) and its scopes.',
      run: (ops, p) => ops.upsert('client', p.definition),
    },
    remove_client: {
      scope: 'operator',
      destructive: true,
      description: 'Operator only: delete a client definition; its token stops working at once.',
      run: (ops, p) => ops.remove('client', p.name),
    },
    client_connection: {
      scope: 'operator',
      description:
        'Operator only: the URL and token file for a client ' +
        '(the token is created on first use; it is never returned in a result). rotate: true replaces the token.',
      run: (ops, p) => ops.clientConnection(p.name, p.rotate),
    },
    find_tools: {
      scope: 'read',
      idempotent: true,
      description:
        'Find tools by what they do: ranks every tool you may call by name, title, description, parameter names ' +
        "and its server's description, and says why each matched. If your client uses toolMode search, the tools " +
        'found are added to your tool list (tools/list_changed follows): call them by name, or through ' +
        `${FACADE_NAMESPACE}__call_tool if your client does not re-list tools.`,
      run: (ops, p, identity) => ops.findTools(p.query, p.limit, identity, (op) => scopeOf(tools, op)),
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
      run: (ops, p, identity) => ops.readAudit(p.limit, identity, p.client),
    },
    begin_sign_in: {
      scope: 'operator',
      description:
        'Operator only: start signing in to a remote server with auth (OAuth). Returns the URL to open in a ' +
        "browser; the browser returns to the broker's own loopback address and the tokens stay in the broker's " +
        'per-user token store (never returned).',
      run: (ops, p) => ops.beginSignIn(p.name),
    },
    sign_out: {
      scope: 'operator',
      destructive: true,
      description: "Operator only: delete a remote server's sign-in tokens; it needs a new sign-in to connect.",
      run: (ops, p) => ops.signOut(p.name),
    },
    set_account_token: {
      scope: 'operator',
      idempotent: true,
      description:
        "Operator only (the editor): hand over a VS Code account's access token for a server with " +
        'auth: { type: vscode }. The broker holds it in memory only and sends it to that server alone; without ' +
        "'token' it is withdrawn. 'provider' and 'scopes' must be the server's (a token for other scopes is refused).",
      run: (ops, p) => ops.setAccountToken(p),
    },
    set_input: {
      scope: 'operator',
      idempotent: true,
      description:
        'Operator only (the editor or CLI): the value of ${input:NAME}, held in memory only (without value: ' +
        "forgotten); or reload: true to re-read it from the per-user store after 'switchboard secret set'. " +
        "Servers waiting for it start; it reaches only servers with the 'secrets' grant. The value is never returned.",
      run: (ops, p) => ops.setInput(p),
    },
    set_editor_roots: {
      scope: 'operator',
      idempotent: true,
      description:
        "Operator only (the editor): the workspace folders, as file:// URIs, that upstreams get as their client's " +
        'roots (with the registry root) when the calling client declares none; running servers are told the roots changed.',
      run: (ops, p) => ops.setEditorRoots(p.roots),
    },
    set_editor_telemetry: {
      scope: 'operator',
      idempotent: true,
      description:
        "Operator only (the editor): its switchboard.telemetry.enabled setting, applied now: the running broker's " +
        'telemetry starts or stops (the OTEL_* environment and telemetry.yaml keep it on whatever the editor says).',
      run: (ops, p) => ops.setEditorTelemetry(p.enabled),
    },
    telemetry_export: {
      scope: 'operator',
      idempotent: true,
      description:
        "Operator only: the export endpoint the workspace's telemetry.yaml names and whether it is used. One off " +
        'this machine is used only once the operator approves it (approve_telemetry_export).',
      run: (ops) => ops.telemetryExport(),
    },
    approve_telemetry_export: {
      scope: 'operator',
      idempotent: true,
      description:
        'Operator only: let the endpoint telemetry.yaml names (send the one telemetry_export showed) receive this ' +
        "workspace's traces and metrics, for this user, from now on; the running broker exports there at once.",
      run: (ops, p) => ops.approveTelemetryExport(p.endpoint),
    },
    list_policies: {
      scope: 'read',
      description:
        'List the guardrail policies (policies.d/<name>.yaml): rules that allow, deny or ask the operator about tool ' +
        'calls, and rate limits; for each, whether it is in force, awaiting approval, changed or removed.',
      run: (ops) => ({ policies: ops.policies.list() }),
    },
    upsert_policy: {
      scope: 'write',
      idempotent: true,
      description:
        'Propose a guardrail policy (written to policies.d/<name>.yaml): rules { name, clients, servers, tools, ' +
        'when (CEL over args, client, server, tool), action: allow|deny|ask, message } and limits { name, clients, ' +
        'servers, tools, per, callsPerMinute, concurrent }. Nothing of it is in force until the operator approves it.',
      run: (ops, p) => ops.policies.upsert(p.definition),
    },
    remove_policy: {
      scope: 'write',
      destructive: true,
      description: 'Delete a policy file. A version in force stays in force until the operator revokes it.',
      run: (ops, p) => ops.policies.remove(p.name),
    },
    approve_policy: {
      scope: 'operator',
      description:
        "Operator only: put a policy in force as it is written now. 'hash' is the hash of the list_policies entry " +
        'that was reviewed; if the file changed since, nothing is approved.',
      run: (ops, p) => ops.policies.approve(p.name, p.hash),
    },
    revoke_policy: {
      scope: 'operator',
      destructive: true,
      description: 'Operator only: take a policy out of force (its file, if any, then waits for approval again).',
      run: (ops, p) => ops.policies.revoke(p.name),
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
      inputSchema: toPortableSchema(paramsJsonSchema(d.name)),
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
