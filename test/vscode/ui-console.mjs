#!/usr/bin/env node
// The console's Try a tool and Recent calls, driven as a person would in a real VS Code
// (code-server + headless Chromium): click the echo tool of the sample registry's echo server in
// the Servers tree, fill the form generated from its input schema, Call, read the result; then
// open Recent calls and find that call in the audit log. Screenshots go to docs/screenshots/.
//   node test/vscode/ui-console.mjs [--out <dir>] [--keep] [--verbose] [--timeout <s>]
// Exit code: 0 all steps passed, 1 a step failed, 124 timeout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools } from './codeServer.mjs';
import { openEchoTool, stopBrokers, uiScript, launchSampleWorkbench } from './uiScript.mjs';

let cs;
const { args, shot, step, fail, exit } = uiScript('ui-console', {
  page: () => cs?.page,
  onTimeout: async () => cs?.close(),
});
const home = mkdtempSync(join(tmpdir(), 'switchboard-ui-console-home-'));
ensureTools({ log: null });

try {
  const workbench = await launchSampleWorkbench({ home, args });
  cs = workbench.cs;
  const { page, frame, pane } = workbench;

  await step('click the echo tool of the echo server in the Servers tree', async () => {
    await openEchoTool(page, pane, frame);
    await frame.locator('.schema-box summary').click();
    // The editor tab names the tool being tried (it once said "New Server", the Server tab's draft).
    await page.locator('.tab', { hasText: 'Switchboard: Try echo__echo' }).waitFor({ timeout: 10_000 });
  });

  await step('fill the form generated from the input schema, Call, and see the result', async () => {
    const text = frame.locator('#arg-text');
    await text.waitFor({ timeout: 10_000 });
    // An empty required field is refused in the form, before any call.
    await frame.locator('#call').click();
    await frame.locator('#arg-text-error', { hasText: 'required' }).waitFor({ timeout: 5000 });
    await text.fill('hello from the console');
    await frame.locator('#call').click();
    await frame.locator('#result-summary', { hasText: /Answered in [\d.]+ (ms|s)/ }).waitFor({ timeout: 30_000 });
    const shown = await frame.locator('pre.result-text').first().textContent();
    if (shown !== 'echo: hello from the console') throw new Error(`the result shows '${shown}'`);
    const structured = await frame.locator('#tool-result pre.schema').textContent();
    if (!structured?.includes('"text": "hello from the console"'))
      throw new Error(`the structured content shows '${structured}'`);
    await page.mouse.move(1300, 880);
    await page.waitForTimeout(200);
    await shot('console-try-tool');
  });

  await step('a tool error (isError) is shown as an error', async () => {
    await page.keyboard.press('Escape');
    await pane.locator('.monaco-list-row', { hasText: 'Return a tool error' }).click();
    await frame.locator('#tool-title', { hasText: 'echo__fail' }).waitFor({ timeout: 30_000 });
    await frame.locator('#arg-message').fill('this went wrong on purpose');
    await frame.locator('#call').click();
    await frame.locator('#result-summary .badge', { hasText: 'Tool error' }).waitFor({ timeout: 30_000 });
  });

  await step('Recent calls shows both calls from the audit log, filterable', async () => {
    await frame.locator('#tab-audit').click();
    await page.locator('.tab', { hasText: 'Switchboard: Recent calls' }).waitFor({ timeout: 10_000 });
    const echoRow = frame.locator('table.audit tr', { hasText: 'echo__echo' });
    await echoRow.first().waitFor({ timeout: 30_000 });
    if (!/operator/.test((await echoRow.first().textContent()) ?? ''))
      throw new Error('the row does not name the operator');
    await frame.locator('table.audit tr', { hasText: 'echo__fail' }).first().waitFor({ timeout: 10_000 });
    await frame.locator('#audit-outcome').selectOption('tool error');
    await frame
      .locator('table.audit tr', { hasText: 'echo__echo' })
      .first()
      .waitFor({ state: 'detached', timeout: 5000 });
    await frame.locator('table.audit tr', { hasText: 'echo__fail' }).first().waitFor({ timeout: 5000 });
    await frame.locator('#audit-outcome').selectOption('');
    await frame.locator('#audit-text').fill('echo__');
    await echoRow.first().waitFor({ timeout: 5000 });
    await page.mouse.move(1300, 880);
    await page.waitForTimeout(200);
    await shot('console-audit');
  });
} catch (e) {
  fail(e);
} finally {
  await cs?.close();
  stopBrokers(home);
  if (!args.keep) rmSync(home, { recursive: true, force: true });
}
exit();
