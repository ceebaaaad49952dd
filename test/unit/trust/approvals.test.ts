// Unit tests of what an approval binds (the normalised definition and its hash) and of what the
// operator is shown (the approval lines): every covered field changes the hash, every excluded one
// does not, and nothing shown or stored carries a secret value.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { z } from 'zod';
import { ServerDefSchema, type ServerDef } from '../../../src/registry/schema';

type ServerDefInput = z.input<typeof ServerDefSchema>;
import {
  changedFields,
  describeChange,
  fieldDigests,
  hashMaterial,
  normalizeForApproval,
  readEnvFileDigest,
  type EnvFileDigest,
} from '../../../src/broker/trust/approvalMaterial';
import { approvalLines, approvalSummaryText, maskUrl } from '../../../src/broker/trust/approvalSummary';
import { Approvals, ApprovalMismatch, awaitingReason } from '../../../src/broker/trust/approvals';
import { onlyOn } from '../../helpers/platform';

/** Modes are checked where they mean something; Windows uses an ACL set by icacls (Wine only stubs it). */
const posixModes = onlyOn(['linux', 'darwin'], 'POSIX file modes');

const ROOT = path.join(os.tmpdir(), 'sb-unit-root', 'ws');

function def(over: Partial<ServerDefInput> = {}): ServerDef {
  return ServerDefSchema.parse({ name: 'srv', command: 'node', args: ['server.js'], ...over });
}

const hashOf = (d: ServerDef, envFile: EnvFileDigest = null, root = ROOT): string =>
  hashMaterial(normalizeForApproval(d, root, envFile));

describe('approval hash: the normalised definition', () => {
  const base = def({
    env: { PORT: '3000' },
    envFile: '.env',
    headers: {},
    cwd: 'tools',
    grants: ['network'],
    allowedTools: ['read_*'],
    excludeTools: ['write_*'],
  });
  const baseHash = hashOf(base, 'sha256:aa');

  const covered: [string, Partial<ServerDefInput>, EnvFileDigest?][] = [
    ['command', { command: 'python3' }],
    ['args', { args: ['server.js', '--evil'] }],
    ['cwd', { cwd: 'other' }],
    ['env value', { env: { PORT: '3001' } }],
    ['env NODE_OPTIONS', { env: { PORT: '3000', NODE_OPTIONS: '--require evil.cjs' } }],
    ['env key', { env: { PORT2: '3000' } }],
    ['envFile path', { envFile: '../other-project/creds' }],
    ['grants', { grants: ['network', 'secrets'] }],
    ['allowedTools', { allowedTools: ['*'] }],
    ['excludeTools', { excludeTools: [] }],
    ['trust', { trust: 'trusted' }],
    // Who answers, what is held back, what the operator is asked for (issue 28 item 7).
    ['clientFeatures.elicitation', { clientFeatures: { elicitation: 'editor' } }],
    ['clientFeatures.sampling', { clientFeatures: { sampling: 'deny' } }],
    ['onToolChange', { onToolChange: 'quarantine-server' }],
    ['inputs', { inputs: { KEY: { description: 'Paste your AWS secret key' } } }],
  ];
  for (const [what, over] of covered) {
    it(`changes when ${what} changes`, () => {
      const changed = def({ ...base, ...over } as ServerDefInput);
      assert.notEqual(hashOf(changed, 'sha256:aa'), baseHash);
    });
  }

  it('changes with the env file contents, and a missing file is its own state', () => {
    const other = hashOf(base, 'sha256:bb');
    const missing = hashOf(base, 'missing');
    const unreadable = hashOf(base, 'unreadable');
    assert.equal(new Set([baseHash, other, missing, unreadable]).size, 4);
  });

  it('covers remote servers: url, header keys and header values, transport', () => {
    const remote = def({
      transport: 'http',
      command: undefined,
      args: [],
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 'Bearer a' },
    });
    const h = hashOf(remote);
    assert.notEqual(hashOf(def({ ...remote, url: 'https://evil.example.com/mcp' } as ServerDefInput)), h);
    assert.notEqual(hashOf(def({ ...remote, headers: { Authorization: 'Bearer b' } } as ServerDefInput)), h);
    assert.notEqual(
      hashOf(def({ ...remote, headers: { Authorization: 'Bearer a', 'X-Extra': '1' } } as ServerDefInput)),
      h,
    );
    assert.notEqual(hashOf(def({ ...remote, transport: 'sse' } as ServerDefInput)), h);
  });

  const excluded: [string, Partial<ServerDefInput>][] = [
    ['description', { description: 'a new description' }],
    ['enabled', { enabled: false }],
    ['restart', { restart: { maxRetries: 1, backoffMs: 50 } }],
    ['timeouts', { timeouts: { startupMs: 1000, callMs: 1000 } }],
    ['lifecycle', { lifecycle: 'eager' }],
    ['idleStopMs', { idleStopMs: 5000 }],
    // The defaults spelled out are the same definition (an approval from before these were bound holds).
    ['clientFeatures spelled as the default', { clientFeatures: { elicitation: 'caller', sampling: 'caller' } }],
    ['onToolChange spelled as the default', { onToolChange: 'quarantine-tools' }],
  ];
  for (const [what, over] of excluded) {
    it(`does not change when ${what} changes`, () => {
      assert.equal(hashOf(def({ ...base, ...over } as ServerDefInput), 'sha256:aa'), baseHash);
    });
  }

  it('does not change with key order or an equivalent spelling of a path', () => {
    const reordered = def({
      ...base,
      env: { PORT: '3000' },
      grants: ['network'],
      cwd: './tools/',
      envFile: './.env',
    } as ServerDefInput);
    assert.equal(hashOf(reordered, 'sha256:aa'), baseHash);
    const a = def({ env: { A: '1', B: '2' }, headers: {} });
    const b = def({ env: { B: '2', A: '1' }, headers: {} });
    assert.equal(hashOf(a), hashOf(b));
  });

  it('resolves cwd against the registry root: the same text under another root is the same definition', () => {
    assert.equal(hashOf(base, 'sha256:aa', ROOT), hashOf(base, 'sha256:aa', path.join(os.tmpdir(), 'elsewhere')));
    assert.equal(normalizeForApproval(def({ cwd: path.join(ROOT, 'tools') }), ROOT, null).cwd, 'tools');
    assert.equal(normalizeForApproval(def({}), ROOT, null).cwd, '.');
  });

  it('is keyed per user: without the key a guess of a value cannot be checked against the shown hash', () => {
    const material = normalizeForApproval(def({ env: { PIN: '1234' } }), ROOT, null);
    assert.equal(hashMaterial(material, 'user-key'), hashMaterial(material, 'user-key'));
    assert.notEqual(hashMaterial(material, 'user-key'), hashMaterial(material));
    assert.notEqual(hashMaterial(material, 'user-key'), hashMaterial(material, 'another-key'));
  });

  it('names the changed fields, and says "the env file changed" for the contents alone', () => {
    const before = fieldDigests(normalizeForApproval(base, ROOT, 'sha256:aa'));
    const cwdChanged = fieldDigests(
      normalizeForApproval(def({ ...base, cwd: 'x' } as ServerDefInput), ROOT, 'sha256:aa'),
    );
    assert.deepEqual(changedFields(before, cwdChanged), ['cwd']);
    assert.equal(describeChange(['cwd']), 'its working directory changed');
    assert.equal(
      describeChange(['cwd', 'env', 'args']),
      'its working directory, environment variables and arguments changed',
    );
    const fileChanged = fieldDigests(normalizeForApproval(base, ROOT, 'sha256:bb'));
    assert.equal(describeChange(changedFields(before, fileChanged)), 'the env file changed');
    assert.equal(
      changedFields(undefined, before).length,
      Object.keys(before).length,
      'unknown old digests: every field',
    );
  });
});

describe('env file digest', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-unit-envfile-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('digests the bytes, marks a missing file, and never opens what is not a regular file', () => {
    fs.writeFileSync(path.join(dir, '.env'), 'A=1\n');
    const first = readEnvFileDigest(dir, '.env');
    assert.match(String(first), /^sha256:[0-9a-f]{64}$/);
    fs.writeFileSync(path.join(dir, '.env'), 'A=2\n');
    assert.notEqual(readEnvFileDigest(dir, '.env'), first);
    assert.equal(readEnvFileDigest(dir, 'nope.env'), 'missing');
    assert.equal(readEnvFileDigest(dir, '.'), 'unreadable', 'a directory');
    const device = process.platform === 'win32' ? '\\\\.\\NUL' : '/dev/zero';
    assert.equal(readEnvFileDigest(dir, device), 'unreadable', 'a device would never end');
    assert.equal(readEnvFileDigest(dir, undefined), null);
  });
});

describe('approval lines: what the operator is shown', () => {
  const text = (d: ServerDef, envFile: EnvFileDigest = null) => approvalSummaryText(approvalLines(d, ROOT, envFile));

  it('shows command, cwd, env, env file, header keys, grants and tool filters', () => {
    const lines = approvalLines(
      def({
        cwd: 'tools',
        env: { PORT: '3000', NODE_OPTIONS: '--require evil.cjs' },
        envFile: 'creds.env',
        grants: ['secrets'],
        allowedTools: ['read_*'],
        excludeTools: ['rm'],
      }),
      ROOT,
      'sha256:aa',
    );
    const byLabel = new Map(lines.map((l) => [l.label, l]));
    assert.equal(byLabel.get('Runs')!.value, 'node server.js');
    assert.equal(byLabel.get('Working directory')!.value, 'tools');
    assert.equal(byLabel.get('Env PORT')!.value, '3000');
    assert.equal(byLabel.get('Env NODE_OPTIONS')!.value, '--require evil.cjs', 'a loader option is shown as it is');
    assert.match(byLabel.get('Env NODE_OPTIONS')!.warning!, /changes what code the program loads/);
    assert.match(byLabel.get('Env file')!.value, /^creds\.env; its values are passed/);
    assert.equal(byLabel.get('Env file')!.warning, undefined);
    assert.equal(byLabel.get('Grants')!.value, 'secrets');
    assert.equal(byLabel.get('Allowed tools')!.value, 'read_*');
    assert.equal(byLabel.get('Excluded tools')!.value, 'rm');
  });

  it('flags paths outside the registry root', () => {
    const lines = approvalLines(
      def({ envFile: '../other-project/creds', cwd: '../../elsewhere', grants: ['secrets'] }),
      ROOT,
      'sha256:aa',
    );
    assert.equal(
      lines.find((l) => l.label === 'Env file')!.warning,
      '⚠ outside the registry root: ../other-project/creds',
    );
    assert.equal(
      lines.find((l) => l.label === 'Working directory')!.warning,
      '⚠ outside the registry root: ../../elsewhere',
    );
  });

  it('masks secret-looking values, values from ${env:…}, header values and URL credentials', () => {
    const stdio = text(def({ env: { API_TOKEN: 'tok-123456', FROM_ENV: 'x-${env:GITHUB_TOKEN}', PLAIN: 'visible' } }));
    assert.ok(!stdio.includes('tok-123456'));
    assert.ok(!stdio.includes('x-'), 'a template mixing a literal and a reference is masked whole');
    assert.match(stdio, /Env FROM_ENV: •+ \(from your environment: GITHUB_TOKEN\)/);
    assert.match(stdio, /Env PLAIN: visible/);
    const db = text(def({ env: { DATABASE_URL: 'postgres://app:hunter2@db.internal/app' } }));
    assert.ok(!db.includes('hunter2'), db);
    assert.match(db, /postgres:\/\/•+:•+@db\.internal\/app/);
    const remote = text(
      def({
        transport: 'http',
        command: undefined,
        args: [],
        url: 'https://user:pw@mcp.example.com/mcp?api_key=k3y&x=1',
        headers: { Authorization: 'Bearer abcdefgh' },
      }),
    );
    assert.ok(!remote.includes('abcdefgh') && !remote.includes('k3y') && !remote.includes(':pw@'), remote);
    assert.match(remote, /HTTP headers: Authorization \(values hidden\)/);
    assert.equal(maskUrl('not a url'), 'not a url');
  });

  it('says when the env file is missing', () => {
    assert.match(text(def({ envFile: 'x.env' }), 'missing'), /x\.env \(the file does not exist now\)/);
  });
});

describe('Approvals: the per-user record', () => {
  let dir: string;
  let root: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-unit-approvals-'));
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('approves only the hash that was shown, and names what changed otherwise', () => {
    const approvals = new Approvals(path.join(dir, 'approvals.json'), root);
    const shown = def({ trust: 'community', cwd: 'a' });
    const shownHash = approvals.check(shown).hash;
    const swapped = def({ trust: 'community', cwd: 'b' });
    assert.throws(
      () => approvals.approve(swapped, shownHash),
      (e: Error) => e instanceof ApprovalMismatch && /working directory changed/.test(e.message),
    );
    assert.equal(approvals.status(swapped), 'required');
    approvals.approve(shown, shownHash);
    assert.equal(approvals.status(shown), 'approved');
    const check = approvals.check(swapped);
    assert.equal(check.status, 'changed');
    assert.match(awaitingReason(swapped, check)!, /^its working directory changed since it was approved/);
  });

  it('revokes only what was approved: revoking a name never approved says so and writes nothing', () => {
    const file = path.join(dir, 'revoke.json');
    const approvals = new Approvals(file, root);
    const d = def({ name: 'once', trust: 'community' });
    approvals.approve(d, approvals.check(d).hash);
    const written = fs.readFileSync(file, 'utf8');
    assert.equal(approvals.revoke('never'), false, 'a name never approved is not revoked');
    assert.equal(fs.readFileSync(file, 'utf8'), written);
    assert.equal(approvals.revoke('once'), true);
    assert.equal(approvals.status(d), 'required');
    assert.equal(approvals.revoke('once'), false, 'the second revoke finds nothing');
  });

  it('keeps its key next to the record, private to the user', () => {
    const file = path.join(dir, 'keyed', 'approvals.json');
    const a = new Approvals(file, root);
    const key = path.join(dir, 'keyed', 'approvals.key');
    if (posixModes.runs) assert.equal(fs.statSync(key).mode & 0o777, 0o600);
    assert.equal(new Approvals(file, root).hashOf(def()), a.hashOf(def()), 'the same key on the next start');
  });

  it('stores no env or header value', () => {
    const file = path.join(dir, 'secret-check.json');
    const approvals = new Approvals(file, root);
    const d = def({
      trust: 'community',
      env: { API_TOKEN: 'canary-value-1', PLAIN: 'canary-plain-2' },
      headers: { 'X-Key': 'canary-header-3' },
    });
    approvals.approve(d, approvals.hashOf(d));
    const stored = fs.readFileSync(file, 'utf8');
    assert.ok(!/canary-/.test(stored), stored);
    assert.match(stored, /Env PLAIN: \(set; value not recorded\)/, 'the summary names the variable');
  });

  it('asks for acceptance of a workspace-trusted server unless the broker was told to accept them', () => {
    const trusted = def({ trust: 'trusted' });
    const asking = new Approvals(path.join(dir, 'ws-trust.json'), root);
    const check = asking.check(trusted);
    assert.equal(check.status, 'required');
    assert.match(
      awaitingReason(trusted, check)!,
      /this workspace marks it trusted; accept the workspace's trusted servers once/,
    );
    asking.approve(trusted, check.hash);
    assert.equal(asking.status(trusted), 'approved');
    assert.equal(
      new Approvals(path.join(dir, 'other.json'), root, { acceptWorkspaceTrust: true }).status(trusted),
      'not-needed',
    );
    assert.equal(
      new Approvals(path.join(dir, 'other.json'), root, { acceptWorkspaceTrust: true }).status(
        def({ trust: 'community' }),
      ),
      'required',
    );
  });
});
