// Commands that download what they run (`npx -y pkg`, `uvx`, `pipx run`, `docker run`, `bunx`…):
// the form every server's README gives. Without the network grant the server runs in a namespace
// with no network, so the download hangs and the handshake times out with empty output. Recognising
// the runner lets the registry say so before that happens, and the error say why after.

export interface PackageRunner {
  /** How the author wrote the runner: `npx`, `uvx`, `pipx run`, `docker run`… */
  runner: string;
  /** What it would fetch: the package or image. */
  target: string;
}

/** `C:\\tools\\npx.cmd` → `npx`; `/usr/bin/python3` → `python3`. */
export function programName(command: string): string {
  const base = command.split(/[\\/]/).pop() ?? command;
  return base.replace(/\.(cmd|bat|exe|ps1)$/i, '').toLowerCase();
}

/** Flags of each runner that take a value, so the value is not mistaken for the package. */
const VALUE_FLAGS: Record<string, Set<string>> = {
  npx: new Set(['-p', '--package', '-c', '--call', '--cache', '--registry', '--userconfig']),
  'npm exec': new Set(['-p', '--package', '-c', '--call', '--cache', '--registry', '--userconfig', '-w']),
  uvx: new Set(['--from', '--with', '-p', '--python', '--index', '--index-url', '--extra-index-url']),
  'uv tool run': new Set(['--from', '--with', '-p', '--python', '--index', '--index-url', '--extra-index-url']),
  'pipx run': new Set(['--spec', '--python', '--index-url', '--pip-args']),
  'docker run': new Set(['-e', '--env', '-v', '--volume', '--name', '--network', '--env-file', '-p', '-w', '-u']),
  'podman run': new Set(['-e', '--env', '-v', '--volume', '--name', '--network', '--env-file', '-p', '-w', '-u']),
  bunx: new Set(['-p', '--package']),
  'pnpm dlx': new Set(['--package']),
  'yarn dlx': new Set(['-p', '--package']),
};

/** The first argument that is not a flag (or a flag's value): the package or image. */
function firstOperand(args: readonly string[], valueFlags: Set<string>): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return args[i + 1];
    if (a.startsWith('-')) {
      if (!a.includes('=') && valueFlags.has(a)) i++;
      continue;
    }
    return a;
  }
  return undefined;
}

/** The runner and its subcommand, and the arguments after them, or undefined for a plain program. */
function splitRunner(
  command: string,
  args: readonly string[],
): { runner: string; rest: readonly string[] } | undefined {
  const program = programName(command);
  const sub = args[0];
  switch (program) {
    case 'npx':
    case 'uvx':
    case 'bunx':
      return { runner: program, rest: args };
    case 'npm':
      return sub === 'exec' || sub === 'x' ? { runner: 'npm exec', rest: args.slice(1) } : undefined;
    case 'pnpm':
    case 'yarn':
      return sub === 'dlx' ? { runner: `${program} dlx`, rest: args.slice(1) } : undefined;
    case 'bun':
      return sub === 'x' ? { runner: 'bunx', rest: args.slice(1) } : undefined;
    case 'pipx':
      return sub === 'run' ? { runner: 'pipx run', rest: args.slice(1) } : undefined;
    case 'uv':
      return sub === 'tool' && args[1] === 'run' ? { runner: 'uv tool run', rest: args.slice(2) } : undefined;
    case 'docker':
    case 'podman':
      return sub === 'run' ? { runner: `${program} run`, rest: args.slice(1) } : undefined;
    default:
      return undefined;
  }
}

/** Flags after which the runner uses only what is already installed or cached. */
function staysOffline(runner: string, rest: readonly string[]): boolean {
  if (runner === 'npx' || runner === 'npm exec') return rest.includes('--no-install') || rest.includes('--offline');
  if (runner === 'uvx' || runner === 'uv tool run') return rest.includes('--offline');
  if (runner === 'docker run' || runner === 'podman run') {
    return rest.some((a, i) => a === '--pull=never' || (a === '--pull' && rest[i + 1] === 'never'));
  }
  return false;
}

/** One option given to a runner: `--from x` or `--from=x` is { flag: '--from', value: 'x' }. */
export interface RunnerOption {
  flag: string;
  value?: string;
}

/**
 * How `command args` calls a package runner, downloading or not: the runner, the options given to
 * it before the package (with their values), and the package; undefined for a plain program.
 */
export function runnerCall(
  command: string | undefined,
  args: readonly string[] = [],
): { runner: string; options: RunnerOption[]; target: string | undefined } | undefined {
  if (!command) return undefined;
  const split = splitRunner(command, args);
  if (!split) return undefined;
  const valueFlags = VALUE_FLAGS[split.runner] ?? new Set<string>();
  const options: RunnerOption[] = [];
  const rest = split.rest;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--') return { runner: split.runner, options, target: rest[i + 1] };
    if (!a.startsWith('-')) return { runner: split.runner, options, target: a };
    const eq = a.indexOf('=');
    if (eq > 0) options.push({ flag: a.slice(0, eq), value: a.slice(eq + 1) });
    else if (valueFlags.has(a) && i + 1 < rest.length) options.push({ flag: a, value: rest[++i] });
    else options.push({ flag: a });
  }
  return { runner: split.runner, options, target: undefined };
}

/** The package runner `command args` uses when it may download, or undefined. */
export function packageRunnerOf(command: string | undefined, args: readonly string[] = []): PackageRunner | undefined {
  if (!command) return undefined;
  const split = splitRunner(command, args);
  if (!split || staysOffline(split.runner, split.rest)) return undefined;
  // Without an operand there is nothing to fetch (`npx` alone just prints its help).
  const target = firstOperand(split.rest, VALUE_FLAGS[split.runner] ?? new Set());
  return target ? { runner: split.runner, target } : undefined;
}

/**
 * The package a Node package runner (`npx`, `npm exec`, `bunx`) runs, downloading or not:
 * `npx --no-install mcp-server-everything` → `mcp-server-everything`; undefined for anything else.
 */
export function nodeRunnerPackageOf(command: string | undefined, args: readonly string[] = []): string | undefined {
  if (!command) return undefined;
  const split = splitRunner(command, args);
  if (!split || !['npx', 'npm exec', 'bunx'].includes(split.runner)) return undefined;
  return firstOperand(split.rest, VALUE_FLAGS[split.runner] ?? new Set());
}

/**
 * What to tell the author of a stdio server that may download what it runs but has no network
 * grant; undefined when that is not the case.
 */
export function packageRunnerWarning(def: {
  transport?: string;
  command?: string;
  args?: readonly string[];
  grants?: readonly string[];
}): string | undefined {
  if ((def.transport ?? 'stdio') !== 'stdio' || def.grants?.includes('network')) return undefined;
  const found = packageRunnerOf(def.command, def.args);
  if (!found) return undefined;
  const offline = found.runner === 'npx' || found.runner === 'npm exec' ? " (or add '--no-install')" : '';
  return (
    `'${found.runner}' downloads '${found.target}' when it is not installed, and this server has no 'network' grant, ` +
    `so that download cannot happen and the server never answers. Add 'network' to grants, or install ` +
    `the package first and run it from there${offline}.`
  );
}
