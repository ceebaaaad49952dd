#!/usr/bin/env node
// `npm run test:vscode`: runs the mocha suite in test/vscode/suite inside a REAL VS Code extension
// host (code-server + headless Chromium), with this repository loaded as the development extension.
//
//   node test/vscode/run.mjs [--folder <dir>] [--grep <pattern>] [--untrusted] [--multiroot] [--screenshots <dir>]
//                            [--env KEY=VALUE ...] [--timeout <seconds>] [--verbose] [--keep]
//
// Prerequisites: `npm run build` (dist/extension.js) and `npx tsc -p tsconfig.test.json`
// (out/test/vscode/suite/*.js). The tools (code-server, Node 24, chromium) are installed on demand by
// scripts/install-vscode-tools.sh. Exit code: the tests' exit code (0 = all passed); 2 for a harness
// error (missing build, code-server not starting); 124 on the overall timeout.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, TOOLS_DIR, ensureTools, launchCodeServer, prepareTestWorkspace, sleep } from './codeServer.mjs';

const USAGE = `usage: node test/vscode/run.mjs [options]
  --folder <dir>       workspace folder to open (default: a temp copy of workspace/, with
                       mcp-servers.d/example.yaml added when it has no mcp-servers.d/*.yaml)
  --grep <pattern>     only run tests matching <pattern> (mocha grep)
  --untrusted          do not pass --disable-workspace-trust: the window opens in Restricted Mode
  --multiroot          open a multi-root workspace of two temp copies of workspace/ (alpha, beta)
                       and run only the suite/*.multiroot.test.ts files
  --screenshots <dir>  where the screenshot taken on failure goes (default: .tools/vscode/screenshots)
  --env KEY=VALUE      extra environment for the extension host (repeatable)
  --timeout <seconds>  overall bound for the run (default 600)
  --verbose            print every workbench log line, not only the extension host's and warnings
  --keep               keep the temp dirs (user data, logs, workspace copy) and print where they are`;

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      folder: { type: 'string' },
      grep: { type: 'string' },
      untrusted: { type: 'boolean', default: false },
      multiroot: { type: 'boolean', default: false },
      screenshots: { type: 'string' },
      env: { type: 'string', multiple: true, default: [] },
      timeout: { type: 'string', default: '600' },
      verbose: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (e) {
  console.error(`${e.message}\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}

const T0 = Date.now();
const stamp = () => `+${((Date.now() - T0) / 1000).toFixed(1).padStart(5)}s`;
const say = (msg) => console.log(`[harness ${stamp()}] ${msg}`);
const fail = (msg, code = 2) => {
  console.error(`[harness ${stamp()}] ERROR: ${msg}`);
  process.exit(code);
};

const overallMs = Math.round(Number(args.timeout) * 1000);
if (!(overallMs > 0)) fail(`bad --timeout ${args.timeout}`);
const extraEnv = {};
for (const kv of args.env) {
  const i = kv.indexOf('=');
  if (i <= 0) fail(`--env wants KEY=VALUE, got "${kv}"`);
  extraEnv[kv.slice(0, i)] = kv.slice(i + 1);
}

// ---------------------------------------------------------------- preconditions
const distMain = join(REPO_ROOT, 'dist', 'extension.js');
if (!existsSync(distMain)) fail(`${distMain} is missing: run \`npm run build\` first`);
const suiteOut = join(REPO_ROOT, 'out', 'test', 'vscode', 'suite');
const testsEntry = join(suiteOut, 'index.js');
if (!existsSync(testsEntry)) fail(`${testsEntry} is missing: run \`npx tsc -p tsconfig.test.json\` first`);
const suiteSrc = join(REPO_ROOT, 'test', 'vscode', 'suite');
for (const f of readdirSync(suiteSrc).filter((n) => n.endsWith('.ts'))) {
  const js = join(suiteOut, f.replace(/\.ts$/, '.js'));
  if (!existsSync(js)) say(`WARNING: ${f} has no compiled ${js}: run \`npx tsc -p tsconfig.test.json\``);
  else if (statSync(js).mtimeMs + 1000 < statSync(join(suiteSrc, f)).mtimeMs)
    say(`WARNING: ${js} is older than ${f}: run \`npx tsc -p tsconfig.test.json\``);
}

try {
  ensureTools({ log: null });
} catch (e) {
  fail(e.message);
}

// ---------------------------------------------------------------- workspace folder
let folder;
let tempFolder;
let workspaceFile;
const extraTemp = [];
if (args.multiroot) {
  if (args.folder || args.untrusted)
    fail('--multiroot opens its own two folders, trusted; it takes neither --folder nor --untrusted');
  const alpha = prepareTestWorkspace();
  const beta = prepareTestWorkspace();
  ({ folder, tempRoot: tempFolder } = alpha);
  extraTemp.push(beta.tempRoot);
  workspaceFile = join(alpha.tempRoot, 'two-folders.code-workspace');
  writeFileSync(
    workspaceFile,
    JSON.stringify(
      {
        folders: [
          { path: alpha.folder, name: 'alpha' },
          { path: beta.folder, name: 'beta' },
        ],
      },
      null,
      2,
    ),
  );
} else if (args.folder) {
  folder = resolve(args.folder);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) fail(`--folder ${folder} is not a directory`);
} else {
  ({ folder, tempRoot: tempFolder } = prepareTestWorkspace());
}
say(
  workspaceFile
    ? `multi-root workspace: ${workspaceFile}`
    : `workspace folder: ${folder}${tempFolder ? ' (temp copy)' : ''}`,
);

const resultDir = mkdtempSync(join(tmpdir(), 'switchboard-result-'));
const resultFile = join(resultDir, 'result.json');
const extensionEnvironment = {
  SWITCHBOARD_TEST_RESULT: resultFile,
  SWITCHBOARD_EXPECT_TRUSTED: args.untrusted ? 'false' : 'true',
  ...(args.multiroot ? { SWITCHBOARD_EXPECT_MULTIROOT: 'true' } : {}),
  SWITCHBOARD_EXPECT_REMOTE: 'true',
  // The broker's per-user state (tokens, approvals, discovery records) goes to a temp dir, never
  // to the real ~/.switchboard; --env SWITCHBOARD_HOME=... overrides it.
  SWITCHBOARD_HOME: join(resultDir, 'switchboard-home'),
  // The suites' registries mark their fixtures builtin: accept them as the operator would, once.
  SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1',
  ...(args.grep ? { SWITCHBOARD_TEST_GREP: args.grep } : {}),
  ...extraEnv,
};

// ---------------------------------------------------------------- launch
// Lines reach us through window.codeAutomationLog: the workbench's own log and, unlabelled, the
// extension host's console (tests, mocha's reporter, extensions). By default everything is printed
// except the workbench chatter below, which is known and harmless on an offline machine; --verbose
// prints it too.
const NOISE = [
  /^\[(AgentHost[^\]]*|ChatModelSelection|Service Worker|reconnection-grace-time|AccountPolicyGate|ChatSessions?[^\]]*|Copilot[^\]]*)\]/,
  /^(Resolving|Resolved) connection token/,
  /^Creating a socket/,
  /^Updating additional builtin extensions cache/,
  /open-vsx\.org|getaddrinfo ENOTFOUND|ENOTFOUND/,
  /^Canceled: Canceled/,
  /github.*(auth|session)|auth.*provider.*timed? ?out/i,
  /^Creation of workbench contribution .* took \d+ms/,
  /^Started local extension host|^\[?Extension Host\]? ?(started|exited)/i,
];
const MAX_LINES = 20; // of one multi-line message (stack traces), unless --verbose
// A test may ask for a screenshot of the workbench as it is now: it logs
// `[screenshot] docs/screenshots/<name>.png` and waits for the file (only there, for the README).
const SCREENSHOT_REQUEST = /^\[screenshot\] (docs\/screenshots\/[\w.-]+\.png)$/;
const printLogLine = (level, text) => {
  const shot = SCREENSHOT_REQUEST.exec(text.trim());
  if (shot && cs?.page) {
    const file = join(REPO_ROOT, shot[1]);
    cs.page
      .screenshot({ path: file, timeout: 15_000 })
      .then(() => say(`screenshot: ${file}`))
      .catch((e) => say(`could not take the screenshot ${file}: ${e.message.split('\n')[0]}`));
  }
  if (args.verbose) {
    console.log(`[${level}] ${text}`);
    return;
  }
  if (NOISE.some((re) => re.test(text))) return;
  const lines = text.split('\n');
  const shown =
    lines.length > MAX_LINES
      ? [...lines.slice(0, MAX_LINES), `    ... ${lines.length - MAX_LINES} more lines (--verbose)`]
      : lines;
  const prefix = level === 'error' || level === 'warn' ? `[${level}] ` : '';
  (level === 'error' ? console.error : console.log)(prefix + shown.join('\n'));
};

let cs;
let exitCode;
let cleaning = false;
const cleanup = async () => {
  if (cleaning) return;
  cleaning = true;
  const t = Date.now();
  await cs?.close().catch((e) => console.error(`[harness] close: ${e.message}`));
  if (!args.keep) {
    for (const dir of [tempFolder, ...extraTemp].filter(Boolean))
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    rmSync(resultDir, { recursive: true, force: true });
  }
  say(`stopped code-server and chromium (${Date.now() - t} ms)`);
};
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, async () => {
    say(`${sig}: stopping`);
    await cleanup();
    process.exit(130);
  });
}

const screenshotOnFailure = async (why) => {
  if (!cs?.page) return;
  const dir = resolve(args.screenshots ?? join(TOOLS_DIR, 'screenshots'));
  try {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `vscode-${new Date().toISOString().replace(/[:.]/g, '-')}-${why}.png`);
    await cs.page.screenshot({ path: file, timeout: 15_000 });
    say(`screenshot: ${file}`);
  } catch (e) {
    say(`could not take a screenshot: ${e.message.split('\n')[0]}`);
  }
};

const overall = setTimeout(async () => {
  console.error(
    `[harness ${stamp()}] TIMEOUT: the tests did not finish within ${overallMs / 1000} s ` +
      '(no codeAutomationExit and no result file). Last screenshot and the code-server log show where it hung; ' +
      'raise the bound with --timeout <seconds>.',
  );
  await screenshotOnFailure('timeout');
  if (cs?.serverLog && args.keep) say(`code-server log: ${cs.serverLog}`);
  await cleanup();
  process.exit(124);
}, overallMs);

try {
  say(
    `starting code-server${args.untrusted ? ' (untrusted: Restricted Mode)' : ''}${args.multiroot ? ' (multi-root: alpha, beta)' : ''}`,
  );
  cs = await launchCodeServer({
    folder,
    workspace: workspaceFile,
    trusted: !args.untrusted,
    extensionDevelopmentPath: REPO_ROOT,
    // An authentication provider the tests control (VS Code accounts, auth: { type: vscode }).
    extensions: [join(REPO_ROOT, 'test', 'vscode', 'fixtures', 'test-auth-provider')],
    extensionTestsPath: testsEntry,
    extensionEnvironment,
    keepTemp: args.keep,
    killMatching: [tempFolder, ...extraTemp].filter(Boolean),
    abortCleanupDirs: args.keep ? [] : [resultDir, tempFolder, ...extraTemp].filter(Boolean),
    onLog: printLogLine,
    onServerLog: (line) => {
      if (args.verbose) console.log(`[code-server] ${line}`);
    },
  });
  say(`code-server answered in ${cs.serverReadyMs} ms on ${cs.authority}; page opened`);
  if (args.keep) say(`temp dir (user data, code-server.log): ${cs.tmp}`);

  // Two signals: codeAutomationExit from the workbench, and the result file from the test entry.
  // The result file alone is trusted after a grace period (the exit call can be lost on teardown).
  const fromResultFile = (async () => {
    for (;;) {
      if (existsSync(resultFile)) {
        await sleep(15_000);
        return 'file';
      }
      await sleep(250);
    }
  })();
  const how = await Promise.race([cs.exitCode.then((c) => ({ code: c })), fromResultFile.then(() => ({ code: null }))]);
  clearTimeout(overall);

  let result;
  try {
    result = JSON.parse(readFileSync(resultFile, 'utf8'));
  } catch {
    /* missing */
  }
  if (how.code !== null) exitCode = how.code;
  else exitCode = result && !result.error && result.failed === 0 && result.passed > 0 ? 0 : 1;
  if (!result) say('WARNING: the test entry wrote no result file (it did not load, or crashed before the end)');
  else if (result.error) say(`test run error: ${result.error.split('\n')[0]}`);
  if (result && how.code === 0 && (result.failed > 0 || result.error)) exitCode = 1; // never green on a red result
  if (exitCode !== 0) await screenshotOnFailure('failed');
  const took = ((Date.now() - T0) / 1000).toFixed(1);
  if (result) {
    say(
      `done in ${took} s: exit code ${exitCode}${how.code === null ? ' (from the result file)' : ''}; ` +
        `node ${result.nodeVersion}, remoteName=${result.remoteName}`,
    );
    console.log(
      `vscode: ${result.passed} passed, ${result.failed} failed${result.pending ? `, ${result.pending} skipped` : ''}`,
    );
  } else {
    say(`done in ${took} s: exit code ${exitCode}`);
  }
} catch (e) {
  clearTimeout(overall);
  console.error(`[harness ${stamp()}] ERROR: ${e.stack ?? e.message}`);
  await screenshotOnFailure('error');
  exitCode = 2;
}
await cleanup();
process.exit(exitCode);
