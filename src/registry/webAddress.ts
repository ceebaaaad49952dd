// Web addresses that arrive from elsewhere (an authorization server's metadata, a remote server's
// answer) before the broker fetches them or hands them to a browser: which are web pages at all,
// and which point at this computer or its local network. Pure: the CLI, the broker and the
// extension ask the same questions and get the same answers.
import { BlockList, isIP } from 'node:net';

/** Where an address is, as far as a request to it is concerned. */
export type AddressZone = 'loopback' | 'local-network' | 'public';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Addresses that are not on the internet: this network, private ranges (RFC 1918, carrier-grade
 * NAT, IPv6 unique-local), link-local (where cloud metadata services answer), benchmarking,
 * multicast and reserved. IPv4-mapped IPv6 addresses match their IPv4 rule (BlockList does that).
 */
const LOCAL_NETWORK = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  LOCAL_NETWORK.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  LOCAL_NETWORK.addSubnet(net, bits, 'ipv6');
}

/** `[::1]` → `::1`; `Example.COM.` → `example.com`. */
function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
}

/** The zone of an IP address; undefined for a name (it must be resolved first). */
export function zoneOfAddress(address: string): AddressZone | undefined {
  const ip = bareHost(address);
  const family = isIP(ip);
  if (family === 0) return undefined;
  const kind = family === 4 ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(ip, kind)) return 'loopback';
  if (LOCAL_NETWORK.check(ip, kind)) return 'local-network';
  return 'public';
}

/** `localhost` and its subdomains (RFC 6761), 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return zoneOfAddress(host) === 'loopback';
}

/**
 * Why `raw` must not be opened in a browser or fetched as a sign-in endpoint, or undefined when it
 * may: only https:, or http: to this computer (a development server), without a user name or
 * password in it (`https://accounts.example.com@evil.test/` reads as one host and goes to another).
 */
export function webAddressProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `'${raw.slice(0, 200)}' is not a web address`;
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    return `${url.origin} is plain http: on another computer; only https: is accepted there (http: only on this computer)`;
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `'${url.protocol}' addresses are not web pages (only https:, or http: on this computer, are accepted)`;
  if (url.username || url.password) return `${url.host} is given with a user name or password in the address`;
  return undefined;
}
