// What the broker does with a request an upstream sends its client (sampling, elicitation, roots):
// to the one caller it belongs to when its client declared the capability, the registry root for
// roots nobody else gives, a clear refusal otherwise; each one audited (never its content).
import { pathToFileURL } from 'node:url';
import type { ServerRequest, ServerRequestCaller } from './connection/serverRequests';
import { ErrorCodes, McpFailure, type JsonObject } from './mcpTypes';

/** The capability a request needs of the client that answers it, in the words of the spec. */
export function neededCapability(request: Pick<ServerRequest, 'method' | 'params'>): string {
  switch (request.method) {
    case 'sampling/createMessage':
      // Sampling with tools needs the client's `sampling.tools`.
      return request.params.tools !== undefined || request.params.toolChoice !== undefined
        ? 'sampling.tools'
        : 'sampling';
    case 'elicitation/create':
      return request.params.mode === 'url' ? 'elicitation.url' : 'elicitation.form';
    case 'roots/list':
      return 'roots';
    default:
      return request.method;
  }
}

/** Whether declared client capabilities cover `needed` (an empty `elicitation` is form mode). */
export function declares(capabilities: JsonObject | undefined, needed: string): boolean {
  const [name, sub] = needed.split('.', 2);
  const declared = capabilities?.[name];
  if (!declared || typeof declared !== 'object') return false;
  if (sub === undefined) return true;
  const modes = declared as JsonObject;
  if (needed === 'elicitation.form' && Object.keys(modes).length === 0) return true;
  return modes[sub] !== undefined;
}

/** The one server→client requests dispatcher of an upstream; counts what is pending for the state. */
export class ServerRequestDispatch {
  /** Requests sent to a client and not answered yet. */
  pending = 0;

  constructor(
    private readonly server: string,
    private readonly root: string,
    private readonly audit: (entry: JsonObject) => void,
  ) {}

  /** The registry root as the one root, for a server whose caller cannot give its own. */
  registryRoots(): JsonObject {
    return { roots: [{ uri: pathToFileURL(this.root).href, name: 'workspace registry root' }] };
  }

  handle = async (request: ServerRequest, callers: ServerRequestCaller[]): Promise<JsonObject> => {
    const started = performance.now();
    // `client`: whose call caused it; `routedTo`: who answered (that client, or the registry root).
    const entry: JsonObject = { event: 'server-request', server: this.server, method: request.method };
    if (callers.length === 1) entry.client = callers[0].client;
    else if (callers.length > 1) entry.sessions = callers.length;
    try {
      const { result, routedTo } = await this.route(request, callers);
      this.record({ ...entry, routedTo }, started);
      return result;
    } catch (err) {
      this.record({ ...entry, routedTo: 'none' }, started, err);
      throw err;
    }
  };

  private async route(
    request: ServerRequest,
    callers: ServerRequestCaller[],
  ): Promise<{ result: JsonObject; routedTo: 'client' | 'registry-root' }> {
    const needed = neededCapability(request);
    if (callers.length > 1) {
      // A stdio server (or a request outside any call's stream) does not say which call it is
      // for: with several sessions waiting, guessing could show one agent's prompt to another.
      throw new McpFailure(
        ErrorCodes.InvalidRequest,
        `The ${request.method} request from server '${this.server}' could not be attributed to one caller: ` +
          `${callers.length} sessions have calls in flight on this shared server. It was refused rather ` +
          'than shown to the wrong client; retry when the server handles one session at a time.',
      );
    }
    const caller = callers[0];
    if (!caller) {
      if (request.method === 'roots/list') return { result: this.registryRoots(), routedTo: 'registry-root' };
      throw new McpFailure(
        ErrorCodes.MethodNotFound,
        `The ${request.method} request from server '${this.server}' came while none of its calls was in flight: ` +
          'there is no caller to show it to.',
      );
    }
    if (!declares(caller.capabilities(), needed)) {
      if (request.method === 'roots/list') return { result: this.registryRoots(), routedTo: 'registry-root' };
      throw new McpFailure(
        ErrorCodes.MethodNotFound,
        `Client '${caller.client}' did not declare ${needed}; the ${request.method} request from server ` +
          `'${this.server}' cannot be shown.`,
      );
    }
    this.pending++;
    try {
      return { result: await caller.ask(request), routedTo: 'client' };
    } finally {
      this.pending--;
    }
  }

  private record(entry: JsonObject, started: number, error?: unknown): void {
    this.audit({
      ...entry,
      ms: Math.round((performance.now() - started) * 100) / 100,
      outcome: error ? 'error' : 'ok',
      ...(error ? { error: (error as Error).message } : {}),
    });
  }
}
