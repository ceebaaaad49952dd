// The Windows run (npm run test:windows, scripts/test-windows.sh): the Windows smoke test, then the part
// of the default suite that runs on Windows in the time CI has for it. Left out, and why:
// - test/broker (but platform/loopback, the localhost test) and test/extension, which start a broker and
//   upstreams per test: under Wine a process start costs seconds, the whole default suite would take
//   over an hour, and CI has about 10 minutes for this run; the smoke test covers the same paths
//   (spawn, shims, reload, status, connect, stop) once on Windows. Some of them also read /proc.
// - test/faults, test/vscode: their own runners, Linux only (bubblewrap, /proc, code-server).
// Tests inside these files that need Linux say so with onlyOn/notUnderWine (test/helpers/platform.ts).
const namesSpecs = process.argv.slice(2).some((arg) => /\.test\.[cm]?js$/.test(arg));

module.exports = {
  spec: namesSpecs
    ? []
    : [
        'out/test/windows/**/*.test.js',
        'out/test/unit/**/*.test.js',
        'out/test/registry/**/*.test.js',
        // Unit tests whose module lives outside src/broker (test/README.md: the tree mirrors the sources).
        'out/test/extension/{brokerLogLevel,config,didYouMean,editorClientForm}.test.js',
        'out/test/webview/tryTool.test.js',
        'out/test/broker/shared/platform/loopback.test.js',
      ],
  // The registry client starts a fixture registry process per test, like the broker suites left out.
  ignore: ['out/test/unit/control/registryClient/**'],
  timeout: 60000,
  exit: true,
  reporter: 'spec',
};
