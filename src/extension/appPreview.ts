// The console's App preview: a tool that opens an MCP App shows it in a webview beside the console,
// so an operator sees the page before an agent does. The page is read and its calls are made on the
// server's own endpoint (/servers/<name>/mcp, the operator's token): it reaches its server's tools
// and nothing else, and it runs in a sandboxed frame under the CSP it declares.
import * as vscode from 'vscode';
import { pageCsp } from '../broker/catalog/apps/appCsp';
import { resourceUriOf, splitAggregatedUiUri } from '../broker/catalog/apps/appMeta';
import { OperatorClient } from '../broker/daemon/operatorClient';
import type { JsonObject, Tool } from '../broker/shared/mcpTypes';
import type { FromAppHost, ToAppHost } from '../../webview/appProtocol';
import type { Ctx, FolderEntry } from './ctx';
import { previewDocument } from './appPreviewHtml';

export const APP_PREVIEW_VIEW_TYPE = 'switchboard.appPreview';

/** The page a listed (aggregated) tool opens: its server and the URI the server gave it. */
export function previewTarget(tool: Tool): { server: string; uri: string } | undefined {
  const uri = resourceUriOf(tool);
  return uri === undefined ? undefined : splitAggregatedUiUri(uri);
}

/** Opens (or reuses) the App preview for a call the console made of a tool that has an app. */
export async function showAppPreview(
  ctx: Ctx,
  entry: FolderEntry,
  tool: Tool,
  args: JsonObject,
  result: JsonObject,
): Promise<void> {
  const target = previewTarget(tool);
  const record = entry.conn.record;
  if (!target || !record) return;
  const client = await OperatorClient.connect(record, { server: target.server });
  try {
    const read = (await client.request('resources/read', { uri: target.uri })) as { contents?: JsonObject[] };
    const content = read.contents?.find((c) => c.uri === target.uri) ?? read.contents?.[0];
    if (typeof content?.text !== 'string') throw new Error(`${target.uri} has no HTML text`);
    const ui = (content._meta as JsonObject | undefined)?.ui;
    const panel = vscode.window.createWebviewPanel(
      APP_PREVIEW_VIEW_TYPE,
      `App: ${tool.name}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      {
        enableScripts: true,
        localResourceRoots: [vscode.Uri.joinPath(ctx.extension.extensionUri, 'dist', 'webview')],
      },
    );
    const script = panel.webview.asWebviewUri(
      vscode.Uri.joinPath(ctx.extension.extensionUri, 'dist', 'webview', 'appHost.js'),
    );
    const message: ToAppHost = {
      type: 'render',
      server: target.server,
      uri: target.uri,
      html: content.text,
      csp: pageCsp(ui),
      tool,
      arguments: args,
      result,
    };
    panel.webview.html = previewDocument(pageCsp(ui, panel.webview.cspSource), script.toString());
    panel.webview.onDidReceiveMessage(async (m: FromAppHost) => {
      if (m.type === 'ready') void panel.webview.postMessage(message);
      else if (m.type === 'appCall') {
        try {
          const called = await client.request('tools/call', { name: m.name, arguments: m.arguments }, 300_000);
          void panel.webview.postMessage({ type: 'appCallResult', id: m.id, result: called } satisfies ToAppHost);
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          const error = { code: typeof code === 'number' ? code : -32603, message: (err as Error).message };
          void panel.webview.postMessage({ type: 'appCallResult', id: m.id, error } satisfies ToAppHost);
        }
      }
    });
    panel.onDidDispose(() => void client.close());
  } catch (err) {
    await client.close();
    throw err;
  }
}
