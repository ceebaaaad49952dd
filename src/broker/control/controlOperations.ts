// The broker's control operations: one implementation behind the facade tools, the CLI and the
// VS Code extension (which reach it through the facade as the operator).
// One concern over 450 lines: it is the table of operations of controlApi.ts, each a few lines that
// check and hand off to the subsystem that does the work (approvals, pins, policies, registry writes).
import * as path from 'node:path';
import type { RegistrySnapshot } from '../../registry/loader';
import { formatProblem } from '../../registry/problems';
import { definitionPath, inputsReferenced, ServerDefSchema, type Kind, type ServerDef } from '../../registry/schema';
import { RegistryWriter } from '../../registry/writer';
import { currentPolicy, serverBlock } from '../../registry/policy';
import { describeServer } from './serverStatusView';
import { PolicyOperations } from './policyOperations';
import { describeClients } from './clientSummaries';
import { policyProblems } from './policyProblems';
import { ApprovalMismatch, type Approvals } from '../trust/approvals';
import type { ControlledBroker } from './controlledBroker';
import { BROKER_VERSION } from '../shared/version';
import type { ClientTokens } from '../trust/clientTokens';
import type {
  AuditRecord,
  AuditTail,
  BrokerState,
  ClientConnection,
  ClientSummary,
  EditorTelemetry,
  TelemetryExport,
  FoundTool,
  ParamsOf,
  ResultOf,
  PromptSummary,
  RegistryProblem,
  Removed,
  ServerLogs,
  ServerStatus,
  Written,
} from './controlApi';
import { FACADE_NAMESPACE, type Route } from '../catalog/catalog';
import type { Root } from '../supervision/editorLink';
import { ErrorCodes, failureFrom, McpFailure } from '../shared/mcpTypes';
import { PinMismatch, type Pins, type ToolChanges } from '../trust/pins';
import { probeServer, whyProbeIsRefused, type ProbeResult } from '../supervision/probe';
import type { Identity } from '../routing/requestContext';
import { compareOrdinal } from '../shared/ordinal';
import { isUp } from '../supervision/upstreamStates';
import { telemetry } from '../telemetry/telemetry';

/** One server as the broker's gauges count it (ServerStatus's fields of the same names). */
export interface ServerGauge {
  name: string;
  state: ServerStatus['state'];
  restarts: number;
  pendingServerRequests: number;
  quarantinedTools: number;
}

export interface ControlContext {
  untrusted: boolean;
  url(): string;
  /** Starts or stops the broker's telemetry for the editor's setting (daemon/brokerTelemetry.ts). */
  editorTelemetry?(enabled: boolean): Promise<EditorTelemetry>;
  /** telemetry.yaml's endpoint and whether it is used; approving it applies at once (daemon/brokerTelemetry.ts). */
  telemetryExport?: TelemetryExportControl;
}

export interface TelemetryExportControl {
  state(): TelemetryExport;
  approve(endpoint: string): Promise<TelemetryExport>;
}

export class ControlOperations {
  private readonly writer: RegistryWriter;
  /** The guardrail policies (policies.d/): proposed by writers, approved by the operator. */
  readonly policies: PolicyOperations;

  constructor(
    private readonly broker: ControlledBroker,
    private readonly approvals: Approvals,
    private readonly tokens: ClientTokens,
    private readonly ctx: ControlContext,
    private readonly pins?: Pins,
  ) {
    this.writer = new RegistryWriter(broker.root);
    this.policies = new PolicyOperations(broker, this.writer);
  }

  private get snapshot(): RegistrySnapshot {
    return this.broker.snapshot;
  }

  private def(name: string): ServerDef {
    const def = this.snapshot.servers.get(name);
    if (!def) {
      const known = [...this.snapshot.servers.keys()];
      throw new McpFailure(
        ErrorCodes.InvalidParams,
        `No server named '${name}'.${known.length ? ` Known servers: ${known.join(', ')}.` : ' The registry has no servers yet.'}`,
      );
    }
    return def;
  }

  serverStatus(name: string): ServerStatus {
    const status = describeServer(this.def(name), {
      broker: this.broker,
      approvals: this.approvals,
      pins: this.pins,
      file: this.fileOf('server', name),
    });
    const guardrails = this.broker.guardrails.forServer(name);
    return guardrails.length ? { ...status, guardrails } : status;
  }

  listServers(): ServerStatus[] {
    return [...this.snapshot.servers.keys()].sort().map((n) => this.serverStatus(n));
  }

  /**
   * What the broker's gauges count of each server (daemon/brokerTelemetry.ts), read as
   * server_status reads it but without the rest of the status: every metric collection read all of
   * it, and describing a server scans its tools' text (~0.5% of a busy broker's CPU with metrics
   * exported every 5 s; "Telemetry cost, stop 46" in docs/performance.md).
   */
  serverGauges(): ServerGauge[] {
    return [...this.snapshot.servers.keys()].map((name) => {
      const upstream = this.broker.upstream(name);
      return {
        name,
        state: upstream?.state ?? 'stopped',
        restarts: upstream?.restarts ?? 0,
        pendingServerRequests: upstream?.serverRequests.pending ?? 0,
        quarantinedTools: this.pins?.state(name, upstream?.state === 'running').quarantined.length ?? 0,
      };
    });
  }

  /**
   * The audit log's newest entries. Another client's entries say what it called and when, which is
   * the operator's business, not a peer agent's: a client reads only the entries of its own calls.
   */
  readAudit(limit: number, identity: Identity, client?: string): AuditTail {
    if (!identity.operator) {
      if (client !== undefined && client !== identity.client)
        throw new McpFailure(
          ErrorCodes.Forbidden,
          `Client '${identity.client}' may read only its own audit entries, not those of '${client}'.`,
        );
      const own = (e: AuditRecord): boolean => e.client === identity.client && e.operator !== true;
      return { scope: 'own', entries: this.broker.audit.tail(limit, own) };
    }
    const keep = client === undefined ? undefined : (e: AuditRecord): boolean => e.client === client;
    return { scope: 'all', entries: this.broker.audit.tail(limit, keep), file: this.broker.audit.path };
  }

  /** With `after` (a previous answer's `next`), only the lines logged since: how a follower polls. */
  tailLogs(name: string, lines = 50, after?: number): ServerLogs {
    this.def(name);
    const upstream = this.broker.upstream(name);
    const n = Math.max(1, Math.min(500, Math.floor(lines)));
    const ring = upstream?.logs;
    if (!ring) return { server: name, lines: [], next: 0 };
    const page =
      after === undefined ? { lines: ring.tail(n), next: ring.mark(), skipped: 0 } : ring.since(Math.floor(after), n);
    return {
      server: name,
      lines: page.lines.map((l) => ({
        at: new Date(l.at).toISOString(),
        stream: l.stream,
        text: upstream.redactText(l.text),
      })),
      next: page.next,
      ...(page.skipped ? { skipped: page.skipped } : {}),
    };
  }

  listPrompts(): PromptSummary[] {
    return [...this.snapshot.prompts.values()]
      .sort((a, b) => compareOrdinal(a.name, b.name))
      .map((p) => ({
        name: p.name,
        exposedAs: `switchboard__${p.name}`,
        description: p.description,
        arguments: p.arguments,
      }));
  }

  listClients(): ClientSummary[] {
    return describeClients(this.snapshot, this.broker, this.tokens);
  }

  /**
   * Tools ranked for a query, only among those the caller may call: its tool profile for upstream
   * tools, its scopes for the broker's own (an operator-only tool is never offered to an agent).
   */
  findTools(
    query: string,
    limit: number,
    identity: Identity,
    facadeScope: (tool: string) => 'read' | 'write' | 'operator' | undefined,
  ): { query: string; tools: FoundTool[] } {
    const profile = this.broker.access.profileOf(identity);
    const visible = (route: Route): boolean => {
      if (route.server !== FACADE_NAMESPACE) {
        return this.broker.access.allowsTool(identity, route.server, route.exposed, profile);
      }
      const scope = facadeScope(route.name);
      if (scope === undefined) return false;
      if (identity.operator) return true;
      return scope !== 'operator' && this.broker.access.may(identity, scope);
    };
    const tools = this.broker.toolSearch.search(query, { limit, visible }).map((m) => ({
      name: m.name,
      server: m.server,
      description: m.description,
      score: m.score,
      matched: m.matched as Record<string, string[]>,
      why: Object.entries(m.matched)
        .map(([field, terms]) => `${field}: ${terms.join(', ')}`)
        .join('; '),
    }));
    return { query, tools };
  }

  problems(): RegistryProblem[] {
    const own = this.snapshot.problems.map((p) => ({ ...p, text: formatProblem(p, this.broker.root) }));
    return [...own, ...policyProblems(this.snapshot)];
  }

  private memory(): BrokerState['broker']['memory'] {
    const { rss, heapUsed } = process.memoryUsage();
    return { rssBytes: rss, heapUsedBytes: heapUsed, idleCollections: this.broker.idleCollections };
  }

  state(): BrokerState {
    return {
      broker: {
        version: BROKER_VERSION,
        pid: process.pid,
        root: this.broker.root,
        url: this.ctx.url(),
        sessions: this.broker.endpoint.sessionCount,
        untrusted: this.ctx.untrusted,
        ...(currentPolicy() ? { policy: currentPolicy()!.file } : {}),
        catalogVersion: this.broker.catalog.version,
        memory: this.memory(),
        ...(telemetry() ? { telemetry: true } : {}),
        editorConnected: this.broker.editor.current() !== undefined,
      },
      servers: this.listServers(),
      prompts: this.listPrompts(),
      clients: this.listClients(),
      problems: this.problems(),
      policies: this.policies.list(),
    };
  }

  async setEnabled(name: string, enabled: boolean): Promise<ServerStatus> {
    const def = this.def(name);
    if (def.enabled !== enabled) {
      await this.writer.upsert('server', { ...def, enabled });
      await this.broker.waitForSnapshot((s) => s.servers.get(name)?.enabled === enabled);
    }
    return this.serverStatus(name);
  }

  async restart(name: string): Promise<ServerStatus> {
    this.def(name);
    try {
      const upstream = await this.broker.supervisor.restart(name);
      await upstream.whenSettled(upstream.def.timeouts.startupMs).catch(() => undefined);
    } catch (err) {
      throw failureFrom(err);
    }
    return this.serverStatus(name);
  }

  /** Writes a definition through the registry's single writer and waits until the broker loaded it. */
  async upsert(kind: Kind, definition: unknown): Promise<Written> {
    if (kind === 'server') this.refuseByPolicy(definition, 'Not written');
    let result;
    try {
      result = await this.writer.upsert(kind, definition);
    } catch (err) {
      throw failureFrom(err);
    }
    const name = result.def.name;
    const printed = JSON.stringify(result.def);
    const mapOf = (s: RegistrySnapshot) => mapOfKind(s, kind);
    await this.broker.waitForSnapshot((s) => JSON.stringify(mapOf(s).get(name)) === printed);
    return { file: result.path, name };
  }

  /** The administrator's policy: nobody writes, probes or approves past it (the operator neither). */
  private refuseByPolicy(definition: unknown, what: string): void {
    const parsed = ServerDefSchema.safeParse(definition);
    if (!parsed.success) return; // the writer or the probe says what is wrong with it
    const block = serverBlock(currentPolicy(), parsed.data);
    if (block) throw new McpFailure(ErrorCodes.Forbidden, `${what}: ${block.message}.`);
  }

  async remove(kind: Kind, name: string): Promise<Removed> {
    let removed: boolean;
    try {
      removed = await this.writer.remove(kind, name);
    } catch (err) {
      throw failureFrom(err);
    }
    if (!removed) throw new McpFailure(ErrorCodes.InvalidParams, `No ${kind} named '${name}' to remove.`);
    const mapOf = (s: RegistrySnapshot) => mapOfKind(s, kind);
    await this.broker.waitForSnapshot((s) => !mapOf(s).has(name));
    if (kind === 'client') {
      this.tokens.revoke(name);
      this.broker.endpoint.dropClient(name);
    }
    return { removed };
  }

  async probe(definition: unknown, caller: Identity): Promise<ProbeResult> {
    if (this.ctx.untrusted)
      throw new McpFailure(
        ErrorCodes.Forbidden,
        'Probing spawns a process, which is not allowed while the workspace is not trusted.',
      );
    const parsed = ServerDefSchema.safeParse(definition);
    if (!parsed.success) {
      throw new McpFailure(
        ErrorCodes.InvalidParams,
        `The definition is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'definition'}: ${i.message}`).join('; ')}`,
      );
    }
    this.refuseByPolicy(parsed.data, 'Not probed');
    if (!caller.operator) {
      const refusal = whyProbeIsRefused(
        parsed.data,
        this.snapshot.servers.get(parsed.data.name),
        this.approvals.status(parsed.data),
      );
      if (refusal) throw new McpFailure(ErrorCodes.Forbidden, refusal);
    }
    const result = await probeServer(parsed.data, this.broker.root, undefined, this.broker.supervisor.credentials);
    if (caller.operator || !this.pins) return result;
    // What the pins hold back from the running server is held back from an agent's probe too: a
    // fresh process lists the changed definitions as much as the running one.
    const lists = { resources: result.resources, templates: result.resourceTemplates };
    const held = this.pins.heldOf(parsed.data.name, result.tools, result.prompts, lists);
    if (!held.tools.size && !held.prompts.size && !held.resources.size && !held.resourceTemplates.size) return result;
    return {
      ...result,
      tools: result.tools.filter((t) => !held.tools.has(t.name)),
      prompts: result.prompts.filter((p) => !held.prompts.has(p.name)),
      resources: result.resources.filter((r) => !held.resources.has(r.uri)),
      resourceTemplates: result.resourceTemplates.filter((t) => !held.resourceTemplates.has(t.uriTemplate)),
      heldBack: [...held.tools].sort(),
      ...(held.prompts.size ? { heldBackPrompts: [...held.prompts].sort() } : {}),
    };
  }

  /**
   * Approves a community server, or accepts a server the workspace marks trusted/builtin, as it is
   * now, only if `hash` is the approvalHash the operator was shown (a definition swapped in between
   * is refused, naming what changed).
   */
  async approve(name: string, hash: string): Promise<ServerStatus & { approved: string }> {
    const def = this.def(name);
    this.refuseByPolicy(def, 'Not approved');
    if (this.approvals.status(def) === 'not-needed') {
      const why = `this broker accepts the workspace's ${def.trust} servers (--accept-workspace-trust)`;
      throw new McpFailure(
        ErrorCodes.InvalidParams,
        `Server '${name}' is ${def.trust} and ${why}: it needs no approval.`,
      );
    }
    let entry;
    try {
      entry = this.approvals.approve(def, hash);
    } catch (err) {
      if (err instanceof ApprovalMismatch) throw new McpFailure(ErrorCodes.InvalidParams, err.message);
      throw err;
    }
    await this.broker.reapplyPolicy();
    const upstream = this.broker.upstream(name);
    if (upstream && def.enabled) await upstream.whenSettled(def.timeouts.startupMs).catch(() => undefined);
    return { ...this.serverStatus(name), approved: entry.summary };
  }

  async revoke(name: string): Promise<ServerStatus> {
    this.def(name);
    this.approvals.revoke(name);
    await this.broker.reapplyPolicy();
    return this.serverStatus(name);
  }

  /**
   * Starts the browser step of a server's sign-in. Operator only (the facade checks): the code
   * returns to the broker's own loopback listener and the tokens go only to its token store.
   */
  async beginSignIn(name: string): Promise<{ name: string; url: string }> {
    const def = this.def(name);
    if (this.ctx.untrusted) {
      const why = 'Signing in connects to a server of this workspace, which is not allowed while it is not trusted.';
      throw new McpFailure(ErrorCodes.Forbidden, why);
    }
    // A sign-in sends the client secret (auth.clientSecretFile) and the person's consent to the
    // authorization server the definition leads to: only for a definition the operator approved as it is.
    const approval = this.approvals.status(def);
    if (approval === 'required' || approval === 'changed') {
      const what = approval === 'required' ? 'is not approved yet' : 'changed since it was approved';
      const why = `'${name}' ${what}: approve it first (switchboard approve ${name}), then sign in.`;
      throw new McpFailure(ErrorCodes.Forbidden, why);
    }
    try {
      const { url } = await this.broker.supervisor.signIns.begin(def);
      return { name, url };
    } catch (err) {
      const why = `Could not start signing in to '${name}': ${(err as Error).message}`;
      throw new McpFailure(ErrorCodes.InvalidParams, why);
    }
  }

  /** Deletes the server's tokens; a connected server is reconnected and then needs a new sign-in. */
  async signOut(name: string): Promise<ServerStatus> {
    const def = this.def(name);
    try {
      this.broker.supervisor.signIns.signOut(def);
    } catch (err) {
      throw failureFrom(err);
    }
    const upstream = this.broker.upstream(name);
    if (upstream && isUp(upstream.state)) {
      await upstream.restart();
      await upstream.whenSettled(def.timeouts.startupMs).catch(() => undefined);
    }
    return this.serverStatus(name);
  }

  /** The editor hands over (or withdraws) a VS Code account's token for one server; memory only. */
  setAccountToken(p: ParamsOf<'set_account_token'>): ServerStatus {
    const def = this.def(p.name);
    try {
      this.broker.supervisor.credentials.supplyAccount(def, p);
    } catch (err) {
      throw failureFrom(err);
    }
    return this.serverStatus(p.name);
  }

  /** An entered secret from the editor (memory only), or re-read from the per-user store. */
  setInput(p: ParamsOf<'set_input'>): ResultOf<'set_input'> {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(p.name))
      throw new McpFailure(ErrorCodes.InvalidParams, `'${p.name}' is not an input name (letters, digits, _, . or -)`);
    if (p.reload && p.value !== undefined)
      throw new McpFailure(ErrorCodes.InvalidParams, "give either 'value' or 'reload', not both");
    const credentials = this.broker.supervisor.credentials;
    if (p.reload) credentials.reloadInput(p.name);
    else credentials.supplyInput(p.name, p.value);
    const servers = [...this.snapshot.servers.values()]
      .filter((d) => inputsReferenced(d).includes(p.name))
      .map((d) => d.name)
      .sort();
    const source = credentials.inputSource(p.name);
    return { name: p.name, ...(source ? { source } : {}), servers };
  }

  /** The editor's folders become roots of every upstream whose caller gives none (editorLink.ts). */
  setEditorRoots(roots: Root[]): { roots: Root[]; changed: boolean } {
    const changed = this.broker.editor.setRoots(roots);
    return { roots: [...this.broker.editor.roots], changed };
  }

  /** The editor's telemetry setting, applied while the broker runs. */
  async setEditorTelemetry(enabled: boolean): Promise<EditorTelemetry> {
    if (!this.ctx.editorTelemetry)
      throw new McpFailure(ErrorCodes.MethodNotFound, 'This broker cannot turn telemetry on or off while it runs.');
    return this.ctx.editorTelemetry(enabled);
  }

  /** Where telemetry.yaml's export endpoint stands. */
  telemetryExport(): TelemetryExport {
    return this.exportControl().state();
  }

  /** The operator approves telemetry.yaml's endpoint, as it was shown; telemetry follows at once. */
  approveTelemetryExport(endpoint: string): Promise<TelemetryExport> {
    return this.exportControl().approve(endpoint);
  }

  private exportControl(): TelemetryExportControl {
    if (!this.ctx.telemetryExport)
      throw new McpFailure(ErrorCodes.MethodNotFound, "This broker does not judge telemetry.yaml's endpoint.");
    return this.ctx.telemetryExport;
  }

  /** What differs between a running server's tools and prompts and its pins (the diff the operator reviews). */
  toolChanges(name: string): ToolChanges {
    this.def(name);
    return this.requirePins().changes(name, this.broker.upstream(name)?.state === 'running');
  }

  /** Accepts the tools a server lists now as its pin, if `hash` is the toolsHash of the reviewed diff. */
  acceptToolChanges(name: string, hash: string): ServerStatus & { accepted: number; acceptedPrompts: number } {
    this.def(name);
    const pins = this.requirePins();
    let record;
    try {
      record = pins.accept(name, hash, this.broker.upstream(name)?.state === 'running');
    } catch (err) {
      if (err instanceof PinMismatch) throw new McpFailure(ErrorCodes.InvalidParams, err.message);
      throw err;
    }
    this.broker.audit.write({
      event: 'accept-tool-changes',
      server: name,
      tools: record.tools,
      ...(record.prompts ? { prompts: record.prompts.hash } : {}),
    });
    this.broker.rebuildCatalog();
    const acceptedPrompts = Object.keys(record.prompts?.definitions ?? {}).length;
    return { ...this.serverStatus(name), accepted: Object.keys(record.definitions).length, acceptedPrompts };
  }

  private requirePins(): Pins {
    if (!this.pins) throw new McpFailure(ErrorCodes.InternalError, 'Tool pins are not kept by this broker.');
    return this.pins;
  }

  clientConnection(name: string, rotate = false): ClientConnection {
    if (!this.snapshot.clients.has(name))
      throw new McpFailure(ErrorCodes.InvalidParams, `No client named '${name}' in clients.d/.`);
    const { file } = rotate ? this.tokens.rotate(name) : this.tokens.tokenFor(name);
    if (rotate) this.broker.endpoint.dropClient(name);
    return { client: name, url: this.ctx.url(), tokenFile: file, header: `Authorization: Bearer $(cat ${file})` };
  }

  fileOf(kind: Kind, name: string): string {
    return path.join(this.broker.root, definitionPath(kind, name));
  }
}

function mapOfKind(s: RegistrySnapshot, kind: Kind): ReadonlyMap<string, unknown> {
  return { server: s.servers, prompt: s.prompts, client: s.clients, policy: s.policies }[kind];
}
