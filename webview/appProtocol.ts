// Messages between the App preview webview (appHost.ts) and the extension (src/extension/appPreview.ts).
// Types only: both sides import it.
import type { JsonObject, Tool } from '../src/broker/shared/mcpTypes';

export type ToAppHost =
  /** Render a tool's app: its page as read, the CSP it runs under, and the call that opened it. */
  | {
      type: 'render';
      server: string;
      uri: string;
      html: string;
      csp: string;
      tool: Tool;
      arguments: JsonObject;
      result: JsonObject;
    }
  | { type: 'appCallResult'; id: number; result?: JsonObject; error?: { code: number; message: string } };

export type FromAppHost =
  | { type: 'ready' }
  /** The page called one of its server's tools (by its own name). */
  | { type: 'appCall'; id: number; name: string; arguments: JsonObject }
  | { type: 'log'; message: string };
