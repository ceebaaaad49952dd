// Bad input in the registry: random text, random YAML, and valid YAML that breaks the schema
// (wrong types, unknown and misspelt keys, bad names, cross-field mistakes, alias bombs).
// Proves: the parser never throws and always names the file with a line and column, quickly;
// a live broker reports every bad file with file:line:column (in registry_problems and its
// log), never crashes, and the rest of the registry stays live — good servers keep their
// process, a good file that is broken keeps its last good version running.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  removeTempDirs,
  tempDir,
  textOf,
  waitFor,
  writeRegistry,
  type BrokerProcess,
} from '../helpers/broker';
import { parseDefinition } from '../../src/registry/parse';
import type { Kind } from '../../src/registry/schema';
import { descendants, facade, faultServer, noteUpstreams, report, rssMb, startBroker, status, type Json } from './lib';

const SEED = Number(process.env.FAULTS_SEED ?? 20261202);
const OFFLINE_CASES = Number(process.env.FAULTS_REGISTRY_CASES ?? 6000);
const LIVE_ROUNDS = 12;
const LIVE_PER_ROUND = 25;
const KINDS: Kind[] = ['server', 'prompt', 'client', 'policy'];
const DIRS: Record<Kind, string> = {
  server: 'mcp-servers.d',
  prompt: 'prompts.d',
  client: 'clients.d',
  policy: 'policies.d',
};

// ---------------------------------------------------------------------------------------------
// Generators.

const yamlTokens = fc.constantFrom(
  'name:',
  'command:',
  'args:',
  'trust:',
  'transport:',
  'url:',
  'env:',
  'grants:',
  'restart:',
  'timeouts:',
  'enabled:',
  'messages:',
  'mcp_allow:',
  'tools:',
  ' ',
  '  ',
  '\n',
  '\n  ',
  '\n- ',
  '- ',
  ': ',
  ':',
  '"',
  "'",
  '{',
  '}',
  '[',
  ']',
  ',',
  '#',
  '&a ',
  '*a',
  '!!binary ',
  '!!str',
  '!custom',
  '---',
  '...',
  '|',
  '>',
  '%YAML 1.2',
  'true',
  'no',
  '~',
  'null',
  '0x1F',
  '1e9',
  '-1',
  '.inf',
  'echo',
  'node',
  'x',
  '\t',
  '\r\n',
  '\u0000',
  '\ufeff',
  '😀',
  '? ',
  '<<: *a',
);
const tokenSoup = fc.array(yamlTokens, { maxLength: 60 }).map((t) => t.join(''));
const randomText = fc.string({ unit: 'binary', maxLength: 300 });
const randomYamlOfJson = fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v));

const wrongValue = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
);
const base: Record<Kind, Json> = {
  server: {
    name: 'NAME',
    trust: 'trusted',
    command: 'node',
    args: ['x.js'],
    env: { A: 'b' },
    restart: { maxRetries: 2, backoffMs: 100 },
    timeouts: { callMs: 1000 },
  },
  prompt: {
    name: 'NAME',
    description: 'd',
    arguments: [{ name: 'file', required: true }],
    messages: [{ role: 'user', content: 'Review {{file}}' }],
  },
  client: { name: 'NAME', mcp_allow: ['read'], tools: { deny: ['x__*'] } },
  policy: {
    name: 'NAME',
    rules: [{ name: 'r', servers: ['x'], when: 'args.a == 1', action: 'deny', message: 'no' }],
    limits: [{ name: 'l', callsPerMinute: 5 }],
  },
};
/** A valid definition with exactly one thing made wrong. */
const schemaBreaker = (kind: Kind): fc.Arbitrary<Json> =>
  fc
    .tuple(
      fc.constantFrom('wrong-type', 'unknown-key', 'misspelt-key', 'bad-name', 'cross-field', 'nested-wrong'),
      fc.constantFrom(...Object.keys(base[kind])),
      wrongValue,
      fc.string({ minLength: 1, maxLength: 12 }),
    )
    .map(([how, key, value, word]) => {
      const def: Json = structuredClone(base[kind]);
      switch (how) {
        case 'wrong-type':
          def[key] = typeof def[key] === typeof value && !Array.isArray(value) ? [value] : value;
          break;
        case 'unknown-key':
          def[`zz${word.replace(/[^a-z]/gi, '')}`] = value;
          break;
        case 'misspelt-key': {
          const v = def[key];
          delete def[key];
          def[key.slice(0, -1) + (key.endsWith('x') ? 'y' : 'x')] = v;
          break;
        }
        case 'bad-name': {
          const bad = ['../x', 'Bad Name', 'a__b', 'switchboard', '\u0455erver', 'x'.repeat(40), ''];
          def.name = bad[word.length % bad.length];
          break;
        }
        case 'cross-field':
          if (kind === 'server') {
            def.transport = 'http';
          } // a remote server with a command and no url
          else if (kind === 'prompt') {
            def.messages = [{ role: 'user', content: 'uses {{undeclared}}' }];
          } else {
            def.mcp_allow = ['read', 'read'];
          }
          break;
        default:
          if (kind === 'server') def.restart = { maxRetries: -1, backoffMs: 'soon' };
          else if (kind === 'prompt') def.messages = [{ role: 'system', content: 5 }];
          else def.tools = { allow: [''] };
      }
      return def;
    });
const aliasBomb = fc.integer({ min: 3, max: 9 }).map((n) => {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < n; i++)
    lines.push(
      `a${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  return lines.join('\n') + '\n';
});

type Sample = { kind: Kind; text: string; gen: string };
function samples(n: number, seed: number): Sample[] {
  const one = fc.constantFrom(...KINDS).chain((kind) =>
    fc.oneof(
      { weight: 2, arbitrary: randomText.map((text) => ({ kind, text, gen: 'random-text' })) },
      { weight: 3, arbitrary: tokenSoup.map((text) => ({ kind, text, gen: 'yaml-token-soup' })) },
      { weight: 2, arbitrary: randomYamlOfJson.map((text) => ({ kind, text, gen: 'yaml-of-random-json' })) },
      {
        weight: 4,
        arbitrary: schemaBreaker(kind).map((def) => ({ kind, text: stringify(def), gen: 'schema-breaker' })),
      },
      { weight: 1, arbitrary: aliasBomb.map((text) => ({ kind, text, gen: 'alias-bomb' })) },
    ),
  );
  return fc.sample(one, { seed, numRuns: n });
}

/** The rules every parse result follows. Returns why not, or undefined. */
function checkResult(file: string, text: string, result: ReturnType<typeof parseDefinition>): string | undefined {
  const lines = text.split(/\r\n|\r|\n/).length + 1;
  for (const p of result.problems) {
    if (p.file !== file) return `problem names ${p.file}`;
    if (!Number.isInteger(p.line) || p.line < 1 || p.line > lines) return `line ${p.line} outside 1..${lines}`;
    if (!Number.isInteger(p.column) || p.column < 1) return `column ${p.column}`;
    if (typeof p.message !== 'string' || !p.message) return 'empty message';
  }
  if (!result.def && !result.problems.some((p) => p.severity === 'error')) return 'rejected without an error';
  return undefined;
}

describe('faults: registry fuzzing', function () {
  this.timeout(300_000);

  it(`parses ${OFFLINE_CASES} random and schema-breaking files without throwing, each problem positioned`, () => {
    const failures: string[] = [];
    const byGen = new Map<string, { n: number; valid: number }>();
    let slowest = 0;
    let problems = 0;
    // The yaml library warns on process for collection keys ({a: 1}: x); thousands of such lines
    // would drown the report. Counted instead, and put back afterwards.
    const emitWarning = process.emitWarning;
    let yamlWarnings = 0;
    process.emitWarning = (() => {
      yamlWarnings++;
    }) as typeof process.emitWarning;
    try {
      for (const [i, s] of samples(OFFLINE_CASES, SEED).entries()) {
        const file = `/registry/${DIRS[s.kind]}/fz-${i}.yaml`;
        const t0 = performance.now();
        let result;
        try {
          result = parseDefinition(s.kind, file, s.text);
        } catch (err) {
          failures.push(`${s.gen} threw ${(err as Error).message} on ${JSON.stringify(s.text).slice(0, 100)}`);
          continue;
        }
        slowest = Math.max(slowest, performance.now() - t0);
        problems += result.problems.length;
        const why = checkResult(file, s.text, result);
        if (why) failures.push(`${s.gen}: ${why} on ${JSON.stringify(s.text).slice(0, 100)}`);
        if (s.gen === 'schema-breaker' && result.def)
          failures.push(`schema-breaker accepted ${JSON.stringify(s.text).slice(0, 120)}`);
        const g = byGen.get(s.gen) ?? { n: 0, valid: 0 };
        g.n++;
        if (result.def) g.valid++;
        byGen.set(s.gen, g);
      }
    } finally {
      process.emitWarning = emitWarning;
    }
    report('registry-fuzz-offline', {
      seed: SEED,
      yamlWarnings,
      files: OFFLINE_CASES,
      faultsInjected: OFFLINE_CASES,
      problemsReported: problems,
      failures: failures.length,
      slowestParseMs: Math.round(slowest),
      byGenerator: Object.fromEntries(byGen),
    });
    assert.deepEqual(failures.slice(0, 20), []);
    assert.ok(slowest < 2000, `every parse is quick (slowest ${slowest} ms)`);
  });

  describe('against a live broker', () => {
    let broker: BrokerProcess;
    let client: Client;
    let root: string;

    before(async () => {
      root = tempDir('sb-fault-regfuzz-');
      writeRegistry(root, {
        'mcp-servers.d/alpha.yaml': faultServer('alpha', 'bare.mjs'),
        'mcp-servers.d/beta.yaml': faultServer('beta', 'bare.mjs'),
        'prompts.d/review.yaml': 'name: review\nmessages:\n  - role: user\n    content: Review it\n',
        'clients.d/reader.yaml': 'name: reader\nmcp_allow: [read]\n',
      });
      // Every kind's folder exists from the start, as in a workspace that has each kind.
      for (const dir of Object.values(DIRS)) fs.mkdirSync(path.join(root, dir), { recursive: true });
      broker = await startBroker({ root });
      client = await connect(broker.url, broker.token, 'regfuzz');
      await waitFor(
        async () =>
          (await status(client, 'alpha')).state === 'running' && (await status(client, 'beta')).state === 'running',
        'good servers',
        30_000,
      );
      noteUpstreams(broker);
    });

    after(async () => {
      await client?.close().catch(() => undefined);
      await broker?.stop();
      removeTempDirs();
    });

    it(`reports ${LIVE_ROUNDS * LIVE_PER_ROUND} bad files with file:line:column while the good ones stay live`, async () => {
      const alphaPid = (await status(client, 'alpha')).pid;
      const betaPid = (await status(client, 'beta')).pid;
      const children = descendants(broker.proc.pid!).length;
      const rssStart = rssMb(broker.proc.pid!);
      const pool = samples(LIVE_ROUNDS * LIVE_PER_ROUND * 3, SEED + 7);
      let next = 0;
      let written = 0;
      let reported = 0;
      const failures: string[] = [];
      for (let round = 0; round < LIVE_ROUNDS; round++) {
        const files: { rel: string; abs: string }[] = [];
        while (files.length < LIVE_PER_ROUND && next < pool.length) {
          const s = pool[next++];
          const rel = `${DIRS[s.kind]}/fz-${round}-${files.length}.yaml`;
          // Only files known to be invalid: a valid random definition is not what this tests.
          if (parseDefinition(s.kind, path.join(root, rel), s.text).def) continue;
          files.push({ rel, abs: path.join(root, rel) });
          fs.writeFileSync(path.join(root, rel), s.text);
        }
        written += files.length;
        const problems = await waitFor(
          async () => {
            const list = (await facade(client, 'registry_problems')).problems as Json[];
            return files.every((f) => list.some((p) => p.file === f.abs)) ? list : undefined;
          },
          `round ${round}: every bad file reported`,
          20_000,
          100,
        );
        for (const f of files) {
          const mine = problems.filter((p) => p.file === f.abs);
          if (!mine.some((p) => p.severity === 'error')) failures.push(`${f.rel}: no error reported`);
          for (const p of mine) {
            if (!(Number.isInteger(p.line) && p.line >= 1 && Number.isInteger(p.column) && p.column >= 1))
              failures.push(`${f.rel}: bad position ${p.line}:${p.column}`);
            if (!String(p.text).startsWith(`${f.rel}:${p.line}:${p.column} `))
              failures.push(`${f.rel}: text ${p.text}`);
          }
          reported++;
        }
        // A good file broken in the same round keeps its last good version (same process).
        const alphaFile = path.join(root, 'mcp-servers.d/alpha.yaml');
        const good = fs.readFileSync(alphaFile, 'utf8');
        if (round % 3 === 0)
          fs.writeFileSync(alphaFile, pool[(round * 7) % pool.length].text + '\ncomand: [unclosed\n');
        assert.equal(
          textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: `r${round}` } })),
          `echo: r${round}`,
        );
        assert.equal(
          textOf(await client.callTool({ name: 'beta__echo', arguments: { text: `r${round}` } })),
          `echo: r${round}`,
        );
        for (const f of files) fs.unlinkSync(f.abs);
        if (round % 3 === 0) {
          await waitFor(
            async () =>
              ((await facade(client, 'registry_problems')).problems as Json[]).some((p) => p.file === alphaFile),
            'the broken good file to be reported',
            20_000,
            100,
          );
          assert.equal((await status(client, 'alpha')).pid, alphaPid, 'the last good alpha stays running');
          fs.writeFileSync(alphaFile, good);
        }
        await waitFor(
          async () => ((await facade(client, 'registry_problems')).problems as Json[]).length === 0,
          `round ${round}: problems cleared`,
          20_000,
          100,
        );
      }
      const logged = broker.stderr.filter((l) => /fz-\d+-\d+\.yaml:\d+:\d+: /.test(l)).length;
      assert.equal(broker.proc.exitCode, null, 'the broker is alive');
      assert.equal((await status(client, 'alpha')).pid, alphaPid);
      assert.equal((await status(client, 'beta')).pid, betaPid);
      assert.equal(descendants(broker.proc.pid!).length, children, 'no bad file started a process');
      const servers = (await facade(client, 'list_servers')).servers as Json[];
      assert.deepEqual(servers.map((s) => s.name).sort(), ['alpha', 'beta']);
      const rssEnd = rssMb(broker.proc.pid!);
      report('registry-fuzz-live', {
        rounds: LIVE_ROUNDS,
        files: written,
        faultsInjected: written + Math.ceil(LIVE_ROUNDS / 3),
        reportedWithPosition: reported,
        loggedLines: logged,
        failures: failures.length,
        goodServersRestarted: 0,
        brokerRssMbStart: rssStart,
        brokerRssMbEnd: rssEnd,
      });
      assert.deepEqual(failures.slice(0, 20), []);
      assert.ok(
        logged >= written,
        `the broker log names every bad file with file:line:column (${logged} lines for ${written} files)`,
      );
    });
  });
});
