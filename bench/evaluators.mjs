// Measures the three rule evaluators this project could use (issue 33): compile and evaluate cost
// per call, bundled size, and the message a malformed rule gets. Run: node bench/evaluators.mjs
// Figures are for docs/stack.md; nothing here asserts a speed.
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const EXPR = 'args.path.startsWith("docs/") && !args.path.contains("..") && size(args.content) < 100000';
const BROKEN = 'args.path.startsWith("docs/") && && true';
const ARGS = { path: 'docs/guide.md', content: 'hello' };
const N = 20000;

function time(label, n, fn) {
  fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return (performance.now() - t0) / n;
}

async function bundleBytes(entry) {
  const out = await build({
    stdin: { contents: entry, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    minify: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    logLevel: 'silent',
  });
  return out.outputFiles.reduce((n, f) => n + f.contents.length, 0);
}

const rows = [];

{
  const cel = await import('@marcbachmann/cel-js');
  const compiled = cel.parse(EXPR);
  const evalUs = time('eval', N, () => compiled({ args: ARGS })) * 1000;
  const compileUs = time('compile', 2000, (i) => cel.parse(EXPR + ' || ' + i + ' == 0')) * 1000;
  let message = '';
  try {
    cel.parse(BROKEN);
  } catch (e) {
    message = e.message;
  }
  rows.push({
    lib: '@marcbachmann/cel-js',
    compileUs,
    evalUs,
    bytes: await bundleBytes("export * from '@marcbachmann/cel-js'"),
    message,
  });
}
{
  const { celEnv, plan, parse: p } = await import('@bufbuild/cel');
  const { strings } = await import('@bufbuild/cel/ext').catch(() => ({ strings: undefined }));
  const env = celEnv(strings ? { funcs: strings } : {});
  const planned = plan(env, p(EXPR));
  const evalUs = time('eval', N, () => planned({ args: ARGS })) * 1000;
  const compileUs = time('compile', 2000, (i) => plan(env, p(EXPR + ' || ' + i + ' == 0'))) * 1000;
  let message = '';
  try {
    p(BROKEN);
  } catch (e) {
    message = e.message;
  }
  rows.push({
    lib: '@bufbuild/cel',
    compileUs,
    evalUs,
    bytes: await bundleBytes("export * from '@bufbuild/cel'"),
    message,
  });
}
{
  const cedar = require('@cedar-policy/cedar-wasm/nodejs');
  const policy = `permit(principal, action == Action::"call", resource) when { context.path like "docs/*" && !(context.path like "*..*") };`;
  const call = () =>
    cedar.isAuthorized({
      principal: { type: 'Client', id: 'copilot' },
      action: { type: 'Action', id: 'call' },
      resource: { type: 'Tool', id: 'files__write' },
      context: ARGS,
      policies: { staticPolicies: policy },
      entities: [],
    });
  cedar.preparsePolicySet('bench', { staticPolicies: policy });
  const stateful = () =>
    cedar.statefulIsAuthorized({
      principal: { type: 'Client', id: 'copilot' },
      action: { type: 'Action', id: 'call' },
      resource: { type: 'Tool', id: 'files__write' },
      context: ARGS,
      preparsedPolicySetId: 'bench',
      entities: [],
    });
  const preparsedUs = time('eval', 5000, stateful) * 1000;
  const evalUs = time('eval', 5000, call) * 1000;
  const compileUs =
    time('compile', 500, (i) => cedar.checkParsePolicySet({ staticPolicies: policy + `// ${i}` })) * 1000;
  const bad = cedar.checkParsePolicySet({
    staticPolicies: 'permit(principal, action, resource) when { context.path like && };',
  });
  const message = JSON.stringify(bad.errors?.[0] ?? bad).slice(0, 300);
  const fs = await import('node:fs');
  const dir = require.resolve('@cedar-policy/cedar-wasm/nodejs').replace(/cedar_wasm\.js$/, '');
  const bytes = fs.statSync(dir + 'cedar_wasm_bg.wasm').size + fs.statSync(dir + 'cedar_wasm.js').size;
  rows.push({
    lib: `@cedar-policy/cedar-wasm (evaluate: isAuthorized with the policy text; ${preparsedUs.toFixed(1)} µs preparsed)`,
    compileUs,
    evalUs,
    bytes,
    message,
  });
}
for (const r of rows)
  console.log(
    `${r.lib}\n  compile ${r.compileUs.toFixed(1)} µs · evaluate ${r.evalUs.toFixed(2)} µs · bundled ${(r.bytes / 1024).toFixed(0)} KiB\n  malformed: ${r.message.split('\n').join('\n             ')}`,
  );
