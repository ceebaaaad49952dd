// The cost of guardrails per call (issue 33): the same broker and echo upstream with no policy, and
// with an approved policy of three rules (one with a CEL condition that is evaluated on every echo
// call) and a rate limit counting every call, none refusing it. Interleaved blocks of sequential
// tools/call from the raw keep-alive client (bench/lib/rawClient.mjs: what the broker itself costs),
// so both brokers meet the same machine load; the broker's own CPU per call at ns resolution
// (/proc schedstat), and the on/off ratio (target ≤ 1.15).
//
//   node bench/guardrails.mjs [--quick]          (also the `guardrails` section of bench/run.mjs)
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Broker } from './lib/systems.mjs';
import { killAll, preciseCpuUs, sleep } from './lib/proc.mjs';
import { rawSession } from './lib/rawClient.mjs';
import { rotate, summarize } from './lib/stats.mjs';

export const GUARDRAIL_SECTIONS = ['guardrails'];
export const GUARDRAIL_BUDGET_S = { full: { guardrails: 120 }, quick: { guardrails: 40 } };

const log = (...a) => process.stderr.write(`[bench guardrails] ${a.join(' ')}\n`);

/** Three rules (the first two never match echo; the CEL one decides it: allow) and a limit on echo. */
const POLICY = `description: bench, nothing refused
rules:
  - name: no-file-deletes
    servers: [files]
    tools: ["delete_*"]
    action: deny
  - name: ask-for-admin
    clients: [admin]
    action: ask
  - name: short-echoes
    servers: [echo]
    tools: [echo]
    when: 'size(args.text) < 10000 && !args.text.contains("..")'
    action: allow
limits:
  - name: echo-rate
    servers: [echo]
    per: client-and-tool
    callsPerMinute: 10000000
`;

/** The structured result of a facade tool on the operator's SDK client. */
async function facade(client, tool, args = {}) {
  const r = await client.callTool({ name: `switchboard__${tool}`, arguments: args });
  if (r.isError) throw new Error(`${tool}: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

/** Writes the policy into the running broker's registry and approves it as the operator would. */
async function approvePolicy(broker, sdk) {
  fs.mkdirSync(path.join(broker.root, 'policies.d'), { recursive: true });
  fs.writeFileSync(path.join(broker.root, 'policies.d', 'bench.yaml'), POLICY);
  let listed;
  for (let i = 0; i < 200 && !listed; i++) {
    listed = (await facade(sdk, 'list_policies')).policies.find((p) => p.name === 'bench' && p.hash);
    if (!listed) await sleep(50);
  }
  if (!listed) throw new Error('the broker never listed the bench policy');
  const status = await facade(sdk, 'approve_policy', { name: 'bench', hash: listed.hash });
  if (status.status !== 'in-force') throw new Error(`bench policy is ${status.status}`);
  const rows = (await facade(sdk, 'server_status', { name: 'echo' })).guardrails ?? [];
  if (rows.length !== 3)
    throw new Error(`expected ask-for-admin, the CEL rule and the limit on echo, got ${JSON.stringify(rows)}`);
}

export async function sectionGuardrails({ quick = false, overBudget = () => false } = {}) {
  const { warmup, block, rounds } = quick
    ? { warmup: 500, block: 200, rounds: 6 }
    : { warmup: 3000, block: 500, rounds: 20 };
  const systems = [
    new Broker({ key: 'guardrails-off', label: 'no policy' }),
    new Broker({ key: 'guardrails-on', label: '3 rules (1 CEL) + 1 rate limit' }),
  ];
  const raws = [];
  try {
    for (const s of systems) {
      await s.start();
      await s.waitForTools({ names: ['echo__echo'] });
      const sdk = await s.connect();
      await s.resolveTools(sdk, ['echo']);
      s.echo = s.toolNames.echo;
      if (s.key === 'guardrails-on') await approvePolicy(s, sdk);
      await sdk.close();
      const raw = await rawSession(s);
      raws.push(raw);
      s.raw = raw;
      for (let i = 0; i < warmup; i++) await raw.call();
    }
    const acc = new Map(systems.map((s) => [s.key, { samples: [], cpuUs: 0, calls: 0, rounds: [] }]));
    let done = 0;
    for (let r = 0; r < rounds && (r < 2 || !overBudget()); r++, done++) {
      for (const s of rotate(systems, r)) {
        const a = acc.get(s.key);
        const before = preciseCpuUs(s.mainPid);
        for (let i = 0; i < block; i++) {
          const t = performance.now();
          await s.raw.call();
          a.samples.push((performance.now() - t) * 1000);
        }
        const cpu = preciseCpuUs(s.mainPid) - before;
        a.cpuUs += cpu;
        a.calls += block;
        a.rounds.push(cpu / block);
      }
    }
    const out = { callsPerSystem: done * block, systems: {} };
    for (const s of systems) {
      const a = acc.get(s.key);
      const st = summarize(a.samples);
      // The median of the rounds as well: one round that met another process's burst moves the mean.
      out.systems[s.key] = {
        label: s.label,
        p50Us: st.p50,
        p99Us: st.p99,
        brokerCpuPerCallUs: a.cpuUs / a.calls,
        brokerCpuPerCallMedianRoundUs: summarize(a.rounds).p50,
      };
    }
    const off = out.systems['guardrails-off'];
    const on = out.systems['guardrails-on'];
    out.ratio = {
      p50: on.p50Us / off.p50Us,
      cpu: on.brokerCpuPerCallUs / off.brokerCpuPerCallUs,
      cpuMedianRound: on.brokerCpuPerCallMedianRoundUs / off.brokerCpuPerCallMedianRoundUs,
    };
    for (const s of systems) {
      const x = out.systems[s.key];
      log(
        `${s.key.padEnd(15)} p50 ${x.p50Us.toFixed(0)} µs  p99 ${x.p99Us.toFixed(0)} µs  broker CPU/call ${x.brokerCpuPerCallUs.toFixed(0)} µs (median round ${x.brokerCpuPerCallMedianRoundUs.toFixed(0)} µs)`,
      );
    }
    log(
      `on/off: broker CPU ${out.ratio.cpu.toFixed(3)}× (median round ${out.ratio.cpuMedianRound.toFixed(3)}×), p50 ${out.ratio.p50.toFixed(3)}× (target ≤ 1.15×) over ${out.callsPerSystem} calls each`,
    );
    return out;
  } finally {
    for (const raw of raws) raw.close();
    for (const s of systems) await s.stop().catch(() => undefined);
  }
}

export const GUARDRAIL_RUNNERS = { guardrails: sectionGuardrails };

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  sectionGuardrails({ quick: process.argv.includes('--quick') }).then(
    (out) => {
      process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    },
    (err) => {
      log(err.stack ?? String(err));
      killAll();
      process.exitCode = 1;
    },
  );
}
