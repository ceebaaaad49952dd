// Which server an app's own tools/call goes to on the aggregated endpoint. A page calls its server's
// tools by their own, unprefixed names (the spec: an app calls only tools of its own server); the
// broker binds those names to the server whose ui:// page the session read, and to no other.
import { ErrorCodes, McpFailure } from '../../shared/mcpTypes';

/** Who a tool call came from, as hooks on the call path read it: an app's page, or not known (the model). */
export type CallOrigin = 'app';

/** The servers whose app pages one aggregated session has read (its host renders them). */
export class SessionApps {
  private readonly servers = new Set<string>();

  opened(server: string): void {
    this.servers.add(server);
  }

  /**
   * The server an app's unprefixed call of `name` goes to: the one whose page this session read,
   * when that server has a tool of that name (`hasTool`). Undefined: not an app's call, so it is
   * resolved as any other name. When pages of several servers were read, a name one of them has
   * cannot be told apart, so it is refused (a page of one server must never reach another's tools).
   */
  owner(name: string, hasTool: (server: string, name: string) => boolean): string | undefined {
    const owners = [...this.servers].filter((server) => hasTool(server, name));
    if (owners.length <= 1) return owners[0];
    throw new McpFailure(
      ErrorCodes.Forbidden,
      `Tool '${name}' was called by its own name, as an app's page calls its server's tools, but this session ` +
        `opened apps of ${owners.length} servers that have it (${owners.join(', ')}), so the broker cannot tell ` +
        `whose page called. Connect each server's apps through its own endpoint (/servers/<name>/mcp; in VS Code ` +
        `the setting switchboard.mcpApps.perServerDefinitions), or call it as <server>__${name}.`,
    );
  }
}

/** The error a model's call of an app-only tool gets on the aggregated endpoint. */
export function appOnlyTool(exposed: string, server: string, name: string): McpFailure {
  return new McpFailure(
    ErrorCodes.Forbidden,
    `Tool '${exposed}' is for the app of server '${server}' only (its visibility is ["app"]): its page calls it ` +
      `as '${name}' after the session opened the page. A model is never offered it.`,
  );
}
