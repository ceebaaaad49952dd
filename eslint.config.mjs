// ESLint for the whole tree: the recommended sets, a few type-aware rules, and the layer boundaries.
//
// Layout of this file: shared rules first, then the layers (which module may import what), then
// Prettier's switch-off of formatting rules, then the one formatting rule Prettier cannot enforce.
// test/unit/layers.test.ts breaks every layer rule on purpose and expects the error, so a typo in a
// pattern below fails a test instead of silently allowing everything.

import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TS = ['**/*.ts'];
const JS = ['**/*.js', '**/*.cjs', '**/*.mjs'];

// --------------------------------------------------------------------------------------------
// Layers. Each entry is one import restriction; a layer lists the restrictions its files obey.
// `regex` is matched against the import specifier exactly as written (relative paths included).

const NOT_VSCODE = {
  regex: '^vscode$',
  message: "Only src/extension may import 'vscode'; the broker and the registry run without an editor.",
};
const NOT_EXTENSION_OR_WEBVIEW = {
  regex: '^\\.\\./(\\.\\./)*(src/)?(extension|webview)(/|$)',
  message: 'The broker never imports the extension or the webview; they talk to it over MCP.',
};
const NOT_SDK = {
  regex: '^@modelcontextprotocol/sdk(/|$)',
  message:
    'The MCP SDK is imported only by the upstream connection code, the endpoint and schemaValidator.ts, ' +
    'so an SDK upgrade stays a change to those files; go through them.',
};
const REGISTRY_SELF_CONTAINED = {
  // Anything but node: built-ins, zod, yaml, jsonc-parser, the CEL evaluator of guardrail conditions and sibling modules.
  regex: '^(?!node:|zod(/|$)|yaml(/|$)|jsonc-parser$|@marcbachmann/cel-js$|\\./)',
  message:
    'src/registry is pure and self-contained: it may import only node: built-ins, zod, yaml, jsonc-parser, ' +
    '@marcbachmann/cel-js and its own ' +
    "modules ('./x'). Move shared code into src/registry instead of reaching out of it.",
};
const WEBVIEW_BROKER_TYPES_ONLY = {
  regex: '^\\.\\./src/broker/',
  allowTypeImports: true,
  message: "The webview may take only types from src/broker (use 'import type'); it runs in a browser sandbox.",
};
const WEBVIEW_OWN_AND_SHARED_ONLY = {
  // Its own modules, the pure registry schemas, and (type-only, above) the broker's protocol types.
  regex: '^(?!\\./|\\.\\./src/(registry|broker)/)',
  message:
    'The webview may import only its own modules, src/registry and types from src/broker: no node built-ins, ' +
    "no 'vscode', no packages it would have to bundle (talk to the extension through webview/protocol.ts).",
};

/** Files that may import the SDK: the upstream connection code, its OAuth client and the endpoint. */
const SDK_ALLOWED = ['src/broker/connection/**', 'src/broker/http/**', 'src/broker/shared/schemaValidator.ts'];

/**
 * The broker's subsystems (src/broker/<folder>, each with a README.md saying what it owns) and the
 * ones each may import: a graph without cycles, lowest first. docs/architecture.md draws it.
 * A folder not listed here fails test/unit/layers.test.ts, so a new one gets its rule when it is made.
 */
export const BROKER_SUBSYSTEMS = {
  shared: [],
  telemetry: ['shared'],
  trust: ['shared'],
  catalog: ['shared', 'trust'],
  connection: ['shared', 'catalog', 'telemetry'],
  supervision: ['shared', 'trust', 'connection', 'catalog', 'telemetry'],
  routing: ['shared', 'trust', 'connection', 'catalog', 'supervision', 'telemetry'],
  control: ['shared', 'trust', 'connection', 'catalog', 'supervision', 'routing', 'telemetry'],
  http: ['shared', 'catalog', 'connection', 'supervision', 'routing', 'telemetry'],
  daemon: ['shared', 'trust', 'connection', 'catalog', 'supervision', 'routing', 'control', 'http', 'telemetry'],
  cli: ['shared', 'trust', 'connection', 'catalog', 'supervision', 'routing', 'control', 'http', 'daemon', 'telemetry'],
};

/** The restriction that keeps `folder` to the subsystems it may import. */
function subsystemRule(folder) {
  const others = Object.keys(BROKER_SUBSYSTEMS).filter((f) => f !== folder && !BROKER_SUBSYSTEMS[folder].includes(f));
  const allowed = BROKER_SUBSYSTEMS[folder].join(', ') || 'no other subsystem';
  return {
    regex: `^(\\.\\./)+(${others.join('|')})(/|$)`,
    message: `src/broker/${folder} may import only ${allowed} (eslint.config.mjs BROKER_SUBSYSTEMS; docs/architecture.md says why).`,
  };
}

const LAYERS = [
  { name: 'registry', files: ['src/registry/**/*.ts'], ignores: [], restrict: [REGISTRY_SELF_CONTAINED] },
  ...Object.keys(BROKER_SUBSYSTEMS).flatMap((folder) => {
    const files = [`src/broker/${folder}/**/*.ts`];
    const own = [NOT_VSCODE, NOT_EXTENSION_OR_WEBVIEW, subsystemRule(folder)];
    const sdkHere = SDK_ALLOWED.filter((f) => f.startsWith(`src/broker/${folder}/`));
    return [
      { name: `broker/${folder}`, files, ignores: sdkHere, restrict: [...own, NOT_SDK] },
      ...(sdkHere.length ? [{ name: `broker/${folder} (SDK code)`, files: sdkHere, ignores: [], restrict: own }] : []),
    ];
  }),
  {
    // A file outside every subsystem (which layers.test.ts refuses to let exist) still never reaches the UI or the SDK.
    name: 'broker (outside a subsystem)',
    files: ['src/broker/**/*.ts'],
    ignores: Object.keys(BROKER_SUBSYSTEMS).map((folder) => `src/broker/${folder}/**`),
    restrict: [NOT_VSCODE, NOT_EXTENSION_OR_WEBVIEW, NOT_SDK],
  },
  { name: 'extension', files: ['src/extension/**/*.ts'], ignores: [], restrict: [NOT_SDK] },
  {
    name: 'webview',
    files: ['webview/**/*.ts'],
    ignores: [],
    restrict: [WEBVIEW_BROKER_TYPES_ONLY, WEBVIEW_OWN_AND_SHARED_ONLY],
  },
];

/**
 * `import('x')` is not an import declaration, so no-restricted-imports does not see it (the broker
 * loads SDK transports that way). The same restrictions are applied to it as a syntax rule.
 * esquery's regex literals cannot contain '/', hence \x2f.
 */
function dynamicImportSelectors(restrict) {
  return restrict
    .filter((r) => !r.allowTypeImports)
    .map((r) => ({
      selector: `ImportExpression > Literal.source[value=/${r.regex.replaceAll('/', '\\x2f')}/]`,
      message: r.message,
    }));
}

/**
 * The folders every request passes through. On Node 20 (the broker's runtime) an object literal that
 * opens with a spread and has anything after it gets a hidden class of its own each time it is made
 * (src/broker/shared/objects.ts has the figures): there, merged()/copyWith() instead.
 */
const PER_REQUEST_FOLDERS = ['http', 'routing', 'connection', 'telemetry', 'supervision', 'shared'];
const SPREAD_FIRST = {
  selector: 'ObjectExpression > SpreadElement:first-child ~ *',
  message:
    'An object literal that opens with a spread and has more after it makes a new hidden class per object ' +
    'on Node 20: use merged() or copyWith() from src/broker/shared/objects.ts.',
};
const perRequest = (name) => PER_REQUEST_FOLDERS.some((folder) => name.startsWith(`broker/${folder}`));

const layerConfigs = LAYERS.map(({ name, files, ignores, restrict }) => ({
  name: `layers/${name}`,
  files,
  ignores,
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      { patterns: restrict.map(({ regex, message, allowTypeImports }) => ({ regex, message, allowTypeImports })) },
    ],
    'no-restricted-syntax': ['error', ...dynamicImportSelectors(restrict), ...(perRequest(name) ? [SPREAD_FIRST] : [])],
  },
}));

// --------------------------------------------------------------------------------------------

export default defineConfig(
  {
    name: 'ignored',
    ignores: [
      'dist/**',
      'out/**',
      '.tools/**',
      'node_modules/**',
      'bench/results/**',
      '.test-tmp/**',
      '.wine-node/**',
      '*.vsix',
    ],
  },
  { name: 'js/recommended', ...js.configs.recommended },
  {
    name: 'everything',
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { ecmaVersion: 2023, globals: { ...globals.node } },
    rules: {
      // Sensible for this code base: it already follows them almost everywhere.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': 'error',
      'no-throw-literal': 'error',
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    name: 'javascript',
    files: JS,
    languageOptions: { sourceType: 'module' },
  },
  { name: 'commonjs', files: ['**/*.cjs', 'bin/**/*.js'], languageOptions: { sourceType: 'commonjs' } },
  // TypeScript: the recommended set without type information everywhere, plus the type-aware rules
  // that catch real bugs (a forgotten await, a promise where a callback is expected) and are cheap
  // enough on this tree. The whole recommendedTypeChecked set mostly flags `any` in tests.
  ...tseslint.configs.recommended.map((c) => ({ ...c, files: TS })),
  {
    name: 'typescript',
    files: TS,
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'no-unused-vars': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // Passing on a caught value or an abort reason (typed unknown/any) is fine; rejecting with a literal is not.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // `import x = require('y')` is how TypeScript imports a CommonJS module's export= (Mocha); bare require() is not.
      '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true }],
      '@typescript-eslint/no-implied-eval': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    name: 'tests',
    files: ['test/**/*.ts', 'bench/**'],
    languageOptions: { globals: { ...globals.mocha } },
    rules: {
      // Tests read JSON-RPC payloads whose shape they then assert; `any` there is the honest type.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { name: 'webview', files: ['webview/**'], languageOptions: { globals: { ...globals.browser } } },
  ...layerConfigs,
  prettier,
  {
    name: 'line length',
    // Prettier wraps code at 120 but leaves long strings, template literals and comments alone;
    // 140 leaves room for a line Prettier could not break, and flags prose that should be wrapped.
    // (max-len is deprecated in core in favour of @stylistic and kept until ESLint 11.)
    rules: {
      'max-len': ['error', { code: 140, tabWidth: 2, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    name: 'line length (bench reports)',
    files: ['bench/**'],
    // The bench writes Markdown and SVG, where a paragraph or an element is one line of output;
    // splitting those strings would only scatter the text it writes. Comments are still checked.
    rules: {
      'max-len': [
        'error',
        {
          code: 140,
          tabWidth: 2,
          ignoreUrls: true,
          ignoreRegExpLiterals: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
        },
      ],
    },
  },
);
