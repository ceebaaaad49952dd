// The catalog's pure logic: namespacing, shortening, collisions, the reserved namespace, template
// routing and change detection, over in-memory served servers (no processes).
import * as assert from 'node:assert/strict';
import { Catalog, FACADE_NAMESPACE, namespacedName, templateMatcher } from '../../../src/broker/catalog/catalog';
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from '../../../src/broker/shared/mcpTypes';
import { McpFailure } from '../../../src/broker/shared/mcpTypes';
import type { ServedServer } from '../../../src/broker/routing/servedServer';

export interface ServerLists {
  tools?: string[];
  prompts?: string[];
  resources?: string[];
  templates?: string[];
  allow?: string[];
  deny?: string[];
  available?: boolean;
  kind?: 'upstream' | 'control';
}

/** A served server that answers from memory: what the catalog and the router see of an upstream. */
export function memoryServer(name: string, lists: ServerLists = {}): ServedServer & { calls: string[] } {
  const calls: string[] = [];
  const answer = async (what: string): Promise<JsonObject> => {
    calls.push(what);
    return { content: [{ type: 'text', text: `${name}:${what}` }] };
  };
  return {
    name,
    kind: lists.kind ?? 'upstream',
    available: lists.available ?? true,
    tools: (lists.tools ?? []).map((t): Tool => ({
      name: t,
      description: `${t} of ${name}`,
      inputSchema: { type: 'object' },
    })),
    prompts: (lists.prompts ?? []).map((p): Prompt => ({ name: p })),
    resources: (lists.resources ?? []).map((uri, i): Resource => ({ uri, name: `r${i}` })),
    resourceTemplates: (lists.templates ?? []).map((uriTemplate, i): ResourceTemplate => ({
      uriTemplate,
      name: `t${i}`,
    })),
    toolFilter: { allow: lists.allow, deny: lists.deny },
    calls,
    unavailable: () => new McpFailure(-32005, `Server '${name}' is stopped.`),
    callTool: (tool) => answer(`call ${tool}`),
    getPrompt: (prompt) => answer(`prompt ${prompt}`),
    readResource: (uri) => answer(`read ${uri}`),
    subscribe: async (uri) => void calls.push(`subscribe ${uri}`),
    unsubscribe: async (uri) => void calls.push(`unsubscribe ${uri}`),
    complete: () => answer('complete'),
  };
}

const names = (tools: { name: string }[]): string[] => tools.map((t) => t.name);

describe('catalog', () => {
  it('namespaces tools and prompts as <server>__<name> and routes them back', () => {
    const catalog = new Catalog();
    catalog.rebuild([memoryServer('echo', { tools: ['echo', 'add'], prompts: ['greet'] })]);
    assert.deepEqual(names(catalog.listTools()), ['echo__echo', 'echo__add']);
    assert.deepEqual(catalog.resolveTool('echo__add'), { server: 'echo', name: 'add', exposed: 'echo__add' });
    assert.deepEqual(names(catalog.listPrompts()), ['echo__greet']);
    assert.equal(catalog.resolvePrompt('echo__greet')?.name, 'greet');
    assert.equal(catalog.resolveTool('add'), undefined);
  });

  it('shortens long or invalid names to 64 valid characters, stably and without collisions', () => {
    const long = 'a'.repeat(80);
    const short = namespacedName('server', long);
    assert.ok(short.length <= 64, short);
    assert.match(short, /^server__[A-Za-z0-9_-]+$/);
    assert.equal(namespacedName('server', long), short, 'the same original always maps to the same name');
    assert.notEqual(namespacedName('server', `${long}b`), short, 'two originals never collide');
    assert.match(namespacedName('s', 'read.file'), /^s__read_file_[0-9a-f]{8}$/);
    // 'read_file' is valid as it is; 'read.file' cleans to the same text but keeps its own hash.
    const catalog = new Catalog();
    catalog.rebuild([memoryServer('s', { tools: ['read_file', 'read.file', long] })]);
    const listed = names(catalog.listTools());
    assert.equal(new Set(listed).size, 3);
    assert.ok(listed.every((n) => n.length <= 64 && /^[A-Za-z0-9_-]+$/.test(n)));
    assert.equal(catalog.resolveTool(namespacedName('s', 'read.file'))?.name, 'read.file');
    assert.equal(catalog.resolveTool(namespacedName('s', long))?.name, long);
  });

  it('lists the reserved namespace first and lets nothing shadow it', () => {
    const facade = memoryServer(FACADE_NAMESPACE, { tools: ['list_servers'], kind: 'control' });
    const impostor = memoryServer(FACADE_NAMESPACE, { tools: ['list_servers', 'steal'] });
    const evil = memoryServer('evil', { tools: ['switchboard__list_servers'] });
    const catalog = new Catalog();
    catalog.rebuild([facade, impostor, evil]);
    assert.deepEqual(names(catalog.listTools()), ['switchboard__list_servers', 'evil__switchboard__list_servers']);
    assert.equal(catalog.resolveTool('switchboard__list_servers')?.server, FACADE_NAMESPACE);
    assert.equal(catalog.resolveTool('switchboard__steal'), undefined);
    assert.equal(catalog.resolveTool('evil__switchboard__list_servers')?.name, 'switchboard__list_servers');
  });

  it("applies a server definition's allowedTools/excludeTools and skips servers that are not available", () => {
    const catalog = new Catalog();
    catalog.rebuild([
      memoryServer('fs', { tools: ['read_a', 'read_b', 'write_a'], allow: ['read_*'], deny: ['read_b'] }),
      memoryServer('down', { tools: ['x'], available: false }),
    ]);
    assert.deepEqual(names(catalog.listTools()), ['fs__read_a']);
    assert.deepEqual(names(catalog.toolsOf('fs')), ['read_a']);
    assert.equal(catalog.server('fs').exposedTool('read_a'), 'fs__read_a');
    assert.equal(catalog.server('fs').exposedTool('write_a'), undefined);
    assert.deepEqual(catalog.toolsOf('down'), []);
  });

  it('routes a URI to the server of its resource, else of the first template that matches', () => {
    const catalog = new Catalog();
    catalog.rebuild([
      memoryServer('a', { resources: ['file:///readme.md'], templates: ['notes://{id}'] }),
      memoryServer('b', { resources: ['file:///readme.md'], templates: ['file:///{+path}', 'search://q{?term,page}'] }),
    ]);
    assert.equal(catalog.resolveResource('file:///readme.md'), 'a', 'the first server to list a URI owns it');
    assert.equal(catalog.listResources().length, 1);
    assert.equal(catalog.resolveResource('notes://42'), 'a');
    assert.equal(catalog.resolveResource('notes://42/deeper'), undefined, '{id} stops at a slash');
    assert.equal(catalog.resolveResource('file:///src/deep/file.ts'), 'b', '{+path} crosses slashes');
    assert.equal(catalog.resolveResource('search://q?term=x'), 'b', 'query variables may be left out');
    assert.equal(catalog.resolveResource('search://q'), 'b');
    assert.equal(catalog.resolveResource('other://x'), undefined);
    assert.ok(templateMatcher('x://{a}.{b}').test('x://1.2'));
    assert.ok(!templateMatcher('x://a.b').test('x://aXb'), 'literal parts are escaped');
  });

  it('says which kinds and servers changed, and keeps unchanged lists as the same objects', () => {
    const catalog = new Catalog();
    const first = catalog.rebuild([memoryServer('a', { tools: ['t'] }), memoryServer('b', { prompts: ['p'] })]);
    assert.deepEqual(first, { tools: ['a'], prompts: ['b'], resources: [] });
    const tools = catalog.listTools();
    const version = catalog.version;

    // Same content in new objects (an upstream answered list_changed with the same list).
    const same = catalog.rebuild([memoryServer('a', { tools: ['t'] }), memoryServer('b', { prompts: ['p'] })]);
    assert.deepEqual(same, { tools: [], prompts: [], resources: [] });
    assert.equal(catalog.listTools(), tools, 'an unchanged list is the same array');
    assert.equal(catalog.version, version, 'nothing visible changed');

    const changed = catalog.rebuild([memoryServer('a', { tools: ['t', 'u'] }), memoryServer('b', { prompts: ['p'] })]);
    assert.deepEqual(changed, { tools: ['a'], prompts: [], resources: [] });
    assert.ok(catalog.version > version);

    const gone = catalog.rebuild([
      memoryServer('a', { tools: ['t', 'u'] }),
      memoryServer('b', { prompts: ['p'], available: false }),
    ]);
    assert.deepEqual(gone, { tools: [], prompts: ['b'], resources: [] });
    assert.deepEqual(catalog.listPrompts(), []);

    const empty = catalog.rebuild([memoryServer('a', { tools: ['t', 'u'] }), memoryServer('c')]);
    assert.deepEqual(empty, { tools: [], prompts: [], resources: [] }, 'a server with empty lists changes nothing');
  });
});
