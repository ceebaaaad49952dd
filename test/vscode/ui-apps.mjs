#!/usr/bin/env node
// An MCP App rendered for real through the broker: a real broker serves two ext-apps upstreams
// (test/fixtures/apps.mjs, colliding ui:// URIs); a host page in headless Chromium runs the ext-apps
// AppBridge (@modelcontextprotocol/ext-apps/app-bridge, bundled with esbuild) and renders the page
// the broker serves at ui://alpha/counter/view.html in a sandboxed iframe under the CSP the page
// declares. The host's MCP side is an SDK client over real HTTP to the aggregated endpoint: it lists
// the tool, reads its page, calls the tool; the page's own `tools/call` (`increment`, app-only, by
// its unprefixed name) goes through the bridge and the broker to alpha, and its result appears in the
// page. The broker's audit must record it as `origin: app`. Screenshot: docs/screenshots/mcp-app-rendered.png.
// No code-server: what VS Code itself renders through the broker is not driven here (docs/mcp-apps.md).
//   node test/vscode/ui-apps.mjs [--out <dir>] [--verbose]
// Exit code: 0 all steps passed, 1 a step failed.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CHROMIUM, CHROMIUM_ARGS, REPO_ROOT } from './codeServer.mjs';
import { uiScript } from './uiScript.mjs';
import { createRequire } from 'node:module';
/* global window, document -- the functions given to page.evaluate run in the browser */

let broker;
let context;
let tab;
let hostServer;
let client;
const { args, say, outDir, shot, step, fail, exit } = uiScript('ui-apps', {
  page: () => tab,
  onTimeout: () => cleanup(),
});
const tmp = mkdtempSync(join(tmpdir(), 'switchboard-ui-apps-'));
const root = join(tmp, 'ws');
const home = join(tmp, 'home');
mkdirSync(join(root, 'mcp-servers.d'), { recursive: true });
const fixture = join(REPO_ROOT, 'test', 'fixtures', 'apps.mjs');
for (const label of ['alpha', 'beta']) {
  writeFileSync(
    join(root, 'mcp-servers.d', `${label}.yaml`),
    `name: ${label}\ntrust: trusted\ncommand: ${JSON.stringify(process.execPath)}\n` +
      `args: [${JSON.stringify(fixture)}, "--label", "${label}"]\n`,
  );
}

const cleanup = async () => {
  await client?.close().catch(() => undefined);
  await context?.close().catch(() => undefined);
  hostServer?.close();
  if (broker && broker.exitCode === null) {
    broker.kill('SIGTERM');
    await new Promise((r) => broker.once('exit', r));
  }
  rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
};

function check(ok, what) {
  if (!ok) throw new Error(what);
}

// The broker's mapping of a page's declared _meta.ui.csp to its CSP (what the console's preview uses).
const compiled = (file) => createRequire(import.meta.url)(join(REPO_ROOT, 'out', 'src', ...file.split('/')));
const { pageCsp: cspOf } = compiled('broker/catalog/apps/appCsp.js');
// The preview's document as the extension writes it (src/extension/appPreviewHtml.ts).
const { previewDocument } = compiled('extension/appPreviewHtml.js');

async function startBroker() {
  const proc = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'dist', 'broker.js'),
      'serve',
      '--root',
      root,
      '--port',
      '0',
      '--json',
      '--accept-workspace-trust',
    ],
    { env: { ...process.env, SWITCHBOARD_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  proc.stderr.on('data', (d) => args.verbose && process.stderr.write(`    [broker] ${d}`));
  const ready = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error('the broker did not become ready')), 30_000);
    createInterface({ input: proc.stdout }).on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        if (msg.event === 'ready') {
          clearTimeout(timer);
          res(msg);
        }
      } catch {
        /* not the ready line */
      }
    });
  });
  return { proc, url: ready.url, token: readFileSync(ready.tokenFile, 'utf8').trim() };
}

/** The host page's script: the ext-apps AppBridge, bundled for the browser. */
async function bridgeBundle() {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    stdin: {
      contents:
        "import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';\n" +
        'window.ExtApps = { AppBridge, PostMessageTransport };\n',
      resolveDir: REPO_ROOT,
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

const HOST_PAGE = (bundle) => `<!doctype html><html><head><meta charset="utf-8"><title>MCP App host</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;background:#f6f8fa;color:#1f2328}
header{background:#24292f;color:#fff;padding:10px 16px}header b{color:#7ee787}
main{padding:12px 16px}.call{font-family:ui-monospace,monospace;font-size:12px;background:#fff;border:1px solid #d0d7de;
border-radius:6px;padding:8px;margin-bottom:10px;white-space:pre-wrap}
iframe{width:100%;height:260px;border:1px solid #d0d7de;border-radius:6px;background:#fff}
</style></head><body>
<header>Host page · ext-apps <b>AppBridge</b> → MCP Switchboard (aggregated endpoint) → server <b>alpha</b></header>
<main><div class="call" id="call">…</div><div class="call" id="log">page calls: none yet</div>
<iframe id="app" sandbox="allow-scripts"></iframe></main>
<script>${bundle.replace(/<\/script/gi, '<\\/script')}</script>
<script>
window.renderApp = async ({ html, csp, toolName, toolArgs, toolResult, uri }) => {
  document.getElementById('call').textContent =
    'tools/call ' + toolName + ' ' + JSON.stringify(toolArgs) + '\\n  → ' + toolResult.content[0].text +
    '\\n_meta.ui.resourceUri ' + uri + '\\nCSP ' + csp;
  const iframe = document.getElementById('app');
  const { AppBridge, PostMessageTransport } = window.ExtApps;
  const bridge = new AppBridge(null, { name: 'switchboard-test-host', version: '1.0.0' }, { serverTools: {} });
  const calls = [];
  bridge.oncalltool = async (params) => {
    const result = await window.hostCallTool(params);
    calls.push(params.name + ' → ' + (result.content?.[0]?.text ?? JSON.stringify(result)));
    document.getElementById('log').textContent = 'page calls (through the bridge and the broker):\\n' + calls.join('\\n');
    return result;
  };
  bridge.oninitialized = () => {
    bridge.sendToolInput({ arguments: toolArgs });
    bridge.sendToolResult(toolResult);
  };
  // The page under the CSP it declared: a meta tag first in its head.
  const withCsp = html.replace('<head>', '<head><meta http-equiv="Content-Security-Policy" content="' + csp + '">');
  const loaded = new Promise((r) => iframe.addEventListener('load', r, { once: true }));
  iframe.srcdoc = withCsp;
  await loaded;
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
};
</script></body></html>`;

let tool;
let content;
let csp;
const toolArgs = {};
let toolResult;
const names = [];
let brokerUrl;
let brokerToken;
let previewHtml = '';
try {
  await step('the broker serves alpha’s app tool on the aggregated endpoint, its page namespaced', async () => {
    const started = await startBroker();
    broker = started.proc;
    brokerUrl = started.url;
    brokerToken = started.token;
    say(`broker at ${started.url}`);
    client = new Client(
      { name: 'ui-apps-host', version: '1.0.0' },
      { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(started.url), {
        requestInit: { headers: { Authorization: `Bearer ${started.token}` } },
      }),
    );
    // The upstreams start with the broker: wait until alpha's app tool is listed.
    for (let i = 0; i < 200 && !tool; i++) {
      tool = (await client.listTools()).tools.find((t) => t.name === 'alpha__show_counter');
      if (!tool) await new Promise((r) => setTimeout(r, 100));
    }
    check(tool, 'alpha__show_counter is not listed');
    check(tool._meta.ui.resourceUri === 'ui://alpha/counter/view.html', `its page: ${tool._meta.ui.resourceUri}`);
  });

  await step('the host reads the page (MIME type, _meta.ui) and calls the tool', async () => {
    const read = await client.readResource({ uri: tool._meta.ui.resourceUri });
    content = read.contents[0];
    check(content.mimeType === 'text/html;profile=mcp-app', `the page's MIME type: ${content.mimeType}`);
    csp = cspOf(content._meta?.ui);
    toolResult = await client.callTool({ name: tool.name, arguments: toolArgs });
  });

  await step(
    'Chromium renders the page through the ext-apps AppBridge; the app connects and gets its input',
    async () => {
      const page = HOST_PAGE(await bridgeBundle());
      hostServer = http.createServer((req, res) => {
        if (req.url === '/appHost.js') {
          res.writeHead(200, { 'content-type': 'text/javascript' });
          return res.end(readFileSync(join(REPO_ROOT, 'dist', 'webview', 'appHost.js')));
        }
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(req.url === '/preview' ? previewHtml : page);
      });
      await new Promise((r) => hostServer.listen(0, '127.0.0.1', r));
      const { chromium } = await import('playwright-core');
      context = await chromium.launchPersistentContext(join(tmp, 'chromium'), {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: 900, height: 520 },
        timeout: 60_000,
      });
      tab = context.pages()[0] ?? (await context.newPage());
      if (args.verbose) tab.on('console', (m) => say(`[page] ${m.text()}`));
      // The page's tools/call as the host's MCP client sends it: the name the page gave, on the same session.
      await tab.exposeFunction('hostCallTool', async (params) => {
        names.push(params.name);
        try {
          return await client.callTool({ name: params.name, arguments: params.arguments ?? {} });
        } catch (err) {
          return { isError: true, content: [{ type: 'text', text: err.message }] };
        }
      });
      await tab.goto(`http://127.0.0.1:${hostServer.address().port}/`);
      const uri = tool._meta.ui.resourceUri;
      await tab.evaluate((a) => window.renderApp(a), {
        html: content.text,
        csp,
        toolName: tool.name,
        toolArgs,
        toolResult,
        uri,
      });
      const frame = tab.frameLocator('#app');
      await frame.locator('body[data-connected="yes"]').waitFor({ timeout: 30_000 });
      const input = await frame.locator('#input').textContent();
      check(input.includes('opened by a call with {}'), `the page's tool input: "${input}"`);
    },
  );

  await step(
    'the page calls increment by its own name through the host and the broker; the result appears in it',
    async () => {
      const frame = tab.frameLocator('#app');
      await frame.locator('#inc').click();
      await frame.locator('#result', { hasText: 'alpha: the counter is at 1' }).waitFor({ timeout: 30_000 });
      await frame.locator('#inc').click();
      await frame.locator('#result', { hasText: 'alpha: the counter is at 2' }).waitFor({ timeout: 30_000 });
      check(names.length === 2 && names.every((n) => n === 'increment'), `the page called: ${names.join(', ')}`);
    },
  );

  await step(
    'the page runs under the CSP its _meta.ui declares: a fetch elsewhere is a connect-src violation',
    async () => {
      const appFrame = tab.frames().find((f) => f !== tab.mainFrame());
      const violated = await appFrame.evaluate(
        () =>
          new Promise((done) => {
            document.addEventListener('securitypolicyviolation', (e) => done(e.effectiveDirective));
            fetch('https://collector.example/').catch(() => undefined);
            setTimeout(() => done('no violation'), 5000);
          }),
      );
      check(violated === 'connect-src', `the fetch: ${violated}`);
      await shot('mcp-app-rendered');
    },
  );

  await step(
    'the console’s App preview host (dist/webview/appHost.js) renders the page and passes its calls',
    async () => {
      // As src/extension/appPreview.ts does it, with this script standing in for the extension: the page
      // is read, and its calls made, on alpha's own endpoint; the preview's document has the page's CSP
      // plus the script's origin, and the host script puts the page in a sandboxed frame under its CSP.
      const perServer = new Client({ name: 'ui-apps-preview', version: '1.0.0' });
      await perServer.connect(
        new StreamableHTTPClientTransport(new URL(brokerUrl.replace(/\/mcp$/, '/servers/alpha/mcp')), {
          requestInit: { headers: { Authorization: `Bearer ${brokerToken}` } },
        }),
      );
      const [own] = (await perServer.readResource({ uri: 'ui://counter/view.html' })).contents;
      const origin = `http://127.0.0.1:${hostServer.address().port}`;
      previewHtml = previewDocument(cspOf(own._meta?.ui, origin), `${origin}/appHost.js`);
      const preview = await context.newPage();
      const calls = [];
      const toPreview = (msg) => preview.evaluate((m) => window.postMessage(m, '*'), msg);
      await preview.exposeFunction('toExtension', async (m) => {
        if (m.type === 'ready') {
          await toPreview({
            type: 'render',
            server: 'alpha',
            uri: 'ui://counter/view.html',
            html: own.text,
            csp: cspOf(own._meta?.ui),
            tool,
            arguments: toolArgs,
            result: toolResult,
          });
        } else if (m.type === 'appCall') {
          calls.push(m.name);
          await toPreview(
            await perServer.callTool({ name: m.name, arguments: m.arguments }).then(
              (result) => ({ type: 'appCallResult', id: m.id, result }),
              (err) => ({ type: 'appCallResult', id: m.id, error: { code: err.code ?? -32603, message: err.message } }),
            ),
          );
        }
      });
      // What VS Code gives a webview: acquireVsCodeApi().postMessage to the extension.
      await preview.addInitScript(() => {
        window.acquireVsCodeApi = () => ({ postMessage: (m) => window.toExtension(m) });
      });
      await preview.goto(`${origin}/preview`);
      const frame = preview.frameLocator('iframe');
      await frame.locator('body[data-connected="yes"]').waitFor({ timeout: 30_000 });
      await frame.locator('#input', { hasText: 'opened by a call with {}' }).waitFor({ timeout: 30_000 });
      await frame.locator('#inc').click();
      await frame.locator('#result', { hasText: /^alpha: the counter is at 3$/ }).waitFor({ timeout: 30_000 });
      check(calls.join() === 'increment', `the preview passed: ${calls.join(', ')}`);
      await preview.locator('#status', { hasText: 'the page called increment' }).waitFor({ timeout: 10_000 });
      const appFrame = preview.frames().find((f) => f !== preview.mainFrame());
      const violated = await appFrame.evaluate(
        () =>
          new Promise((done) => {
            document.addEventListener('securitypolicyviolation', (e) => done(e.effectiveDirective));
            fetch('https://collector.example/').catch(() => undefined);
            setTimeout(() => done('no violation'), 5000);
          }),
      );
      check(violated === 'connect-src', `a fetch from the previewed page: ${violated}`);
      await preview.screenshot({ path: join(outDir, 'mcp-app-preview-host.png') });
      await perServer.close();
    },
  );

  await step(
    'the audit has the page’s calls (two through the host page, one through the preview) as origin: app',
    async () => {
      const audit = await client.callTool({ name: 'switchboard__read_audit', arguments: { limit: 50 } });
      const entries = audit.structuredContent.entries;
      const fromApp = entries.filter((e) => e.origin === 'app' && e.tool === 'increment' && e.server === 'alpha');
      check(fromApp.length === 3, `origin: app entries: ${fromApp.length}`);
    },
  );
} catch (err) {
  fail(err);
} finally {
  await cleanup();
}
exit();
