// The router and the access policy over in-memory served servers (no processes): who is calling,
// what scopes and tool profile allow, per-server vs aggregated routing, and what is audited.
import * as assert from 'node:assert/strict';
import { AccessPolicy, OPERATOR } from '../../../src/broker/routing/accessPolicy';
import { Catalog, FACADE_NAMESPACE } from '../../../src/broker/catalog/catalog';
import type { JsonObject } from '../../../src/broker/shared/mcpTypes';
import { facadeToolScope } from '../../../src/broker/control/facade';
import { BrokerRouter } from '../../../src/broker/routing/router';
import type { Identity, RequestExtra, SessionContext } from '../../../src/broker/routing/requestContext';
import type { ServedServer } from '../../../src/broker/routing/servedServer';
import type { ClientDef } from '../../../src/registry/schema';
import { memoryServer } from '../catalog/catalog.test';

const extra: RequestExtra = { signal: new AbortController().signal, sendProgress: () => undefined };

function client(name: string, def: Partial<ClientDef> = {}): ClientDef {
  return { name, mcp_allow: ['read'], ...def } as ClientDef;
}

function setup(clients: ClientDef[]) {
  const declared = new Map(clients.map((c) => [c.name, c] as const));
  const tokens = new Map([
    ['tok-reader', 'reader'],
    ['tok-writer', 'writer'],
    ['tok-operator-named', 'operator'],
    ['tok-gone', 'gone'],
  ]);
  const access = new AccessPolicy({
    operatorToken: 'tok-the-operator',
    clientOf: (t) => tokens.get(t),
    clients: () => declared,
  });
  const servers: ServedServer[] = [
    memoryServer(FACADE_NAMESPACE, { tools: ['list_servers'], kind: 'control' }),
    memoryServer('echo', { tools: ['echo', 'add'], prompts: ['greet'], resources: ['echo://readme'] }),
  ];
  const catalog = new Catalog();
  catalog.rebuild(servers);
  const audit: JsonObject[] = [];
  const router = new BrokerRouter({
    catalog,
    access,
    servedServer: (name) => servers.find((s) => s.name === name),
    isUpstream: (name) => name !== FACADE_NAMESPACE && servers.some((s) => s.name === name),
    settleCatalog: () => undefined,
    audit: (entry) => void audit.push(entry),
    facadeToolScope,
    toolsChanged: () => undefined,
  });
  return { access, router, audit, declared };
}

let sessions = 0;
const session = (identity: Identity, server?: string): SessionContext => ({
  sessionId: `s${++sessions}`,
  identity,
  server,
});
const names = (tools: { name: string }[]): string[] => tools.map((t) => t.name);

describe('access policy', () => {
  it('knows the operator by its token and a client only while it is declared', () => {
    const { access, declared } = setup([client('reader'), client('operator')]);
    assert.equal(access.authenticate('tok-the-operator'), OPERATOR);
    assert.deepEqual(access.authenticate('tok-reader'), { client: 'reader', operator: false });
    assert.deepEqual(
      access.authenticate('tok-operator-named'),
      { client: 'operator', operator: false },
      'a client that calls itself operator is still a client',
    );
    assert.equal(access.authenticate('tok-gone'), undefined, 'a token of an undeclared client counts for nothing');
    assert.equal(access.authenticate('nonsense'), undefined);
    declared.delete('reader');
    assert.equal(access.authenticate('tok-reader'), undefined, 'removing the client ends its token at once');
  });

  it('gives scopes from the registry as it is now, and the operator every scope', () => {
    const { access, declared } = setup([client('reader'), client('writer', { mcp_allow: ['read', 'write'] })]);
    const reader = { client: 'reader', operator: false };
    assert.deepEqual(access.scopes(OPERATOR), ['read', 'write']);
    assert.ok(access.may(reader, 'read') && !access.may(reader, 'write'));
    assert.ok(access.may({ client: 'writer', operator: false }, 'write'));
    assert.deepEqual(access.scopes({ client: 'nobody', operator: false }), []);
    declared.set('reader', client('reader', { mcp_allow: ['read', 'write'] }));
    assert.ok(access.may(reader, 'write'), 'an edit of mcp_allow applies without reconnecting');
  });

  it('judges tools by their namespaced name and never hides the facade', () => {
    const { access } = setup([
      client('reader', { tools: { deny: ['echo__add', 'switchboard__*'] } }),
      client('open', { tools: { allow: [], deny: [] } }),
    ]);
    const reader = { client: 'reader', operator: false };
    assert.ok(!access.allowsTool(reader, 'echo', 'echo__add'));
    assert.ok(access.allowsTool(reader, 'echo', 'echo__echo'));
    assert.ok(access.allowsTool(reader, FACADE_NAMESPACE, 'switchboard__list_servers'), 'facade tools check scopes');
    assert.equal(access.profileOf({ client: 'open', operator: false }), undefined, 'empty lists are no profile');
    assert.ok(access.allowsTool(OPERATOR, 'echo', 'echo__add'), 'the operator has no profile');
  });
});

describe('router', () => {
  const readerWithProfile = () => setup([client('reader', { tools: { deny: ['echo__add'] } })]);
  const reader: Identity = { client: 'reader', operator: false };

  it('applies the tool profile on the aggregated endpoint, for list and call', async () => {
    const { router } = readerWithProfile();
    const ctx = session(reader);
    assert.deepEqual(names(router.listTools(ctx)), ['switchboard__list_servers', 'echo__echo']);
    assert.equal(router.listTools(ctx), router.listTools(ctx), 'the narrowed list is cached');
    const denied = router.callTool(ctx, 'echo__add', {}, undefined, extra);
    await assert.rejects(denied, /not in client 'reader''s tool profile/);
    const ok = await router.callTool(ctx, 'echo__echo', {}, undefined, extra);
    assert.match(JSON.stringify(ok), /echo:call echo/);
  });

  it('applies the tool profile over namespaced names on the per-server endpoint too', async () => {
    const { router } = readerWithProfile();
    const ctx = session(reader, 'echo');
    assert.deepEqual(names(router.listTools(ctx)), ['echo'], 'add is echo__add to the profile');
    await assert.rejects(router.callTool(ctx, 'add', {}, undefined, extra), /tool profile/);
    assert.match(JSON.stringify(await router.callTool(ctx, 'echo', {}, undefined, extra)), /echo:call echo/);
    assert.deepEqual(names(router.listTools(session(OPERATOR, 'echo'))), ['echo', 'add']);
  });

  it("routes per-server sessions under the server's own names and serves no endpoint for the facade", async () => {
    const { router } = setup([client('reader')]);
    const ctx = session(reader, 'echo');
    assert.ok(router.hasServer('echo'));
    assert.ok(!router.hasServer(FACADE_NAMESPACE));
    assert.ok(!router.hasServer('nosuch'));
    const prefixed = router.callTool(ctx, 'echo__echo', {}, undefined, extra);
    await assert.rejects(prefixed, /Unknown tool 'echo__echo' on server 'echo'/);
    assert.deepEqual(names(router.listPrompts(ctx)), ['greet']);
    assert.deepEqual(names(router.listPrompts(session(reader))), ['echo__greet']);
    assert.match(JSON.stringify(await router.getPrompt(ctx, 'greet', {}, extra)), /prompt greet/);
    const read = await router.readResource(session(reader), 'echo://readme', extra);
    assert.match(JSON.stringify(read), /read echo:\/\/readme/);
    await assert.rejects(router.readResource(session(reader), 'none://x', extra), /Resource not found/);
    await assert.rejects(router.callTool(session(reader), 'nosuch__tool', {}, undefined, extra), /Unknown tool/);
  });

  it('audits every tool call with the caller, its operator flag and the outcome, never the arguments', async () => {
    const { router, audit } = readerWithProfile();
    await router.callTool(session(reader), 'echo__echo', { secret: 'hunter2' }, undefined, extra);
    await router.callTool(session(OPERATOR), 'switchboard__list_servers', {}, undefined, extra);
    await router.callTool(session(reader), 'echo__add', {}, undefined, extra).catch(() => undefined);
    assert.equal(audit.length, 3);
    assert.deepEqual(
      { ...audit[0], ms: 0 },
      {
        client: 'reader',
        operator: false,
        event: 'call',
        server: 'echo',
        tool: 'echo',
        ms: 0,
        outcome: 'ok',
      },
    );
    assert.deepEqual(
      { ...audit[1], ms: 0 },
      {
        client: 'operator',
        operator: true,
        event: 'facade',
        tool: 'switchboard__list_servers',
        ms: 0,
        outcome: 'ok',
      },
    );
    assert.equal(audit[2].outcome, 'error');
    assert.match(String(audit[2].error), /tool profile/);
    assert.ok(!JSON.stringify(audit).includes('hunter2'));
  });
});
