// Fault: several brokers racing to start for one workspace, round after round.
// Proves: exactly one starter wins (serves), every other attaches to it (prints its endpoint,
// reused: true, exits 0); afterwards exactly one broker process and one set of upstreams run.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import {
  BROKER_JS,
  connect,
  removeTempDirs,
  stopProcess,
  tempDir,
  track,
  waitFor,
  writeRegistry,
} from '../helpers/broker';
import { descendants, faultServer, notePid, report, running, status } from './lib';

const ROUNDS = 8;
const STARTERS = 4;

type Ready = { event: string; reused?: boolean; url: string; pid: number; tokenFile: string };

function serve(root: string, home: string): { proc: ChildProcess; ready: Promise<Ready> } {
  const proc = track(
    spawn(process.execPath, [BROKER_JS, 'serve', '--root', root, '--port', '0', '--json', '--accept-workspace-trust'], {
      env: { ...process.env, SWITCHBOARD_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  notePid(proc.pid, 'racing starter');
  proc.stderr!.resume();
  const ready = new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no ready line within 60 s')), 60_000);
    readline.createInterface({ input: proc.stdout! }).on('line', (l) => {
      try {
        const m = JSON.parse(l) as Ready;
        if (m.event === 'ready') {
          clearTimeout(timer);
          resolve(m);
        }
      } catch {
        /* not json */
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code} before ready`));
    });
  });
  ready.catch(() => undefined);
  return { proc, ready };
}

describe('faults: brokers racing to start for one workspace', function () {
  this.timeout(300_000);
  after(() => removeTempDirs());

  it(`${STARTERS} simultaneous starters, ${ROUNDS} rounds: one wins, the others attach`, async () => {
    let attached = 0;
    let winners = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const root = tempDir('sb-fault-race-');
      const home = tempDir('sb-home-');
      writeRegistry(root, {
        'mcp-servers.d/one.yaml': faultServer('one', 'bare.mjs'),
        'mcp-servers.d/two.yaml': faultServer('two', 'bare.mjs'),
      });
      const starters = Array.from({ length: STARTERS }, () => serve(root, home));
      const readies = await Promise.all(starters.map((s) => s.ready));
      const pids = new Set(readies.map((r) => r.pid));
      assert.equal(pids.size, 1, `round ${round}: every starter names the same broker (${[...pids].join(',')})`);
      const won = readies.filter((r) => !r.reused);
      assert.equal(won.length, 1, `round ${round}: exactly one starter serves`);
      const winnerIndex = readies.findIndex((r) => !r.reused);
      const winner = starters[winnerIndex].proc;
      assert.equal(readies[winnerIndex].pid, winner.pid, 'the winner is the broker');
      winners++;
      // The others attach and leave.
      for (const [i, s] of starters.entries()) {
        if (i === winnerIndex) continue;
        await waitFor(() => s.proc.exitCode !== null, `round ${round}: attached starter ${i} to exit`, 15_000);
        assert.equal(s.proc.exitCode, 0);
        attached++;
      }
      const token = fs.readFileSync(readies[0].tokenFile, 'utf8').trim();
      const client = await connect(readies[0].url, token, 'race');
      // Host pids as the broker reports them: each server's own pid is one of its sandbox's PID namespace.
      const upstreamPids = new Set<number>();
      for (const name of ['one', 'two']) {
        await waitFor(() => client.callTool({ name: `${name}__pid`, arguments: {} }), name, 20_000);
        upstreamPids.add((await status(client, name)).pid as number);
      }
      await client.close();
      assert.equal(upstreamPids.size, 2);
      const children = descendants(winner.pid!);
      for (const pid of children) notePid(pid, 'upstream');
      assert.equal(children.length, 2, `round ${round}: one set of upstreams (${children.join(',')})`);
      assert.equal(starters.filter((s) => running(s.proc.pid!)).length, 1, `round ${round}: one broker process left`);
      await stopProcess(winner);
      await waitFor(() => children.every((pid) => !running(pid)), 'the upstreams to stop with the broker');
    }
    report('start-race', {
      rounds: ROUNDS,
      startersPerRound: STARTERS,
      starters: ROUNDS * STARTERS,
      faultsInjected: ROUNDS,
      winners,
      attached,
      failures: 0,
    });
  });
});
