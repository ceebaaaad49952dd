// The extension's settings: one default each, the same as package.json declares, read with types.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULTS, readSettings, SECTION, SETTING_KEYS, settingId, type Settings } from '../../src/extension/config';

const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default: unknown }> } };
};
const declared = manifest.contributes.configuration.properties;

const reader = (values: Record<string, unknown>) => ({ get: <T>(key: string) => values[key] as T | undefined });

describe('unit: extension settings', () => {
  it('declares exactly the settings package.json contributes, with the same defaults', () => {
    const ours = (Object.keys(SETTING_KEYS) as (keyof Settings)[]).map((k) => settingId(k)).sort();
    assert.deepEqual(ours, Object.keys(declared).sort());
    for (const key of Object.keys(SETTING_KEYS) as (keyof Settings)[]) {
      assert.deepEqual(DEFAULTS[key], declared[settingId(key)].default, `default of ${settingId(key)}`);
    }
    assert.equal(settingId('autoStart'), `${SECTION}.broker.autoStart`);
  });

  it('reads the defaults when nothing is set', () => {
    assert.deepEqual(readSettings(reader({})), DEFAULTS);
  });

  it('reads what is set, by its declared key', () => {
    const set = readSettings(
      reader({
        registryRoot: 'workspace',
        editorClient: 'vscode',
        'mcpProvider.perServer': true,
        'broker.autoStart': false,
        'broker.idleExitSeconds': 42,
        registries: ['https://mcp-registry.example.com', 7, ''],
        'telemetry.enabled': true,
      }),
    );
    assert.deepEqual(set, {
      registryRoot: 'workspace',
      editorClient: 'vscode',
      perServer: true,
      autoStart: false,
      idleExitSeconds: 42,
      // Only addresses are kept: a number or an empty entry is left out.
      registries: ['https://mcp-registry.example.com'],
      telemetry: true,
    });
  });

  it('an emptied registry root is the folder itself; an emptied editor client asks for per-server definitions', () => {
    const s = readSettings(reader({ registryRoot: '', editorClient: '' }));
    assert.equal(s.registryRoot, '.');
    assert.equal(s.editorClient, '');
    assert.equal(readSettings(reader({ editorClient: null })).editorClient, '');
  });

  it('a value of the wrong type falls back to the default', () => {
    const s = readSettings(
      reader({ 'broker.autoStart': 'yes', 'broker.idleExitSeconds': 'soon', 'mcpProvider.perServer': 1 }),
    );
    assert.equal(s.autoStart, DEFAULTS.autoStart);
    assert.equal(s.idleExitSeconds, DEFAULTS.idleExitSeconds);
    assert.equal(s.perServer, DEFAULTS.perServer);
  });
});
