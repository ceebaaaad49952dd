// A floor server of the per-call benchmarks, posted to by the raw client: fixtures/http-echo.mjs
// (answers on its socket alone) or fixtures/http-relay.mjs (puts each request through the echo
// upstream's pipe and back, as the broker does, and nothing else; with RELAY_TELEMETRY_SDK in `env`,
// under a telemetry layer). Used by bench/compare.mjs and bench/telemetry-floor.mjs.
import path from 'node:path';
import readline from 'node:readline';
import { BENCH, NODE, REPO } from './systems.mjs';
import { spawnTracked, stopGracefully, tree } from './proc.mjs';
import { poster, RAW_ARGS } from './rawClient.mjs';

export async function floorServer(fixture = 'http-echo.mjs', extraArgs = [], env = {}) {
  const proc = spawnTracked(NODE, [path.join(BENCH, 'fixtures', fixture), '0', ...extraArgs], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
    env: { ...process.env, ...env },
  });
  const url = await new Promise((resolve, reject) => {
    readline.createInterface({ input: proc.stdout }).once('line', (l) => resolve(JSON.parse(l).listening));
    proc.once('exit', (c) => reject(new Error(`${fixture} exited ${c}`)));
  });
  // Each caller is a client of its own (one keep-alive connection), as each session of the broker's is.
  const closers = [];
  let id = 0;
  const caller = () => {
    const { post, close } = poster(url, () => ({}));
    closers.push(close);
    return () =>
      post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'echo', arguments: RAW_ARGS } });
  };
  const call = caller();
  const pids = () => tree(proc.pid);
  const stop = async () => {
    for (const close of closers) close();
    await stopGracefully(proc, 3000);
  };
  return { pid: proc.pid, pids, call, caller, stop };
}
