// Mocha's default run: every compiled spec except the VS Code and faults suites (each has its own runner).
//
// A .cjs rather than .mocharc.json because mocha adds files named on the command line to a config's
// `spec` instead of replacing it, so `npx mocha out/test/broker/core.test.js` would run the whole
// suite. Here the default glob applies only when no spec file is named.
const namesSpecs = process.argv.slice(2).some((arg) => /\.test\.[cm]?js$/.test(arg));

module.exports = {
  spec: namesSpecs ? [] : ['out/test/**/*.test.js'],
  ignore: ['out/test/vscode/**', 'out/test/faults/**'],
  timeout: 30000,
  exit: true,
  reporter: 'spec',
};
