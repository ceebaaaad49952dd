// The Windows run (npm run test:windows, scripts/test-windows.sh): the Windows smoke test, then the part
// of the default suite that runs on Windows in the time CI has for it. Left out, and why:
// - test/broker (but endpoint, core and platform-loopback) and the other suites that start many brokers
//   and upstreams: under Wine every process start costs about a second, and the whole default suite would
//   take over an hour; the smoke test covers the same paths (spawn, shims, reload, stop) once on Windows.
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
        'out/test/broker/endpoint.test.js',
        'out/test/broker/platform-loopback.test.js',
      ],
  timeout: 60000,
  exit: true,
  reporter: 'spec',
};
