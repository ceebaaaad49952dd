// Starts code-server (a real VS Code: server + remote Node extension host + web workbench) and a
// headless Chromium on it through playwright-core. Used by run.mjs to run the mocha suite inside
// the extension host, and reusable by UI smoke tests that drive the workbench with playwright.
//
//   import { launchCodeServer } from './codeServer.mjs';
//   const cs = await launchCodeServer({ folder, extensionDevelopmentPath, extensionTestsPath, ... });
//   await cs.page.keyboard.press('F1'); await cs.page.screenshot({ path: 'x.png' });
//   await cs.close();
//
// Every wait is bounded; close() kills code-server and Chromium with all their descendants.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  createWriteStream,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TOOLS_DIR = process.env.VSCODE_TOOLS_DIR || join(REPO_ROOT, '.tools', 'vscode');
export const NODE24 = join(TOOLS_DIR, 'node24', 'node_modules', 'node', 'bin', 'node');
export const CODE_SERVER_ENTRY = join(TOOLS_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const INSTALL_SCRIPT = join(REPO_ROOT, 'scripts', 'install-vscode-tools.sh');

/** Settings written to <user-data>/User/settings.json before start; each one removes a source of noise or flakiness. */
export const DEFAULT_SETTINGS = {
  // A built-in extension's telemetry lookup otherwise throws ENOTFOUND into mocha's uncaught handler.
  'telemetry.telemetryLevel': 'off',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.enableExperiments': false,
  'workbench.remoteIndicator.showExtensionRecommendations': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'update.showReleaseNotes': false,
  // Restricted Mode (--untrusted) without the modal "Do you trust the authors" prompt.
  'security.workspace.trust.startupPrompt': 'never',
  'security.workspace.trust.banner': 'never',
  'git.enabled': false,
  'git.autoRepositoryDetection': false,
  'git.openRepositoryInParentFolders': 'never',
  'github.gitAuthentication': false,
  'npm.autoDetect': 'off',
  'typescript.tsc.autoDetect': 'off',
  'grunt.autoDetect': 'off',
  'gulp.autoDetect': 'off',
  'jake.autoDetect': 'off',
  'typescript.disableAutomaticTypeAcquisition': true,
  'files.autoSave': 'off',
  'window.commandCenter': true,
  // Keep the Chat view out of screenshots (it opens in the secondary side bar by default).
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * A temp copy of the repo's workspace/ that tests may write to. When it has no
 * mcp-servers.d/*.yaml, adds mcp-servers.d/example.yaml so the extension's activation event
 * (workspaceContains:**\/mcp-servers.d/*.yaml) fires. Returns { folder, tempRoot } (rm tempRoot after).
 */
export function prepareTestWorkspace() {
  const tempRoot = mkdtempSync(join(tmpdir(), 'switchboard-ws-'));
  const folder = join(tempRoot, 'workspace');
  const src = join(REPO_ROOT, 'workspace');
  if (existsSync(src))
    cpSync(src, folder, {
      recursive: true,
      filter: (s) => !/[\\/](node_modules|\.git)([\\/]|$)/.test(s.slice(src.length)),
    });
  else mkdirSync(folder, { recursive: true });
  const regDir = join(folder, 'mcp-servers.d');
  const hasYaml = existsSync(regDir) && readdirSync(regDir).some((n) => n.endsWith('.yaml'));
  if (!hasYaml) {
    mkdirSync(regDir, { recursive: true });
    writeFileSync(
      join(regDir, 'example.yaml'),
      "# Written by test/vscode (prepareTestWorkspace) so that the extension's activation event\n" +
        '# (workspaceContains:**/mcp-servers.d/*.yaml) fires in the test workspace.\n',
    );
  }
  return { folder, tempRoot };
}

export function toolsReady() {
  return (
    existsSync(join(TOOLS_DIR, '.ready')) && existsSync(NODE24) && existsSync(CODE_SERVER_ENTRY) && existsSync(CHROMIUM)
  );
}

/** Runs scripts/install-vscode-tools.sh (fast when already done). Throws if it fails. */
export function ensureTools({ log = console.log } = {}) {
  // The script's own fast path checks the stamp's versions and returns in ~10 ms.
  const r = spawnSync('bash', [INSTALL_SCRIPT], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) throw new Error(`${INSTALL_SCRIPT} failed (exit ${r.status ?? r.signal})`);
  if (!toolsReady()) throw new Error(`tools still missing after ${INSTALL_SCRIPT}`);
  log?.('[harness] tools ready');
}

export async function freePort() {
  return await new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** vscode-remote URI for an absolute path on this machine, as seen by the workbench at host:port. */
export function remoteUri(authority, absPath) {
  const p = resolve(absPath).split('/').map(encodeURIComponent).join('/');
  return `vscode-remote://${authority}${p}`;
}

// ---------------------------------------------------------------- process tree handling (Linux /proc)
function procTable() {
  const out = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(d), { ppid: Number(rest[1]), start: rest[19] });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** pid and all its descendants, each with its start time so a recycled pid is never killed. */
export function processTree(rootPid) {
  const table = procTable();
  const children = new Map();
  for (const [pid, { ppid }] of table) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const result = [];
  const stack = [rootPid];
  while (stack.length) {
    const pid = stack.pop();
    const info = table.get(pid);
    if (!info) continue;
    result.push({ pid, start: info.start });
    stack.push(...(children.get(pid) ?? []));
  }
  return result;
}

/** Processes whose command line contains `needle` (e.g. our unique temp dir): finds re-parented helpers. */
export function processesMatching(needle) {
  const out = [];
  const table = procTable();
  for (const [pid, { start }] of table) {
    if (pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) out.push({ pid, start });
    } catch {
      /* gone */
    }
  }
  return out;
}

function alive({ pid, start }) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] === start && rest[0] !== 'Z';
  } catch {
    return false;
  }
}

/** SIGTERM a set of processes, wait up to graceMs, then SIGKILL what is left. */
export async function killProcesses(procs, graceMs = 3000) {
  const list = procs.filter(alive);
  for (const p of list) {
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && list.some(alive)) await sleep(100);
  const left = list.filter(alive);
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  const deadline2 = Date.now() + 2000;
  while (Date.now() < deadline2 && left.some(alive)) await sleep(50);
  return { terminated: list.length, killed: left.length, survivors: left.filter(alive).map((p) => p.pid) };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitHttpOk(url, { timeoutMs, child, what }) {
  const deadline = Date.now() + timeoutMs;
  let lastErr = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before answering ${url}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return;
      lastErr = `HTTP ${r.status}`;
    } catch (e) {
      lastErr = e.cause?.code || e.message;
    }
    await sleep(200);
  }
  throw new Error(`${what} did not answer ${url} within ${timeoutMs} ms (last: ${lastErr})`);
}

/**
 * @param {object} opts
 * @param {string} opts.folder                workspace folder to open (absolute path on this machine)
 * @param {string} [opts.workspace]            a .code-workspace file to open instead (a multi-root window)
 * @param {boolean} [opts.trusted=true]        false: no --disable-workspace-trust, the window opens in Restricted Mode
 * @param {string} [opts.extensionDevelopmentPath]  extension folder loaded as a development extension
 * @param {string[]} [opts.extensions=[]]     extension folders installed (copied) into the fresh extensions dir
 *                                             before start: the web workbench takes a single development extension
 *                                             (its payload is a Map), so a second one, such as a test-only
 *                                             authentication provider, goes here
 * @param {string} [opts.extensionTestsPath]   CommonJS test entry (exports run()) executed in the extension host
 * @param {Record<string,string>} [opts.extensionEnvironment]  env vars for the extension host
 * @param {Record<string,unknown>} [opts.settings]  merged over DEFAULT_SETTINGS
 * @param {Record<string,unknown>} [opts.machineSettings]  written to <user-data>/Machine/settings.json: the
 *                                             remote (code-server) side ignores `"scope": "machine"` settings in
 *                                             User/settings.json, as VS Code does for every remote window
 * @param {(level:string, line:string)=>void} [opts.onLog]  extension host console lines (codeAutomationLog)
 * @param {(line:string)=>void} [opts.onServerLog]  code-server stdout/stderr lines (also kept in <tmp>/code-server.log)
 * @param {string[]} [opts.extraArgs]          extra code-server arguments
 * @param {{width:number,height:number}} [opts.viewport]
 * @param {number} [opts.startTimeoutMs=60000] bound for code-server to answer /healthz
 * @param {number} [opts.pageTimeoutMs=60000]  bound for the page to load
 * @param {boolean} [opts.keepTemp=false]      keep the temp user-data/extensions/browser dirs
 * @param {string[]} [opts.killMatching=[]]    on close also kill any process whose command line contains one
 *                                             of these strings (e.g. a temp workspace folder, for detached helpers)
 * @param {string[]} [opts.abortCleanupDirs=[]] dirs the watchdog removes if this process dies without close()
 * @returns {Promise<{url:string, port:number, authority:string, page:import('playwright-core').Page,
 *   browser:import('playwright-core').BrowserContext, context:import('playwright-core').BrowserContext,
 *   tmp:string, serverLog:string, exitCode:Promise<number>, close:()=>Promise<void>}>}
 */
export async function launchCodeServer(opts) {
  const {
    folder,
    workspace,
    trusted = true,
    extensionDevelopmentPath,
    extensions = [],
    extensionTestsPath,
    extensionEnvironment,
    settings = {},
    machineSettings,
    onLog = () => {},
    onServerLog = () => {},
    extraArgs = [],
    viewport = { width: 1400, height: 900 },
    startTimeoutMs = 60_000,
    pageTimeoutMs = 60_000,
    keepTemp = false,
    killMatching = [],
    abortCleanupDirs = [],
  } = opts;
  if (!folder && !workspace) throw new Error('launchCodeServer: a folder (or a .code-workspace file) is required');
  if (!toolsReady()) throw new Error(`code-server tools missing in ${TOOLS_DIR}: run \`npm run vscode:tools\``);

  const tmp = mkdtempSync(join(tmpdir(), 'switchboard-vscode-'));
  const userData = join(tmp, 'user-data');
  const extensionsDir = join(tmp, 'extensions');
  const browserDir = join(tmp, 'chromium');
  mkdirSync(join(userData, 'User'), { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  mkdirSync(browserDir, { recursive: true });
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify({ ...DEFAULT_SETTINGS, ...settings }, null, 2));
  if (machineSettings) {
    mkdirSync(join(userData, 'Machine'), { recursive: true });
    writeFileSync(join(userData, 'Machine', 'settings.json'), JSON.stringify(machineSettings, null, 2));
  }
  // code-server finds no extensions.json in the fresh dir and registers every folder it holds.
  for (const dir of extensions) {
    const { publisher, name, version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    cpSync(dir, join(extensionsDir, `${publisher}.${name}-${version}`), { recursive: true });
  }

  const port = await freePort();
  const authority = `127.0.0.1:${port}`;
  const args = [
    CODE_SERVER_ENTRY,
    '--auth',
    'none',
    '--bind-addr',
    authority,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    ...(trusted ? ['--disable-workspace-trust'] : []),
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensionsDir,
    // Without it the built workbench silently ignores the development payload.
    '--vscode-option',
    'enable-smoke-test-driver',
    ...extraArgs,
    workspace ?? folder,
  ];
  const serverLog = join(tmp, 'code-server.log');
  const serverLogStream = createWriteStream(serverLog);
  const env = { ...process.env };
  // Never let the host's Node or npm settings leak into VS Code's processes.
  for (const k of Object.keys(env))
    if (/^(npm_|NODE_OPTIONS$|NODE_PATH$|ELECTRON_RUN_AS_NODE$|VSCODE_)/.test(k)) delete env[k];
  env.PATH = `${dirname(NODE24)}:${env.PATH ?? ''}`;
  const child = spawn(NODE24, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const pipeLines = (stream) => {
    let buf = '';
    stream.on('data', (d) => {
      serverLogStream.write(d);
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        onServerLog(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  };
  pipeLines(child.stdout);
  pipeLines(child.stderr);

  // If this process dies without close() (SIGKILL, CI timeout), a detached watchdog kills what we
  // started: code-server's process group and anything naming our temp dir, then removes the dir.
  const watchdog = spawn(
    process.execPath,
    [
      '-e',
      WATCHDOG_SRC,
      String(process.pid),
      String(child.pid),
      tmp,
      JSON.stringify(killMatching),
      keepTemp ? '1' : '',
      JSON.stringify(abortCleanupDirs),
    ],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  watchdog.unref();

  let context;
  let closed = false;
  let browserProcs;
  const close = async () => {
    if (closed) return;
    closed = true;
    // Snapshot both trees first: once parents die, children get re-parented and are harder to find.
    const serverTree = child.pid ? processTree(child.pid) : [];
    // Chromium: the main process (a child of ours whose command line names our browser dir), its
    // tree, and anything else naming our temp dir (crashpad handler, re-parented helpers).
    const mains = processesMatching(browserDir).filter((p) => procTable().get(p.pid)?.ppid === process.pid);
    const seen = new Set(serverTree.map((p) => p.pid));
    browserProcs = [...mains.flatMap((m) => processTree(m.pid)), ...processesMatching(tmp)].filter(
      (p) => !seen.has(p.pid) && (seen.add(p.pid), true),
    );
    if (context) {
      const tc = Date.now();
      const how = await Promise.race([
        context.close().then(
          () => 'closed',
          () => 'close failed',
        ),
        sleep(10_000).then(() => 'timed out'),
      ]);
      if (process.env.SWITCHBOARD_HARNESS_DEBUG)
        console.error(
          `[harness] browser context ${how} after ${Date.now() - tc} ms; chromium alive: ${
            browserProcs
              .filter(alive)
              .map((p) => p.pid)
              .join(' ') || 'none'
          }`,
        );
    }
    try {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
    } catch {
      /* group gone */
    }
    const r1 = await killProcesses(serverTree, 4000);
    const stragglers = [tmp, ...killMatching].flatMap((n) => processesMatching(n));
    const r2 = await killProcesses([...browserProcs, ...stragglers].filter(alive), 2000);
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* group gone */
    }
    try {
      process.kill(watchdog.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    serverLogStream.end();
    const survivors = [...r1.survivors, ...r2.survivors];
    if (survivors.length) console.error(`[harness] WARNING: processes survived SIGKILL: ${survivors.join(' ')}`);
    if (!keepTemp) rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  };

  try {
    const t0 = Date.now();
    await waitHttpOk(`http://${authority}/healthz`, { timeoutMs: startTimeoutMs, child, what: 'code-server' });
    const serverReadyMs = Date.now() - t0;

    const { chromium } = await import('playwright-core');
    context = await chromium.launchPersistentContext(browserDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport,
      timeout: 60_000,
      // Playwright's own signal handlers would kill only the browser and exit 130 before close() runs.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    const page = context.pages()[0] ?? (await context.newPage());

    let resolveExit;
    const exitCode = new Promise((r) => {
      resolveExit = r;
    });
    await page.exposeFunction('codeAutomationLog', (level, parts) => {
      const line = Array.isArray(parts)
        ? parts.map((p) => (typeof p === 'string' ? p : safeJson(p))).join(' ')
        : String(parts ?? '');
      try {
        onLog(String(level), line);
      } catch {
        /* never break the page */
      }
    });
    await page.exposeFunction('codeAutomationExit', (code) => {
      resolveExit(Number(code) || 0);
    });

    const payload = [];
    if (extensionDevelopmentPath)
      payload.push(['extensionDevelopmentPath', remoteUri(authority, extensionDevelopmentPath)]);
    if (extensionTestsPath) payload.push(['extensionTestsPath', remoteUri(authority, extensionTestsPath)]);
    if (extensionEnvironment) payload.push(['extensionEnvironment', JSON.stringify(extensionEnvironment)]);
    payload.push(['skipWelcome', 'true']);
    // A .code-workspace file opens a multi-root window; a folder, a single-folder one.
    const target = workspace ? `workspace=${encodeURIComponent(workspace)}` : `folder=${encodeURIComponent(folder)}`;
    const url = `http://${authority}/?${target}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: pageTimeoutMs });

    return {
      url,
      port,
      authority,
      page,
      browser: context,
      context,
      tmp,
      serverLog,
      serverReadyMs,
      exitCode,
      close,
      child,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

const WATCHDOG_SRC = `
const fs = require('fs');
const [parent, group, tmp, matchJson, keep, dirsJson] = process.argv.slice(1);
const needles = [tmp, ...JSON.parse(matchJson)];
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const matching = () => fs.readdirSync('/proc')
  .filter((d) => /^\\d+$/.test(d) && Number(d) !== process.pid)
  .filter((d) => {
    try { const c = fs.readFileSync('/proc/' + d + '/cmdline', 'utf8'); return needles.some((n) => n && c.includes(n)); }
    catch { return false; }
  }).map(Number);
const kill = (sig) => {
  try { process.kill(-Number(group), sig); } catch {}
  for (const p of matching()) { try { process.kill(p, sig); } catch {} }
};
const timer = setInterval(() => {
  if (alive(Number(parent))) return;
  clearInterval(timer);
  kill('SIGTERM');
  setTimeout(() => {
    kill('SIGKILL');
    if (!keep) {
      for (const d of [tmp, ...JSON.parse(dirsJson)]) { try { fs.rmSync(d, { recursive: true, force: true }); } catch {} }
    }
    process.exit(0);
  }, 3000);
}, 1000);
`;

function safeJson(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}
