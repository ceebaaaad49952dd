// What the control plane reads and drives of a running broker. The control plane sits below the
// daemon that composes everything (daemon/broker.ts implements this), so it names the broker's parts
// by what they are instead of importing the class that wires them together.
import type { RegistrySnapshot } from '../../registry/loader';
import type { ServerDef } from '../../registry/schema';
import type { Catalog } from '../catalog/catalog';
import type { ToolTokens } from '../catalog/tokenCounts';
import type { ToolSearch } from '../catalog/toolSearch';
import type { AccessPolicy } from '../routing/accessPolicy';
import type { AuditLog } from '../routing/audit';
import type { ServedServer } from '../routing/servedServer';
import type { EditorLink } from '../supervision/editorLink';
import type { StartDecision, Supervisor } from '../supervision/supervisor';
import type { Upstream } from '../supervision/upstream';
import type { ClientTokens } from '../trust/clientTokens';
import type { Guardrails } from '../trust/guardrails/guardrails';

export interface BrokerEventMap {
  snapshot: [RegistrySnapshot];
  /** A snapshot has been reconciled: its upstreams are started/stopped and the catalog rebuilt. */
  applied: [RegistrySnapshot];
  state: [];
  catalog: [];
}

/** What the control plane gives the broker to run under. */
export interface Governance {
  /** Whether a definition may run now (enabled flag, trust tier, approval, workspace trust). */
  decide(def: ServerDef): StartDecision;
  /** The broker's own tools, prompts and resources, listed under the reserved namespace. */
  readonly served: ServedServer;
}

/** The sessions side of the endpoint, as far as control operations reach into it. */
export interface EndpointSessions {
  readonly sessionCount: number;
  /** Closes every session of a client (its file was removed, or its token rotated). */
  dropClient(client: string): void;
  /** Tells subscribed sessions a resource changed (the state resource). */
  resourceUpdated(uri: string): void;
}

export interface ControlledBroker {
  readonly root: string;
  readonly url: string;
  readonly opts: { readonly log?: (line: string) => void };
  readonly snapshot: RegistrySnapshot;
  readonly supervisor: Supervisor;
  readonly catalog: Catalog;
  readonly toolSearch: ToolSearch;
  readonly toolTokens: ToolTokens;
  readonly tokens: ClientTokens;
  readonly access: AccessPolicy;
  readonly audit: AuditLog;
  readonly editor: EditorLink;
  /** The rules and limits of the approved guardrail policies (policies.d/). */
  readonly guardrails: Guardrails;
  readonly endpoint: EndpointSessions;
  /** Compacting collections the idle collector ran (the state shows them). */
  readonly idleCollections: number;
  upstream(name: string): Upstream | undefined;
  /** Asks the governance again about every definition (an approval or a revocation changed it). */
  reapplyPolicy(): Promise<void>;
  rebuildCatalog(): void;
  waitForSnapshot(check: (snap: RegistrySnapshot) => boolean, timeoutMs?: number): Promise<void>;
  on<K extends keyof BrokerEventMap>(event: K, listener: (...args: BrokerEventMap[K]) => void): unknown;
}
