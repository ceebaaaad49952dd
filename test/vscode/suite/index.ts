// Test entry run by VS Code inside the (remote, Node) extension host: the workbench loads this
// module from the `extensionTestsPath` payload and calls run(). Resolving means success, rejecting
// failure; the workbench then reports the exit code through window.codeAutomationExit.
//
// Environment (through the `extensionEnvironment` payload, set by test/vscode/run.mjs):
//   SWITCHBOARD_TEST_RESULT   path of a JSON result file written when the run ends (second signal)
//   SWITCHBOARD_TEST_GREP     mocha --grep pattern
//   SWITCHBOARD_EXPECT_MULTIROOT  'true' in the multi-root window (run.mjs --multiroot)
//   SWITCHBOARD_TEST_TIMEOUT  per-test timeout in ms (default 60000)
import * as fs from 'fs';
import * as path from 'path';
import Mocha = require('mocha');
import type * as vscodeApi from 'vscode';

interface TestRecord {
  title: string;
  fullTitle: string;
  file?: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs?: number;
  error?: { message: string; stack?: string };
}

export interface RunResult {
  passed: number;
  failed: number;
  pending: number;
  durationMs: number;
  tests: TestRecord[];
  remoteName?: string;
  nodeVersion: string;
  error?: string;
}

const { EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_SUITE_BEGIN } =
  Mocha.Runner.constants;

// Every line goes through console.log: the extension host forwards it to the workbench, which hands
// it to window.codeAutomationLog (process.stdout of the remote extension host reaches nobody). The
// lines arrive unlabelled, mixed with the workbench's own log, hence the "[mocha]" tag. (Wrapping
// console.* here to tag all extension-host output does not work: VS Code defines them with a no-op
// setter.)
function makeReporter(records: TestRecord[]) {
  return class ConsoleLineReporter extends Mocha.reporters.Base {
    constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
      super(runner, options);
      const indent = (s: Mocha.Suite) => '  '.repeat(Math.max(0, s.titlePath().length - 1));
      runner.on(EVENT_SUITE_BEGIN, (s: Mocha.Suite) => {
        if (s.title) console.log(`[mocha] ${indent(s)}${s.title}`);
      });
      runner.on(EVENT_TEST_PASS, (t: Mocha.Test) => {
        records.push({
          title: t.title,
          fullTitle: t.fullTitle(),
          file: t.file,
          state: 'passed',
          durationMs: t.duration,
        });
        console.log(`[mocha] ${indent(t.parent!)}  ✔ ${t.title} (${t.duration ?? 0} ms)`);
      });
      runner.on(EVENT_TEST_PENDING, (t: Mocha.Test) => {
        records.push({ title: t.title, fullTitle: t.fullTitle(), file: t.file, state: 'pending' });
        console.log(`[mocha] ${indent(t.parent!)}  - ${t.title} (skipped)`);
      });
      runner.on(EVENT_TEST_FAIL, (t: Mocha.Test | Mocha.Hook, err: Error) => {
        records.push({
          title: t.title,
          fullTitle: t.fullTitle(),
          file: t.file,
          state: 'failed',
          durationMs: t.duration,
          error: { message: String(err?.message ?? err), stack: err?.stack },
        });
        console.log(
          `[mocha] ${t.parent ? indent(t.parent) : ''}  ✘ ${t.title}: ${String(err?.message ?? err).split('\n')[0]}`,
        );
      });
      runner.once(EVENT_RUN_END, () => {
        const failed = records.filter((r) => r.state === 'failed');
        for (const [i, f] of failed.entries()) {
          console.log(`[mocha] ${i + 1}) ${f.fullTitle}\n${f.error?.stack ?? f.error?.message ?? ''}`);
        }
        const passed = records.filter((r) => r.state === 'passed').length;
        const pending = records.filter((r) => r.state === 'pending').length;
        console.log(`[mocha] ${passed} passing, ${failed.length} failing, ${pending} pending`);
      });
    }
  };
}

function writeResult(result: RunResult): void {
  const file = process.env.SWITCHBOARD_TEST_RESULT;
  if (!file) return;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(result, null, 2));
    fs.renameSync(`${file}.tmp`, file);
  } catch (e) {
    console.error(`[mocha] cannot write result file ${file}: ${(e as Error).message}`);
  }
}

export async function run(): Promise<void> {
  const started = Date.now();
  const records: TestRecord[] = [];
  const base = {
    nodeVersion: process.version,
    remoteName: (() => {
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- guarded: 'vscode' may be absent
        return (require('vscode') as typeof vscodeApi).env.remoteName;
      } catch {
        return undefined;
      }
    })(),
  };
  try {
    const mocha = new Mocha({
      ui: 'bdd',
      color: false,
      timeout: Number(process.env.SWITCHBOARD_TEST_TIMEOUT) || 60_000,
      reporter: makeReporter(records),
    });
    if (process.env.SWITCHBOARD_TEST_GREP) mocha.grep(process.env.SWITCHBOARD_TEST_GREP);

    const dir = __dirname;
    // `*.trusted.test.js` need a trusted window, `*.untrusted.test.js` Restricted Mode; each run
    // loads the files for its own mode (run.mjs, or run.mjs --untrusted), the rest in both. The
    // multi-root window (run.mjs --multiroot) runs `*.multiroot.test.js` and nothing else: the
    // other suites are written for one folder.
    const untrusted = process.env.SWITCHBOARD_EXPECT_TRUSTED === 'false';
    const multiroot = process.env.SWITCHBOARD_EXPECT_MULTIROOT === 'true';
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.test.js'))
      .filter((f) => multiroot === f.endsWith('.multiroot.test.js'))
      .filter((f) => !f.endsWith(untrusted ? '.trusted.test.js' : '.untrusted.test.js'))
      .sort();
    if (files.length === 0) throw new Error(`no *.test.js in ${dir}: run \`npx tsc -p tsconfig.test.json\``);
    console.log(`[mocha] ${files.length} test file(s) in ${dir}: ${files.join(', ')}`);
    for (const f of files) mocha.addFile(path.join(dir, f));

    const failures = await new Promise<number>((resolve, reject) => {
      try {
        mocha.run((n) => resolve(n));
      } catch (e) {
        reject(e);
      }
    });
    const passed = records.filter((r) => r.state === 'passed').length;
    const pending = records.filter((r) => r.state === 'pending').length;
    writeResult({ ...base, passed, failed: failures, pending, durationMs: Date.now() - started, tests: records });
    if (failures > 0) throw new Error(`${failures} test(s) failed`);
    if (passed === 0) throw new Error('no test passed (none matched the grep?)');
  } catch (e) {
    const err = e as Error;
    if (!fs.existsSync(process.env.SWITCHBOARD_TEST_RESULT ?? '\0')) {
      writeResult({
        ...base,
        passed: 0,
        failed: 0,
        pending: 0,
        durationMs: Date.now() - started,
        tests: records,
        error: err.stack ?? String(err),
      });
    }
    console.error(`[mocha] run failed: ${err.message}`);
    throw err;
  }
}
