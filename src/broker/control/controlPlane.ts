// The control plane over a broker: trust tiers and approvals (which definitions may run), the
// facade served under the reserved namespace, the live state resource and the registry's audit trail.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ControlledBroker, Governance } from './controlledBroker';
import { Approvals, awaitingReason } from '../trust/approvals';
import { ControlOperations } from './controlOperations';
import { Facade, STATE_URI } from './facade';
import { FacadeServer } from './facadeServer';
import { lockfilePath } from '../trust/lockfile';
import { Pins } from '../trust/pins';
import { PinStore } from '../trust/pinStore';
import type { RuntimePaths } from '../shared/userState';
import type { StartDecision } from '../supervision/supervisor';
import type { ServerDef } from '../../registry/schema';
import { currentPolicy, honoursWorkspaceTrust, policyFile, serverBlock } from '../../registry/policy';

import type { EditorTelemetry } from './controlApi';
import type { TelemetryExportControl } from './controlOperations';

export interface ControlPlaneOptions {
  untrusted: boolean;
  /** The operator accepts the servers the workspace marks trusted/builtin without a recorded acceptance. */
  acceptWorkspaceTrust?: boolean;
  /** Starts or stops telemetry for the editor's setting while the broker runs (the daemon's). */
  editorTelemetry?(enabled: boolean): Promise<EditorTelemetry>;
  /** telemetry.yaml's export endpoint: its state, and the operator's approval applied at once (the daemon's). */
  telemetryExport?: TelemetryExportControl;
}

export class ControlPlane implements Governance {
  readonly approvals: Approvals;
  readonly pins: Pins;
  /** The pins' file: close() writes what it has not written yet. */
  private readonly pinStore: PinStore;
  readonly facade = new Facade();
  readonly operations: ControlOperations;
  readonly served: FacadeServer;
  private stateTimer?: NodeJS.Timeout;
  private readonly lockfile: string;
  private readonly onLockfile = (): void => this.broker.rebuildCatalog();
  /** The administrator's policy file, watched: a change is applied to every server at once. */
  private readonly policyFile = policyFile();
  private readonly onPolicy = (): void =>
    void this.broker
      .reapplyPolicy()
      .catch((err: Error) => this.broker.opts.log?.(`policy: could not apply ${this.policyFile}: ${err.message}`));

  constructor(
    private readonly broker: ControlledBroker,
    paths: RuntimePaths,
    private readonly opts: ControlPlaneOptions,
  ) {
    this.approvals = new Approvals(paths.approvalsFile, broker.root, {
      acceptWorkspaceTrust: opts.acceptWorkspaceTrust,
      // The administrator's policy may refuse the workspace's word: then each such server needs the operator's own approval.
      workspaceTrustHonoured: () => honoursWorkspaceTrust(currentPolicy()),
    });
    // Tool pins live next to the approvals (per user, outside the workspace); the catalog asks them
    // which tools of a running server to hold back.
    const pinStore = (this.pinStore = new PinStore(
      path.join(path.dirname(paths.approvalsFile), 'tool-pins.json'),
      broker.root,
    ));
    this.pins = new Pins(pinStore, broker.root, (name) => broker.snapshot?.servers.get(name), broker.opts.log);
    // A running server's instructions are pinned with its tools, prompts and resources (the first live start gives them).
    broker.catalog.setToolGate(
      (server, tools, prompts, resources, templates) => {
        const upstream = broker.upstream(server);
        const live = upstream?.state === 'running' ? { instructions: upstream.instructions } : undefined;
        return this.pins.gate(server, tools, live, prompts, { resources, templates });
      },
      (server, instructions) => this.pins.instructions(server, instructions),
    );
    // A `git pull` may bring a new mcp-servers.lock: the running servers are held to it at once.
    this.lockfile = lockfilePath(broker.root);
    fs.watchFile(this.lockfile, { interval: 1000, persistent: false }, this.onLockfile);
    if (this.policyFile) fs.watchFile(this.policyFile, { interval: 1000, persistent: false }, this.onPolicy);
    const context = {
      untrusted: opts.untrusted,
      url: () => broker.url,
      editorTelemetry: opts.editorTelemetry && ((on: boolean) => opts.editorTelemetry!(on)),
      telemetryExport: opts.telemetryExport,
    };
    this.operations = new ControlOperations(broker, this.approvals, broker.tokens, context, this.pins);
    this.served = new FacadeServer(this.facade, this.operations, broker.access, () => broker.snapshot);
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
    broker.on('snapshot', changed);
    this.auditRegistry();
  }

  /** Grants and trust are audited when a server appears or they change, not on every reload. */
  private auditRegistry(): void {
    const audited = new Map<string, string>();
    this.broker.on('snapshot', (snap) => {
      for (const [name, def] of snap.servers) {
        const entry = {
          event: 'registry',
          server: name,
          trust: def.trust,
          grants: def.grants,
          enabled: def.enabled,
          approval: this.approvals.status(def),
        };
        const key = JSON.stringify(entry);
        if (audited.get(name) !== key) this.broker.audit.write(entry);
        audited.set(name, key);
      }
      for (const name of [...audited.keys()]) {
        if (!snap.servers.has(name)) {
          audited.delete(name);
          this.broker.audit.write({ event: 'registry', server: name, removed: true });
        }
      }
    });
  }

  decide(def: ServerDef): StartDecision {
    if (this.opts.untrusted)
      return {
        run: false,
        state: 'blocked',
        reason: 'the workspace is not trusted, so nothing from its registry is started',
      };
    // The administrator's policy comes before anything the workspace or the operator says.
    const block = serverBlock(currentPolicy(), def);
    if (block) return { run: false, state: 'blocked', reason: block.message };
    if (!def.enabled) return { run: false, state: 'disabled', reason: 'disabled (enabled: false)' };
    // Community servers need the operator's approval; trusted/builtin ones the operator's one-time
    // acceptance of what the workspace asks for (unless started with --accept-workspace-trust).
    const reason = awaitingReason(def, this.approvals.check(def));
    if (reason) return { run: false, state: 'awaiting-approval', reason };
    return { run: true };
  }

  close(): void {
    clearTimeout(this.stateTimer);
    this.pinStore.flush();
    fs.unwatchFile(this.lockfile, this.onLockfile);
    if (this.policyFile) fs.unwatchFile(this.policyFile, this.onPolicy);
  }
}
