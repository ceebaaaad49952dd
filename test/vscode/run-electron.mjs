#!/usr/bin/env node
// `npm run test:electron`: the same suite (out/test/vscode/suite) through @vscode/test-electron, i.e.
// in a downloaded desktop VS Code with its local extension host. For machines that can download
// VS Code (and have a display, or run it under xvfb-run on Linux). Where the download is impossible
// (this project's machines reach only npm and Debian), use `npm run test:vscode` (code-server).
//
//   node test/vscode/run-electron.mjs [--folder <dir>] [--grep <pattern>] [--untrusted]
//                                     [--vscode-version <stable|insiders|1.101.0>] [--env KEY=VALUE ...]
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_SETTINGS, REPO_ROOT, prepareTestWorkspace } from './codeServer.mjs';

const fail = (msg, code = 2) => {
  console.error(`[electron] ERROR: ${msg}`);
  process.exit(code);
};

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      folder: { type: 'string' },
      grep: { type: 'string' },
      untrusted: { type: 'boolean', default: false },
      'vscode-version': { type: 'string', default: process.env.VSCODE_TEST_VERSION || 'stable' },
      env: { type: 'string', multiple: true, default: [] },
    },
  }));
} catch (e) {
  fail(e.message);
}

const distMain = join(REPO_ROOT, 'dist', 'extension.js');
if (!existsSync(distMain)) fail(`${distMain} is missing: run \`npm run build\` first`);
const testsEntry = join(REPO_ROOT, 'out', 'test', 'vscode', 'suite', 'index.js');
if (!existsSync(testsEntry)) fail(`${testsEntry} is missing: run \`npx tsc -p tsconfig.test.json\` first`);

let folder;
let tempRoot;
if (args.folder) {
  folder = resolve(args.folder);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) fail(`--folder ${folder} is not a directory`);
} else {
  ({ folder, tempRoot } = prepareTestWorkspace());
}
const resultDir = mkdtempSync(join(tmpdir(), 'switchboard-result-'));
// Fresh user data (with the same noise-free settings as run.mjs) and extensions dirs.
const userData = join(resultDir, 'user-data');
const extensionsDir = join(resultDir, 'extensions');
mkdirSync(join(userData, 'User'), { recursive: true });
mkdirSync(extensionsDir, { recursive: true });
writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify(DEFAULT_SETTINGS, null, 2));
// Downloads go to the git-ignored .tools/, not to test-electron's default ./.vscode-test.
const cachePath = join(REPO_ROOT, '.tools', 'vscode-test');
const resultFile = join(resultDir, 'result.json');
const env = {
  SWITCHBOARD_TEST_RESULT: resultFile,
  SWITCHBOARD_EXPECT_TRUSTED: args.untrusted ? 'false' : 'true',
  SWITCHBOARD_EXPECT_REMOTE: 'false',
  // Never the real ~/.switchboard (see run.mjs); --env SWITCHBOARD_HOME=... overrides it.
  SWITCHBOARD_HOME: join(resultDir, 'switchboard-home'),
  // The suites' registries mark their fixtures builtin: accept them as the operator would, once.
  SWITCHBOARD_ACCEPT_WORKSPACE_TRUST: '1',
  ...(args.grep ? { SWITCHBOARD_TEST_GREP: args.grep } : {}),
};
for (const kv of args.env) {
  const i = kv.indexOf('=');
  if (i <= 0) fail(`--env wants KEY=VALUE, got "${kv}"`);
  env[kv.slice(0, i)] = kv.slice(i + 1);
}
const cleanup = () => {
  if (tempRoot) rmSync(tempRoot, { recursive: true, force: true });
  rmSync(resultDir, { recursive: true, force: true });
};

const { runTests, downloadAndUnzipVSCode } = await import('@vscode/test-electron');
let code;
try {
  let vscodeExecutablePath;
  try {
    console.log(`[electron] getting VS Code ${args['vscode-version']} (cached in ${cachePath})`);
    vscodeExecutablePath = await downloadAndUnzipVSCode({
      version: args['vscode-version'],
      cachePath,
      timeout: 30_000,
    });
  } catch (e) {
    console.error(
      `[electron] could not download VS Code ${args['vscode-version']}: ${String(e?.message ?? e).split('\n')[0]}`,
    );
    console.error(
      '[electron] This machine cannot reach the VS Code download servers (only the npm registry and Debian',
    );
    console.error('[electron] packages are reachable here). Run the same suite in a real VS Code through code-server:');
    console.error('[electron]     npm run build && npx tsc -p tsconfig.test.json && npm run test:vscode');
    cleanup();
    process.exit(3);
  }
  code = await runTests({
    vscodeExecutablePath,
    extensionDevelopmentPath: REPO_ROOT,
    extensionTestsPath: testsEntry,
    extensionTestsEnv: env,
    launchArgs: [
      folder,
      ...(args.untrusted ? [] : ['--disable-workspace-trust']),
      `--user-data-dir=${userData}`,
      `--extensions-dir=${extensionsDir}`,
      '--skip-welcome',
      '--skip-release-notes',
      '--disable-gpu',
      // The other extensions installed on this machine must not interfere.
      '--disable-extensions',
    ],
  });
} catch (e) {
  console.error(`[electron] test run failed: ${e?.message ?? e}`);
  code = typeof e?.code === 'number' ? e.code || 1 : 1;
}
try {
  const r = JSON.parse(readFileSync(resultFile, 'utf8'));
  console.log(`electron: ${r.passed} passed, ${r.failed} failed${r.pending ? `, ${r.pending} skipped` : ''}`);
  if (code === 0 && (r.failed > 0 || r.error)) code = 1;
} catch {
  console.error('[electron] the test entry wrote no result file');
  if (code === 0) code = 1;
}
cleanup();
process.exit(code);
