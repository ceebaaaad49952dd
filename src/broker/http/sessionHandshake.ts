// What happens when a session's handshake completes: the broker is told who connected (client,
// revision, client program), and an operator session that declared the editor capability is offered
// as the editor, the client that answers requests for callers that cannot.
import { isEditorSession, type EditorLink } from '../supervision/editorLink';
import type { JsonObject } from '../shared/mcpTypes';
import type { McpSession } from './mcpSession';

export interface SessionOpened {
  client: string;
  server?: string;
  /** The revision the session speaks: the one the client asked for if the broker speaks it, else the latest. */
  protocol: string;
  /** What the client's initialize asked for, when it is not what the session speaks. */
  requested?: string;
  clientName?: string;
  clientVersion?: string;
}

/** Reports a session once its client sent `initialized`: who it is, which revision, which client program. */
export function reportWhenInitialized(
  session: McpSession,
  protocol: string,
  requested: unknown,
  report: (opened: SessionOpened) => void,
): void {
  const next = session.server.oninitialized;
  session.server.oninitialized = () => {
    const info = session.server.getClientVersion();
    report({
      client: session.ctx.identity.client,
      ...(session.ctx.server === undefined ? {} : { server: session.ctx.server }),
      protocol,
      ...(requested === protocol ? {} : { requested: String(requested).slice(0, 40) }),
      clientName: info?.name?.slice(0, 100),
      clientVersion: info?.version?.slice(0, 100),
    });
    next?.();
  };
}

/**
 * An operator session that declared the editor capability answers requests for callers that
 * cannot (on its GET stream, outside any call of its own). Only the operator's: never an agent's.
 */
export function offerAsEditor(session: McpSession, editor: EditorLink): void {
  const capabilities = (): JsonObject | undefined => session.server.getClientCapabilities() as JsonObject | undefined;
  session.server.oninitialized = () => {
    if (!isEditorSession(session.ctx.identity.operator, capabilities())) return;
    editor.join({
      session: session.ctx.sessionId,
      client: 'editor',
      capabilities,
      reachable: () => session.transport.hasOpenStream,
      ask: (request) => session.transport.requestClient(request.method, request.params, undefined, request.signal),
    });
  };
}
