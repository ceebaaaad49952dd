// Bad names: path traversal (../, absolute paths, backslashes, drive letters), NUL, very long,
// unicode look-alikes and invisible characters, reserved and separator names.
// Proves: the writer (through every facade tool that takes a name, and the RegistryWriter
// directly under a fast-check property) refuses them and touches no file anywhere; the loader
// refuses files so named and starts nothing from them.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
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
import { RegistryWriter } from '../../src/registry/writer';
import { NAME_PATTERN } from '../../src/registry/names';
import {
  descendants,
  facade,
  faultServer,
  filesUnder,
  noteUpstreams,
  report,
  startBroker,
  status,
  type Json,
} from './lib';

const SEED = Number(process.env.FAULTS_SEED ?? 20261202);
const PROPERTY_RUNS = Number(process.env.FAULTS_NAME_RUNS ?? 2000);

export const HOSTILE_NAMES = [
  '../x',
  '../../etc/passwd',
  '../../../../../../tmp/owned',
  '/etc/passwd',
  '/tmp/owned',
  'a/../../b',
  'a/b',
  'a\\..\\..\\b',
  '..\\x',
  '..',
  '.',
  '',
  'a\u0000b',
  '\u0000',
  'x'.repeat(32),
  'x'.repeat(10_000),
  'C:\\x',
  'c:x',
  '\\\\server\\share',
  '%2e%2e%2fx',
  '~root',
  '$HOME',
  '`id`',
  '$(id)',
  '\u0455erver',
  'ech\u043e',
  '\uff45cho',
  'e\u200bcho',
  'echo\u202e',
  '\ufb01le',
  'ec\u0301ho',
  '\u2024\u2024',
  'x\u2215y',
  'Echo',
  'ECHO',
  'switchboard',
  'a__b',
  '-x',
  '1x',
  'x.yaml',
  'x y',
  'x\n',
  '\tx',
  'x:y',
  'x*',
  'x?',
  '.hidden',
  'x/',
  'x.',
  'x_y',
];

function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of filesUnder(dir)) out.set(f, fs.readFileSync(f, 'utf8'));
  return out;
}

function diff(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [f, text] of after)
    if (!before.has(f)) changes.push(`created ${f}`);
    else if (before.get(f) !== text) changes.push(`changed ${f}`);
  for (const f of before.keys()) if (!after.has(f)) changes.push(`removed ${f}`);
  return changes;
}

describe('faults: hostile names', function () {
  this.timeout(180_000);
  let broker: BrokerProcess;
  let client: Client;
  let base: string;
  let root: string;

  before(async () => {
    // root and home side by side under one base, with sentinels around them: any write or
    // delete escaping the registry shows up in the base's snapshot.
    base = tempDir('sb-fault-names-');
    root = path.join(base, 'ws', 'root');
    fs.mkdirSync(root, { recursive: true });
    writeRegistry(base, {
      'sentinel.yaml': 'name: sentinel\n',
      'ws/mcp-servers.d/x.yaml': 'outside\n',
      'ws/root/sentinel.txt': 'keep\n',
      'tmp/owned': 'keep\n',
    });
    writeRegistry(root, {
      'mcp-servers.d/echo.yaml': faultServer('echo', 'bare.mjs'),
      'clients.d/reader.yaml': 'name: reader\n',
      'prompts.d/review.yaml': 'name: review\nmessages:\n  - role: user\n    content: hi\n',
    });
    broker = await startBroker({ root, home: path.join(base, 'home') });
    client = await connect(broker.url, broker.token, 'names');
    await waitFor(async () => (await status(client, 'echo')).state === 'running', 'echo', 30_000);
    noteUpstreams(broker);
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    await broker?.stop();
    removeTempDirs();
  });

  it(`every facade tool that takes a name refuses ${HOSTILE_NAMES.length} hostile names and writes nothing`, async () => {
    const before = snapshot(path.join(base, 'ws'));
    const sentinels = snapshot(path.join(base, 'tmp'));
    let calls = 0;
    let longestError = 0;
    const failures: string[] = [];
    const tools: [string, (n: string) => Json][] = [
      [
        'upsert_server',
        (n) => ({ definition: { name: n, trust: 'trusted', command: process.execPath, args: ['-e', '0'] } }),
      ],
      ['upsert_prompt', (n) => ({ definition: { name: n, messages: [{ role: 'user', content: 'x' }] } })],
      ['upsert_client', (n) => ({ definition: { name: n, mcp_allow: ['read', 'write'] } })],
      ['remove_server', (n) => ({ name: n })],
      ['remove_prompt', (n) => ({ name: n })],
      ['remove_client', (n) => ({ name: n })],
      ['enable_server', (n) => ({ name: n })],
      ['disable_server', (n) => ({ name: n })],
      ['restart_server', (n) => ({ name: n })],
      ['server_status', (n) => ({ name: n })],
      ['tail_logs', (n) => ({ name: n })],
      ['approve_server', (n) => ({ name: n })],
      ['revoke_approval', (n) => ({ name: n })],
      ['client_connection', (n) => ({ name: n })],
      ['probe_server', (n) => ({ definition: { name: n, command: process.execPath, args: ['-e', '0'] } })],
      ['upsert_policy', (n) => ({ definition: { name: n, rules: [{ name: 'r', action: 'deny' }] } })],
      ['remove_policy', (n) => ({ name: n })],
      ['approve_policy', (n) => ({ name: n, hash: 'x' })],
      ['revoke_policy', (n) => ({ name: n })],
    ];
    for (const name of HOSTILE_NAMES) {
      for (const [tool, args] of tools) {
        calls++;
        let result;
        try {
          result = await client.callTool({ name: `switchboard__${tool}`, arguments: args(name) });
        } catch (err) {
          // A protocol-level refusal is a refusal too.
          if (!/name|invalid|must|not/i.test((err as Error).message))
            failures.push(`${tool}(${JSON.stringify(name).slice(0, 30)}): ${(err as Error).message}`);
          continue;
        }
        if (!result.isError)
          failures.push(`${tool}(${JSON.stringify(name).slice(0, 30)}) was accepted: ${textOf(result).slice(0, 120)}`);
        // Recorded, not failed: the refusal quotes the name whole (a 10,000-character name gives a ~20 KB message).
        longestError = Math.max(longestError, textOf(result).length);
      }
    }
    const after = snapshot(path.join(base, 'ws'));
    const changes = diff(before, after).filter((c) => !c.includes(`${path.sep}home${path.sep}`));
    report('hostile-names-facade', {
      names: HOSTILE_NAMES.length,
      tools: tools.length,
      calls,
      faultsInjected: calls,
      accepted: failures.length,
      filesTouched: changes.length,
      longestErrorChars: longestError,
    });
    assert.deepEqual(failures.slice(0, 20), []);
    assert.deepEqual(changes, [], 'no file created, changed or removed in or around the registry');
    assert.deepEqual(diff(sentinels, snapshot(path.join(base, 'tmp'))), []);
    const tokens = filesUnder(path.join(base, 'home')).filter((f) => f.endsWith('.token'));
    assert.ok(
      tokens.every((f) => /[\\/]tokens[\\/](operator\.token|clients[\\/][a-z][a-z0-9-]*\.token)$/.test(f)),
      `token files stay in tokens/: ${tokens.join(', ')}`,
    );
  });

  it(`the RegistryWriter refuses or confines any name (fast-check, ${PROPERTY_RUNS} runs per kind)`, async () => {
    const sandbox = tempDir('sb-fault-writer-');
    const wroot = path.join(sandbox, 'a', 'root');
    fs.mkdirSync(wroot, { recursive: true });
    fs.writeFileSync(path.join(sandbox, 'a', 'outside.yaml'), 'keep\n');
    const writer = new RegistryWriter(wroot);
    const nameArb = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom(...HOSTILE_NAMES),
      fc
        .array(fc.constantFrom('..', '.', '/', '\\', 'a', 'x', '\u0000', '%2f', 'mcp-servers.d', 'root', 'outside'), {
          maxLength: 8,
        })
        .map((p) => p.join('')),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/),
    );
    let accepted = 0;
    let refused = 0;
    const escapes: string[] = [];
    for (const kind of ['server', 'prompt', 'client'] as const) {
      const defOf = (name: string): Json =>
        kind === 'server'
          ? { name, command: 'node' }
          : kind === 'prompt'
            ? { name, messages: [{ role: 'user', content: 'x' }] }
            : { name };
      for (const name of fc.sample(nameArb, { seed: SEED + kind.length, numRuns: PROPERTY_RUNS })) {
        const before = new Set(filesUnder(sandbox));
        try {
          const written = await writer.upsert(kind, defOf(name));
          accepted++;
          const dir = path.join(wroot, { server: 'mcp-servers.d', prompt: 'prompts.d', client: 'clients.d' }[kind]);
          if (!NAME_PATTERN.test(name) || written.path !== path.join(dir, `${name}.yaml`))
            escapes.push(`${kind} ${JSON.stringify(name)} → ${written.path}`);
          await writer.remove(kind, name);
        } catch {
          refused++;
          try {
            await writer.remove(kind, name);
            escapes.push(`remove accepted ${JSON.stringify(name)}`);
          } catch {
            /* refused too */
          }
        }
        const after = filesUnder(sandbox).filter((f) => !before.has(f));
        if (after.length) escapes.push(`${JSON.stringify(name)} left ${after.join(', ')}`);
        if (!fs.existsSync(path.join(sandbox, 'a', 'outside.yaml'))) {
          escapes.push(`${JSON.stringify(name)} removed a file outside`);
          break;
        }
      }
    }
    report('hostile-names-writer', {
      runs: PROPERTY_RUNS * 3,
      faultsInjected: refused,
      accepted,
      refused,
      escapes: escapes.length,
    });
    assert.deepEqual(escapes.slice(0, 20), []);
    assert.ok(refused > 0 && accepted > 0);
  });

  it('the loader refuses files with hostile names and starts nothing from them', async () => {
    // Names a file system can hold (no NUL, no '/'); each file is otherwise a valid, trusted server.
    const onDisk = HOSTILE_NAMES.filter(
      (n) =>
        n &&
        !n.includes('\0') &&
        !n.includes('/') &&
        n.length < 200 &&
        n !== '.' &&
        n !== '..' &&
        !/^\.|\n|\t/.test(n) &&
        !n.endsWith('.'),
    ).concat(['Bad Name', 'x'.repeat(120), 'name\nwith-newline']);
    const children = descendants(broker.proc.pid!).length;
    const dir = path.join(root, 'mcp-servers.d');
    const written: string[] = [];
    for (const name of onDisk) {
      const file = path.join(dir, `${name}.yaml`);
      try {
        fs.writeFileSync(file, faultServer('placeholder', 'bare.mjs').replace('name: placeholder\n', ''));
        written.push(file);
      } catch {
        /* the file system refused the name itself */
      }
    }
    // Also a good file name whose content names another (traversing) server.
    const inner = path.join(dir, 'inner.yaml');
    fs.writeFileSync(
      inner,
      faultServer('../../etc/passwd', 'bare.mjs').replace('name: ../../etc/passwd', 'name: "../../etc/passwd"'),
    );
    written.push(inner);
    const problems = await waitFor(
      async () => {
        const list = (await facade(client, 'registry_problems')).problems as Json[];
        return written.every((f) => list.some((p) => p.file === f && p.severity === 'error')) ? list : undefined;
      },
      'every hostile file to be reported',
      20_000,
      100,
    );
    const servers = ((await facade(client, 'list_servers')).servers as Json[]).map((s) => s.name);
    assert.deepEqual(servers, ['echo'], 'only the good server is loaded');
    assert.equal(descendants(broker.proc.pid!).length, children, 'nothing was started');
    for (const f of written) fs.unlinkSync(f);
    await waitFor(
      async () => ((await facade(client, 'registry_problems')).problems as Json[]).length === 0,
      'problems cleared',
      20_000,
      100,
    );
    report('hostile-names-loader', {
      files: written.length,
      faultsInjected: written.length,
      reported: written.length,
      loaded: 0,
      started: 0,
      problems: problems.length,
    });
  });
});
