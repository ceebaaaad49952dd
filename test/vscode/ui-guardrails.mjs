#!/usr/bin/env node
// The console's Guardrails tab in a real VS Code (code-server + headless Chromium): a policy for the
// sample registry's echo server (a deny rule with a CEL condition and a limit per client) is approved
// with `switchboard policies approve --yes`, two calls are made from Try a tool (one refused by the
// rule), then Edit Server… on echo and its Guardrails tab shows the rule and limit with their source
// file, the limit's count, and the refusal among the recent decisions.
// Screenshot: docs/screenshots/console-guardrails.png.
//   node test/vscode/ui-guardrails.mjs [--out <dir>] [--keep] [--verbose] [--timeout <s>]
// Exit code: 0 all steps passed, 1 a step failed, 124 timeout.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, ensureTools } from './codeServer.mjs';
import {
  chooseMenuItem,
  echoServerRow,
  openEchoTool,
  stopBrokers,
  uiScript,
  launchSampleWorkbench,
} from './uiScript.mjs';

const POLICY = `description: what agents may echo (written by ui-guardrails.mjs, removed after)
rules:
  - name: no-secret-echoes
    servers: [echo]
    tools: [echo]
    when: 'args.text.contains("secret")'
    action: deny
    message: Echo nothing that says secret.
limits:
  - name: echoes-per-minute
    servers: [echo]
    per: client
    callsPerMinute: 60
`;

let cs;
const { args, shot, step, fail, exit } = uiScript('ui-guardrails', {
  page: () => cs?.page,
  onTimeout: async () => cs?.close(),
});
const home = mkdtempSync(join(tmpdir(), 'switchboard-ui-guardrails-home-'));
const registry = join(REPO_ROOT, 'workspace');
const policyDir = join(registry, 'policies.d');
const hadPolicyDir = existsSync(policyDir);
const policyFile = join(policyDir, 'ui-guard.yaml');
ensureTools({ log: null });

try {
  // Written before the broker starts, as a `git pull` would bring it: proposed, not in force.
  mkdirSync(policyDir, { recursive: true });
  writeFileSync(policyFile, POLICY);
  const workbench = await launchSampleWorkbench({ home, args });
  cs = workbench.cs;
  const { page, frame, pane } = workbench;

  await step('approve the policy from the command line (switchboard policies approve --yes)', async () => {
    await openEchoTool(page, pane, frame);
    const cli = spawnSync(
      process.execPath,
      [join(REPO_ROOT, 'dist', 'broker.js'), 'policies', 'approve', 'ui-guard', '--yes', '--root', registry],
      { env: { ...process.env, SWITCHBOARD_HOME: home }, encoding: 'utf8' },
    );
    if (cli.status !== 0) throw new Error(`policies approve exited ${cli.status}: ${cli.stderr}${cli.stdout}`);
    if (!/Approved: policy 'ui-guard' is in force/.test(cli.stdout)) throw new Error(cli.stdout);
  });

  await step('one call goes on, one is refused by the rule', async () => {
    await frame.locator('#arg-text').fill('hello');
    await frame.locator('#call').click();
    await frame.locator('pre.result-text', { hasText: 'echo: hello' }).waitFor({ timeout: 30_000 });
    await frame.locator('#arg-text').fill('my secret');
    await frame.locator('#call').click();
    await frame.locator('#tool-result', { hasText: 'Echo nothing that says secret' }).waitFor({ timeout: 30_000 });
  });

  await step(
    "Edit Server… on echo: its Guardrails tab shows the rules, the limit's count and the refusal",
    async () => {
      await echoServerRow(page, pane).click({ button: 'right' });
      await chooseMenuItem(page, 'Edit Server…');
      // The form is shown, whichever tab was open (Try a tool here; it used to stay there, the form
      // hidden); the Guardrails tab appears once a saved server is open.
      await frame.locator('#title', { hasText: "Server 'echo'" }).waitFor({ timeout: 30_000 });
      await frame.locator('#tab-server[aria-selected="true"]').waitFor({ timeout: 10_000 });
      await page.locator('.tab', { hasText: /Switchboard: echo$/ }).waitFor({ timeout: 10_000 });
      await frame.locator('#tab-guardrails').click({ timeout: 30_000 });
      const view = frame.locator('#view-guardrails');
      await view.locator('tr', { hasText: 'no-secret-echoes' }).first().waitFor({ timeout: 30_000 });
      await view.locator('tr', { hasText: 'policies.d/ui-guard.yaml' }).first().waitFor({ timeout: 5000 });
      await view.locator('tr', { hasText: /echoes-per-minute.*1 in the last minute/ }).waitFor({ timeout: 30_000 });
      await view
        .locator('tr', { hasText: /ui-guard\/no-secret-echoes\s*deny\s*operator/ })
        .waitFor({ timeout: 30_000 });
      await page.mouse.move(1300, 880);
      await page.waitForTimeout(200);
      await shot('console-guardrails');
    },
  );
} catch (e) {
  fail(e);
} finally {
  await cs?.close();
  stopBrokers(home);
  rmSync(policyFile, { force: true });
  if (!hadPolicyDir) rmSync(policyDir, { recursive: true, force: true });
  if (!args.keep) rmSync(home, { recursive: true, force: true });
}
exit();
