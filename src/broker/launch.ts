// The one launch path: a server definition and the workspace root become what to run (or reach),
// with the environment its grants allow, the sandbox wrapper, and the redaction of its secrets.
// Start, restart and probe all go through here, so none of them can drift from the others.
import * as path from 'node:path';
import type { ServerDef } from '../registry/schema';
import type { UpstreamLaunch } from './connection/connection';
import { buildEnvironment } from './environment';
import { Redactor, urlSecretValues } from './redact';
import { describeEnforcement, networkIsolationPrefix, type Enforcement } from './sandbox';

export interface LaunchPlan {
  launch: UpstreamLaunch;
  enforcement: Enforcement;
  /** Names (never values) of variables withheld for want of the `secrets` grant. */
  withheld: string[];
  /** Scrubs the server's secret values (envFile, resolved references, headers, URL credentials) from text. */
  redactor: Redactor;
}

export interface LaunchOptions {
  /** The broker's environment (process.env unless a test passes its own). */
  parentEnv?: NodeJS.ProcessEnv;
  /** The network sandbox prefix; found once by `networkIsolationPrefix()` unless given. */
  networkIsolation?: string[] | null;
}

/** Throws, with what to fix, when the definition cannot be launched (an unreadable envFile). */
export function planLaunch(def: ServerDef, root: string, opts: LaunchOptions = {}): LaunchPlan {
  if (def.transport !== 'stdio') {
    const enforcement = describeEnforcement(def.transport, def.grants, null);
    const launch = { transport: def.transport, ...credentialsAsHeader(def.url!, def.headers) };
    // Credentials in the URL (user info, `?api_key=`) are as secret as an authorization header.
    const redactor = new Redactor([...Object.values(launch.headers), ...urlSecretValues(def.url!)]);
    return { launch, enforcement, withheld: [], redactor };
  }
  const isolation = def.grants.includes('network')
    ? null
    : 'networkIsolation' in opts
      ? (opts.networkIsolation ?? null)
      : networkIsolationPrefix();
  const enforcement = describeEnforcement(def.transport, def.grants, isolation);
  const built = buildEnvironment({
    root,
    env: def.env,
    envFile: def.envFile,
    grants: def.grants,
    parentEnv: opts.parentEnv,
  });
  const launch: UpstreamLaunch = {
    transport: 'stdio',
    command: def.command!,
    args: def.args,
    cwd: def.cwd ? path.resolve(root, def.cwd) : root,
    env: built.env,
    wrapper: enforcement.network === 'enforced' && isolation ? isolation : undefined,
  };
  return { launch, enforcement, withheld: built.withheld, redactor: new Redactor(built.secretValues) };
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
    headers: { ...headers, authorization: `Basic ${Buffer.from(userInfo).toString('base64')}` },
  };
}
