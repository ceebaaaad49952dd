#!/usr/bin/env node
// Telemetry in a real VS Code (code-server + headless Chromium), with switchboard.telemetry.enabled:
// a few calls of the echo server from the console's Try a tool (one a tool error), then the echo
// server's tooltip in the Servers tree shows its calls, error rate and p50/p95, and Recent calls
// offers Copy trace id on a call. Screenshot: docs/screenshots/telemetry-tooltip.png.
//   node test/vscode/ui-telemetry.mjs [--out <dir>] [--keep] [--verbose] [--timeout <s>]
// Exit code: 0 all steps passed, 1 a step failed, 124 timeout.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools } from './codeServer.mjs';
import { echoServerRow, openEchoTool, stopBrokers, uiScript, launchSampleWorkbench } from './uiScript.mjs';

let cs;
const { args, shot, step, fail, exit } = uiScript('ui-telemetry', {
  page: () => cs?.page,
  onTimeout: async () => cs?.close(),
});
const home = mkdtempSync(join(tmpdir(), 'switchboard-ui-telemetry-home-'));
ensureTools({ log: null });

try {
  const workbench = await launchSampleWorkbench({
    home,
    args,
    settings: { 'switchboard.telemetry.enabled': true, 'workbench.hover.delay': 300 },
  });
  cs = workbench.cs;
  const { page, frame, pane } = workbench;
  const echo = echoServerRow(page, pane);

  await step('call the echo server a few times from Try a tool', async () => {
    await openEchoTool(page, pane, frame);
    for (let i = 1; i <= 5; i++) {
      await frame.locator('#arg-text').fill(`call ${i}`);
      await frame.locator('#call').click();
      await frame.locator('pre.result-text', { hasText: `echo: call ${i}` }).waitFor({ timeout: 30_000 });
    }
    await pane.locator('.monaco-list-row', { hasText: 'Return a tool error' }).click();
    await frame.locator('#tool-title', { hasText: 'echo__fail' }).waitFor({ timeout: 30_000 });
    await frame.locator('#arg-message').fill('a tool error on purpose');
    await frame.locator('#call').click();
    await frame.locator('#result-summary .badge', { hasText: 'Tool error' }).waitFor({ timeout: 30_000 });
  });

  await step('Recent calls offers Copy trace id on a call', async () => {
    await frame.locator('#tab-audit').click();
    const row = frame.locator('table.audit tr', { hasText: 'echo__echo' }).first();
    await row.waitFor({ timeout: 30_000 });
    await row.locator('button[data-trace]', { hasText: 'Copy trace id' }).waitFor({ timeout: 10_000 });
  });

  await step("the echo server's tooltip shows its calls, error rate and p50/p95", async () => {
    await frame.locator('#tab-tool').click();
    // The state (and with it the numbers) is re-read every 15 s while telemetry is on.
    const hover = page.locator('.monaco-hover, .workbench-hover', {
      hasText: /Calls: 6 calls in the last 5 min, 17% errors/,
    });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      await page.mouse.move(5, 5);
      await page.waitForTimeout(300);
      await echo.locator('.label-name').hover();
      // isVisible() does not wait: the hover shows after its delay, so wait for it a while each time.
      if (
        await hover
          .first()
          .waitFor({ state: 'visible', timeout: 3000 })
          .then(
            () => true,
            () => false,
          )
      )
        break;
      await page.waitForTimeout(2000);
    }
    await hover.first().waitFor({ timeout: 5000 });
    // The hover fades in: a screenshot at once catches it half drawn over the console.
    await page.waitForTimeout(600);
    await shot('telemetry-tooltip');
  });
} catch (e) {
  fail(e);
  // What the broker said about telemetry when it started, to tell "off" from "on without trace ids".
  for (const f of readdirSync(home, { recursive: true })
    .map(String)
    .filter((n) => n.endsWith('broker.log')))
    for (const line of readFileSync(join(home, f), 'utf8').split('\n').slice(0, 40))
      console.log(`[broker.log] ${line}`);
} finally {
  await cs?.close();
  stopBrokers(home);
  if (!args.keep) rmSync(home, { recursive: true, force: true });
}
exit();
