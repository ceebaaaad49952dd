// A 2026-07-28 request over raw HTTP, as the tests that need to see the wire send it: no session,
// the caller's version, capabilities and info in `params._meta`, and the Mcp-Method/Mcp-Name headers
// that mirror the body. (protocol2026Endpoint.test.ts keeps its own sender: it leaves headers out on
// purpose to test the errors.)
import * as http from 'node:http';

type Json = Record<string, unknown>;

export const STATELESS_VERSION = '2026-07-28';

/** The `_meta` a 2026-07-28 caller sends with every request. */
export function envelope(capabilities: Json = {}, clientName = 'raw'): Json {
  return {
    'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1' },
  };
}

export interface StatelessTarget {
  port: number;
  token: string;
  /** A per-server endpoint (`/servers/<name>/mcp`) instead of `/mcp`. */
  server?: string;
}

export interface StatelessReply {
  status: number;
  /** The JSON-RPC answer: the body, or the last event of an SSE answer (progress comes first). */
  message: Json;
}

/**
 * POSTs one request (`message` without jsonrpc and id; `params._meta` as given, see envelope()) on
 * a fresh connection and reads the whole answer.
 */
export function postStateless(target: StatelessTarget, message: Json, id = 1): Promise<StatelessReply> {
  const params = (message.params ?? {}) as Json;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        method: 'POST',
        path: target.server ? `/servers/${target.server}/mcp` : '/mcp',
        agent: false,
        headers: {
          authorization: `Bearer ${target.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': STATELESS_VERSION,
          'mcp-method': String(message.method),
          ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const data = body.startsWith('{')
            ? body
            : (body
                .split('\n')
                .filter((l) => l.startsWith('data: '))
                .pop() ?? '');
          try {
            resolve({ status: res.statusCode ?? 0, message: JSON.parse(data.replace(/^data: /, '')) as Json });
          } catch {
            reject(new Error(`not JSON-RPC (${res.statusCode}): ${body.slice(0, 300)}`));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id, ...message }));
  });
}
