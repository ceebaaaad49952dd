// What the broker does with a request an upstream sends its client (sampling, elicitation, roots):
// to the one caller it belongs to when its client declared the capability, else to the editor (the
// VS Code extension) when the server's clientFeatures allow it and one is connected, the registry
// root and the editor's folders for roots nobody else gives, a clear refusal otherwise; each one
// audited (never its content). A caller that has this server's question open (a person answering,
// or a 2026-07-28 caller that has not retried its input_required yet) is not the one a new question
// is for, so one unanswered question does not make every other caller's question unattributable.
import { pathToFileURL } from 'node:url';
import type { ServerDef } from '../../registry/schema';
import type { ServerRequest, ServerRequestCaller } from '../connection/serverRequests';
import type { EditorLink, Root } from './editorLink';
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import { telemetry } from '../telemetry/telemetry';
import { merged } from '../shared/objects';

/** The `_meta` key under which the editor is told which server asks, its trust tier and for whom. */
export const ORIGIN_META = 'switchboard/origin';

type Feature = keyof ServerDef['clientFeatures'];
type RoutedTo = 'client' | 'editor' | 'registry-root';

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

/** The clientFeatures setting that governs a method, if one does. */
function featureOf(method: string): Feature | undefined {
  if (method === 'elicitation/create') return 'elicitation';
  if (method === 'sampling/createMessage') return 'sampling';
  return undefined;
}

/** The one server→client requests dispatcher of an upstream; counts what is pending for the state. */
export class ServerRequestDispatch {
  /** Requests sent to a client (or the editor) and not answered yet. */
  pending = 0;
  /** The sessions (callers) with a question of this server open, and how many each. */
  private readonly asking = new Map<string, number>();
  private readonly server: string;

  constructor(
    private readonly def: Pick<ServerDef, 'name' | 'trust' | 'clientFeatures'>,
    private readonly root: string,
    private readonly audit: (entry: JsonObject) => void,
    private readonly editor?: EditorLink,
  ) {
    this.server = def.name;
  }

  /** The registry root and the editor's workspace folders, for a server whose caller cannot give its own. */
  registryRoots(): JsonObject {
    const roots: Root[] = [{ uri: pathToFileURL(this.root).href, name: 'workspace registry root' }];
    for (const folder of this.editor?.roots ?? []) {
      if (!roots.some((r) => r.uri === folder.uri)) roots.push({ ...folder });
    }
    return { roots: roots as unknown as JsonObject[] };
  }

  handle = (request: ServerRequest, callers: ServerRequestCaller[]): Promise<JsonObject> => {
    const traced = telemetry();
    if (!traced) return this.answer(request, callers);
    // A SERVER span (the broker serves its upstream's request), child of the call that caused it.
    const attributes: Record<string, string> = { 'mcp.method.name': request.method, 'switchboard.server': this.server };
    if (callers.length === 1) attributes['switchboard.client'] = callers[0].client;
    const { trace: parent, ...asked } = request;
    return traced.span({ name: request.method, kind: 'server', attributes, parent }, (note) =>
      this.answer(asked, callers, (routedTo) => note({ 'switchboard.routed_to': routedTo })),
    );
  };

  private async answer(
    request: ServerRequest,
    callers: ServerRequestCaller[],
    routed?: (to: RoutedTo | 'none') => void,
  ): Promise<JsonObject> {
    const started = performance.now();
    // `client`: whose call caused it; `routedTo`: who answered (that client, the editor, the registry root).
    const entry: JsonObject = { event: 'server-request', server: this.server, method: request.method };
    if (callers.length === 1) entry.client = callers[0].client;
    else if (callers.length > 1) entry.sessions = callers.length;
    try {
      const { result, routedTo } = await this.route(request, callers);
      routed?.(routedTo);
      this.record(merged(entry, { routedTo }), started);
      return result;
    } catch (err) {
      routed?.('none');
      this.record(merged(entry, { routedTo: 'none' }), started, err);
      throw err;
    }
  }

  private async route(
    request: ServerRequest,
    callers: ServerRequestCaller[],
  ): Promise<{ result: JsonObject; routedTo: RoutedTo }> {
    const needed = neededCapability(request);
    const feature = featureOf(request.method);
    const rule = feature ? this.def.clientFeatures[feature] : 'caller';
    if (feature && rule === 'deny') {
      throw new McpFailure(
        ErrorCodes.MethodNotFound,
        `Server '${this.server}' may not ask for ${feature}: its clientFeatures.${feature} is 'deny' ` +
          `(mcp-servers.d/${this.server}.yaml). Set it to 'caller' or 'editor' to let it ask.`,
      );
    }
    // The editor is the operator's own window, not another agent's: which call it is for does not matter.
    if (feature && rule === 'editor') return this.toEditor(request, needed, callers, feature);
    if (callers.length > 1) callers = this.notWaiting(callers);
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
      // The caller cannot show it (a terminal agent): the editor answers for it, when connected and able.
      const editor = this.editor?.current();
      if (feature && editor && declares(editor.capabilities(), needed)) {
        return this.toEditor(request, needed, callers, feature);
      }
      throw new McpFailure(
        ErrorCodes.MethodNotFound,
        `Client '${caller.client}' did not declare ${needed}; the ${request.method} request from server ` +
          `'${this.server}' cannot be shown.` +
          (feature ? ' Open the workspace in VS Code with the Switchboard extension to answer it there.' : ''),
      );
    }
    return { result: await this.ask(caller, request), routedTo: 'client' };
  }

  /** Puts the request to the editor, telling it which server asks (and for which client). */
  private async toEditor(
    request: ServerRequest,
    needed: string,
    callers: ServerRequestCaller[],
    feature: Feature,
  ): Promise<{ result: JsonObject; routedTo: RoutedTo }> {
    const editor = this.editor?.current();
    if (!editor) {
      const why =
        this.def.clientFeatures[feature] === 'editor'
          ? `its clientFeatures.${feature} is 'editor'`
          : `client '${callers[0]?.client}' cannot answer it`;
      throw new McpFailure(
        ErrorCodes.MethodNotFound,
        `The ${request.method} request from server '${this.server}' needs VS Code (${why}), but no VS Code ` +
          'window with the Switchboard extension is connected to the broker. Open the workspace in VS Code and retry.',
      );
    }
    if (!declares(editor.capabilities(), needed)) {
      throw new McpFailure(
        ErrorCodes.MethodNotFound,
        `VS Code cannot answer ${needed}; the ${request.method} request from server '${this.server}' was refused.`,
      );
    }
    const origin: JsonObject = { server: this.server, trust: this.def.trust };
    if (callers.length === 1) origin.client = callers[0].client;
    const meta = merged(request.params._meta as JsonObject | undefined, { [ORIGIN_META]: origin });
    const asked: ServerRequest = merged(request, { params: merged(request.params, { _meta: meta }) });
    return { result: await this.ask(editor, asked), routedTo: 'editor' };
  }

  /**
   * The callers without a question of this server open. A server that asked a caller something waits
   * for the answer inside that caller's call (the SDK's elicitInput and createMessage are awaited),
   * so a new question comes from another call; when every caller (or none) is waiting, all stay
   * candidates and the request is refused as unattributable.
   */
  private notWaiting(callers: ServerRequestCaller[]): ServerRequestCaller[] {
    const free = callers.filter((c) => !this.asking.has(c.session));
    return free.length ? free : callers;
  }

  private async ask(caller: ServerRequestCaller, request: ServerRequest): Promise<JsonObject> {
    this.pending++;
    this.asking.set(caller.session, (this.asking.get(caller.session) ?? 0) + 1);
    try {
      return await caller.ask(request);
    } finally {
      this.pending--;
      const left = (this.asking.get(caller.session) ?? 1) - 1;
      if (left > 0) this.asking.set(caller.session, left);
      else this.asking.delete(caller.session);
    }
  }

  private record(entry: JsonObject, started: number, error?: unknown): void {
    this.audit(
      merged(
        entry,
        { ms: Math.round((performance.now() - started) * 100) / 100, outcome: error ? 'error' : 'ok' },
        error ? { error: (error as Error).message } : {},
      ),
    );
  }
}
