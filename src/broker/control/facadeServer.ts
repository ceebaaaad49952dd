// The broker's own tools, fleet prompts and state resource, served like any upstream under the
// reserved namespace: the catalog lists them first and the router calls them like the others.
import type { RegistrySnapshot } from '../../registry/loader';
import { renderPromptMessages } from '../../registry/template';
import type { AccessPolicy } from '../routing/accessPolicy';
import { FACADE_NAMESPACE, SEPARATOR } from '../catalog/catalog';
import type { ControlOperations } from './controlOperations';
import { STATE_URI, type Facade } from './facade';
import { ErrorCodes, McpFailure, type JsonObject, type Prompt, type Resource, type Tool } from '../shared/mcpTypes';
import { noCompletions, type ServedCall, type ServedServer } from '../routing/servedServer';

const PREFIX = `${FACADE_NAMESPACE}${SEPARATOR}`;

const STATE_RESOURCE: Resource = Object.freeze({
  uri: STATE_URI,
  name: 'state',
  title: 'Switchboard state',
  description: 'Live state of the broker, its servers, prompts, clients and registry problems (subscribe for updates).',
  mimeType: 'application/json',
});

export class FacadeServer implements ServedServer {
  readonly name = FACADE_NAMESPACE;
  readonly kind = 'control';
  readonly available = true;
  readonly tools: readonly Tool[];
  readonly resources: readonly Resource[] = [STATE_RESOURCE];
  readonly resourceTemplates = [];
  private promptList: readonly Prompt[] = [];
  private promptsOf?: RegistrySnapshot['prompts'];

  constructor(
    private readonly facade: Facade,
    private readonly ops: ControlOperations,
    private readonly access: AccessPolicy,
    private readonly snapshot: () => RegistrySnapshot | undefined,
  ) {
    // Facade names its tools with the namespace; served here under their own names, like any server.
    const own = (name: string): string => (name.startsWith(PREFIX) ? name.slice(PREFIX.length) : name);
    this.tools = facade.tools().map((t) => ({ ...t, name: own(t.name) }));
  }

  /** The fleet prompts of prompts.d/, rebuilt only when the registry's prompts changed. */
  get prompts(): readonly Prompt[] {
    const defs = this.snapshot()?.prompts;
    if (defs !== this.promptsOf) {
      this.promptsOf = defs;
      this.promptList = [...(defs?.values() ?? [])].map((p) => ({
        name: p.name,
        description: p.description,
        arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required })),
      }));
    }
    return this.promptList;
  }

  unavailable(): McpFailure {
    return new McpFailure(ErrorCodes.InternalError, 'The control plane is not available.');
  }

  callTool(name: string, args: JsonObject, _meta: JsonObject | undefined, call: ServedCall): Promise<JsonObject> {
    return this.facade.call(this.ops, `${PREFIX}${name}`, args, call.identity, this.access.scopes(call.identity));
  }

  async getPrompt(name: string, args: Record<string, string>, call: ServedCall): Promise<JsonObject> {
    const def = this.snapshot()?.prompts.get(name);
    if (!def) throw new McpFailure(ErrorCodes.InvalidParams, `Unknown prompt '${PREFIX}${name}'.`);
    if (!this.access.may(call.identity, 'read')) {
      throw new McpFailure(ErrorCodes.Forbidden, `Prompts need the 'read' scope.`);
    }
    try {
      const messages = renderPromptMessages(def, args);
      const rendered = messages.map((m) => ({ role: m.role, content: { type: 'text', text: m.content } }));
      return { description: def.description, messages: rendered };
    } catch (err) {
      throw new McpFailure(ErrorCodes.InvalidParams, (err as Error).message);
    }
  }

  async readResource(uri: string, call: ServedCall): Promise<JsonObject> {
    if (uri !== STATE_URI) throw new McpFailure(-32002, `Resource not found: no server offers ${uri}`);
    if (!this.access.may(call.identity, 'read')) {
      throw new McpFailure(ErrorCodes.Forbidden, `Reading ${STATE_URI} needs the 'read' scope.`);
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(this.ops.state()) }] };
  }

  /** The endpoint pushes state updates to subscribed sessions itself; nothing to tell anyone. */
  async subscribe(): Promise<void> {}

  async unsubscribe(): Promise<void> {}

  async complete(): Promise<JsonObject> {
    return noCompletions();
  }
}
