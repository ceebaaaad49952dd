// A server's network allow-list: which host[:port] its proxy lets it reach. Pure, unit-tested.
//
// A host is checked in one canonical form, and the proxy connects to that same form: a name that
// the matcher and the resolver read differently is how an allow-list is bypassed
// (`localhost\0.example.test` ends with `.example.test`, and the resolver stops at the NUL).
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';

export interface AllowRule {
  /** A canonical host (see canonicalHost); for a wildcard, the domain after `*.`. */
  host: string;
  wildcard: boolean;
  /** Without a port, the web's ports: 80 and 443. */
  ports: readonly number[];
}

const WEB_PORTS = [80, 443];

/** One DNS label as hosts are named (letters, digits, `-`, and `_` as some internal names have it). */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * Whether `raw` has a character that never belongs to a host as a proxy request names it: a control
 * byte (NUL, tab, line breaks), space, DEL, or what would make it something else than a host (user
 * info `@`, a path, a query, a fragment, a percent escape, brackets out of place, a backslash).
 */
function hasNonHostCharacter(raw: string): boolean {
  for (const ch of raw) {
    const code = ch.charCodeAt(0);
    if (code <= 0x20 || code === 0x7f || '%@/\\?#[]'.includes(ch)) return true;
  }
  return false;
}

/**
 * The one form of a host the allow-list compares and the proxy connects to, or undefined when `raw`
 * is not a host: an IPv4 address (any notation the URL standard reads, as a dotted quad), an IPv6
 * address (with or without brackets, compressed, lowercase; no zone), or a DNS name converted with
 * IDNA to ASCII, lowercase, without its trailing dot, every label letters, digits, `-` or `_`.
 */
export function canonicalHost(raw: string): string | undefined {
  const bracketed = raw.startsWith('[') && raw.endsWith(']');
  const v6 = bracketed ? raw.slice(1, -1) : raw;
  if (bracketed || v6.includes(':')) {
    // A zone (`fe80::1%eth0`) names an interface of this machine, not a host: refused.
    if (!isIPv6(v6) || v6.includes('%')) return undefined;
    // The URL standard's serialisation: compressed, lowercase (so [0:0::1] and [::1] are one host).
    return new URL(`http://[${v6}]/`).hostname.slice(1, -1);
  }
  if (raw === '' || hasNonHostCharacter(raw)) return undefined;
  const ascii = domainToASCII(raw);
  if (ascii === '') return undefined;
  const host = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  if (isIPv4(host)) return host;
  if (host.length > 253 || !host.split('.').every((label) => LABEL.test(label))) return undefined;
  return host;
}

/** `api.github.com`, `*.example.com`, `127.0.0.1:8080`, `[::1]:8080` → a rule (the schema checked the form). */
export function parseAllowEntry(entry: string): AllowRule {
  let text = entry.trim().toLowerCase();
  let ports = WEB_PORTS;
  const bracketed = /^(\[[0-9a-f:.]+\])(?::(\d+))?$/.exec(text);
  if (bracketed) {
    const host = canonicalHost(bracketed[1]) ?? bracketed[1];
    return { host, wildcard: false, ports: bracketed[2] ? [Number(bracketed[2])] : ports };
  }
  const withPort = /^(.*):(\d+)$/.exec(text);
  if (withPort) {
    text = withPort[1];
    ports = [Number(withPort[2])];
  }
  const wildcard = text.startsWith('*.');
  const name = wildcard ? text.slice(2) : text;
  return { host: canonicalHost(name) ?? name, wildcard, ports };
}

/**
 * Whether `host:port` is admitted. `host` is checked in its canonical form, so anything that is not
 * a host is refused. `*.example.com` admits every subdomain name, not example.com itself, and never an
 * IP address.
 */
export function isAllowed(rules: readonly AllowRule[], host: string, port: number): boolean {
  const h = canonicalHost(host);
  if (h === undefined) return false;
  const ip = isIP(h) !== 0;
  return rules.some(
    (r) =>
      r.ports.includes(port) &&
      (r.wildcard ? !ip && h.endsWith(`.${r.host}`) && h.length > r.host.length + 1 : h === r.host),
  );
}
