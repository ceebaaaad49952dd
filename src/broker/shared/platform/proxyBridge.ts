// Inside a sandbox without a network, the broker's proxy is a Unix socket; proxy-aware clients want
// host:port. This tiny bridge, run by Node inside the sandbox before the server, listens on the
// sandbox's own loopback and forwards every connection to the socket, then runs the server.

/** The port the bridge listens on inside the sandbox (its own network namespace: nothing else is there). */
export const BRIDGE_PORT = 3128;

// Plain CommonJS for `node -e`: argv is [socket, port, command, ...args]. It passes signals on and
// exits as the server does, so stopping and crash detection see the server, not the bridge.
const BRIDGE_SOURCE = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socketPath, port, command, ...args] = process.argv.slice(1);
delete process.env.ELECTRON_RUN_AS_NODE;
const server = net.createServer((c) => {
  const u = net.connect(socketPath);
  c.on('error', () => u.destroy());
  u.on('error', () => c.destroy());
  c.pipe(u);
  u.pipe(c);
});
server.on('error', (e) => {
  process.stderr.write('switchboard network bridge: ' + e.message + '\\n');
  process.exit(70);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command, args, { stdio: 'inherit' });
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('error', (e) => {
    process.stderr.write('could not start ' + command + ': ' + e.message + '\\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
});
`;

/**
 * What runs the bridge before the command: `node -e <bridge> -- <socket> <port>`. `node` is the
 * broker's own runtime (inside VS Code that is Electron, which runs as Node with ELECTRON_RUN_AS_NODE,
 * set for the bridge only: the bridge removes it before it starts the server).
 */
export function bridgeCommand(execPath: string, socketPath: string, electron: boolean): string[] {
  const env = electron ? ['env', 'ELECTRON_RUN_AS_NODE=1'] : [];
  return [...env, execPath, '-e', BRIDGE_SOURCE, '--', socketPath, String(BRIDGE_PORT)];
}

/** The variables that point proxy-aware clients (curl, Python, Go, Node >= 24's fetch) at the bridge. */
export function proxyEnvironment(): Record<string, string> {
  const url = `http://127.0.0.1:${BRIDGE_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NODE_USE_ENV_PROXY: '1',
  };
}
