// The raw client of the benchmarks: MCP over node:http on one keep-alive connection, no SDK client
// in the way, so what is measured is the server's cost per call and not the client's. Used for the
// broker's raw row in `npm run bench` (section 1) and by bench/compare.mjs.
import http from 'node:http';

export const RAW_ARGS = { text: 'hello' };

/** A JSON POST on one keep-alive socket; resolves the parsed body and the response headers. */
export function poster(url, headers) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (message) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers() },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ body: text ? JSON.parse(text) : undefined, headers: res.headers, status: res.statusCode });
            } catch (err) {
              reject(new Error(`not JSON (${res.statusCode}): ${text.slice(0, 200)} (${err.message})`));
            }
          });
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(message));
    });
  return { post, close: () => agent.destroy() };
}

/** The raw client on a broker: one session opened by hand, then bare tools/call POSTs. */
export async function rawSession(broker, args = RAW_ARGS) {
  const opened = { session: undefined };
  const { post, close } = poster(broker.url, () => ({
    authorization: `Bearer ${broker.token}`,
    ...(opened.session ? { 'mcp-session-id': opened.session, 'mcp-protocol-version': '2025-11-25' } : {}),
  }));
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'compare', version: '1' } },
  });
  opened.session = init.headers['mcp-session-id'];
  if (!opened.session) throw new Error(`no session: ${JSON.stringify(init.body)}`);
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 0;
  const call = async () => {
    const r = await post({
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: { name: broker.echo, arguments: args },
    });
    if (!r.body?.result) throw new Error(`call failed: ${JSON.stringify(r.body)}`);
  };
  return { call, close };
}

/**
 * The raw client of the 2026-07-28 revision: no session, each tools/call POST carries the caller's
 * version and capabilities in `_meta` and the Mcp-Method/Mcp-Name headers that mirror the body.
 */
export function rawStateless(broker, args = RAW_ARGS) {
  const version = '2026-07-28';
  const { post, close } = poster(broker.url, () => ({
    authorization: `Bearer ${broker.token}`,
    'mcp-protocol-version': version,
    'mcp-method': 'tools/call',
    'mcp-name': broker.echo,
  }));
  const meta = {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  let id = 0;
  const call = async () => {
    const r = await post({
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: { name: broker.echo, arguments: args, _meta: meta },
    });
    if (!r.body?.result) throw new Error(`call failed: ${JSON.stringify(r.body)}`);
  };
  return { call, close };
}
