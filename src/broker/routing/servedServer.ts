// What the catalog lists and the router calls: a supervised upstream, or the broker's own control
// tools served like one under the reserved namespace. The catalog and router know only this shape.
import {
  ErrorCodes,
  McpFailure,
  type JsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '../shared/mcpTypes';
import type { ListedServer } from '../catalog/catalog';
import type { TraceParent } from '../telemetry/telemetry';
import type { CacheHints, ListKey } from '../connection/connection';
import type { Identity, RequestExtra } from './requestContext';
import type { CallOrigin } from '../catalog/apps/appCalls';

/** Who asked, and the request's cancellation and progress. */
export interface ServedCall {
  identity: Identity;
  extra: RequestExtra;
  /** `app`: an MCP App's page called (catalog/apps/appCalls.ts); absent: a client's own call (the model's). */
  origin?: CallOrigin;
  /** A tools/call's `task` param (2025-11-25 tasks): run it as a task, answer with a CreateTaskResult. */
  task?: JsonObject;
}

export interface ServedServer extends ListedServer {
  readonly name: string;
  /** `control` for the broker's own facade (audited as such), `upstream` for a supervised server. */
  readonly kind: 'upstream' | 'control';
  /**
   * Whether its lists are served (live, or cached while it is idle or starting: a call then waits
   * for ensureStarted); when not, `unavailable()` says why.
   */
  readonly available: boolean;
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
  /** The definition's allowedTools / excludeTools (globs over the server's own tool names). */
  readonly toolFilter?: { allow?: readonly string[]; deny?: readonly string[] };
  readonly instructions?: string;
  unavailable(): McpFailure;
  /** Writes a line about one of its calls in its own log (callNotes.ts); the broker's facade has none. */
  note?(line: string): void;
  /** Brings a lazy or starting server up before a request goes on; undefined when it is up (or absent). */
  ensureStarted?(trace?: TraceParent): Promise<void> | undefined;
  callTool(name: string, args: JsonObject, meta: JsonObject | undefined, call: ServedCall): Promise<JsonObject>;
  getPrompt(name: string, args: Record<string, string>, call: ServedCall): Promise<JsonObject>;
  readResource(uri: string, call: ServedCall): Promise<JsonObject>;
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  complete(params: JsonObject, call: ServedCall): Promise<JsonObject>;
  /** Reads its MCP App pages again (one changed since they were read). */
  refreshAppPages?(): void;
  /** Whether it takes task-augmented tools/call (it declared `tasks.requests.tools.call`). */
  readonly toolTasks?: boolean;
  /** The protocol revision the broker speaks with it, when it is an upstream that runs. */
  readonly protocol?: string;
  /** The cache hints its server gave with a list (a 2026-07-28 upstream that runs). */
  listHints?(key: ListKey): CacheHints | undefined;
  /** tasks/get, tasks/result or tasks/cancel about one of its tasks, under its own task id. */
  taskRequest?(method: string, params: JsonObject, call: ServedCall): Promise<JsonObject>;
  /** Tells `events` its task status notifications and the end of its connection. */
  onTaskEvents?(events: TaskEvents): void;
}

/** What a served server offers the task routes (an upstream does; the facade does not). */
export interface TaskEvents {
  /** A notifications/tasks/status from the server (its own task id in it). */
  status(task: JsonObject): void;
  /** The server's connection ended (crash, restart, stop): `reason` says why. */
  lost(reason: string): void;
}

/** An empty completion result (fresh each time: the endpoint may decorate what it sends). */
export function noCompletions(): JsonObject {
  return { completion: { values: [] } };
}

/** The error for a server name nothing serves (a per-server session whose server was removed). */
export function noSuchServer(name: string): McpFailure {
  return new McpFailure(ErrorCodes.InvalidParams, `No server named '${name}' in this registry.`);
}
