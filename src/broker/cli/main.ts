// `switchboard` command line: the broker bundle's entry point.
import { printError } from './command';
import { runCli } from './cli';

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: Error) => {
    printError(`switchboard: ${err.message}\n`);
    process.exitCode = 1;
  },
);
