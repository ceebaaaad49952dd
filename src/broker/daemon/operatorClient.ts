// The operator's MCP client to a running broker (the CLI's status/approve/logs, and the editor):
// it runs control operations (controlApi.ts) as facade tools with the operator token, through the one
// SDK client wrapper.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ControlOperation, FacadeToolName, ParamsOf, ResultOf } from '../control/controlApi';
import { liveRecord } from './discovery';
import { LogRing } from '../shared/logRing';
import { ERROR_META_KEY, ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import { runtimePaths } from '../shared/userState';
import type { BrokerRecord } from './runtime';
import { connectUpstream } from '../connection/connect';
import type { ConnectionEvents, UpstreamConnection } from '../connection/connection';
import type { ServerRequest } from '../connection/serverRequests';
import { EDITOR_CAPABILITY } from '../supervision/editorLink';

/**
 * What the editor declares: it answers form and url elicitation and sampling (no tools) for the
 * callers that cannot, and marks its session as the editor's (only the operator token may).
 */
export const EDITOR_CLIENT_CAPABILITIES = {
  elicitation: { form: {}, url: {} },
  sampling: {},
  experimental: { [EDITOR_CAPABILITY]: {} },
};

export interface OperatorOptions extends Partial<ConnectionEvents> {
  /** Makes this session the editor: it answers elicitation and sampling for callers that cannot. */
  answerAsEditor?: (request: ServerRequest) => Promise<JsonObject>;
  /** One server's endpoint (`/servers/<name>/mcp`) instead of the aggregated one: its own names, nothing else. */
  server?: string;
}

export class OperatorClient {
  private constructor(
    private readonly client: UpstreamConnection,
    readonly record: BrokerRecord,
  ) {}

  static async connect(record: BrokerRecord, options: OperatorOptions = {}): Promise<OperatorClient> {
    const token = fs.readFileSync(record.operatorTokenFile, 'utf8').trim();
    const noop = (): void => undefined;
    const { answerAsEditor, server, ...events } = options;
    const url = server ? new URL(`/servers/${encodeURIComponent(server)}/mcp`, record.url).toString() : record.url;
    const editor: Partial<ConnectionEvents> = answerAsEditor
      ? { serverRequest: (request) => answerAsEditor(request), clientCapabilities: EDITOR_CLIENT_CAPABILITIES }
      : {};
    const client = await connectUpstream(
      // A session, not the 2026-07-28 stateless era: the editor answers on its GET stream.
      { transport: 'http', url, headers: { authorization: `Bearer ${token}` }, session: true },
      {
        toolsChanged: noop,
        promptsChanged: noop,
        resourcesChanged: noop,
        resourceUpdated: noop,
        log: noop,
        lost: noop,
        ...events,
        ...editor,
      },
      new LogRing(50),
      10_000,
    );
    return new OperatorClient(client, record);
  }

  /**
   * Runs a control operation (`list_servers` → the tool `switchboard__list_servers`). A failed operation
   * throws an McpFailure with the code the broker gave it (Forbidden, InvalidParams, an internal error…).
   */
  async call<K extends ControlOperation>(operation: K, params: ParamsOf<K>, timeoutMs = 60_000): Promise<ResultOf<K>> {
    const name: FacadeToolName<K> = `switchboard__${operation}`;
    const result = (await this.client.request('tools/call', { name, arguments: params }, { timeoutMs })) as {
      isError?: boolean;
      structuredContent?: JsonObject;
      content?: { text?: string }[];
      _meta?: JsonObject;
    };
    if (result.isError) {
      const error = (result._meta?.[ERROR_META_KEY] ?? {}) as { code?: number; data?: unknown };
      const text = result.content?.map((c) => c.text).join('\n') || `${operation} failed`;
      throw new McpFailure(typeof error.code === 'number' ? error.code : ErrorCodes.InternalError, text, error.data);
    }
    // The facade's `run` for this operation is typed to return exactly this (controlApi.ts).
    return (result.structuredContent ?? {}) as ResultOf<K>;
  }

  request(method: string, params: JsonObject, timeoutMs = 30_000): Promise<JsonObject> {
    return this.client.request(method, params, { timeoutMs });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

export async function findBroker(root: string): Promise<BrokerRecord> {
  const abs = path.resolve(root);
  const record = await liveRecord(runtimePaths(abs), abs);
  if (!record) throw new Error(`no broker is running for ${abs}; start one with: switchboard serve --root ${abs}`);
  return record;
}
