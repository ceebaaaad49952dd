// The one launch path: a server definition and the workspace root become what to run (or reach),
// with the environment its grants allow, the sandbox wrapper, and the redaction of its secrets.
// Start, restart and probe all go through here, so none of them can drift from the others.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { nodeRunnerPackageOf } from '../../registry/packageRunner';
import type { ServerDef, VscodeAuthSettings } from '../../registry/schema';
import { describeAccount, type CredentialSource } from '../connection/auth/credentials';
import type { LaunchCompanion, RemoteLaunch, StdioLaunch, UpstreamLaunch } from '../connection/connection';
import type { WaitingState } from './upstreamStates';
import { buildEnvironment, resolveInputs } from '../trust/environment';
import { NetworkProxy, type ProxyRefusal } from '../trust/networkProxy';
import {
  bwrapPlan,
  installDirsOf,
  leadsOutOfRoot,
  resolveGrantPath,
  RUNTIME_DIRS,
  runnerPackageDir,
  scriptPackageDir,
} from '../shared/platform/bwrapArgs';
import { sandboxExecPrefix, sandboxProfile, seatbeltEnvironment } from '../shared/platform/macSandbox';
import { bridgeCommand, proxyEnvironment } from '../shared/platform/proxyBridge';
import { findExecutable } from '../shared/platform/processGroup';
import { Redactor, urlSecretValues } from '../trust/redact';
import { switchboardHome } from '../shared/userState';
import {
  decideSandbox,
  sandboxTools,
  type Enforcement,
  type SandboxDecision,
  type SandboxTools,
} from '../trust/sandbox';
import { merged } from '../shared/objects';

/** What confines a launch, in one word (telemetry's launch span says it). */
export type SandboxKind = 'bubblewrap' | 'sandbox-exec' | 'network-only' | 'none' | 'remote';

export interface LaunchPlan {
  launch: UpstreamLaunch;
  sandbox: SandboxKind;
  enforcement: Enforcement;
  /** Names (never values) of variables withheld for want of the `secrets` grant. */
  withheld: string[];
  /** Scrubs the server's secret values (envFile, resolved references, headers, URL credentials) from text. */
  redactor: Redactor;
}

/**
 * The definition cannot run until someone supplies a credential: an entered secret
 * (`needs-input`) or a VS Code account's token (`needs-sign-in`). Waiting, not failing.
 */
export class WaitingForCredentials extends Error {
  constructor(
    message: string,
    readonly state: WaitingState,
    /** The inputs nobody entered yet (needs-input). */
    readonly inputs: string[] = [],
  ) {
    super(message);
  }
}

/** What to tell the person when inputs are missing. */
export function missingInputsMessage(server: string, names: readonly string[]): string {
  const list = names.join(', ');
  return (
    `'${server}' needs input ${list}: enter it in VS Code (Switchboard: Enter Secret) ` +
    `or run: switchboard secret set ${names[0]}`
  );
}

export interface LaunchOptions {
  /** Entered secrets and VS Code account tokens (without it, none are known). */
  credentials?: CredentialSource;
  /** Whether a VS Code window is connected (it is the only source of account tokens). */
  editorConnected?: boolean;
  /** The broker's environment (process.env unless a test passes its own). */
  parentEnv?: NodeJS.ProcessEnv;
  /**
   * A network-only sandbox prefix (`unshare --net --`) to use instead of probing: with it, bubblewrap
   * is not used (tests that spawn nothing). `sandbox` says both instead.
   */
  networkIsolation?: string[] | null;
  /** What this system offers to confine a server; probed once unless given. */
  sandbox?: SandboxTools;
  /** Each host:port the server's network proxy refused (for its log and the audit). */
  onNetworkRefused?: (refusal: ProxyRefusal) => void;
}

function toolsFor(opts: LaunchOptions): SandboxTools {
  if (opts.sandbox) return opts.sandbox;
  if ('networkIsolation' in opts)
    return { bwrapUnavailable: 'not probed for this launch', networkOnly: opts.networkIsolation ?? null };
  return sandboxTools();
}

/** Throws, with what to fix, when the definition cannot be launched (an unreadable envFile). */
export function planLaunch(def: ServerDef, root: string, opts: LaunchOptions = {}): LaunchPlan {
  const input = opts.credentials ? (name: string) => opts.credentials!.input(name) : undefined;
  if (def.transport !== 'stdio') {
    const enforcement = decideSandbox(def, { bwrapUnavailable: null, networkOnly: null }).enforcement;
    const collected = { withheld: [] as string[], secretValues: [] as string[], missingInputs: [] as string[] };
    const granted = def.grants.includes('secrets');
    const headers = Object.fromEntries(
      Object.entries(def.headers).map(([k, v]) => [k, resolveInputs(v, granted, input, collected)]),
    );
    if (collected.missingInputs.length)
      throw new WaitingForCredentials(
        missingInputsMessage(def.name, collected.missingInputs),
        'needs-input',
        collected.missingInputs,
      );
    const launch: RemoteLaunch = { transport: def.transport, ...credentialsAsHeader(def.url!, headers) };
    const secrets = [...Object.values(launch.headers), ...collected.secretValues, ...urlSecretValues(def.url!)];
    if (def.auth?.type === 'vscode') {
      const credentials = opts.credentials;
      const token = credentials?.accountToken(def);
      if (!credentials || token === undefined)
        throw new WaitingForCredentials(needsAccountMessage(def, opts), 'needs-sign-in');
      // Read at each request: a session VS Code refreshed is used without a reconnect.
      launch.bearer = () => credentials.accountToken(def);
      secrets.push(token);
    }
    // Credentials in the URL (user info, `?api_key=`) are as secret as an authorization header.
    return { launch, sandbox: 'remote', enforcement, withheld: collected.withheld, redactor: new Redactor(secrets) };
  }
  const tools = toolsFor(opts);
  const decision = decideSandbox(def, tools);
  const built = buildEnvironment({
    root,
    env: def.env,
    envFile: def.envFile,
    grants: def.grants,
    parentEnv: opts.parentEnv,
    input,
  });
  if (built.missingInputs.length)
    throw new WaitingForCredentials(
      missingInputsMessage(def.name, built.missingInputs),
      'needs-input',
      built.missingInputs,
    );
  const cwd = def.cwd ? path.resolve(root, def.cwd) : root;
  const launch: StdioLaunch = { transport: 'stdio', command: def.command!, args: def.args, cwd, env: built.env };
  if (decision.bwrap) Object.assign(launch, confine(def, root, decision, tools, launch.env, opts));
  else if (decision.seatbelt) Object.assign(launch, confineMac(def, root, decision, launch.env, opts));
  else if (decision.networkOnlyPrefix) launch.wrapper = decision.networkOnlyPrefix;
  const { enforcement } = decision;
  const sandbox: SandboxKind = decision.bwrap
    ? 'bubblewrap'
    : decision.seatbelt
      ? 'sandbox-exec'
      : decision.networkOnlyPrefix
        ? 'network-only'
        : 'none';
  return { launch, sandbox, enforcement, withheld: built.withheld, redactor: new Redactor(built.secretValues) };
}

/** What to tell the person while a server waits for a VS Code account's token. */
function needsAccountMessage(def: ServerDef, opts: LaunchOptions): string {
  const auth = def.auth as VscodeAuthSettings;
  const account = describeAccount(auth);
  if (opts.editorConnected === false) {
    return (
      `'${def.name}' signs in with ${account} of VS Code, and no VS Code window is connected to this broker ` +
      "(a standalone 'switchboard serve' cannot get that token): open this workspace in VS Code with the " +
      'Switchboard extension, which hands the token over'
    );
  }
  return `'${def.name}' needs ${account} of VS Code: sign in from the server's Sign In action in VS Code`;
}

/** The bubblewrap wrapper, the environment inside it and, for an allow-list, the proxy that runs alongside. */
function confine(
  def: ServerDef,
  root: string,
  decision: SandboxDecision,
  tools: SandboxTools,
  env: Record<string, string>,
  opts: LaunchOptions,
): { wrapper: string[]; env: Record<string, string>; companion?: LaunchCompanion } {
  const parentEnv = opts.parentEnv ?? process.env;
  const home = parentEnv.HOME || os.homedir();
  const cwd = path.resolve(root, def.cwd ?? '.');
  const proxy =
    decision.network === 'proxy'
      ? new NetworkProxy(def.network!.allow, (refusal) => opts.onNetworkRefused?.(refusal))
      : undefined;
  const executables = [findExecutable(def.command!, env.PATH, cwd), ...(proxy ? [process.execPath] : [])];
  // The script an interpreter runs is the server's code as much as its command is: a server run as
  // `node ~/tools/server.js` (or this repository's sample, cloned under HOME) must still find it.
  const script = scriptArgument(def.args ?? [], cwd);
  // /var/run is mostly a link to /run: only a real directory is hidden on its own.
  const runtime = [
    ...RUNTIME_DIRS.filter(isRealDir),
    ...(parentEnv.XDG_RUNTIME_DIR ? [parentEnv.XDG_RUNTIME_DIR] : []),
  ];
  const hiddenDirs = [home, '/tmp', ...runtime];
  const rootAbs = path.resolve(root);
  const rootPaths = { path: rootAbs, real: realpathOfAny(rootAbs) };
  const leadsOut = (p: string): boolean =>
    leadsOutOfRoot(p, realpathOfAny(p), rootPaths, [...hiddenDirs, switchboardHome(parentEnv)]);
  if (leadsOut(cwd))
    throw new Error(
      `'${def.name}': its cwd ${cwd} is a symbolic link out of the registry root (to ${realpathOfAny(cwd)}); ` +
        'the sandbox does not follow it: name the real directory',
    );
  /** A file and, unless it is a link out of the root into a hidden place (then noted), where it really is. */
  const withReal = (f: string): string[] => {
    if (!leadsOut(f)) return [f, realpath(f)];
    decision.enforcement.notes.push(
      `${f} is a symbolic link out of the registry root (to ${realpathOfAny(f)}): not bound into the sandbox`,
    );
    return [f];
  };
  const scriptDirs = script
    ? [
        scriptPackageDir(script, hiddenDirs, isFile),
        ...withReal(script)
          .slice(1)
          .map((r) => scriptPackageDir(r, hiddenDirs, isFile)),
      ]
    : [];
  scriptDirs.push(...localRunnerDirs(def, cwd));
  const granted = (paths: readonly string[] | undefined): string[] =>
    (paths ?? [])
      .map((p) => resolveGrantPath(p, root, home))
      .filter((p) => {
        if (!leadsOut(p)) return true;
        decision.enforcement.notes.push(
          `${p} is a symbolic link out of the registry root (to ${realpathOfAny(p)}): not mounted; grant the real path`,
        );
        return false;
      });
  const plan = bwrapPlan({
    files: def.grants.includes('filesystem') && !def.filesystem ? 'full' : 'confined',
    userNamespace: tools.bwrapUserNamespace !== false,
    home,
    switchboardHome: switchboardHome(parentEnv),
    hidden: runtime,
    // /etc/resolv.conf is often a link into /run (systemd-resolved, resolvconf): a server with the
    // network still resolves names.
    systemFiles: [realpath('/etc/resolv.conf')],
    root: rootAbs,
    cwd,
    installDirs: [...installDirsOf(executables.flatMap((f) => (f ? withReal(f) : []))), ...scriptDirs].filter(
      (d) => !leadsOut(d),
    ),
    read: granted(def.filesystem?.read),
    write: granted(def.filesystem?.write),
    network: proxy ? { kind: 'proxy', socketDir: proxy.dir } : { kind: decision.network === 'full' ? 'full' : 'none' },
    exists: (p) => fs.existsSync(p),
  });
  const electron = process.versions.electron !== undefined;
  return {
    wrapper: proxy ? [...plan.prefix, ...bridgeCommand(process.execPath, proxy.socketPath, electron)] : plan.prefix,
    env: merged(env, plan.env, proxy ? proxyEnvironment() : {}),
    companion: proxy,
  };
}

/**
 * macOS: sandbox-exec with a profile built for this server. Its temp dir and npm cache are its own, kept
 * between starts (npx finds its packages again) in the user's private temp dir, one per root and server.
 * Throws, with the path, when a path cannot be written into a profile: the server does not start unconfined.
 */
function confineMac(
  def: ServerDef,
  root: string,
  decision: SandboxDecision,
  env: Record<string, string>,
  opts: LaunchOptions,
): { wrapper: string[]; env: Record<string, string> } {
  const parentEnv = opts.parentEnv ?? process.env;
  const home = parentEnv.HOME || os.homedir();
  const cwd = path.resolve(root, def.cwd ?? '.');
  const userTmp = os.tmpdir();
  const key = crypto
    .createHash('sha256')
    .update(`${path.resolve(root)}\0${def.name}`)
    .digest('hex')
    .slice(0, 16);
  const tempDir = path.join(userTmp, 'switchboard-sandbox', key);
  const cacheDir = path.join(tempDir, '.npm');
  fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const executable = findExecutable(def.command!, env.PATH, cwd);
  const files = {
    home,
    switchboardHome: switchboardHome(parentEnv),
    hidden: [userTmp, '/private/tmp', '/private/var/tmp'],
    tempDir,
    cacheDir,
    root: path.resolve(root),
    cwd,
    installDirs: [...installDirsOf(executable ? [executable, realpath(executable)] : []), ...localRunnerDirs(def, cwd)],
    read: (def.filesystem?.read ?? []).map((p) => resolveGrantPath(p, root, home)),
    write: (def.filesystem?.write ?? []).map((p) => resolveGrantPath(p, root, home)),
    realpath: realpathOfAny,
  };
  const profile = sandboxProfile({ network: decision.network === 'full', files });
  return { wrapper: sandboxExecPrefix(profile), env: merged(env, seatbeltEnvironment(files)) };
}

function isRealDir(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * The local node_modules an `npx <package>` (the sample's `npx --no-install mcp-server-everything`)
 * runs from, read-only: in a clone under HOME or /tmp the sandbox hides it otherwise, and npx, not
 * finding it, tries the registry inside a namespace without network and the handshake times out
 * with no output.
 */
function localRunnerDirs(def: ServerDef, cwd: string): string[] {
  const spec = nodeRunnerPackageOf(def.command, def.args ?? []);
  const dir = spec ? runnerPackageDir(spec, cwd, (p) => fs.existsSync(p)) : undefined;
  return dir ? [dir, realpath(dir)] : [];
}

/** What an interpreter's script is called; other file arguments (data, config) are not bound back. */
const SCRIPT_FILE = /\.(?:[cm]?js|[cm]?ts|py|rb|pl|php|sh)$/i;

/**
 * The first argument that names an existing script file (relative to the working directory): the
 * server's code, as in `node server.js` or `node --flag -e … ./server.mjs`.
 */
function scriptArgument(args: readonly string[], cwd: string): string | undefined {
  for (const a of args) {
    if (a.startsWith('-') || !SCRIPT_FILE.test(a)) continue;
    const p = path.resolve(cwd, a);
    if (isFile(p)) return p;
  }
  return undefined;
}

/** The real path of `p`, or of its deepest existing ancestor with the rest appended (a path not made yet). */
function realpathOfAny(p: string): string {
  const rest: string[] = [];
  for (let d = p; ; d = path.dirname(d)) {
    try {
      return path.join(fs.realpathSync(d), ...rest);
    } catch {
      if (path.dirname(d) === d) return p;
      rest.unshift(path.basename(d));
    }
  }
}

function realpath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/**
 * fetch refuses a URL with user info, so `https://user:pass@host/` becomes Basic authentication
 * (as a browser or curl would send it), unless the definition sets its own authorization header.
 */
function credentialsAsHeader(
  url: string,
  headers: Record<string, string>,
): { url: string; headers: Record<string, string> } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, headers };
  }
  if (!parsed.username && !parsed.password) return { url, headers };
  const userInfo = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  const hasAuthorization = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
  if (hasAuthorization) return { url: parsed.href, headers };
  return {
    url: parsed.href,
    headers: merged(headers, { authorization: `Basic ${Buffer.from(userInfo).toString('base64')}` }),
  };
}
