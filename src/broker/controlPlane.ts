// Identities, scopes, trust tiers, the facade and the audit log: who may do what, checked on every
// request against the registry as it is now.
import type { Broker, ControlHooks } from './broker';
import { Approvals, awaitingReason } from './approvals';
import { AuditLog } from './audit';
import { ClientTokens, safeEqual } from './clientTokens';
import { ControlOperations } from './controlOperations';
import type { Identity } from './routing';
import { Facade, STATE_URI } from './facade';
import { ErrorCodes, McpFailure, type JsonObject } from './mcpTypes';
import { renderPromptMessages } from '../registry/template';
import type { RuntimePaths } from './runtime';
import type { StartDecision } from './supervisor';
import type { ServerDef } from '../registry/schema';

export interface ControlPlaneOptions {
  untrusted: boolean;
  /** The operator accepts the servers the workspace marks trusted/builtin without a recorded acceptance. */
  acceptWorkspaceTrust?: boolean;
}

/** The editor's own identity: one object for every request it makes (nothing mutates it). */
const OPERATOR: Identity = Object.freeze({ client: 'operator', operator: true });

export class ControlPlane {
  readonly approvals: Approvals;
  readonly tokens: ClientTokens;
  readonly facade = new Facade();
  readonly audit: AuditLog;
  private broker?: Broker;
  private ops?: ControlOperations;
  private stateTimer?: NodeJS.Timeout;
  url = '';

  constructor(
    readonly root: string,
    readonly paths: RuntimePaths,
    private readonly operatorToken: string,
    private readonly opts: ControlPlaneOptions,
  ) {
    this.approvals = new Approvals(paths.approvalsFile, root, { acceptWorkspaceTrust: opts.acceptWorkspaceTrust });
    this.tokens = new ClientTokens(paths.tokensDir);
    this.audit = new AuditLog(paths.auditFile, () => this.secrets());
    this.operatorTokenBytes = Buffer.from(operatorToken);
  }

  private readonly operatorTokenBytes: Buffer;

  get operations(): ControlOperations {
    if (!this.ops) throw new Error('control plane not attached');
    return this.ops;
  }

  attach(broker: Broker): void {
    this.broker = broker;
    this.ops = new ControlOperations(broker, this.approvals, this.tokens, { untrusted: this.opts.untrusted, url: () => this.url });
    // The state resource is pushed to subscribers on every change, coalesced to one per 50 ms.
    const changed = (): void => {
      if (this.stateTimer) return;
      this.stateTimer = setTimeout(() => {
        this.stateTimer = undefined;
        broker.endpoint.resourceUpdated(STATE_URI);
      }, 50);
    };
    broker.on('state', changed);
    broker.on('catalog', changed);
    let lastPrompts = '';
    let lastClients = new Set<string>();
    const audited = new Map<string, string>();
    broker.on('snapshot', (snap) => {
      changed();
      const prompts = JSON.stringify([...snap.prompts.values()]);
      if (prompts !== lastPrompts) {
        lastPrompts = prompts;
        broker.refreshFacade();
      }
      // A client whose definition was deleted loses its sessions at once.
      const clients = new Set(snap.clients.keys());
      for (const name of lastClients) if (!clients.has(name)) broker.endpoint.dropClient(name);
      lastClients = clients;
      // Grants and trust are audited when a server appears or they change, not on every reload.
      for (const [name, def] of snap.servers) {
        const entry = { event: 'registry', server: name, trust: def.trust, grants: def.grants, enabled: def.enabled, approval: this.approvals.status(def) };
        const key = JSON.stringify(entry);
        if (audited.get(name) !== key) this.audit.write(entry);
        audited.set(name, key);
      }
      for (const name of [...audited.keys()]) {
        if (!snap.servers.has(name)) {
          audited.delete(name);
          this.audit.write({ event: 'registry', server: name, removed: true });
        }
      }
    });
  }

  /** Every value that must never be written: tokens and the upstreams' secrets (fresh on each flush). */
  private secrets(): string[] {
    const values = [this.operatorToken, ...this.tokens.values()];
    for (const upstream of this.broker?.supervisor.all() ?? []) values.push(...upstream.secretValues);
    return values;
  }

  authenticate(token: string): Identity | undefined {
    if (safeEqual(token, this.operatorTokenBytes)) return OPERATOR;
    const client = this.tokens.clientOf(token);
    // A token only counts while its client is declared in clients.d/.
    if (client && this.broker?.snapshot?.clients.has(client)) return { client, operator: false };
    return undefined;
  }

  /** The client's scopes as the registry says right now (not as they were at connect time). */
  private allowed(identity: Identity): readonly string[] {
    if (identity.operator) return ['read', 'write'];
    return this.broker?.snapshot.clients.get(identity.client)?.mcp_allow ?? [];
  }

  decide(def: ServerDef): StartDecision {
    if (this.opts.untrusted) return { run: false, state: 'blocked', reason: 'the workspace is not trusted, so nothing from its registry is started' };
    if (!def.enabled) return { run: false, state: 'disabled', reason: 'disabled (enabled: false)' };
    // Community servers need the operator's approval; trusted/builtin ones the operator's one-time
    // acceptance of what the workspace asks for (unless started with --accept-workspace-trust).
    const reason = awaitingReason(def, this.approvals.check(def));
    if (reason) return { run: false, state: 'awaiting-approval', reason };
    return { run: true };
  }

  hooks(): ControlHooks {
    return {
      authenticate: (token) => this.authenticate(token),
      policy: (def) => this.decide(def),
      facade: {
        tools: () => this.facade.tools(),
        prompts: () => [...(this.broker?.snapshot?.prompts.values() ?? [])].map((p) => ({
          name: `switchboard__${p.name}`,
          description: p.description,
          arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required })),
        })),
      },
      callFacade: (ctx, name, args) => this.facade.call(this.operations, name, args, ctx.identity, this.allowed(ctx.identity)),
      getFacadePrompt: async (ctx, name, args) => {
        const def = this.broker?.snapshot.prompts.get(name.replace(/^switchboard__/, ''));
        if (!def) throw new McpFailure(ErrorCodes.InvalidParams, `Unknown prompt '${name}'.`);
        if (!this.allowed(ctx.identity).includes('read')) throw new McpFailure(ErrorCodes.Forbidden, `Prompts need the 'read' scope.`);
        try {
          const messages = renderPromptMessages(def, args);
          return { description: def.description, messages: messages.map((m) => ({ role: m.role, content: { type: 'text', text: m.content } })) };
        } catch (err) {
          throw new McpFailure(ErrorCodes.InvalidParams, (err as Error).message);
        }
      },
      facadeResources: () => [{ uri: STATE_URI, name: 'switchboard__state', title: 'Switchboard state', description: 'Live state of the broker, its servers, prompts, clients and registry problems (subscribe for updates).', mimeType: 'application/json' }],
      readFacadeResource: (ctx, uri) => {
        if (uri !== STATE_URI) return undefined;
        if (!this.allowed(ctx.identity).includes('read')) return Promise.reject(new McpFailure(ErrorCodes.Forbidden, `Reading ${STATE_URI} needs the 'read' scope.`));
        return Promise.resolve({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(this.operations.state()) }] } as JsonObject);
      },
      toolProfile: (identity) => (identity.operator ? undefined : this.broker?.snapshot.clients.get(identity.client)?.tools),
      audit: (entry) => this.audit.write(entry),
    };
  }

  close(): void {
    clearTimeout(this.stateTimer);
    this.audit.close();
  }
}
