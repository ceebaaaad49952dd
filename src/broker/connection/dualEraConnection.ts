// A remote 2026-07-28 upstream, which may also speak 2025-11-25 (server/discover lists only the
// 2026 revisions: a 2025 one is found by trying initialize): each caller is served in its own era
// where the server has it. 2026-07-28 callers, the lists and the change notifications use the
// stateless connection; a 2025-11-25 caller's call goes over a 2025 session to the same server,
// opened on its first call, so that the requests its tool sends during the call (sampling,
// elicitation, roots: legal in 2025-11-25, absent from 2026-07-28) reach it. A server that refuses
// the session serves 2025 callers statelessly, translated (statelessSession.ts).
import type { LogRing } from '../shared/logRing';
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';
import type {
  CacheHints,
  CallOptions,
  ConnectedInfo,
  ConnectionEvents,
  ListKey,
  RemoteLaunch,
  UpstreamConnection,
} from './connection';
import { RemoteConnection } from './remoteConnection';
import { merged } from '../shared/objects';

/** Methods only a 2025 session has (tasks, session log level): always the session's. */
const SESSION_ONLY = (method: string): boolean => method.startsWith('tasks/');

export class DualEraConnection implements UpstreamConnection {
  readonly pid = undefined;
  private legacy?: Promise<RemoteConnection>;
  /** The server refused a 2025 session (2026-07-28 only): 2025 callers are translated. */
  private modernOnly = false;
  private closing = false;

  constructor(
    private readonly modern: UpstreamConnection,
    private readonly launch: RemoteLaunch,
    private readonly events: ConnectionEvents,
    private readonly logs: LogRing,
    private readonly timeoutMs: number,
  ) {}

  get info(): ConnectedInfo {
    return this.modern.info;
  }

  async request(method: string, params: JsonObject, opts: CallOptions): Promise<JsonObject> {
    // A request with no 2025 caller (the broker's own, a 2026-07-28 caller's) stays stateless.
    const sessionCaller = opts.caller !== undefined && opts.caller.protocol === undefined;
    if (this.modernOnly || (!sessionCaller && !SESSION_ONLY(method))) return this.modern.request(method, params, opts);
    const session = await this.session().catch((err: Error) => {
      if (!this.modernOnly) this.logs.push(`no 2025-11-25 session (${err.message}); 2025 callers are translated`);
      this.modernOnly = true;
      return undefined;
    });
    return (session ?? this.modern).request(method, params, opts);
  }

  /** The 2025 session, opened once; a lost one is opened again by the next 2025 call. */
  private session(): Promise<RemoteConnection> {
    this.legacy ??= RemoteConnection.connect(
      merged(this.launch, { session: true }),
      // The stateless side already follows the lists: the session's own announcements would repeat them.
      merged(this.events, {
        toolsChanged: () => undefined,
        promptsChanged: () => undefined,
        resourcesChanged: () => undefined,
        lost: (reason: string) => {
          this.logs.push(
            `the 2025-11-25 session to this dual-era server ended (${reason}); the next 2025 call opens another`,
          );
          this.legacy = undefined;
        },
      }),
      this.logs,
      this.timeoutMs,
    ).catch((err: unknown) => {
      this.legacy = undefined;
      throw err;
    });
    return this.legacy;
  }

  listTools(timeoutMs: number): Promise<Tool[]> {
    return this.modern.listTools(timeoutMs);
  }
  listHints(key: ListKey): CacheHints | undefined {
    return this.modern.listHints?.(key);
  }
  listPrompts(timeoutMs: number): Promise<Prompt[]> {
    return this.modern.listPrompts(timeoutMs);
  }
  listResources(timeoutMs: number): Promise<Resource[]> {
    return this.modern.listResources(timeoutMs);
  }
  listResourceTemplates(timeoutMs: number): Promise<ResourceTemplate[]> {
    return this.modern.listResourceTemplates(timeoutMs);
  }

  async notifyRootsChanged(): Promise<void> {
    const legacy = this.legacy && (await this.legacy.catch(() => undefined));
    await legacy?.notifyRootsChanged();
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const legacy = this.legacy;
    this.legacy = undefined;
    await Promise.all([this.modern.close(), legacy?.then((c) => c.close()).catch(() => undefined)]);
  }
}
