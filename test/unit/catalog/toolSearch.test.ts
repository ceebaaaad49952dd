// ToolSearch's ranking, its "why", visibility and incremental reindexing, and the words it indexes,
// over a real Catalog built from plain served servers (no processes).
import assert from 'node:assert/strict';
import { Catalog } from '../../../src/broker/catalog/catalog';
import type { Tool } from '../../../src/broker/shared/mcpTypes';
import type { ServedServer } from '../../../src/broker/routing/servedServer';
import {
  fileNames,
  normalizeTerm,
  oneLine,
  parameterText,
  queryConcepts,
  queryTerms,
  ToolSearch,
  words,
} from '../../../src/broker/catalog/toolSearch';
import { countToolTokens } from '../../../src/broker/catalog/tokenCounts';
import { lintDefinition } from '../../../src/registry/lint';
import { ClientDefSchema } from '../../../src/registry/schema';

function served(name: string, tools: Tool[]): ServedServer {
  return { name, available: true, tools, prompts: [], resources: [], resourceTemplates: [] } as unknown as ServedServer;
}

const tool = (name: string, description: string, params: string[] = [], title?: string): Tool => ({
  name,
  ...(title ? { title } : {}),
  description,
  inputSchema: { type: 'object', properties: Object.fromEntries(params.map((p) => [p, { type: 'string' }])) },
});

const files = [
  tool('read_text_file', 'Read the complete contents of a file as text.', ['path', 'head', 'tail'], 'Read Text File'),
  tool('write_file', 'Create a new file or overwrite an existing file with new content.', ['path', 'content']),
  tool('list_directory', 'Get a detailed listing of all files and directories in a path.', ['path']),
];
const issues = [
  tool('createIssue', 'Open a new issue in a repository.', ['owner', 'repo', 'title', 'body']),
  tool('list_pull_requests', 'List pull requests of a repository, filtered by state.', ['state']),
];

describe('tool search: words and normalization', () => {
  it('splits snake, kebab, dotted and camelCase names into words', () => {
    assert.deepEqual(words('listDirectoryWithSizes'), ['list', 'Directory', 'With', 'Sizes']);
    assert.deepEqual(words('get-resource_links.v2'), ['get', 'resource', 'links', 'v2']);
    assert.deepEqual(words('HTTPServer status'), ['HTTP', 'Server', 'status']);
  });

  it('folds plurals and verb endings to one stem and drops filler words', () => {
    assert.equal(normalizeTerm('Files'), 'file');
    assert.equal(normalizeTerm('directories'), normalizeTerm('directory'));
    assert.equal(normalizeTerm('reading'), 'read');
    assert.equal(normalizeTerm('matches'), 'match');
    assert.equal(normalizeTerm('observations'), normalizeTerm('observe'));
    assert.equal(normalizeTerm('status'), 'status');
    assert.equal(normalizeTerm('v2'), 'v2');
    assert.equal(normalizeTerm('the'), null);
  });

  it("weights a query's own words above the related words they stand for", () => {
    const terms = queryTerms('remove the folder');
    assert.equal(terms.get('remov'), 1);
    assert.equal(terms.get('folder'), 1);
    assert.ok(terms.get('delet')! > 0 && terms.get('delet')! < 1, 'remove also searches delete, weaker');
    assert.ok(terms.get(normalizeTerm('directory')!)! < 1);
    assert.equal(terms.has('the'), false);
    assert.equal(queryTerms('delete directory').get('delet'), 1, 'a word said outright counts fully');
  });

  it('drops what is left of a contraction', () => {
    assert.deepEqual([...queryTerms("what's in it? it doesn't, I'll").keys()], []);
  });

  it('reads a file name as the word "file", keeping its extension as a weaker word', () => {
    assert.deepEqual(fileNames('show notes.txt'), { text: 'show  file ', extensions: ['txt'] });
    assert.deepEqual(fileNames('open src/utils.py now').extensions, ['py']);
    assert.deepEqual(fileNames('unpack backup.tar.gz').extensions, ['tar', 'gz']);
    assert.deepEqual(fileNames('make a .gz of it').extensions, ['gz']);
    for (const notFile of ['fetch example.com', 'mail bob@corp.org', 'e.g. a list', 'release v1.2', 'the end. Then']) {
      assert.deepEqual(fileNames(notFile), { text: notFile, extensions: [] }, notFile);
    }
    const terms = queryTerms('what is inside notes.txt');
    assert.equal(terms.get('file'), 1);
    assert.equal(terms.get('txt'), 0.5);
    assert.equal(terms.has('note'), false, 'the base name says nothing about the tool');
    assert.ok(queryTerms('load song.mp3').get('audio')! > 0, 'an extension stands for its kind of file');
  });

  it('reads a phrasal verb as the word it means, one concept per word', () => {
    const concepts = queryConcepts('take it out of the list');
    assert.deepEqual(
      concepts.map((c) => [...c.keys()][0]),
      ['remov', 'list'],
    );
    assert.equal(concepts[0].get('delet'), 0.5);
    assert.equal(queryTerms('look for a file').get('search'), 1);
    assert.equal(queryTerms('look for a file').has('look'), false);
  });

  it('indexes nested parameter names and descriptions', () => {
    const text = parameterText({
      type: 'object',
      properties: {
        path: { type: 'string' },
        edits: {
          type: 'array',
          items: { type: 'object', properties: { oldText: { description: 'Text to search for' } } },
        },
      },
    });
    assert.equal(text, 'path edits oldText Text to search for');
    assert.equal(parameterText(undefined), '');
  });

  it('keeps the first sentence of a description, one line', () => {
    assert.equal(oneLine('Read a file. Handles encodings.\nMore.'), 'Read a file.');
    assert.equal(oneLine(undefined), '');
    assert.equal(oneLine('x'.repeat(300)).length, 200);
  });
});

describe('tool search: ranking and why', () => {
  function build(): { catalog: Catalog; search: ToolSearch; about: Map<string, string> } {
    const catalog = new Catalog();
    const about = new Map([['github', 'Issues and pull requests on GitHub']]);
    const changes = catalog.rebuild([served('fs', files), served('github', issues)]);
    const search = new ToolSearch(catalog, (s) => about.get(s));
    search.invalidate(changes.tools);
    return { catalog, search, about };
  }
  const all = { limit: 10, visible: () => true };

  it('ranks a name match above a description-only match, and says which field matched which word', () => {
    const { search } = build();
    const hits = search.search('read file', all);
    assert.equal(hits[0].name, 'fs__read_text_file');
    assert.equal(hits[0].server, 'fs');
    assert.equal(hits[0].tool, 'read_text_file');
    assert.equal(hits[0].description, 'Read the complete contents of a file as text.');
    assert.deepEqual(hits[0].matched.name?.sort(), ['file', 'read']);
    assert.ok(hits[0].matched.title?.includes('read'));
    assert.ok(
      hits.some((h) => h.name === 'fs__write_file'),
      'a weaker match still ranks',
    );
    assert.ok(hits.findIndex((h) => h.name === 'fs__write_file') > 0);
  });

  it('matches camelCase names, parameter names, prefixes, typos and the server description', () => {
    const { search } = build();
    assert.equal(search.search('create issue', all)[0].name, 'github__createIssue');
    assert.ok(search.search('owner', all)[0].matched.parameters?.includes('owner'));
    assert.equal(search.search('direct', all)[0].name, 'fs__list_directory', 'prefix');
    assert.equal(search.search('directroy listing', all)[0].name, 'fs__list_directory', 'typo');
    const byServer = search.search('github', all).map((h) => h.name);
    assert.deepEqual(byServer.sort(), ['github__createIssue', 'github__list_pull_requests']);
    assert.equal(search.search('folder contents', all)[0].name, 'fs__list_directory', 'everyday word');
    const why = search.search('directories', all)[0].matched;
    assert.ok(why.name?.includes('directory') && !why.name.includes('directori'), 'why shows words, not stems');
  });

  it("ranks the tool that uses the query's own word above one that uses a related word", () => {
    const catalog = new Catalog();
    const search = new ToolSearch(catalog, () => undefined);
    search.invalidate(
      catalog.rebuild([
        served('a', [tool('remove_item', 'Remove an item from the list.'), tool('delete_item', 'Delete an item.')]),
      ]).tools,
    );
    assert.deepEqual(
      search.search('remove item', all).map((h) => h.name),
      ['a__remove_item', 'a__delete_item'],
    );
    assert.deepEqual(
      search.search('delete item', all).map((h) => h.name),
      ['a__delete_item', 'a__remove_item'],
    );
  });

  it('ranks by the concepts a tool covers, not by how many related words of one concept it has', () => {
    const catalog = new Catalog();
    const search = new ToolSearch(catalog, () => undefined);
    search.invalidate(
      catalog.rebuild([
        served('t', [
          tool('pack', 'Compress data with gzip, zip or into a tar archive.', ['data']),
          tool('file_info', 'Size and creation time of a file.', ['path']),
        ]),
      ]).tools,
    );
    // big → size, backup.tar → file (and tar, which the archive tool matches by four related words).
    assert.equal(search.search('how big is backup.tar', all)[0].name, 't__file_info');
  });

  it('finds a tool by the nested parameters of its input', () => {
    const catalog = new Catalog();
    const search = new ToolSearch(catalog, () => undefined);
    const edit: Tool = {
      name: 'edit_file',
      description: 'Make line-based edits to a text file.',
      inputSchema: {
        type: 'object',
        properties: {
          edits: {
            type: 'array',
            items: { type: 'object', properties: { newText: { type: 'string', description: 'Text to replace with' } } },
          },
        },
      },
    };
    search.invalidate(catalog.rebuild([served('fs', [edit, ...files])]).tools);
    const top = search.search('replace a word', all)[0];
    assert.equal(top.name, 'fs__edit_file');
    assert.ok(top.matched.parameters?.includes('replace'), JSON.stringify(top.matched));
  });

  it('returns only what the caller may see, and at most the limit', () => {
    const { search } = build();
    const hits = search.search('file', { limit: 10, visible: (r) => r.exposed !== 'fs__write_file' });
    assert.ok(hits.length > 0 && hits.every((h) => h.name !== 'fs__write_file'));
    assert.equal(search.search('file', { limit: 1, visible: () => true }).length, 1);
    assert.deepEqual(search.search('file', { limit: 10, visible: (r) => r.server === 'github' }), []);
  });

  it('reindexes only what a rebuild changed, and a description edited without a tool change', () => {
    const { catalog, search, about } = build();
    assert.equal(search.size, 5);
    const changes = catalog.rebuild([
      served('fs', [...files.slice(1), tool('delete_file', 'Delete a file.', ['path'])]),
      served('github', issues),
    ]);
    assert.deepEqual(changes.tools, ['fs']);
    search.invalidate(changes.tools);
    assert.equal(search.search('delete', all)[0].name, 'fs__delete_file');
    assert.ok(!search.search('read text', all).some((h) => h.name === 'fs__read_text_file'), 'gone when removed');
    assert.equal(search.size, 5);
    about.set('fs', 'Local disk access');
    assert.equal(search.search('disk', all)[0].server, 'fs');
    // A server that went away takes its tools with it.
    search.invalidate(catalog.rebuild([served('fs', files)]).tools);
    assert.deepEqual(search.search('issue', all), []);
  });
});

describe('tool tokens', () => {
  it('counts a definition with cl100k_base: longer definitions cost more', () => {
    const small = countToolTokens(tool('x', 'Echo.'));
    const large = countToolTokens(files[0]);
    assert.ok(small > 5 && large > small, `${small} ${large}`);
    assert.equal(countToolTokens(files[0]), large);
  });
});

describe('toolMode in client definitions', () => {
  const client = (extra: object) => ClientDefSchema.parse({ name: 'agent', ...extra });

  it('defaults to listing every tool, and accepts search with pinned globs', () => {
    assert.equal(client({}).toolMode, undefined);
    assert.deepEqual(client({ toolMode: 'search', pinnedTools: ['fs__*'] }).pinnedTools, ['fs__*']);
    assert.throws(() => client({ toolMode: 'some' }));
  });

  it('warns where search mode cannot work or pins do nothing', () => {
    const messages = (extra: object) => lintDefinition('client', client(extra)).map((l) => l.message);
    assert.deepEqual(messages({ toolMode: 'search' }), []);
    assert.match(messages({ toolMode: 'search', mcp_allow: [] }).join(), /needs 'read' in mcp_allow/);
    assert.match(messages({ pinnedTools: ['fs__*'] }).join(), /only apply with toolMode: search/);
  });
});
