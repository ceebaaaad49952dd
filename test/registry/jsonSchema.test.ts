// The committed editor schemas must equal what the zod schemas generate today.
// To regenerate after changing src/registry/schema.ts:
//   npx tsc -p tsconfig.test.json && node -e "require('./out/src/registry/jsonSchema').writeJsonSchemas('schemas')"

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  JSON_SCHEMA_FILES,
  jsonSchemaText,
  registryJsonSchemas,
  writeJsonSchemas,
} from '../../src/registry/jsonSchema';
import type { Kind } from '../../src/registry/schema';
import { useRoot } from './helpers/tmp';

/** The repository root, whether running from test/ (ts-node) or out/test/ (compiled). */
function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + __dirname);
    dir = up;
  }
  return dir;
}

const KINDS = Object.keys(JSON_SCHEMA_FILES) as Kind[];

describe('registry JSON schemas', () => {
  const ctx = useRoot('schemas');

  for (const kind of KINDS) {
    it(`schemas/${JSON_SCHEMA_FILES[kind]} is up to date`, () => {
      const committed = path.join(repoRoot(), 'schemas', JSON_SCHEMA_FILES[kind]);
      assert.ok(fs.existsSync(committed), `${committed} is missing; regenerate it (see the top of this test)`);
      assert.equal(
        fs.readFileSync(committed, 'utf8'),
        jsonSchemaText(kind),
        `${committed} is stale; regenerate it (see the top of this test)`,
      );
    });
  }

  it('describes what a person writes: name and defaulted fields optional, unknown keys refused', () => {
    const { server, prompt, client } = registryJsonSchemas() as Record<
      Kind,
      { required?: string[]; additionalProperties?: unknown; properties: Record<string, { default?: unknown }> }
    >;
    assert.equal(server.required, undefined);
    assert.deepEqual(prompt.required, ['messages']);
    assert.equal(client.required, undefined);
    for (const s of [server, prompt, client]) assert.equal(s.additionalProperties, false);
    assert.equal(server.properties.trust.default, 'community');
    assert.deepEqual(client.properties.mcp_allow.default, ['read']);
  });

  it('writes all three files', () => {
    const files = writeJsonSchemas(path.join(ctx.root, 'out'));
    assert.deepEqual(files.map((f) => path.basename(f)).sort(), Object.values(JSON_SCHEMA_FILES).sort());
    for (const f of files) assert.doesNotThrow(() => JSON.parse(fs.readFileSync(f, 'utf8')));
  });
});
