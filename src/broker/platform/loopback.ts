// `localhost` resolves to ::1 first on macOS and on hosts whose /etc/hosts says so, and a client that
// tries only the first address would then miss an endpoint on 127.0.0.1 — or reach whoever squats on
// [::1]:<port> and hand it a bearer token. So the endpoint also answers on [::1] at the same port.
import type * as http from 'node:http';
import * as net from 'node:net';

/** Errors that only mean "this machine has no IPv6 loopback": the IPv4 endpoint serves alone. */
const NO_IPV6 = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT', 'EINVAL']);

/** Only the default 127.0.0.1 binding gets a twin; a host chosen on purpose is left as it is. */
export function wantsIpv6Twin(host: string): boolean {
  return host === '127.0.0.1';
}

export interface Ipv6Twin {
  /** Undefined when listening; else why not, in words for the broker log. */
  unavailable?: string;
  close(): Promise<void>;
}

/**
 * Listens on [::1]:port and hands each connection to `server`, so both addresses share one HTTP
 * server (its timeouts, guards and connection tracking). Never fails the endpoint: without IPv6,
 * or with the port taken on ::1, it says so and the IPv4 endpoint serves alone.
 */
export function listenIpv6Twin(server: http.Server, port: number): Promise<Ipv6Twin> {
  const twin = net.createServer((socket) => server.emit('connection', socket));
  const closed: Ipv6Twin['close'] = () => new Promise((resolve) => twin.close(() => resolve()));
  return new Promise((resolve) => {
    twin.once('error', (err: NodeJS.ErrnoException) => {
      const reason = NO_IPV6.has(err.code ?? '')
        ? 'no IPv6 loopback on this machine; clients must use 127.0.0.1'
        : `[::1]:${port} is in use by another program (${err.code}); clients must use 127.0.0.1, not localhost`;
      resolve({ unavailable: reason, close: () => Promise.resolve() });
    });
    twin.listen({ port, host: '::1', ipv6Only: true }, () => resolve({ close: closed }));
  });
}
