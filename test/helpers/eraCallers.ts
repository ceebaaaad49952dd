// Callers of both protocol eras on the broker's endpoint, as the era-matrix suites set them up: an
// SDK v1 session client and an SDK v2 client pinned to 2026-07-28 (no fallback to initialize), each
// answering an upstream's elicitation so a test can see which caller was asked.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, waitFor } from './broker';

type Json = Record<string, unknown>;

const bearer = (token: string) => ({ requestInit: { headers: { Authorization: `Bearer ${token}` } } });

/** An SDK v2 client pinned to 2026-07-28, connected to `url`. */
export async function connectV2(
  url: string,
  token: string,
  capabilities: Json = {},
  name = 'v2-client',
): Promise<ClientV2> {
  const client = new ClientV2(
    { name, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities },
  );
  await client.connect(new TransportV2(new URL(url), bearer(token)));
  return client;
}

/**
 * An SDK v1 session client ('v1-caller') that accepts every elicitation with the answer 'from v1' and
 * notes the question in `asked` as `v1:<message>`. `beforeConnect` adds the suite's own handlers.
 */
export async function elicitingV1(
  url: string,
  token: string,
  asked: string[],
  beforeConnect: (client: Client) => void = () => undefined,
): Promise<Client> {
  const client = new Client({ name: 'v1-caller', version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(`v1:${req.params.message}`);
    return { action: 'accept', content: { answer: 'from v1' } };
  });
  beforeConnect(client);
  return connectClient(client, url, token);
}

/** The 2026-07-28 counterpart of elicitingV1 ('v2-caller'): answers 'from v2', notes `v2:<message>`. */
export async function elicitingV2(url: string, token: string, asked: string[]): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'v2-caller', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler('elicitation/create', async (req) => {
    asked.push(`v2:${req.params.message}`);
    return { action: 'accept', content: { answer: 'from v2' } };
  });
  await client.connect(new TransportV2(new URL(url), bearer(token)));
  return client;
}

/** Waits until `client` lists every tool of `names` (upstreams join the catalog as they come up). */
export async function waitForTools(client: Client, names: string[], what: string): Promise<void> {
  await waitFor(
    async () => {
      const listed = (await client.listTools()).tools.map((t) => t.name);
      return names.every((n) => listed.includes(n));
    },
    what,
    20_000,
  );
}
