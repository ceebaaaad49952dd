// The layer rules of eslint.config.mjs, broken on purpose: each forbidden import must be reported, and
// each allowed one must not, so a typo in a pattern cannot silently let everything through.
//
// The files are linted from memory (ESLint's lintText with a path that decides which layer applies),
// with type information switched off: the layer rules are syntactic, and no file has to exist.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { notUnderWine } from '../helpers/platform';

const REPO = path.resolve(__dirname, '../../..');
const LAYER_RULES = new Set(['@typescript-eslint/no-restricted-imports', 'no-restricted-syntax']);

let eslint: ESLint;

/** The layer-rule messages ESLint reports for `code` written at `file` (relative to the repository). */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO, file) });
  const fatal = result.messages.filter((m) => m.fatal);
  assert.deepEqual(fatal, [], `${file} did not parse`);
  return result.messages.filter((m) => m.ruleId !== null && LAYER_RULES.has(m.ruleId)).map((m) => m.message);
}

async function expectRefused(file: string, code: string, reason: RegExp): Promise<void> {
  const errors = await layerErrors(file, code);
  assert.equal(errors.length, 1, `expected one layer error for ${file}: ${code}\ngot: ${JSON.stringify(errors)}`);
  assert.match(errors[0], reason);
}

async function expectAllowed(file: string, code: string): Promise<void> {
  assert.deepEqual(await layerErrors(file, code), [], `${file} should be allowed: ${code}`);
}

const REGISTRY = /src\/registry is pure and self-contained/;
const VSCODE = /Only src\/extension may import 'vscode'/;
const BROKER_UI = /The broker never imports the extension or the webview/;
const SDK = /The MCP SDK is imported only by/;
const WEBVIEW = /The webview may import only its own modules/;
const WEBVIEW_TYPES = /The webview may take only types from src\/broker/;
const onlyFrom = (folder: string): RegExp => new RegExp(`src/broker/${folder} may import only`);

/** The subsystem folders eslint.config.mjs lists, read the way ESLint loads it. */
async function brokerSubsystems(): Promise<Record<string, string[]>> {
  const url = pathToFileURL(path.join(REPO, 'eslint.config.mjs')).href;
  const config = (await import(url)) as { BROKER_SUBSYSTEMS: Record<string, string[]> };
  return config.BROKER_SUBSYSTEMS;
}

// The rules do not depend on the OS; ESLint with type information takes minutes under Wine.
notUnderWine('ESLint over the tree takes minutes there; the layer rules do not depend on the OS').describe(
  'layer rules (eslint.config.mjs)',
  function () {
    // Loading ESLint and the TypeScript parser is the slow part; the lints themselves take milliseconds.
    this.timeout(20_000);

    before(() => {
      eslint = new ESLint({ cwd: REPO, overrideConfig: [tseslint.configs.disableTypeChecked] });
    });

    it('src/registry imports only node: built-ins, zod, yaml and its own modules', async () => {
      await expectAllowed(
        'src/registry/probe.ts',
        "import * as fs from 'node:fs';\nimport { z } from 'zod';\nimport { parseDocument } from 'yaml';\n" +
          "import { KINDS } from './schema';\nexport * from './names';\n" +
          'export const x = [fs, z, parseDocument, KINDS];\n',
      );
      await expectRefused(
        'src/registry/probe.ts',
        "import { Catalog } from '../broker/catalog';\nexport { Catalog };\n",
        REGISTRY,
      );
      await expectRefused(
        'src/registry/probe.ts',
        "import type { Ctx } from '../extension/ctx';\nexport type X = Ctx;\n",
        REGISTRY,
      );
      await expectRefused('src/registry/probe.ts', "export * from '../broker/routing';\n", REGISTRY);
      await expectRefused('src/registry/probe.ts', "import * as vscode from 'vscode';\nexport { vscode };\n", REGISTRY);
      await expectRefused('src/registry/probe.ts', "import * as fs from 'fs';\nexport { fs };\n", REGISTRY);
      await expectRefused('src/registry/sub/probe.ts', "import { z } from 'zod-mini';\nexport { z };\n", REGISTRY);
      await expectRefused(
        'src/registry/probe.ts',
        "export const load = () => import('../broker/catalog');\n",
        REGISTRY,
      );
    });

    it('the per-request folders make no object literal that opens with a spread and has more after it', async () => {
      const SPREAD = /opens with a spread and has more after it/;
      for (const folder of ['http', 'routing', 'connection', 'telemetry', 'supervision', 'shared']) {
        await expectRefused(
          `src/broker/${folder}/probe.ts`,
          'export const f = (a: object) => ({ ...a, b: 1 });\n',
          SPREAD,
        );
        await expectRefused(
          `src/broker/${folder}/probe.ts`,
          'export const f = (a: object, b: object) => ({ ...a, ...b });\n',
          SPREAD,
        );
      }
      await expectRefused(
        'src/broker/connection/auth/probe.ts',
        'export const f = (a: object) => ({ ...a, b: 1 });\n',
        SPREAD,
      );
      // Controls: a spread alone, a spread after a key, and folders off the per-request path.
      await expectAllowed('src/broker/http/probe.ts', 'export const f = (a: object) => ({ ...a });\n');
      await expectAllowed('src/broker/http/probe.ts', 'export const f = (a: object) => ({ b: 1, ...a });\n');
      await expectAllowed('src/broker/cli/probe.ts', 'export const f = (a: object) => ({ ...a, b: 1 });\n');
    });

    it('src/broker never imports vscode, the extension or the webview', async () => {
      await expectRefused(
        'src/broker/supervision/probe.ts',
        "import * as vscode from 'vscode';\nexport { vscode };\n",
        VSCODE,
      );
      await expectRefused(
        'src/broker/supervision/probe.ts',
        "import { ctx } from '../extension/ctx';\nexport { ctx };\n",
        BROKER_UI,
      );
      await expectRefused('src/broker/supervision/probe.ts', "export * from '../../webview/protocol';\n", BROKER_UI);
      await expectRefused(
        'src/broker/http/probe.ts',
        "import type { InitMessage } from '../../../webview/protocol';\nexport type X = InitMessage;\n",
        BROKER_UI,
      );
      await expectRefused(
        'src/broker/http/endpoint.ts',
        "import * as vscode from 'vscode';\nexport { vscode };\n",
        VSCODE,
      );
      await expectRefused('src/broker/supervision/probe.ts', "export const load = () => import('vscode');\n", VSCODE);
      await expectAllowed(
        'src/broker/supervision/probe.ts',
        "import * as fs from 'node:fs';\nimport { KINDS } from '../registry';\nimport { x } from './extensionless';\n" +
          'export const y = [fs, KINDS, x];\n',
      );
    });

    it('the MCP SDK is imported only by the upstream connection code, the endpoint and schemaValidator.ts', async () => {
      const sdk = "import { Client } from '@modelcontextprotocol/sdk/client/index.js';\nexport { Client };\n";
      for (const file of [
        'src/broker/connection/stdio.ts',
        'src/broker/http/endpoint.ts',
        'src/broker/http/session.ts',
        'src/broker/shared/schemaValidator.ts',
        'test/broker/probe.test.ts',
      ]) {
        await expectAllowed(file, sdk);
      }
      await expectRefused('src/broker/catalog/catalog.ts', sdk, SDK);
      await expectRefused('src/broker/upstreamClient.ts', sdk, SDK);
      await expectRefused(
        'src/broker/router/probe.ts',
        "import type { Tool } from '@modelcontextprotocol/sdk/types.js';\n",
        SDK,
      );
      await expectRefused('src/extension/probe.ts', sdk, SDK);
      await expectRefused('src/registry/probe.ts', sdk, REGISTRY);
      await expectRefused(
        'src/broker/catalog/catalog.ts',
        "export const load = () => import('@modelcontextprotocol/sdk/client/sse.js');\n",
        SDK,
      );
      await expectAllowed(
        'src/broker/connection/remoteConnection.ts',
        "export const load = () => import('@modelcontextprotocol/sdk/client/sse.js');\n",
      );
    });

    it('webview imports only its own modules, src/registry and types from src/broker', async () => {
      await expectAllowed(
        'webview/probe.ts',
        "import type { ProbeResult } from '../src/broker/probe';\n" +
          "import { ServerDefSchema } from '../src/registry/schema';\n" +
          "import type { InitMessage } from './protocol';\nimport './console.css';\n" +
          'export type X = [ProbeResult, InitMessage];\nexport const s = ServerDefSchema;\n',
      );
      await expectRefused(
        'webview/probe.ts',
        "import { probe } from '../src/broker/probe';\nexport { probe };\n",
        WEBVIEW_TYPES,
      );
      await expectRefused('webview/probe.ts', "import * as fs from 'node:fs';\nexport { fs };\n", WEBVIEW);
      await expectRefused('webview/probe.ts', "import * as vscode from 'vscode';\nexport { vscode };\n", WEBVIEW);
      await expectRefused(
        'webview/probe.ts',
        "import { ctx } from '../src/extension/ctx';\nexport { ctx };\n",
        WEBVIEW,
      );
      await expectRefused('webview/probe.ts', "import { z } from 'zod';\nexport { z };\n", WEBVIEW);
      await expectRefused('webview/probe.ts', "export const load = () => import('node:path');\n", WEBVIEW);
    });
    it('each broker subsystem imports only the subsystems below it, type-only imports included', async () => {
      await expectRefused(
        'src/broker/trust/x.ts',
        "import { x } from '../daemon/runtime';\nexport { x };\n",
        onlyFrom('trust'),
      );
      await expectRefused(
        'src/broker/control/x.ts',
        "import type { Broker } from '../daemon/broker';\nexport type X = Broker;\n",
        onlyFrom('control'),
      );
      await expectRefused(
        'src/broker/routing/x.ts',
        "export { facade } from '../control/facade';\n",
        onlyFrom('routing'),
      );
      await expectRefused(
        'src/broker/catalog/deep/x.ts',
        "import { y } from '../../routing/router';\nexport { y };\n",
        onlyFrom('catalog'),
      );
      await expectRefused(
        'src/broker/shared/x.ts',
        "export const load = () => import('../trust/pins');\n",
        onlyFrom('shared'),
      );
      await expectAllowed(
        'src/broker/routing/x.ts',
        "import { a } from '../catalog/catalog';\nimport { b } from '../supervision/upstream';\n" +
          "import { c } from './router';\nimport { d } from '../../registry/names';\nexport const e = [a, b, c, d];\n",
      );
      await expectAllowed('src/broker/cli/x.ts', "import { Broker } from '../daemon/broker';\nexport { Broker };\n");
    });

    it('every folder of src/broker is a subsystem with its rule and a README, and no file sits outside one', async () => {
      const subsystems = await brokerSubsystems();
      const entries = fs.readdirSync(path.join(REPO, 'src/broker'), { withFileTypes: true });
      const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name);
      assert.deepEqual([...folders].sort(), Object.keys(subsystems).sort(), 'folders and BROKER_SUBSYSTEMS differ');
      const loose = entries.filter((e) => e.isFile() && e.name !== 'README.md').map((e) => e.name);
      assert.deepEqual(loose, [], 'files directly in src/broker belong in a subsystem folder');
      for (const folder of folders)
        assert.ok(fs.existsSync(path.join(REPO, 'src/broker', folder, 'README.md')), `src/broker/${folder}/README.md`);
      // A newcomer reads the top of src/broker at a glance: a dozen entries at most (issue 29). A part
      // that outgrows its subsystem becomes a sub-folder of it, with its own README.
      assert.ok(
        entries.length <= 12,
        `src/broker has ${entries.length} entries: ${entries.map((e) => e.name).join(', ')}`,
      );
      const subFolders = folders.flatMap((folder) =>
        fs
          .readdirSync(path.join(REPO, 'src/broker', folder), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => `src/broker/${folder}/${e.name}`),
      );
      assert.ok(subFolders.length >= 5, `sub-folders found: ${subFolders.join(', ')}`);
      for (const sub of subFolders) assert.ok(fs.existsSync(path.join(REPO, sub, 'README.md')), `${sub}/README.md`);
      // The allowed imports form a graph without cycles: each folder only names folders listed before it.
      const order = Object.keys(subsystems);
      for (const [folder, allowed] of Object.entries(subsystems))
        for (const dep of allowed) assert.ok(order.indexOf(dep) < order.indexOf(folder), `${folder} → ${dep} goes up`);
    });

    it('npm run lint finds an import cycle (type-only imports too), and the tree has none', function () {
      // Resolving every import of the tree with TypeScript takes seconds, more on a busy machine.
      this.timeout(120_000);
      const checker = path.join(REPO, 'scripts/importCycles.mjs');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-cycles-'));
      try {
        fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = b;\n");
        fs.writeFileSync(path.join(dir, 'b.ts'), "import type { C } from './c';\nexport const b: C = 1;\n");
        fs.writeFileSync(path.join(dir, 'c.ts'), "import { a } from './a';\nexport type C = typeof a;\n");
        fs.writeFileSync(path.join(dir, 'd.ts'), "import { a } from './a';\nexport const d = a;\n");
        const found = spawnSync(process.execPath, [checker, dir], { encoding: 'utf8' });
        assert.equal(found.status, 1, found.stderr);
        assert.match(found.stderr, /import cycle: .*a\.ts → .*b\.ts → .*c\.ts → .*a\.ts/);
        assert.doesNotMatch(found.stderr, /d\.ts/, 'a file that only imports into the cycle is not part of it');
        fs.rmSync(path.join(dir, 'c.ts'));
        fs.writeFileSync(path.join(dir, 'c.ts'), 'export type C = number;\n');
        const clean = spawnSync(process.execPath, [checker, dir], { encoding: 'utf8' });
        assert.equal(clean.status, 0, clean.stderr);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
      const tree = spawnSync(process.execPath, [checker, 'src', 'webview'], { cwd: REPO, encoding: 'utf8' });
      assert.equal(tree.status, 0, tree.stderr);
    });
  },
);
