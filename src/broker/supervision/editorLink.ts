// The editor (the VS Code extension's operator session) as the broker's fallback client: which open
// session answers for callers that cannot, and the workspace folders it reported as roots.
import { EventEmitter } from 'node:events';
import type { ServerRequestCaller } from '../connection/serverRequests';
import type { JsonObject } from '../shared/mcpTypes';

/**
 * The experimental capability an operator session declares at initialize to be the editor. Only
 * the operator token may: an agent's session must never receive another client's request.
 */
export const EDITOR_CAPABILITY = 'switchboard/editor';

/** One root as MCP's roots/list gives it. */
export interface Root {
  uri: string;
  name?: string;
}

/** Whether a session is an editor: the operator's, and it declared EDITOR_CAPABILITY. */
export function isEditorSession(operator: boolean, capabilities: JsonObject | undefined): boolean {
  const experimental = capabilities?.experimental as JsonObject | undefined;
  return operator && typeof experimental?.[EDITOR_CAPABILITY] === 'object';
}

interface EditorLinkEvents {
  /** The editor's folders changed: upstreams hear `notifications/roots/list_changed`. */
  roots: [];
}

/** An editor session: how to ask it, and whether it can be asked now (its GET stream is open). */
export interface EditorSession extends ServerRequestCaller {
  reachable(): boolean;
}

export class EditorLink extends EventEmitter<EditorLinkEvents> {
  /** Editor sessions in the order they joined; the newest reachable one answers (the last window). */
  private readonly sessions = new Map<string, EditorSession>();
  private folders: Root[] = [];

  /**
   * The editor session that answers now, if a VS Code window is connected: one that went away
   * without ending its session (its stream closed) does not count.
   */
  current(): ServerRequestCaller | undefined {
    let last: ServerRequestCaller | undefined;
    for (const editor of this.sessions.values()) if (editor.reachable()) last = editor;
    return last;
  }

  join(editor: EditorSession): void {
    this.sessions.delete(editor.session);
    this.sessions.set(editor.session, editor);
  }

  leave(session: string): void {
    this.sessions.delete(session);
  }

  /** The workspace folders the editor last reported (kept when it disconnects: the folders stay). */
  get roots(): readonly Root[] {
    return this.folders;
  }

  /** Replaces the editor's folders; `roots` is emitted only when they changed. */
  setRoots(roots: Root[]): boolean {
    const same =
      roots.length === this.folders.length &&
      roots.every((r, i) => r.uri === this.folders[i].uri && r.name === this.folders[i].name);
    if (same) return false;
    this.folders = roots.map((r) => ({ uri: r.uri, ...(r.name !== undefined ? { name: r.name } : {}) }));
    this.emit('roots');
    return true;
  }
}
