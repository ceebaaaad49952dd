// What every ui-*.mjs script shares: its flags, a log line with the time since start, screenshots,
// named steps that screenshot on failure, an overall timeout, and the exit code (0 all steps passed,
// 1 a step failed, 124 timeout). The scripts differ only in what they launch and the steps they take.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, launchCodeServer } from './codeServer.mjs';

/** The settings a window on the sample registry runs with, so screenshots show what a user sees. */
export const SAMPLE_SETTINGS = {
  'switchboard.registryRoot': 'workspace',
  'workbench.colorTheme': 'Default Dark Modern',
  'files.exclude': { '**/node_modules': true, '**/.tools': true, '**/out': true, '**/dist': true },
  'search.followSymlinks': false,
  'files.watcherExclude': { '**/node_modules/**': true, '**/.tools/**': true, '**/out/**': true },
};

/**
 * Starts a UI script named `name` ("ui-console"): parses --out, --keep, --verbose, --timeout (and
 * `options`), arms the overall timeout, and returns the script's tools. `page()` gives the page to
 * screenshot (the script's code-server may change); `onTimeout()` releases what the script started.
 */
export function uiScript(name, { options = {}, page, onTimeout }) {
  const { values: args } = parseArgs({
    options: {
      out: { type: 'string', default: join(REPO_ROOT, 'docs', 'screenshots') },
      keep: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '300' },
      ...options,
    },
  });
  const T0 = Date.now();
  const say = (m) => console.log(`[${name} +${((Date.now() - T0) / 1000).toFixed(1).padStart(5)}s] ${m}`);
  const outDir = resolve(args.out);
  mkdirSync(outDir, { recursive: true });
  let failed = false;

  const overall = setTimeout(
    async () => {
      console.error(`[${name}] TIMEOUT after ${args.timeout} s`);
      await page()
        ?.screenshot({ path: join(outDir, `failed-${name}-timeout.png`) })
        .catch(() => {});
      await onTimeout().catch(() => {});
      process.exit(124);
    },
    Number(args.timeout) * 1000,
  );

  async function shot(file) {
    const path = join(outDir, `${file}.png`);
    await page().screenshot({ path });
    say(`screenshot ${path}`);
    return path;
  }

  async function step(title, fn) {
    const t = Date.now();
    try {
      await fn();
      say(`ok   ${title} (${Date.now() - t} ms)`);
    } catch (e) {
      failed = true;
      say(`FAIL ${title}: ${e.message.split('\n')[0]}`);
      if (page()) await shot(`failed-${title.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`).catch(() => {});
      throw e;
    }
  }

  /** Marks the run failed; a step's failure was said already, anything else is said here. */
  function fail(e) {
    failed = true;
    if (!/FAIL/.test(e.message)) console.error(`[${name}] ${e.stack ?? e.message}`);
  }

  /** Ends the script once its clean-up is done: the exit code says whether every step passed. */
  function exit() {
    clearTimeout(overall);
    say(failed ? 'FAILED' : 'all steps passed');
    process.exit(failed ? 1 : 0);
  }

  return { args, say, outDir, shot, step, fail, exit };
}

/** Stops the brokers started under a SWITCHBOARD_HOME (they would otherwise idle out after 5 minutes). */
export function stopBrokers(home) {
  const brokers = join(home, 'brokers');
  if (!existsSync(brokers)) return;
  for (const f of readdirSync(brokers).filter((n) => n.endsWith('.json'))) {
    try {
      process.kill(JSON.parse(readFileSync(join(brokers, f), 'utf8')).pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
}

/** The running echo server's row in the Servers view (the sample registry's builtin echo). */
export function echoServerRow(page, pane) {
  return pane.locator('.monaco-list-row', {
    has: page.locator('.label-name', { hasText: /^echo$/ }),
    hasText: /builtin · running/,
  });
}

/**
 * Opens the Switchboard view and clicks the echo server's `echo` tool in the Servers tree, as a person
 * would, until the console's Try a tool shows it. `pane` is the Servers view, `frame` the console.
 */
export async function openEchoTool(page, pane, frame) {
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  const tab = page.locator('.activitybar .action-item a[aria-label^="Switchboard"]').first();
  await tab.waitFor({ timeout: 60_000 });
  await tab.click();
  const echo = echoServerRow(page, pane);
  await echo.waitFor({ timeout: 90_000 });
  await echo.click();
  await page.keyboard.press('ArrowRight');
  await pane.locator('.monaco-list-row', { hasText: 'Tools (' }).first().click();
  await page.keyboard.press('ArrowRight');
  await pane.locator('.monaco-list-row', { hasText: 'Echo the text back' }).click();
  await frame.locator('#tool-title', { hasText: 'echo__echo' }).waitFor({ timeout: 30_000 });
}

/**
 * Chooses `label` in the open context menu. A click that lands while the menu is still settling can
 * be lost (seen on a loaded machine: the item highlighted, the menu still open); the highlighted item
 * is then chosen with Enter, as a person would.
 */
export async function chooseMenuItem(page, label) {
  const item = page.locator('.monaco-menu .action-label', { hasText: label });
  await item.hover();
  await item.click();
  const closed = await page
    .locator('.monaco-menu')
    .waitFor({ state: 'hidden', timeout: 3000 })
    .then(() => true)
    .catch(() => false);
  if (!closed) await page.keyboard.press('Enter');
}

/**
 * code-server on this repository with the extension under development, the sample registry's
 * settings (plus `settings`) and a broker home of the script's own; returns it with the console's
 * frame and the Servers view.
 */
export async function launchSampleWorkbench({ home, args, settings = {} }) {
  const cs = await launchCodeServer({
    folder: REPO_ROOT,
    trusted: true,
    extensionDevelopmentPath: REPO_ROOT,
    extensionEnvironment: { SWITCHBOARD_HOME: home, SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1' },
    settings: { ...SAMPLE_SETTINGS, ...settings },
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
  return { cs, page, frame, pane };
}
