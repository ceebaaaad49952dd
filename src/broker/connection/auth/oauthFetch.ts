// The fetch every request of a sign-in goes through: discovery (protected resource and
// authorization server metadata), client registration and the token endpoint. Their addresses
// come from the remote server's own answers, so a hostile server chooses them; this is where the
// broker stops being its messenger:
//   - only https:, or http: on this computer, and never with a user name or password in the address;
//   - a server on the internet cannot send these requests to this computer or the local network
//     (loopback, private, link-local such as a cloud's metadata service): checked on the addresses
//     the name resolves to before each request (a name that changes its answer between this check
//     and the connection is not caught: the check is against a server's metadata, not DNS rebinding);
//   - redirects are not followed here (the SDK follows those within one origin, each through this);
//   - every answer is read whole, at most OAUTH_ANSWER_LIMIT bytes, within OAUTH_REQUEST_TIMEOUT_MS.
import * as dns from 'node:dns';
import { webAddressProblem, zoneOfAddress, isLoopbackHost, type AddressZone } from '../../../registry/webAddress';
import { readCappedBody, shownUrl } from '../../shared/cappedBody';
import { merged } from '../../shared/objects';

/** Metadata, registration and token answers are a few KB; a megabyte is already generous. */
export const OAUTH_ANSWER_LIMIT = 1024 * 1024;
export const OAUTH_REQUEST_TIMEOUT_MS = 30_000;

/** A host's addresses, as the system resolves them. */
export type Lookup = (hostname: string) => Promise<string[]>;

const systemLookup: Lookup = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** A request the broker will not make for a sign-in. Not a TypeError: the SDK reads those as CORS failures and moves on. */
export class OAuthRequestRefused extends Error {}

/** Where a host is: an address's own zone; a name's least public address (a name that cannot be resolved counts as public). */
export async function zoneOfHost(hostname: string, lookup: Lookup = systemLookup): Promise<AddressZone> {
  if (isLoopbackHost(hostname)) return 'loopback';
  const literal = zoneOfAddress(hostname);
  if (literal) return literal;
  let addresses: string[];
  try {
    addresses = await lookup(hostname.replace(/\.$/, ''));
  } catch {
    return 'public'; // the request itself then fails to connect, with the resolver's own error
  }
  const zones = addresses.map((a) => zoneOfAddress(a) ?? 'public');
  if (zones.includes('loopback')) return 'loopback';
  if (zones.includes('local-network')) return 'local-network';
  return 'public';
}

/** Pure: why the broker must not send a sign-in request to `target` for a server in `serverZone`. */
export function oauthTargetProblem(serverZone: AddressZone, target: URL, targetZone: AddressZone): string | undefined {
  const web = webAddressProblem(target.href);
  if (web) return web;
  if (serverZone === 'public' && targetZone !== 'public') {
    const where = targetZone === 'loopback' ? 'this computer' : 'the local network';
    return `${target.host} is on ${where}, and a server on the internet may not send the broker's requests there`;
  }
  return undefined;
}

/** Statuses whose Response must not have a body. */
const NULL_BODY = new Set([204, 205, 304]);

export interface OAuthFetchOptions {
  lookup?: Lookup;
  limit?: number;
  timeoutMs?: number;
  base?: typeof fetch;
}

/** The fetch for the sign-in requests of the server at `serverUrl` (see the header). */
export function oauthFetch(serverUrl: string, opts: OAuthFetchOptions = {}): typeof fetch {
  const lookup = opts.lookup ?? systemLookup;
  const limit = opts.limit ?? OAUTH_ANSWER_LIMIT;
  const timeoutMs = opts.timeoutMs ?? OAUTH_REQUEST_TIMEOUT_MS;
  const base = opts.base ?? fetch;
  let serverZone: Promise<AddressZone> | undefined;
  return async (input, init) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    serverZone ??= zoneOfHost(new URL(serverUrl).hostname, lookup);
    const problem = oauthTargetProblem(await serverZone, target, await zoneOfHost(target.hostname, lookup));
    if (problem) throw new OAuthRequestRefused(`the sign-in request to ${shownUrl(target)} is not sent: ${problem}`);
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    try {
      const res = await base(input, merged(init, { redirect: 'manual', signal }));
      const body = await readCappedBody(res, limit, target, (m) => new OAuthRequestRefused(m));
      return new Response(NULL_BODY.has(res.status) ? null : body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    } catch (err) {
      if (deadline.aborted && !init?.signal?.aborted) {
        const limitText = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
        throw new OAuthRequestRefused(`${shownUrl(target)} did not answer within ${limitText}`);
      }
      throw err;
    }
  };
}
