// A server's network allow-list: which host[:port] its proxy lets it reach. Pure, unit-tested.

export interface AllowRule {
  /** Lowercase host name or IP literal (IPv6 without brackets); for a wildcard, the suffix after `*.`. */
  host: string;
  wildcard: boolean;
  /** Without a port, the web's ports: 80 and 443. */
  ports: readonly number[];
}

const WEB_PORTS = [80, 443];

/** `api.github.com`, `*.example.com`, `127.0.0.1:8080`, `[::1]:8080` → a rule (the schema checked the form). */
export function parseAllowEntry(entry: string): AllowRule {
  let text = entry.trim().toLowerCase();
  let ports = WEB_PORTS;
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1], wildcard: false, ports: bracketed[2] ? [Number(bracketed[2])] : ports };
  const withPort = /^(.*):(\d+)$/.exec(text);
  if (withPort) {
    text = withPort[1];
    ports = [Number(withPort[2])];
  }
  const wildcard = text.startsWith('*.');
  return { host: normaliseHost(wildcard ? text.slice(2) : text), wildcard, ports };
}

/** Lowercase, without a trailing dot or IPv6 brackets. */
export function normaliseHost(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** Whether `host:port` is admitted: `*.example.com` admits every subdomain, not example.com itself. */
export function isAllowed(rules: readonly AllowRule[], host: string, port: number): boolean {
  const h = normaliseHost(host);
  return rules.some(
    (r) =>
      r.ports.includes(port) && (r.wildcard ? h.endsWith(`.${r.host}`) && h.length > r.host.length + 1 : h === r.host),
  );
}
