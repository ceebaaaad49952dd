// The per-server HTTP(S) proxy behind a network allow-list: it listens on a Unix socket that is the
// sandbox's only way out, and admits CONNECT tunnels and plain-HTTP requests to allow-listed hosts.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAllowed, parseAllowEntry, type AllowRule } from './networkAllow';

/** Longest request head read before a request is refused (a proxy request needs one line and a few headers). */
const MAX_HEAD = 16 * 1024;

export interface ProxyRefusal {
  host: string;
  port: number;
}

export class NetworkProxy {
  private readonly rules: AllowRule[];
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** The directory holding the socket (private to the user); bound into the sandbox at the same path. */
  readonly dir: string;
  readonly socketPath: string;

  constructor(
    allow: readonly string[],
    private readonly onRefused: (refusal: ProxyRefusal) => void,
  ) {
    this.rules = allow.map(parseAllowEntry);
    // Short (a Unix socket path has ~100 bytes); created at open() with mode 0700, failing if it exists.
    this.dir = path.join(os.tmpdir(), `sb-net-${crypto.randomBytes(6).toString('hex')}`);
    this.socketPath = path.join(this.dir, 'proxy.sock');
  }

  /** Creates the private directory and listens; the sandbox is started after this. */
  open(): Promise<void> {
    fs.mkdirSync(this.dir, { mode: 0o700 });
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.accept(socket));
      server.once('error', reject);
      server.listen(this.socketPath, () => {
        server.off('error', reject);
        resolve();
      });
      this.server = server;
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  private accept(client: net.Socket): void {
    this.track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_HEAD) answer(client, 431, 'request head too large');
        return;
      }
      client.off('data', onData);
      client.pause();
      this.route(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4));
    };
    client.on('data', onData);
  }

  private route(client: net.Socket, head: string, rest: Buffer): void {
    const [requestLine, ...headerLines] = head.split('\r\n');
    const [method, target, version] = requestLine.split(' ');
    if (!method || !target || !/^HTTP\/1\.[01]$/.test(version ?? '')) return answer(client, 400, 'not an HTTP request');
    let host: string;
    let port: number;
    let forwardHead: string | undefined;
    if (method === 'CONNECT') {
      const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
      if (!m) return answer(client, 400, 'CONNECT needs host:port');
      host = m[1];
      port = Number(m[2]);
    } else {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return answer(client, 400, 'a proxy request names an absolute http:// URL');
      }
      if (url.protocol !== 'http:') return answer(client, 400, `${url.protocol} is reached through CONNECT`);
      host = url.hostname;
      port = url.port ? Number(url.port) : 80;
      // One request per connection: a kept-alive connection could name another host next.
      const headers = headerLines.filter((l) => !/^(proxy-[a-z-]*|connection|keep-alive)\s*:/i.test(l));
      const lines = [`${method} ${url.pathname}${url.search} ${version}`, ...headers, 'Connection: close', '', ''];
      forwardHead = lines.join('\r\n');
    }
    const bare = host.startsWith('[') ? host.slice(1, -1) : host;
    if (!isAllowed(this.rules, bare, port)) {
      this.onRefused({ host: bare, port });
      return answer(client, 403, `${bare}:${port} is not in this server's network allow-list`);
    }
    const upstream = net.connect({ host: bare, port });
    this.track(upstream);
    upstream.once('connect', () => {
      if (forwardHead === undefined) client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      else upstream.write(forwardHead);
      if (rest.length) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.once('error', (err) => {
      if (!client.destroyed) answer(client, 502, `could not reach ${bare}:${port}: ${(err as Error).message}`);
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.end());
  }
}

function answer(socket: net.Socket, status: number, text: string): void {
  const reason: Record<number, string> = {
    400: 'Bad Request',
    403: 'Forbidden',
    431: 'Request Header Fields Too Large',
    502: 'Bad Gateway',
  };
  const body = `Switchboard network proxy: ${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason[status]}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}` +
      `\r\nConnection: close\r\n\r\n${body}`,
  );
}
