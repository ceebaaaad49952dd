#!/usr/bin/env node
// UI smoke test: drives the real VS Code workbench (code-server) in headless Chromium with the
// extension loaded from this repository, on this repository's sample registry (workspace/):
//   1. open the Switchboard view: the servers with their state and trust badges;
//   2. run a command from the Command Palette (Switchboard: Restart Server… → echo);
//   3. open the console, see inline validation, fill in a definition and run a probe;
// and saves screenshots under docs/screenshots/ (the README shows them).
//
//   node test/vscode/ui-smoke.mjs [--out docs/screenshots] [--keep] [--verbose]
//   node test/vscode/ui-smoke.mjs --vsix mcp-switchboard-0.1.0.vsix --out /tmp/shots
//       the same steps on the packaged extension, installed into code-server with
//       --install-extension (no development path): proves the .vsix installs and works.
//
// Needs `npm run build` and the tools (`npm run vscode:tools`). Exit code 0 when every step passed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CODE_SERVER_ENTRY, NODE24, REPO_ROOT, ensureTools, launchCodeServer } from './codeServer.mjs';
import { SAMPLE_SETTINGS, stopBrokers, uiScript } from './uiScript.mjs';

let cs;
const { args, say, shot, step, fail, exit } = uiScript('ui-smoke', {
  options: { vsix: { type: 'string' } },
  page: () => cs?.page,
  onTimeout: async () => cs?.close(),
});
const home = mkdtempSync(join(tmpdir(), 'switchboard-ui-home-'));
// Its own per-user state: a broker left by the trusted session must not be reused in Restricted Mode.
const homeUntrusted = mkdtempSync(join(tmpdir(), 'switchboard-ui-home-untrusted-'));
const homeEmpty = mkdtempSync(join(tmpdir(), 'switchboard-ui-home-empty-'));
const emptyFolder = mkdtempSync(join(tmpdir(), 'switchboard-ui-empty-'));

ensureTools({ log: null });

// --vsix: install the package into a fresh extensions dir, as a user would.
let extensionsDir;
let installedPath;
if (args.vsix) {
  const vsix = resolve(args.vsix);
  if (!existsSync(vsix)) {
    console.error(`[ui-smoke] ${vsix} does not exist (npm run package)`);
    process.exit(2);
  }
  extensionsDir = mkdtempSync(join(tmpdir(), 'switchboard-ui-exts-'));
  const r = spawnSync(NODE24, [CODE_SERVER_ENTRY, '--extensions-dir', extensionsDir, '--install-extension', vsix], {
    encoding: 'utf8',
  });
  say(`code-server --install-extension ${vsix}: ${(r.stdout + r.stderr).trim().split('\n').pop()}`);
  const dir = readdirSync(extensionsDir).find((d) => d.startsWith('switchboard.mcp-switchboard-'));
  if (r.status !== 0 || !dir) {
    console.error('[ui-smoke] the .vsix did not install');
    process.exit(1);
  }
  installedPath = join(extensionsDir, dir);
}

/** Command lines of running processes that mention `needle`. */
function processesMentioning(needle) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(needle)) out.push(cmd);
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Runs a command through the Command Palette, as a person would. */
async function palette(page, text) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(`>${text}`);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first().waitFor({ timeout: 10_000 });
}

function launch({ trusted, home, folder = REPO_ROOT, settings }) {
  return launchCodeServer({
    folder,
    trusted,
    ...(installedPath ? {} : { extensionDevelopmentPath: REPO_ROOT }),
    // The later --extensions-dir wins: the one holding the installed .vsix.
    extraArgs: extensionsDir ? ['--extensions-dir', extensionsDir] : [],
    // The sample marks echo/everything/files trusted: accepted as the operator would, so no modal covers the UI.
    extensionEnvironment: { SWITCHBOARD_HOME: home, SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1' },
    settings: settings ?? SAMPLE_SETTINGS,
    keepTemp: args.keep,
    killMatching: [home, emptyFolder, ...(extensionsDir ? [extensionsDir] : [])],
    abortCleanupDirs: args.keep ? [] : [home, homeUntrusted, homeEmpty, emptyFolder],
    onLog: (level, line) => {
      if (args.verbose || /\[mocha\]|Switchboard|switchboard/.test(line) || level === 'error')
        console.log(`[${level}] ${line.split('\n')[0]}`);
    },
  });
}

try {
  cs = await launch({ trusted: true, home });
  const { page } = cs;
  say(`code-server on ${cs.authority}`);

  await step('workbench loads', async () => {
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.activitybar').waitFor({ timeout: 60_000 });
  });

  await step('open the Switchboard view and see the servers with trust badges', async () => {
    const tab = page.locator('.activitybar .action-item a[aria-label^="Switchboard"]').first();
    await tab.waitFor({ timeout: 30_000 });
    await tab.click();
    const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Servers' }) });
    const row = (name) =>
      pane.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${name}$`) }) });
    await row('echo').locator('text=/builtin · running/').waitFor({ timeout: 60_000 });
    await row('everything').locator('text=/trusted · running/').waitFor({ timeout: 60_000 });
    await row('memory').locator('text=/community · awaiting approval/').waitFor({ timeout: 30_000 });
    await row('files').locator('text=/trusted/').waitFor({ timeout: 30_000 });
    const status = page.locator('.statusbar-item', { hasText: 'Switchboard' });
    await status.first().waitFor({ timeout: 10_000 });
    if (installedPath) {
      const brokers = processesMentioning(join(installedPath, 'dist', 'broker.js'));
      if (!brokers.length) throw new Error(`no broker runs from the installed extension (${installedPath})`);
      say(`the broker runs from the installed .vsix: ${brokers[0].slice(0, 160)}`);
    }
    // A wider side bar, so the descriptions (trust badge · state · tools) are readable.
    const box = await page.locator('.part.sidebar').boundingBox();
    if (box) {
      const x = box.x + box.width + 1;
      const y = box.y + box.height / 2;
      await page.mouse.move(x, y);
      await page.mouse.down();
      await page.mouse.move(x + 120, y, { steps: 10 });
      await page.mouse.up();
      const after = await page.locator('.part.sidebar').boundingBox();
      say(`side bar width ${Math.round(box.width)} → ${Math.round(after?.width ?? 0)} px`);
    }
    // The tooltip of the community server says what it waits for.
    await row('memory').locator('.label-name').hover();
    await page
      .locator('.monaco-hover, .workbench-hover', { hasText: /approval/i })
      .first()
      .waitFor({ timeout: 10_000 })
      .catch(() => {});
    await page.waitForTimeout(300);
    await shot('servers-view');
    await page.mouse.move(900, 600);
    // Expand echo: its command, grants and tools (with descriptions).
    await row('echo').click();
    await page.keyboard.press('ArrowRight');
    await pane.locator('.monaco-list-row', { hasText: 'Tools (' }).first().click();
    await page.keyboard.press('ArrowRight');
    await pane.locator('.monaco-list-row', { hasText: 'Echo the text back' }).waitFor({ timeout: 10_000 });
    await pane.locator('.monaco-list-row', { hasText: 'Grants' }).first().click();
    await page.keyboard.press('ArrowRight');
    await page.mouse.move(900, 600);
    await page.waitForTimeout(300);
    await shot('server-details');
  });

  await step('run a command from the Command Palette (Restart Server… → echo)', async () => {
    await palette(page, 'Switchboard: Restart Server');
    await page.keyboard.press('Enter');
    const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'echo' }).first();
    await pick.waitFor({ timeout: 10_000 });
    await page.waitForTimeout(300);
    await shot('command-palette');
    await page.locator('.quick-input-widget input').fill('echo');
    await page.waitForTimeout(200);
    await page.keyboard.press('Enter');
    // The restart reports back in the status bar ("Restarted 'echo'") or as a notification.
    await page
      .locator('.statusbar-item, .notification-toast', { hasText: /Restart(ed|ing) 'echo'/ })
      .first()
      .waitFor({ timeout: 30_000 });
  });

  let frame;
  await step('open the console and see inline validation from the zod schema', async () => {
    await palette(page, 'Switchboard: Open Console');
    await page.keyboard.press('Enter');
    frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
    await frame.locator('#name').waitFor({ timeout: 30_000 });
    await frame.locator('#name').fill('Reference Server');
    await frame.locator('#name').press('Tab');
    await frame.locator('#name-error', { hasText: /lowercase|letter/ }).waitFor({ timeout: 5000 });
    await frame.locator('#command').fill('npx');
    await frame.locator('#command').press('Tab');
    await page.waitForTimeout(200);
    await shot('console-validation');
  });

  await step('fill in a definition and run a probe before saving', async () => {
    await frame.locator('#name').fill('reference');
    await frame.locator('#description').fill('The MCP reference server, tried before it is saved');
    await frame.locator('input[name=trust][value=trusted]').check();
    await frame.locator('#command').fill('npx');
    await frame.locator('#args').fill('--no-install\nmcp-server-everything\nstdio');
    await frame.locator('#name').press('Tab');
    await frame.locator('#name-error').waitFor({ state: 'hidden', timeout: 5000 });
    await frame.locator('#probe').click();
    await frame.locator('.probe-summary.ok').waitFor({ timeout: 60_000 });
    await frame.locator('.results details.item summary').first().click();
    await frame.locator('.results pre.schema').first().waitFor({ timeout: 5000 });
    await frame.locator('#probe-results h2').scrollIntoViewIfNeeded();
    await page.mouse.move(1300, 880);
    await page.waitForTimeout(200);
    await shot('console-probe');
  });

  const consoleFrame = () => page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  const expectRestored = async (how) => {
    const f = consoleFrame();
    await f.locator('#name').waitFor({ timeout: 60_000 });
    await f.locator('.probe-summary.ok').waitFor({ timeout: 15_000 });
    const name = await f.locator('#name').inputValue();
    if (name !== 'reference') throw new Error(`${how}: the restored form has name '${name}'`);
    if ((await f.locator('#args').inputValue()) !== '--no-install\nmcp-server-everything\nstdio')
      throw new Error(`${how}: the restored form lost its arguments`);
  };

  await step('hide and show the console: form and probe result are restored', async () => {
    await palette(page, 'File: New Untitled Text File');
    await page.keyboard.press('Enter');
    await page.locator('.tab', { hasText: 'Untitled-1' }).waitFor({ timeout: 10_000 });
    await page.locator('.tab', { hasText: 'Switchboard: New Server' }).click();
    await expectRestored('tab switch');
  });

  await step('close the console and reopen it: the draft is resumed', async () => {
    await palette(page, 'View: Close All Editors');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 });
    // The untitled file asks whether to save: don't.
    const dontSave = page.locator('.monaco-dialog-box button', { hasText: /Don.t Save/ });
    if (await dontSave.isVisible().catch(() => false)) await dontSave.click();
    await page.locator('.tab', { hasText: 'Switchboard: New Server' }).waitFor({ state: 'detached', timeout: 10_000 });
    await palette(page, 'Switchboard: Open Console');
    await page.keyboard.press('Enter');
    await expectRestored('reopen');
  });

  await step('reload the window: the console comes back with its form and probe result', async () => {
    await page.waitForTimeout(1000);
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.activitybar .action-item a[aria-label^="Switchboard"]').first().waitFor({ timeout: 30_000 });
    // The browser workbench saves its editor layout on an interval, so a reload right after a change
    // may come back without the console tab; the extension's copy of the draft is there either way.
    const tab = page.locator('.tab', { hasText: 'Switchboard: New Server' });
    if (
      await tab.waitFor({ timeout: 8000 }).then(
        () => true,
        () => false,
      )
    ) {
      await tab.click();
      await expectRestored('reload');
      say('  the workbench restored the console tab');
    } else {
      await palette(page, 'Switchboard: Open Console');
      await page.keyboard.press('Enter');
      await expectRestored('reload, then Open Console');
      say('  the workbench did not restore the tab; Open Console resumed the draft');
    }
  });
  await cs.close();
  stopBrokers(home);

  // ------------------------------------------------------------- Restricted Mode, then trust
  cs = await launch({ trusted: false, home: homeUntrusted });
  const page2 = cs.page;
  say(`code-server (Restricted Mode) on ${cs.authority}`);
  await step('Restricted Mode: the view shows the registry, says why nothing runs', async () => {
    await page2.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const tab = page2.locator('.activitybar .action-item a[aria-label^="Switchboard"]').first();
    await tab.waitFor({ timeout: 30_000 });
    await tab.click();
    const pane = page2.locator('.pane', { has: page2.locator('.pane-header', { hasText: 'Servers' }) });
    await pane
      .locator('.monaco-list-row', { hasText: 'blocked (Restricted Mode)' })
      .first()
      .waitFor({ timeout: 60_000 });
    await pane.locator('text=/Restricted Mode: Switchboard shows this registry/').waitFor({ timeout: 10_000 });
    await page2.mouse.move(900, 600);
    await shot('restricted-mode');
  });
  await step('granting Workspace Trust starts the servers', async () => {
    await palette(page2, 'Workspaces: Manage Workspace Trust');
    await page2.keyboard.press('Enter');
    const trustButton = page2.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
    await trustButton.waitFor({ timeout: 15_000 });
    await trustButton.click();
    const pane = page2.locator('.pane', { has: page2.locator('.pane-header', { hasText: 'Servers' }) });
    await pane
      .locator('.monaco-list-row', { hasText: /builtin · running/ })
      .first()
      .waitFor({ timeout: 60_000 });
  });
  await cs.close();
  stopBrokers(homeUntrusted);

  // ------------------------------------------------------------- an empty folder: welcome → Add Server → Save
  cs = await launch({ trusted: true, home: homeEmpty, folder: emptyFolder, settings: {} });
  const page3 = cs.page;
  say(`code-server (empty folder ${emptyFolder}) on ${cs.authority}`);
  await step('an empty folder shows the welcome view with Add Server and Import', async () => {
    await page3.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const tab = page3.locator('.activitybar .action-item a[aria-label^="Switchboard"]').first();
    await tab.waitFor({ timeout: 30_000 });
    await tab.click();
    await page3
      .locator('.welcome-view-content .monaco-button', { hasText: 'Import from .vscode/mcp.json' })
      .waitFor({ timeout: 30_000 });
    await page3.mouse.move(900, 600);
    await shot('welcome');
  });
  await step(
    'Add Server → fill the form → Save writes the file through the broker and the tree shows it running',
    async () => {
      await page3.locator('.welcome-view-content .monaco-button', { hasText: 'Add Server' }).click();
      const f = page3.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
      await f.locator('#name').waitFor({ timeout: 30_000 });
      await f.locator('#name').fill('hello');
      await f.locator('#description').fill('Saved from the console');
      await f.locator('input[name=trust][value=trusted]').check();
      await f.locator('#command').fill('node');
      await f.locator('#args').fill(`${join(REPO_ROOT, 'test', 'fixtures', 'echo.mjs')}\n--name\nhello`);
      await f.locator('#save').click();
      const banner = f.locator('#banner');
      await banner.waitFor({ timeout: 60_000 });
      await f.locator('#open-file').waitFor({ timeout: 60_000 });
      const said = await banner.textContent();
      if (!/Saved to mcp-servers\.d\/hello\.yaml/.test(said ?? '')) throw new Error(`the console said: ${said}`);
      if (!existsSync(join(emptyFolder, 'mcp-servers.d', 'hello.yaml')))
        throw new Error('mcp-servers.d/hello.yaml was not written');
      const pane = page3.locator('.pane', { has: page3.locator('.pane-header', { hasText: 'Servers' }) });
      await pane.locator('.monaco-list-row', { hasText: /hello.*trusted · running/ }).waitFor({ timeout: 60_000 });
      await page3.mouse.move(900, 880);
      await shot('console-saved');
      await f
        .locator('#live', { hasText: 'running' })
        .waitFor({ timeout: 10_000 })
        .catch(async () => {
          throw new Error(`the console's live status says: ${await f.locator('#live').textContent()}`);
        });
    },
  );
} catch (e) {
  fail(e);
} finally {
  await cs?.close();
  for (const h of [home, homeUntrusted, homeEmpty]) stopBrokers(h);
  if (!args.keep) {
    for (const d of [home, homeUntrusted, homeEmpty, emptyFolder]) rmSync(d, { recursive: true, force: true });
    if (extensionsDir) rmSync(extensionsDir, { recursive: true, force: true });
  }
}
exit();
