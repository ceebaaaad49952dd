// The App preview: a minimal MCP Apps host in a webview. It renders a tool's page in a sandboxed
// iframe under the CSP the page declares, answers the page's ui/initialize, gives it the tool's
// input and result, and passes its tools/call to the extension (which calls them on the server's
// own endpoint). Anything else a page may ask a full host for (messages to the model, links,
// display modes) is answered "not supported here". Bundled into dist/webview/appHost.js.
import type { FromAppHost, ToAppHost } from './appProtocol';

interface VsCodeApi {
  postMessage(message: FromAppHost): void;
}
declare function acquireVsCodeApi(): VsCodeApi;
const vscode = acquireVsCodeApi();

type Json = Record<string, unknown>;
type Render = Extract<ToAppHost, { type: 'render' }>;

const PROTOCOL = '2026-01-26';
let frame: HTMLIFrameElement | undefined;
let shown: Render | undefined;
let nextCall = 1;
const calls = new Map<number, (answer: Extract<ToAppHost, { type: 'appCallResult' }>) => void>();

function toPage(message: Json): void {
  frame?.contentWindow?.postMessage({ jsonrpc: '2.0', ...message }, '*');
}

function status(text: string): void {
  const line = document.getElementById('status');
  if (line) line.textContent = text;
}

function render(message: Render): void {
  shown = message;
  document.body.textContent = '';
  const header = document.createElement('div');
  header.className = 'header';
  header.textContent = `${message.tool.name} · ${message.uri} (server ${message.server})`;
  const csp = document.createElement('div');
  csp.className = 'csp';
  csp.textContent = `The page runs under: ${message.csp}`;
  const line = document.createElement('div');
  line.id = 'status';
  line.className = 'csp';
  frame = document.createElement('iframe');
  frame.sandbox.add('allow-scripts');
  frame.title = `App of ${message.server}`;
  // The page's own CSP first in its head; the webview's (the same, plus this script) applies as well.
  const meta = `<meta http-equiv="Content-Security-Policy" content="${message.csp.replace(/"/g, '&quot;')}">`;
  frame.srcdoc = /<head[^>]*>/i.test(message.html)
    ? message.html.replace(/<head[^>]*>/i, (head) => head + meta)
    : meta + message.html;
  document.body.append(header, csp, line, frame);
  status('waiting for the page to connect…');
}

async function fromPage(message: Json): Promise<void> {
  const { id, method } = message as { id?: number | string; method?: string };
  const params = (message.params ?? {}) as Json;
  if (typeof method !== 'string') return;
  if (id === undefined) {
    if (method === 'ui/notifications/initialized' && shown) {
      status('connected');
      toPage({ method: 'ui/notifications/tool-input', params: { arguments: shown.arguments } });
      toPage({ method: 'ui/notifications/tool-result', params: shown.result });
    } else if (method === 'ui/notifications/size-changed' && frame && typeof params.height === 'number') {
      frame.style.height = `${Math.min(Math.max(params.height, 80), 2000)}px`;
    }
    return;
  }
  const reply = (result: Json): void => toPage({ id, result });
  const fail = (code: number, text: string): void => toPage({ id, error: { code, message: text } });
  switch (method) {
    case 'ui/initialize':
      return reply({
        protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : PROTOCOL,
        hostInfo: { name: 'MCP Switchboard console', version: '0.1.0' },
        hostCapabilities: { serverTools: {} },
        hostContext: {
          toolInfo: { tool: shown?.tool },
          theme: document.body.classList.contains('vscode-light') ? 'light' : 'dark',
          displayMode: 'inline',
          availableDisplayModes: ['inline'],
        },
      });
    case 'ping':
      return reply({});
    case 'tools/call': {
      if (typeof params.name !== 'string') return fail(-32602, 'tools/call needs a string "name"');
      const call = nextCall++;
      const answer = await new Promise<Extract<ToAppHost, { type: 'appCallResult' }>>((resolve) => {
        calls.set(call, resolve);
        vscode.postMessage({
          type: 'appCall',
          id: call,
          name: params.name as string,
          arguments: (params.arguments ?? {}) as Json,
        });
      });
      status(`the page called ${params.name}`);
      return answer.error ? fail(answer.error.code, answer.error.message) : reply(answer.result ?? {});
    }
    default:
      return fail(-32601, `${method} is not supported by the Switchboard console's App preview`);
  }
}

window.addEventListener('message', (event: MessageEvent) => {
  if (frame && event.source === frame.contentWindow) {
    if (event.data && typeof event.data === 'object') void fromPage(event.data as Json);
    return;
  }
  const message = event.data as ToAppHost;
  if (message?.type === 'render') render(message);
  else if (message?.type === 'appCallResult') {
    calls.get(message.id)?.(message);
    calls.delete(message.id);
  }
});
vscode.postMessage({ type: 'ready' });
