// What a forwarded call allocates in the broker, by function: V8's sampling heap profiler (every
// 512 bytes on average, collected objects included) over raw-client echo calls. Bytes allocated per
// call move far less from run to run than CPU time does on a shared machine, and they are what the
// young generation's collections cost: a change on the per-call path can be judged by them.
//
//   node bench/alloc-profile.mjs [--build <copy>/broker.js] [--calls 5000] [--telemetry] [--top 30]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker, BENCH, BROKER_JS, removeTempSettled } from './lib/systems.mjs';
import { rawSession } from './lib/rawClient.mjs';
import { killAll, sleep } from './lib/proc.mjs';
import { otlpSink, telemetryOnEnv } from './telemetry.mjs';

const opt = { build: BROKER_JS, calls: 5000, warmup: 3000, telemetry: false, top: 30 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === '--build') opt.build = path.resolve(next());
  else if (a === '--calls') opt.calls = Number(next());
  else if (a === '--warmup') opt.warmup = Number(next());
  else if (a === '--telemetry') opt.telemetry = true;
  else if (a === '--top') opt.top = Number(next());
  else throw new Error(`unknown option ${a}`);
}

const probeFile = (pid, suffix) => path.join(os.tmpdir(), `allocprof-${pid}.${suffix}`);
async function waitFor(file) {
  for (let i = 0; i < 600 && !fs.existsSync(file); i++) await sleep(50);
  if (!fs.existsSync(file)) throw new Error(`the broker did not write ${file}`);
}

/** Self bytes per function of a sampling heap profile, and the total. */
function bytesByFunction(profile) {
  const self = new Map();
  let total = 0;
  const walk = (node) => {
    const f = node.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(/.*\//, '')}:${f.lineNumber + 1}` : '(native)'}`;
    total += node.selfSize;
    if (node.selfSize) self.set(name, (self.get(name) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return { self, total };
}

async function main() {
  const sink = opt.telemetry ? await otlpSink() : undefined;
  const broker = new Broker({
    brokerJs: opt.build,
    extraNodeArgs: ['--require', path.join(BENCH, 'alloc-probe.cjs')],
    env: sink ? telemetryOnEnv(sink.url) : {},
  });
  await broker.start();
  try {
    await broker.waitForTools({ names: ['echo__echo'] });
    const sdk = await broker.connect();
    await broker.resolveTools(sdk, ['echo']);
    broker.echo = broker.toolNames.echo;
    await broker.tokensCounted();
    const raw = await rawSession(broker);
    for (let i = 0; i < opt.warmup; i++) await raw.call();
    const pid = broker.mainPid;
    process.kill(pid, 'SIGUSR1');
    await waitFor(probeFile(pid, 'started'));
    for (let i = 0; i < opt.calls; i++) await raw.call();
    process.kill(pid, 'SIGUSR2');
    await waitFor(probeFile(pid, 'json'));
    await sleep(300);
    const profile = JSON.parse(fs.readFileSync(probeFile(pid, 'json'), 'utf8'));
    for (const suffix of ['started', 'json']) fs.rmSync(probeFile(pid, suffix), { force: true });
    if (profile.error) throw new Error(profile.error);
    const { self, total } = bytesByFunction(profile);
    const perCall = (bytes) => (bytes / opt.calls).toFixed(0).padStart(7);
    process.stdout.write(
      `${opt.build}${opt.telemetry ? ', telemetry on' : ''}: ${perCall(total).trim()} bytes allocated per call (sampled)\n`,
    );
    for (const [name, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, opt.top))
      process.stdout.write(`${perCall(bytes)}  ${name}\n`);
    raw.close();
    await sdk.close();
  } finally {
    await broker.stop();
    await sink?.close();
  }
}

main()
  .catch((err) => {
    process.stderr.write(`alloc-profile failed: ${err.stack ?? err}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    killAll();
    await removeTempSettled();
  });
