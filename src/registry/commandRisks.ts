// What a person should look at twice in a command before approving it: a shell or inline code
// (what runs is in the arguments, not the program), a package runner given something that is not
// a registry package (a path, a URL, a git source, an option), and runner options that change what
// it runs, where it downloads from or what a container may touch. The approval summary shows these
// next to the command; `import` prints them. Pure: words out, nothing refused here.
import { isRegistryPackage } from './packageNames';
import { programName, runnerCall, type RunnerOption } from './packageRunner';
import { hasControl } from './visibleText';

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'busybox']);
const WINDOWS_SHELLS = new Set(['cmd', 'powershell', 'pwsh']);

/** Interpreters and the options after which the code to run is the next argument. */
const INLINE_CODE: Record<string, readonly string[]> = {
  node: ['-e', '--eval', '-p', '--print'],
  bun: ['-e', '--eval', '-p', '--print'],
  deno: ['eval'],
  python: ['-c'],
  python3: ['-c'],
  py: ['-c'],
  perl: ['-e', '-E'],
  ruby: ['-e'],
  php: ['-r'],
};

/** Runner options and what each does that the person must know (the value, if any, is shown). */
const MEANINGS: Record<string, Record<string, string>> = {
  npx: {
    '-c': 'runs a shell command',
    '--call': 'runs a shell command',
    '-p': 'installs another package first',
    '--package': 'installs another package first',
    '--registry': 'downloads from another registry',
    '--userconfig': 'reads another npm configuration',
  },
  uvx: {
    '--from': 'takes the package from another source',
    '--with': 'installs more packages',
    '--index': 'downloads from another index',
    '--index-url': 'downloads from another index',
    '--extra-index-url': 'downloads from another index too',
  },
  'pipx run': {
    '--spec': 'takes the package from another source',
    '--index-url': 'downloads from another index',
    '--pip-args': 'passes options to pip',
  },
  'docker run': {
    '--privileged': 'gives the container every capability of this computer',
    '-v': 'mounts a path of this computer into the container',
    '--volume': 'mounts a path of this computer into the container',
    '--mount': 'mounts a path of this computer into the container',
    '--cap-add': 'gives the container a capability',
    '--device': 'gives the container a device of this computer',
    '--security-opt': 'changes the container’s confinement',
    '--env-file': 'passes every variable of a file',
    '-p': 'publishes a port',
    '--publish': 'publishes a port',
  },
  bunx: { '-p': 'installs another package first', '--package': 'installs another package first' },
  'pnpm dlx': { '--package': 'installs another package first' },
  'yarn dlx': { '-p': 'installs another package first', '--package': 'installs another package first' },
};
MEANINGS['npm exec'] = MEANINGS.npx;
MEANINGS['uv tool run'] = MEANINGS.uvx;
MEANINGS['podman run'] = MEANINGS['docker run'];

/** Options that change nothing a person must confirm. */
const HARMLESS: Record<string, ReadonlySet<string>> = {
  npx: new Set(['-y', '--yes', '--no-install', '--offline', '--prefer-offline', '-q', '--quiet', '--silent']),
  uvx: new Set(['-q', '--quiet', '--offline', '--no-cache', '--isolated', '-p', '--python']),
  'pipx run': new Set(['--python', '--no-cache', '-q', '--quiet', '--verbose']),
  'docker run': new Set(['-i', '--interactive', '-t', '--tty', '--rm', '--init', '-e', '--env', '--pull', '--name']),
  bunx: new Set(['--bun', '--silent']),
  'pnpm dlx': new Set(['--silent']),
  'yarn dlx': new Set(['--quiet']),
};
HARMLESS['npm exec'] = HARMLESS.npx;
HARMLESS['uv tool run'] = HARMLESS.uvx;
HARMLESS['podman run'] = HARMLESS['docker run'];

/** Docker options whose meaning depends on the value: sharing a namespace of this computer. */
const SHARES_HOST = new Set(['--network', '--net', '--pid', '--ipc', '--uts', '--userns', '--cgroupns']);

function optionWarning(runner: string, { flag, value }: RunnerOption): string | undefined {
  const shown = `${runner} ${flag}${value !== undefined ? ` ${value}` : ''}`;
  if ((runner === 'docker run' || runner === 'podman run') && SHARES_HOST.has(flag)) {
    const host = value === 'host' || value?.startsWith('container:');
    return host ? `${shown}: shares a namespace of this computer with the container` : undefined;
  }
  const meaning = MEANINGS[runner]?.[flag];
  if (meaning) return `${shown}: ${meaning}`;
  if (HARMLESS[runner]?.has(flag)) return undefined;
  return `${shown}: an option before the package this summary does not know; check what it does`;
}

/** The warnings for `command args`; empty when nothing stands out. */
export function commandWarnings(command: string | undefined, args: readonly string[] = []): string[] {
  if (!command) return [];
  const out: string[] = [];
  const program = programName(command);
  if (SHELLS.has(program) || WINDOWS_SHELLS.has(program))
    out.push(`runs a shell (${program}): what it does is written in its arguments`);
  const inline = INLINE_CODE[program.replace(/\d+(\.\d+)*$/, '')] ?? INLINE_CODE[program];
  const flag = inline ? args.find((a) => inline.includes(a)) : undefined;
  if (flag) out.push(`runs code written in its arguments (${program} ${flag})`);
  const call = runnerCall(command, args);
  if (call) {
    if (call.target !== undefined && !isRegistryPackage(call.runner, call.target))
      out.push(
        `'${call.target.slice(0, 120)}' is not a registry package name: ${call.runner} gets it as something else`,
      );
    for (const option of call.options) {
      const warning = optionWarning(call.runner, option);
      if (warning) out.push(warning);
    }
  }
  if ([command, ...args].some(hasControl)) out.push('an argument holds a line break or another control character');
  return out;
}
