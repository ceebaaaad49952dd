// The facade's tool schemas as strict hosts read them: no bare boolean subschemas, no conditionals,
// nothing Ajv's strict mode refuses, and still accepting every sample definition in workspace/.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import { Facade } from '../../../src/broker/control/facade';
import { portabilityProblems, toPortableSchema } from '../../../src/broker/control/portableSchema';
import { registryJsonSchemas } from '../../../src/registry/jsonSchema';

const REPO = path.resolve(__dirname, '../../../..');
const tools = new Facade().tools();

describe('facade tool schemas are portable', () => {
  it('every facade tool schema has no finding a strict host would reject', () => {
    const findings = tools.flatMap((t) => portabilityProblems(t.inputSchema).map((p) => `${t.name}${p}`));
    assert.deepEqual(findings, []);
  });

  it("every facade tool schema compiles under Ajv's strict mode", () => {
    for (const t of tools) {
      const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true });
      // The formats hosts commonly know; strict mode refuses any other.
      for (const format of ['uri', 'date-time', 'email']) ajv.addFormat(format, true);
      assert.doesNotThrow(() => ajv.compile(t.inputSchema), `${t.name} does not compile strictly`);
    }
  });

  it('the check finds the bare false subschemas of the editor schema it replaces', () => {
    const server = registryJsonSchemas().server as Record<string, unknown>;
    const findings = portabilityProblems(server);
    for (const field of ['command', 'args', 'envFile', 'url']) {
      assert.ok(
        findings.some((f) => f.endsWith(`/properties/${field}: a bare 'false' subschema`)),
        `no finding for ${field} in ${findings.join('; ')}`,
      );
    }
    assert.ok(findings.some((f) => f.includes("'if' is not portable")));
  });

  it('the portable server schema still accepts every sample server definition', () => {
    const upsert = tools.find((t) => t.name === 'switchboard__upsert_server');
    assert.ok(upsert);
    const ajv = new Ajv({ strict: false, validateFormats: false });
    const validate = ajv.compile(upsert.inputSchema);
    const dir = path.join(REPO, 'workspace', 'mcp-servers.d');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    assert.ok(files.length > 0);
    for (const f of files) {
      const definition = parseYaml(fs.readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown>;
      assert.ok(validate({ definition }), `${f}: ${JSON.stringify(validate.errors)}`);
    }
  });

  it('const becomes a one-value enum and false properties are left out', () => {
    const out = toPortableSchema({
      type: 'object',
      properties: { kind: { const: 'a' }, gone: false, any: true },
      allOf: [{ required: ['kind'] }],
      additionalProperties: false,
    });
    assert.deepEqual(out, {
      type: 'object',
      properties: { kind: { enum: ['a'] }, any: {} },
      additionalProperties: false,
    });
  });
});
