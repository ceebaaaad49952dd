// How a stdio server's command runs on Windows: found the way cmd.exe finds it (PATHEXT), and .cmd/.bat
// shims (npx, pnpm, most Node tools) run through cmd.exe with every argument escaped, since Node refuses
// to spawn a batch file without a shell (CVE-2024-27980). Pure: the file system is passed in.
import * as path from 'node:path';

/** What to hand to child_process.spawn on Windows. */
export interface WindowsSpawn {
  file: string;
  args: string[];
  /** True when `args` is one pre-escaped cmd.exe line that Node must pass on untouched. */
  windowsVerbatimArguments: boolean;
}

export interface WindowsLookup {
  /** The PATH variable (Windows env names are case-insensitive; the caller picks Path or PATH). */
  pathVar: string | undefined;
  /** PATHEXT; Windows' own default when unset. */
  pathExt: string | undefined;
  cwd: string;
  isFile(candidate: string): boolean;
}

const DEFAULT_PATHEXT = '.COM;.EXE;.BAT;.CMD';
const BATCH_FILE = /\.(?:bat|cmd)$/i;
const DIRECT_EXECUTABLE = /\.(?:com|exe)$/i;
/** cmd.exe meta characters, escaped with ^ outside quotes (see robvanderwoude.com/escapechars.php). */
const CMD_META = /([()\][!^"`<>&|;, *?])/g;
const LINE_BREAK = /[\r\n]/;

/** The env value of `name` with Windows' case-insensitive lookup (`Path` and `PATH` are one variable). */
export function windowsEnvValue(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const wanted = name.toUpperCase();
  for (const [key, value] of Object.entries(env)) if (key.toUpperCase() === wanted) return value;
  return undefined;
}

/**
 * Finds a command as Windows would: a name with a directory part is taken relative to cwd, a bare name
 * is looked for along PATH; without a known extension each PATHEXT extension is tried in order.
 * Unlike cmd.exe, a bare name is NOT looked for in cwd first (as with NoDefaultCurrentDirectoryInExePath):
 * cwd is the workspace, and a cloned repository must not be able to shadow `npx` with its own npx.cmd.
 */
export function resolveWindowsCommand(command: string, lookup: WindowsLookup): string | undefined {
  const name = command.replace(/"/g, ''); // cmd.exe ignores quotes in a command name; file names cannot hold them
  const exts = ['', ...(lookup.pathExt || DEFAULT_PATHEXT).split(';').filter(Boolean)];
  // A name that already ends in a known extension is tried as it is first; `node` tries node.COM, node.EXE, ...
  const hasKnownExt = exts.slice(1).some((ext) => name.toLowerCase().endsWith(ext.toLowerCase()));
  const tries = hasKnownExt ? [''] : exts.slice(1);
  const dirs =
    /[\\/]/.test(name) || path.win32.isAbsolute(name)
      ? ['']
      : (lookup.pathVar ?? '')
          .split(';')
          .map((d) => d.trim().replace(/^"(.*)"$/, '$1'))
          .filter(Boolean);
  for (const dir of dirs) {
    const base = dir ? path.win32.resolve(lookup.cwd, dir, name) : path.win32.resolve(lookup.cwd, name);
    for (const ext of tries) if (lookup.isFile(base + ext)) return base + ext;
  }
  return undefined;
}

function assertNoLineBreaks(text: string): void {
  // cmd.exe ends a command at a line break and nothing escapes one: refuse rather than run a second command.
  if (LINE_BREAK.test(text)) {
    throw new Error('An argument contains a line break, which cmd.exe cannot pass on safely; remove it from args.');
  }
}

/** %VAR% expands even inside quotes and after ^; `%%cd:~,%` is an empty substring that breaks the name. */
function neutralizePercent(text: string): string {
  return text.replace(/%/g, '%%cd:~,%');
}

/** Quotes one argument by the Microsoft C runtime rules: backslashes matter only before a quote. */
function quoteArgument(arg: string, escapedQuote: string): string {
  let quoted = '"';
  let backslashes = 0;
  for (const char of arg) {
    if (char === '\\') {
      backslashes += 1;
      continue;
    }
    quoted += char === '"' ? '\\'.repeat(backslashes * 2) + escapedQuote : '\\'.repeat(backslashes) + char;
    backslashes = 0;
  }
  return `${quoted}${'\\'.repeat(backslashes * 2)}"`;
}

/**
 * The cmd.exe command line (the text after `/c`) that runs `command` with exactly `args`.
 * A batch file re-parses its arguments (`%*`), after ^ escapes are used up, so its arguments rely on
 * double quotes alone (quotes doubled, as Rust does since BatBadBut, CVE-2024-24576); any other program
 * gets C-runtime quoting plus ^ before every meta character.
 */
export function windowsCommandLine(command: string, args: readonly string[], batch = BATCH_FILE.test(command)): string {
  assertNoLineBreaks(command);
  const head = `"${neutralizePercent(command.replace(/"/g, ''))}"`;
  const tail = args.map((arg) => {
    assertNoLineBreaks(arg);
    return batch
      ? neutralizePercent(quoteArgument(arg, '""'))
      : neutralizePercent(quoteArgument(arg, '\\"').replace(CMD_META, '^$1'));
  });
  return [head, ...tail].join(' ');
}

/**
 * What to spawn for `command args` on Windows, given where the command was found (undefined: not found,
 * which the caller reports as "command not found" like everywhere else). .exe/.com run directly;
 * anything else (.cmd, .bat, or an extension PATHEXT adds) runs through cmd.exe.
 */
export function windowsSpawn(resolved: string, args: readonly string[], comspec = 'cmd.exe'): WindowsSpawn {
  if (DIRECT_EXECUTABLE.test(resolved)) return { file: resolved, args: [...args], windowsVerbatimArguments: false };
  const line = windowsCommandLine(path.win32.normalize(resolved), args, BATCH_FILE.test(resolved));
  // /d: no AutoRun; /e:on for the %cd:~,% trick; /v:off so !VAR! stays literal; /s /c "...": strip one quote pair.
  return { file: comspec, args: ['/d', '/e:on', '/v:off', '/s', '/c', `"${line}"`], windowsVerbatimArguments: true };
}
