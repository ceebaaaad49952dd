// What a broker launch runs (flags, arguments, environment), and the broker log helpers on real files.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LogTail, readTail, rotateLog } from '../../../src/broker/daemon/brokerLog';
import { launchPlan } from '../../../src/broker/daemon/brokerLauncher';
import { BROKER_ENV, BROKER_NODE_FLAGS } from '../../../src/broker/daemon/runtime';

describe('unit: broker launcher', () => {
  const base = { root: '/work/repo', script: '/ext/dist/broker.js', idleExitSeconds: 300 };

  it('runs the script as `serve` with the broker flags, on a free port, reporting readiness as JSON', () => {
    const plan = launchPlan({ ...base, execPath: '/usr/bin/electron', env: {} });
    assert.equal(plan.command, '/usr/bin/electron');
    assert.deepEqual(plan.args, [
      ...BROKER_NODE_FLAGS,
      '/ext/dist/broker.js',
      'serve',
      '--root',
      '/work/repo',
      '--port',
      '0',
      '--json',
      '--idle-exit',
      '300',
    ]);
    assert.equal(plan.cwd, '/work/repo', 'relative paths in the registry resolve against the root');
  });

  it('adds --untrusted only in Restricted Mode, and passes the idle time through', () => {
    assert.ok(!launchPlan(base).args.includes('--untrusted'));
    const plan = launchPlan({ ...base, untrusted: true, idleExitSeconds: 600 });
    assert.equal(plan.args.at(-1), '--untrusted');
    assert.equal(plan.args[plan.args.indexOf('--idle-exit') + 1], '600');
  });

  it('defaults to this Node', () => {
    assert.equal(launchPlan(base).command, process.execPath);
  });

  it('adds the broker environment where the caller did not set it, and Electron runs as Node', () => {
    const key = Object.keys(BROKER_ENV)[0];
    const plain = launchPlan({ ...base, env: { PATH: '/bin' } }).env;
    assert.equal(plain.PATH, '/bin');
    assert.equal(plain[key], BROKER_ENV[key]);
    assert.equal(plain.ELECTRON_RUN_AS_NODE, '1');
    const own = launchPlan({ ...base, env: { [key]: 'mine' } }).env;
    assert.equal(own[key], 'mine', 'a value the user set wins');
  });
});

describe('unit: broker log', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-log-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('quotes the last lines written since the launch, without the JSON ready lines', () => {
    const file = path.join(dir, 'broker.log');
    fs.writeFileSync(file, 'old run\n');
    const from = fs.statSync(file).size;
    fs.appendFileSync(file, '[switchboard] a\n{"event":"ready"}\n[switchboard] b\nc\nd\ne\nf\n');
    assert.equal(readTail(file, from), '[switchboard] b | c | d | e | f');
    assert.equal(readTail(file, from, 2), 'e | f');
    assert.equal(readTail(path.join(dir, 'none.log'), 0), '', 'no log: nothing to quote');
  });

  it('rotates a log past the size limit to .1 and leaves a small one alone', () => {
    const file = path.join(dir, 'broker.log');
    fs.writeFileSync(file, 'x'.repeat(10));
    rotateLog(file, 100);
    assert.ok(fs.existsSync(file) && !fs.existsSync(`${file}.1`));
    fs.writeFileSync(file, 'x'.repeat(101));
    rotateLog(file, 100);
    assert.ok(!fs.existsSync(file));
    assert.equal(fs.readFileSync(`${file}.1`, 'utf8').length, 101);
    rotateLog(path.join(dir, 'none.log'), 100);
  });

  it('follows a growing log line by line from an offset, holding back a partial line', async () => {
    const file = path.join(dir, 'broker.log');
    fs.writeFileSync(file, 'before\n');
    const lines: string[] = [];
    const tail = new LogTail(file, fs.statSync(file).size, (l) => lines.push(l));
    try {
      fs.appendFileSync(file, 'one\ntw');
      fs.appendFileSync(file, 'o\n\nthree\n');
      const deadline = Date.now() + 10_000;
      while (lines.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(lines, ['one', 'two', 'three']);
    } finally {
      tail.close();
    }
  });
});
