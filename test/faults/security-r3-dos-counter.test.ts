// Security round 3, item 13 (issue 28): the token-counting child (`<broker entry> count-tokens`)
// dies with the broker and with any parent, and has a deadline. Real processes throughout: a real
// broker killed with SIGKILL while its child counts a hostile definition, a parent of our own
// killed while the child's stdin stays open (only the parent check can notice), and the broker's
// own processCounter against the built bundle. The bounded counting itself is tested in
// security-r3-dos.test.ts (a hostile upstream's 100,000-letter word, counted).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  BROKER_JS,
  connect,
  fixtureServer,
  removeTempDirs,
  tempDir,
  track,
  waitFor,
  writeRegistry,
} from '../helpers/broker';
import { countHere, processCounter } from '../../src/broker/catalog/tokenCounts';
import { faultServer, notePid, report, running, startBroker, status } from './lib';

/** Live token-counting children of `pid` (`<broker entry> count-tokens`). */
function countingChildren(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (ppid === pid && cmdline.includes('count-tokens') && running(Number(entry))) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

describe('faults: the token-counting child dies with its parent and has a deadline', function () {
  this.timeout(180_000);

  after(() => removeTempDirs());

  it('kill -9 of the broker while it counts a hostile definition: the counting child is gone soon after', async () => {
    const root = tempDir('sb-dos-count-');
    writeRegistry(root, { 'mcp-servers.d/echo.yaml': fixtureServer('echo', 'echo.mjs') });
    const broker = await startBroker({ root });
    const operator = await connect(broker.url, broker.token, 'operator');
    let child: number | undefined;
    try {
      // The first count (echo's) done, so the next child is the hostile server's.
      await waitFor(async () => (await status(operator, 'echo')).toolTokens, "echo's tool tokens", 60_000, 100);
      writeRegistry(root, {
        'mcp-servers.d/hostile.yaml': faultServer('hostile', 'bare.mjs', ['--long-word', '40000']),
      });
      child = await waitFor(() => countingChildren(broker.proc.pid!)[0], 'the counting child', 60_000, 10);
      notePid(child, 'count-tokens');
      // Held still while the broker dies, so it cannot finish on its own first.
      process.kill(child, 'SIGSTOP');
      await operator.close().catch(() => undefined);
      broker.proc.kill('SIGKILL');
      await waitFor(() => broker.proc.exitCode !== null || broker.proc.signalCode !== null, 'the broker to die');
      process.kill(child, 'SIGCONT');
      const pid = child;
      await waitFor(() => !running(pid), 'the orphaned counting child to end', 60_000, 100);
      report('dos-token-child-orphan', { brokerKilled: 'SIGKILL', childEnded: true });
    } finally {
      if (child && running(child)) process.kill(child, 'SIGKILL');
      await broker.stop();
    }
  });

  it('a counting child whose parent dies ends even while its stdin stays open (the parent check)', async () => {
    // The child's stdin is a FIFO this test holds open for writing (Node would close a 'pipe' it
    // made when the parent exits, and the child would see its end): only the parent check can tell.
    const fifo = path.join(tempDir('sb-dos-fifo-'), 'stdin');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
    const held = fs.openSync(fifo, 'r+');
    const script =
      `const c = require('child_process').spawn(process.execPath, [${JSON.stringify(BROKER_JS)}, 'count-tokens', String(process.pid)], ` +
      `{ stdio: ['inherit', 'ignore', 'ignore'] }); console.log(c.pid); setInterval(() => {}, 1e9);`;
    const parent = track(spawn(process.execPath, ['-e', script], { stdio: [held, 'pipe', 'inherit'] }));
    notePid(parent.pid, 'count-tokens parent');
    let child: number | undefined;
    try {
      child = await new Promise<number>((resolve, reject) => {
        parent.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
        parent.once('exit', () => reject(new Error('the parent ended early')));
      });
      notePid(child, 'count-tokens');
      const pid = child;
      await waitFor(() => running(pid), 'the counting child to start');
      parent.kill('SIGKILL');
      await waitFor(() => !running(pid), 'the counting child to notice its parent is gone', 60_000, 100);
      report('dos-token-child-parent-check', { stdinOpen: true, childEnded: true });
    } finally {
      if (child && running(child)) process.kill(child, 'SIGKILL');
      fs.closeSync(held);
    }
  });

  it('kills a count past its deadline and fails it (counted again later); within it, counts as in-process', async () => {
    const texts = ['hello world', 'a'.repeat(5000), '#'.repeat(5000), JSON.stringify({ name: 'x', description: 'y' })];
    await assert.rejects(processCounter(BROKER_JS, () => 1)(texts), /counting tokens failed \(it took longer than/);
    assert.deepEqual(await processCounter(BROKER_JS)(texts), await countHere(texts));
    report('dos-token-deadline', { killedPastDeadline: true, withinDeadlineMatches: true });
  });
});
