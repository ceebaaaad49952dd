#!/usr/bin/env node
// A workspace's telemetry.yaml that names an export endpoint off this machine, in a real VS Code
// (code-server + headless Chromium), with the broker started as the extension starts it (no
// --accept-workspace-trust): nothing reaches the endpoint until the person allows it; the warning
// names the endpoint and what would be sent; Allow approves it (per user, outside the workspace) and
// the running broker exports there from then on. The endpoint is a small OTLP/HTTP sink on this
// machine's own non-loopback address, which is "off this machine" to the broker.
// Screenshot: docs/screenshots/telemetry-consent.png.
//   node test/vscode/ui-telemetry-consent.mjs [--out <dir>] [--keep] [--verbose] [--timeout <s>]
// Exit code: 0 all steps passed, 1 a step failed, 124 timeout.
import http from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools, launchCodeServer, REPO_ROOT } from './codeServer.mjs';
import { SAMPLE_SETTINGS, stopBrokers, uiScript } from './uiScript.mjs';

let cs;
let sink;
const { args, shot, step, fail, exit } = uiScript('ui-telemetry-consent', {
  page: () => cs?.page,
  onTimeout: async () => {
    await cs?.close();
    sink?.close();
  },
});
const home = mkdtempSync(join(tmpdir(), 'switchboard-ui-consent-home-'));
const folder = mkdtempSync(join(tmpdir(), 'switchboard-ui-consent-ws-'));
ensureTools({ log: null });

/** This machine's first non-loopback IPv4 address (else a global IPv6 one). */
function offLoopbackAddress() {
  const all = Object.values(networkInterfaces()).flatMap((a) => a ?? []);
  const found =
    all.find((a) => a.family === 'IPv4' && !a.internal) ??
    all.find((a) => a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'));
  if (!found) throw new Error('this machine has no address besides loopback to stand for "off it"');
  return found.address;
}

/** An OTLP/HTTP endpoint that counts the trace exports it gets. */
async function startSink(host) {
  let traces = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/traces') traces++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, host, resolve));
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${server.address().port}`,
    get traces() {
      return traces;
    },
    close: () => server.close(),
  };
}

async function until(check, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

try {
  sink = await startSink(offLoopbackAddress());
  // A registry with one server (its start is declined below: nothing of it runs) and the file.
  mkdirSync(join(folder, 'mcp-servers.d'));
  writeFileSync(
    join(folder, 'mcp-servers.d', 'echo.yaml'),
    `name: echo\ntrust: trusted\ncommand: node\nargs: [${JSON.stringify(join(REPO_ROOT, 'test', 'fixtures', 'echo.mjs'))}]\n`,
  );
  writeFileSync(join(folder, 'telemetry.yaml'), `telemetry:\n  endpoint: ${sink.url}\n  metrics: false\n`);

  cs = await launchCodeServer({
    folder,
    trusted: true,
    extensionDevelopmentPath: REPO_ROOT,
    // As a person's window starts it: no SWITCHBOARD_ACCEPT_WORKSPACE_TRUST.
    extensionEnvironment: { SWITCHBOARD_HOME: home, OTEL_BSP_SCHEDULE_DELAY: '100' },
    settings: { ...SAMPLE_SETTINGS, 'switchboard.registryRoot': '.' },
    keepTemp: args.keep,
    killMatching: [home],
    abortCleanupDirs: args.keep ? [] : [home, folder],
    onLog: (level, line) => {
      if (args.verbose || level === 'error') console.log(`[${level}] ${line.split('\n')[0]}`);
    },
  });
  const { page } = cs;
  // A toast, or (shown while the dialog below was up) an entry of the notification centre.
  const asking = "asks to send the broker's traces and metrics";
  let toast = page.locator('.notification-toast', { hasText: asking });

  await step('the window asks before anything is exported, naming the endpoint and what would be sent', async () => {
    // The window first asks whether to start the server the workspace marks trusted: not now.
    const dialog = page.locator('.monaco-dialog-box', { hasText: "marks 'echo' trusted" });
    await dialog.waitFor({ timeout: 90_000 });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const shown = await toast.waitFor({ timeout: 20_000 }).then(
      () => true,
      () => false,
    );
    if (!shown) {
      await page
        .locator('.statusbar-item', { has: page.locator('.codicon-bell, .codicon-bell-dot') })
        .first()
        .click();
      toast = page.locator('.notifications-center .notification-list-item', { hasText: asking });
      await toast.waitFor({ timeout: 40_000 });
    }
    const text = await toast.innerText();
    if (!text.includes(sink.url)) throw new Error(`the warning does not name ${sink.url}: ${text}`);
    if (!/never arguments, results or secrets/.test(text))
      throw new Error(`the warning does not say what is sent: ${text}`);
    // The broker's own requests from the window are traced meanwhile: none may have been exported.
    await page.mouse.move(700, 300); // no hover of the bell over the buttons
    await page.waitForTimeout(1500);
    if (sink.traces !== 0) throw new Error(`${sink.traces} trace exports reached the endpoint before Allow`);
    await shot('telemetry-consent');
  });

  await step('Allow approves the endpoint and the running broker exports there', async () => {
    await toast.getByRole('button', { name: 'Allow' }).click();
    const approvals = join(home, 'telemetry-approvals.json');
    await until(() => {
      try {
        return readFileSync(approvals, 'utf8').includes(sink.url);
      } catch {
        return false;
      }
    }, 'the approval in telemetry-approvals.json');
    // The window keeps reading the broker's state: those requests are now traced and exported.
    await until(() => sink.traces > 0, 'a trace export at the approved endpoint', 60_000);
  });
} catch (e) {
  fail(e);
} finally {
  await cs?.close();
  sink?.close();
  stopBrokers(home);
  if (!args.keep) {
    rmSync(home, { recursive: true, force: true });
    rmSync(folder, { recursive: true, force: true });
  }
}
exit();
