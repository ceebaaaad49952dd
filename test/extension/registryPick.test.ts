// The pure parts of "Add Server from Registry…": the items one search makes (and the next page
// appended), the details shown before adding, and the debounce of live search.
import assert from 'node:assert/strict';
import type { FoundServer } from '../../src/broker/control/registryClient/registryClient';
import { debounce, registryPickItems, registryServerDetails } from '../../src/extension/registryPick';

const weather: FoundServer = {
  name: 'io.github.example-org/weather',
  description: 'Weather forecasts',
  version: '1.4.2',
  transport: 'stdio',
  runs: 'pypi weather-mcp-server',
  needsSecrets: true,
  registry: 'https://r.example',
};
const docs: FoundServer = {
  name: 'com.example/docs-search',
  title: 'Example Docs Search',
  description: 'Search the docs',
  version: '2.0.1',
  transport: 'streamable-http',
  runs: 'https://mcp.docs.example.com/mcp',
  needsSecrets: false,
  registry: 'https://r.example',
};

describe('Add Server from Registry (pure parts)', () => {
  it('one item per server, a "more" item with the cursor, a line per problem', () => {
    const items = registryPickItems({
      servers: [weather, docs],
      nextCursor: 'c2',
      problems: ['https://down.example could not be reached'],
    });
    assert.deepEqual(items[0], {
      label: 'io.github.example-org/weather',
      description: '1.4.2 · stdio · needs secrets',
      detail: 'Weather forecasts — pypi weather-mcp-server',
      server: weather,
    });
    assert.equal(items[1].label, 'Example Docs Search');
    assert.equal(items[1].description, 'com.example/docs-search 2.0.1 · streamable-http');
    assert.deepEqual(items[2], { label: '$(ellipsis) More results…', more: 'c2' });
    assert.match(items[3].label, /^\$\(warning\) https:\/\/down\.example could not be reached/);
  });

  it('the next page is appended to what is shown; several registries are named', () => {
    const other = { ...docs, registry: 'https://other.example' };
    const items = registryPickItems({ servers: [other], problems: [] }, [weather]);
    assert.deepEqual(
      items.map((i) => i.server?.name),
      [weather.name, docs.name],
    );
    assert.match(items[1].detail!, /\(https:\/\/other\.example\)$/);
    assert.ok(!items.some((i) => i.more));
  });

  it('details say what it runs, whether it needs secrets, and that it waits for approval', () => {
    const text = registryServerDetails(weather);
    assert.match(text, /Runs: pypi weather-mcp-server \(stdio\)/);
    assert.match(text, /Secrets: yes/);
    assert.match(text, /community server: it runs only after you approve it/);
  });

  it('debounce runs only the last call once input is quiet', async () => {
    const seen: string[] = [];
    const f = debounce((w: string) => seen.push(w), 20);
    f('w');
    f('we');
    f('wea');
    await new Promise((r) => setTimeout(r, 80));
    assert.deepEqual(seen, ['wea']);
  });
});
