// What stdio and remote connections share: an SDK client for the handshake, the lists and the
// server's notifications, and paginated listing that survives a server repeating its cursor.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  TaskStatusNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';
import { sharedSchemaValidator } from '../shared/schemaValidator';
import type { ConnectedInfo, ConnectionEvents } from './connection';
import { BROKER_CLIENT_CAPABILITIES, routeServerRequests, type CallsInFlight } from './serverRequests';
import { listAllPages } from './listPages';

/** Results are checked by the downstream client; re-validating them here would only cost time. */
export const AnyResult = z.looseObject({});

/**
 * An SDK client that reports the server's list changes, resource updates and log messages, and
 * hands the requests the server sends its client to `events.serverRequest` (`calls`: the calls in
 * flight, their callers for a request whose own call is not known, and their timers to pause).
 */
export function createSdkClient(events: ConnectionEvents, calls: CallsInFlight): Client {
  const client = new Client(
    { name: 'mcp-switchboard', version: '0.1.0' },
    // Only what someone will answer: a probe's connection has no callers to ask.
    {
      capabilities: events.serverRequest ? (events.clientCapabilities ?? BROKER_CLIENT_CAPABILITIES) : {},
      jsonSchemaValidator: sharedSchemaValidator,
    },
  );
  routeServerRequests(client, () => events.serverRequest, calls);
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => events.toolsChanged());
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => events.promptsChanged());
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => events.resourcesChanged());
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => events.resourceUpdated(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => events.log(n.params as JsonObject));
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => events.taskStatus?.(n.params as JsonObject));
  return client;
}

export function connectedInfo(client: Client): ConnectedInfo {
  const version = client.getServerVersion();
  return {
    serverName: version?.name,
    serverVersion: version?.version,
    instructions: client.getInstructions(),
    capabilities: (client.getServerCapabilities() ?? {}) as JsonObject,
    // The version the handshake settled on, as the transport was told it (HTTP, or the probed stdio).
    protocol: (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion,
  };
}

/** The list methods of a connection, over its SDK client; a server lists only what it declared. */
export abstract class SdkSession {
  protected constructor(
    protected readonly client: Client,
    readonly info: ConnectedInfo,
  ) {}

  private listAll<T>(method: string, key: string, timeoutMs: number): Promise<T[]> {
    return listAllPages<T>(
      async (params) =>
        (await this.client.request({ method, params } as never, AnyResult, { timeout: timeoutMs })) as Record<
          string,
          unknown
        >,
      key,
    );
  }

  listTools(timeoutMs: number): Promise<Tool[]> {
    if (!this.info.capabilities.tools) return Promise.resolve([]);
    return this.listAll<Tool>('tools/list', 'tools', timeoutMs);
  }
  listPrompts(timeoutMs: number): Promise<Prompt[]> {
    if (!this.info.capabilities.prompts) return Promise.resolve([]);
    return this.listAll<Prompt>('prompts/list', 'prompts', timeoutMs);
  }
  listResources(timeoutMs: number): Promise<Resource[]> {
    if (!this.info.capabilities.resources) return Promise.resolve([]);
    return this.listAll<Resource>('resources/list', 'resources', timeoutMs);
  }
  notifyRootsChanged(): Promise<void> {
    return this.client.sendRootsListChanged();
  }
  listResourceTemplates(timeoutMs: number): Promise<ResourceTemplate[]> {
    if (!this.info.capabilities.resources) return Promise.resolve([]);
    // Templates are optional even for a server with resources: a failure means "none".
    return this.listAll<ResourceTemplate>('resources/templates/list', 'resourceTemplates', timeoutMs).catch(() => []);
  }
}

/** The SDK's own timeout of a request (not an upstream's error that happens to use the same code). */
export function isSdkTimeout(err: unknown): boolean {
  if (!(err instanceof McpError) || err.code !== ErrorCode.RequestTimeout) return false;
  const data = err.data as { timeout?: unknown } | undefined;
  return typeof data?.timeout === 'number';
}
