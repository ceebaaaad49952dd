// One client process of a throughput cell (bench/run.mjs): holds some of the cell's sessions and
// keeps one tools/call in flight on each. A cell's sessions are spread over several of these, so
// that 8 or 32 sessions measure the servers rather than one client process at a full core.
//
// Protocol, one JSON object per line: stdin {cmd: 'connect', key, spec, sessions}, {cmd: 'run', key,
// sessions, durationMs, cap, tool, args, startAt} (startAt: Date.now() to start at, so every process
// starts together), {cmd: 'close', key}; stdout {ok: 'connected', pids}, {ok: 'ran', calls, errors,
// lat, cpuUs, elapsedMs}, {ok: 'closed'}, {error}. `key` names the system: one process holds the
// sessions of every system, interleaved as the cells are. Every connection uses the same SDK Client
// as the in-process sessions of the bench, unless its spec says `raw`: then a session is opened by
// hand and each call is a bare POST on its own keep-alive socket (RawSession), so that the cell
// measures the servers and not the SDK client's own CPU (~70% of a cell's at 8 sessions).
import http from 'node:http';
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// The SDK's HTTP transport adds one abort listener per request to a session-long signal (see
// docs/benchmarks.md, "Client-side note"): counted by the parent, not printed here.
process.on('warning', () => {});

/** Sessions and the server processes they started (direct stdio), per system key. */
const systems = new Map();
const of = (key) => systems.get(key) ?? systems.set(key, { clients: [], pids: [] }).get(key);
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');

function transportOf(spec) {
  const requestInit = spec.headers ? { headers: spec.headers } : undefined;
  if (spec.transport === 'stdio')
    return new StdioClientTransport({ command: spec.command, args: spec.args, cwd: spec.cwd, stderr: 'ignore' });
  if (spec.transport === 'sse') return new SSEClientTransport(new URL(spec.url), { requestInit });
  return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit });
}

/**
 * A 2025-11-25 session over node:http without the SDK: initialize, notifications/initialized, then
 * tools/call POSTs on one keep-alive socket. Answers may come as JSON or as a one-event SSE stream
 * (the SDK's own HTTP server answers that way); either is read whole and parsed.
 */
class RawSession {
  constructor(spec) {
    this.url = new URL(spec.url);
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...spec.headers,
    };
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    this.id = 0;
  }
  post(message) {
    return new Promise((resolve, reject) => {
      const req = http.request(this.url, { method: 'POST', agent: this.agent, headers: this.headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const session = res.headers['mcp-session-id'];
          if (session && !this.headers['mcp-session-id']) {
            this.headers['mcp-session-id'] = session;
            this.headers['mcp-protocol-version'] = '2025-11-25';
          }
          if (!text) return resolve(undefined);
          try {
            const json = (res.headers['content-type'] ?? '').startsWith('text/event-stream')
              ? text
                  .split('\n')
                  .filter((l) => l.startsWith('data:'))
                  .map((l) => JSON.parse(l.slice(5)))
                  .find((m) => m.id !== undefined)
              : JSON.parse(text);
            resolve(json);
          } catch (err) {
            reject(new Error(`not JSON (${res.statusCode}): ${text.slice(0, 200)} (${err.message})`));
          }
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify(message));
    });
  }
  async connect() {
    const init = await this.post({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'switchboard-bench-raw', version: '1' },
      },
    });
    if (!init?.result || !this.headers['mcp-session-id']) throw new Error(`no session: ${JSON.stringify(init)}`);
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
  async callTool(params) {
    const r = await this.post({ jsonrpc: '2.0', id: ++this.id, method: 'tools/call', params });
    if (!r?.result || r.result.isError) throw new Error(`call failed: ${JSON.stringify(r)}`);
    return r.result;
  }
  async close() {
    this.agent.destroy();
  }
}

async function connect(key, spec, n) {
  const { clients, pids } = of(key);
  if (spec.raw) {
    while (clients.length < n) {
      const session = new RawSession(spec);
      await session.connect();
      clients.push(session);
    }
    return pids;
  }
  while (clients.length < n) {
    const transport = transportOf(spec);
    const client = new Client({ name: 'switchboard-bench', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport, { timeout: 30_000 });
    if (transport.pid) pids.push(transport.pid);
    clients.push(client);
  }
  return pids;
}

async function run({ key, sessions, durationMs, cap, tool, args, startAt }) {
  const { clients } = of(key);
  const wait = startAt - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const c0 = process.cpuUsage();
  const lat = [];
  let issued = 0;
  let errors = 0;
  let firstError;
  const t0 = performance.now();
  const end = t0 + durationMs;
  await Promise.all(
    clients.slice(0, sessions).map(async (client) => {
      while (performance.now() < end && issued < cap) {
        issued++;
        const t = performance.now();
        try {
          await client.callTool({ name: tool, arguments: args });
          lat.push(performance.now() - t);
        } catch (err) {
          firstError ??= String(err?.message ?? err).slice(0, 300);
          errors++;
        }
      }
    }),
  );
  const c = process.cpuUsage(c0);
  return { calls: lat.length, errors, firstError, lat, cpuUs: c.user + c.system, elapsedMs: performance.now() - t0 };
}

// The bench ends its client processes by closing their stdin (sessions of every system closed before).
process.stdin.on('end', () => process.exit(0));
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  const answer =
    m.cmd === 'connect'
      ? connect(m.key, m.spec, m.sessions).then((pids) => ({ ok: 'connected', pids }))
      : m.cmd === 'run'
        ? run(m).then((r) => ({ ok: 'ran', ...r }))
        : Promise.allSettled(of(m.key).clients.map((c) => c.close())).then(() => {
            systems.delete(m.key);
            return { ok: 'closed' };
          });
  answer.then(send, (err) => send({ error: String(err?.stack ?? err) }));
});
