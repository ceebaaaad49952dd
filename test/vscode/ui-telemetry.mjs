#!/usr/bin/env node
// Telemetry in a real VS Code (code-server + headless Chromium), with switchboard.telemetry.enabled:
// a few calls of the echo server from the console's Try a tool (one a tool error), then the echo
// server's tooltip in the Servers tree shows its calls, error rate and p50/p95, and Recent calls
// offers Copy trace id on a call. Screenshot: docs/screenshots/telemetry-tooltip.png.
//   node test/vscode/ui-telemetry.mjs [--out <dir>] [--keep] [--verbose] [--timeout <s>]
// Exit code: 0 all steps passed, 1 a step failed, 124 timeout.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, ensureTools, launchCodeServer } from './codeServer.mjs';

const { values: args } = parseArgs({
  options: {
    out: { type: 'string', default: join(REPO_ROOT, 'docs', 'screenshots') },
    keep: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '300' },
  },
});

const T0 = Date.now();
const say = (m) => console.log(`[ui-telemetry +${((Date.now() - T0) / 1000).toFixed(1).padStart(5)}s] ${m}`);
const outDir = resolve(args.out);
mkdirSync(outDir, { recursive: true });
const home = mkdtempSync(join(tmpdir(), 'switchboard-ui-telemetry-home-'));
ensureTools({ log: null });

let cs;
let failed = false;
const overall = setTimeout(
  async () => {
    console.error(`[ui-telemetry] TIMEOUT after ${args.timeout} s`);
    await cs?.page.screenshot({ path: join(outDir, 'failed-ui-telemetry-timeout.png') }).catch(() => {});
    await cs?.close();
    process.exit(124);
  },
  Number(args.timeout) * 1000,
);

async function shot(name) {
  const file = join(outDir, `${name}.png`);
  await cs.page.screenshot({ path: file });
  say(`screenshot ${file}`);
}

async function step(title, fn) {
  const t = Date.now();
  try {
    await fn();
    say(`ok   ${title} (${Date.now() - t} ms)`);
  } catch (e) {
    failed = true;
    say(`FAIL ${title}: ${e.message.split('\n')[0]}`);
    await shot(`failed-${title.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`).catch(() => {});
    throw e;
  }
}

function stopBrokers(dir) {
  const brokers = join(dir, 'brokers');
  if (!existsSync(brokers)) return;
  for (const f of readdirSync(brokers).filter((n) => n.endsWith('.json'))) {
    try {
      process.kill(JSON.parse(readFileSync(join(brokers, f), 'utf8')).pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
}

try {
  cs = await launchCodeServer({
    folder: REPO_ROOT,
    trusted: true,
    extensionDevelopmentPath: REPO_ROOT,
    extensionEnvironment: { SWITCHBOARD_HOME: home, SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1' },
    settings: {
      'switchboard.registryRoot': 'workspace',
      'switchboard.telemetry.enabled': true,
      'workbench.colorTheme': 'Default Dark Modern',
      'workbench.hover.delay': 300,
      'files.exclude': { '**/node_modules': true, '**/.tools': true, '**/out': true, '**/dist': true },
      'search.followSymlinks': false,
      'files.watcherExclude': { '**/node_modules/**': true, '**/.tools/**': true, '**/out/**': true },
    },
    keepTemp: args.keep,
    killMatching: [home],
    abortCleanupDirs: args.keep ? [] : [home],
    onLog: (level, line) => {
      if (args.verbose || level === 'error') console.log(`[${level}] ${line.split('\n')[0]}`);
    },
  });
  const { page } = cs;
  const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Servers' }) });
  const echo = pane.locator('.monaco-list-row', {
    has: page.locator('.label-name', { hasText: /^echo$/ }),
    hasText: /builtin · running/,
  });

  await step('call the echo server a few times from Try a tool', async () => {
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const tab = page.locator('.activitybar .action-item a[aria-label^="Switchboard"]').first();
    await tab.waitFor({ timeout: 60_000 });
    await tab.click();
    await echo.waitFor({ timeout: 90_000 });
    await echo.click();
    await page.keyboard.press('ArrowRight');
    await pane.locator('.monaco-list-row', { hasText: 'Tools (' }).first().click();
    await page.keyboard.press('ArrowRight');
    await pane.locator('.monaco-list-row', { hasText: 'Echo the text back' }).click();
    await frame.locator('#tool-title', { hasText: 'echo__echo' }).waitFor({ timeout: 30_000 });
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
    // The state (and with it the numbers) is re-read every 15 s while telemetry is on.
    const hover = page.locator('.monaco-hover, .workbench-hover', {
      hasText: /Calls: 6 calls in the last 5 min, 17% errors/,
    });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      await page.mouse.move(5, 5);
      await page.waitForTimeout(300);
      await echo.locator('.label-name').hover();
      if (
        await hover
          .first()
          .isVisible({ timeout: 3000 })
          .catch(() => false)
      )
        break;
      await page.waitForTimeout(2000);
    }
    await hover.first().waitFor({ timeout: 5000 });
    await shot('telemetry-tooltip');
  });
} catch (e) {
  failed = true;
  if (!/FAIL/.test(e.message)) console.error(`[ui-telemetry] ${e.stack ?? e.message}`);
} finally {
  clearTimeout(overall);
  await cs?.close();
  stopBrokers(home);
  if (!args.keep) rmSync(home, { recursive: true, force: true });
}
say(failed ? 'FAILED' : 'all steps passed');
process.exit(failed ? 1 : 0);
