// The reliability and security suite (`npm run test:faults`): every compiled spec under out/test/faults.
// A .cjs for the same reason as .mocharc.cjs: a spec file named on the command line runs alone.
const namesSpecs = process.argv.slice(2).some((arg) => /\.test\.[cm]?js$/.test(arg));

module.exports = {
  spec: namesSpecs ? [] : ['out/test/faults/**/*.test.js'],
  timeout: 300000,
  exit: true,
  reporter: 'spec',
};
