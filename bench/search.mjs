// Tool search sections: (tokens) what tool definitions cost a session of a 1,000-tool fleet in
// toolMode all vs search after three find_tools calls, and (recall) recall@5 of find_tools over the
// hand-written queries in bench/fixtures/tool-queries.json against the npm servers' real tools.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { Broker, BENCH, NODE, REPO, listAllTools, tempDir } from './lib/systems.mjs';
import { summarize } from './lib/stats.mjs';

const MANY = path.join(REPO, 'test', 'fixtures', 'many-tools.mjs');
const QUERIES = path.join(BENCH, 'fixtures', 'tool-queries.json');
/**
 * The query set the recall target is judged on: the newest one written after the ranker was final
 * and evaluated once. The sets before it were looked at while tuning (see the file's header).
 */
const FAIR_SET = 'blind-2';

let encoder;
/** Tokens of tool definitions as tools/list sends them (cl100k_base, as the broker counts). */
const tokensOf = (tools) => {
  encoder ??= new Tiktoken(cl100k);
  return tools.reduce((sum, t) => sum + encoder.encode(JSON.stringify(t)).length, 0);
};
const tokensOfText = (text) => {
  encoder ??= new Tiktoken(cl100k);
  return encoder.encode(text).length;
};

const yamlOf = (name, args, description) =>
  `name: ${name}\ntrust: trusted\n${description ? `description: ${JSON.stringify(description)}\n` : ''}` +
  `command: ${JSON.stringify(NODE)}\nargs: ${JSON.stringify(args)}\n`;

function write(root, files) {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

async function waitFor(check, what, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function connectAs(broker, token) {
  const client = new Client({ name: 'switchboard-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(broker.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function callFacade(client, tool, args) {
  const r = await client.callTool({ name: `switchboard__${tool}`, arguments: args });
  if (r.isError) throw new Error(r.content?.[0]?.text ?? `${tool} failed`);
  return r;
}

/** A broker with nothing configured, then the given registry files written into its root. */
async function brokerWith(files, expectTools, log) {
  const broker = await new Broker({ servers: [], key: 'broker-search' }).start();
  write(broker.root, files);
  const operator = await broker.connect();
  const own = await waitFor(async () => {
    const listed = (await listAllTools(operator)).filter((t) => !t.name.startsWith('switchboard__'));
    return listed.length >= expectTools && listed;
  }, `${expectTools} upstream tools`);
  log(`  broker up with ${own.length} upstream tools`);
  const tokenOf = async (name) => {
    const r = await callFacade(operator, 'client_connection', { name });
    return fs.readFileSync(r.structuredContent.tokenFile, 'utf8').trim();
  };
  return { broker, operator, tokenOf, upstreamTools: own.length };
}

/** (a) A 1,000-tool fleet: 20 many-tools servers of 50 tools each. */
export async function sectionTokens({ log, quick }) {
  const servers = 20;
  const files = {
    'clients.d/everything.yaml': 'name: everything\nmcp_allow: [read]\n',
    'clients.d/seeker.yaml': 'name: seeker\nmcp_allow: [read]\ntoolMode: search\n',
  };
  for (let i = 1; i <= servers; i++) {
    const name = `fleet-${String(i).padStart(2, '0')}`;
    files[`mcp-servers.d/${name}.yaml`] = yamlOf(name, [MANY, '--count', '48']);
  }
  const { broker, operator, tokenOf } = await brokerWith(files, servers * 50, log);
  try {
    const all = await connectAs(broker, await tokenOf('everything'));
    const allTools = await listAllTools(all);
    const seeker = await connectAs(broker, await tokenOf('seeker'));
    let changed = 0;
    seeker.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const startTools = await listAllTools(seeker);
    const queries = ['fixture tool tool_0007', 'weird tool name', 'really long tool name'];
    const searches = [];
    let resultTokens = 0;
    for (const query of queries) {
      const t = performance.now();
      const r = await callFacade(seeker, 'find_tools', { query });
      searches.push({ query, ms: performance.now() - t, found: r.structuredContent.tools.length });
      resultTokens += tokensOfText(JSON.stringify(r.content));
    }
    await waitFor(async () => changed > 0, 'tools/list_changed', 10_000);
    // Per-query time on the warm 1,000-tool index, from the all-mode session (which a search grows not).
    const warm = [];
    for (const q of JSON.parse(fs.readFileSync(QUERIES, 'utf8')).queries.slice(0, 50)) {
      const t = performance.now();
      await callFacade(all, 'find_tools', { query: q.query });
      warm.push(performance.now() - t);
    }
    const afterTools = await listAllTools(seeker);
    const state = JSON.parse((await operator.readResource({ uri: 'switchboard://state' })).contents[0].text);
    const brokerCount = await waitFor(
      async () => {
        const s = JSON.parse((await operator.readResource({ uri: 'switchboard://state' })).contents[0].text);
        return s.clients.find((c) => c.name === 'everything')?.toolTokens;
      },
      'the broker to count tokens',
      60_000,
    );
    const r = {
      fleet: { servers, tools: allTools.filter((t) => !t.name.startsWith('switchboard__')).length },
      all: { tools: allTools.length, tokens: tokensOf(allTools) },
      searchStart: { tools: startTools.length, tokens: tokensOf(startTools) },
      searchAfter: { tools: afterTools.length, tokens: tokensOf(afterTools) },
      searches,
      warmFind: { n: warm.length, ...summarize(warm) },
      findResultTokens: resultTokens,
      listChangedNotifications: changed,
      brokerCountedAll: brokerCount,
      sessions: state.broker.sessions,
      quick,
    };
    r.ratio = r.all.tokens / (r.searchAfter.tokens + r.findResultTokens);
    log(
      `  all: ${r.all.tools} tools, ${r.all.tokens} tokens; search after 3 finds: ${r.searchAfter.tools} tools, ` +
        `${r.searchAfter.tokens} tokens + ${resultTokens} in the find results → ${r.ratio.toFixed(1)}× fewer`,
    );
    await all.close();
    await seeker.close();
    return r;
  } finally {
    await operator.close().catch(() => undefined);
    await broker.stop();
  }
}

/** (b) recall@5 of find_tools over the query sets, per set, with the misses (FAIR_SET's are logged). */
export async function sectionRecall({ log }) {
  const spec = JSON.parse(fs.readFileSync(QUERIES, 'utf8'));
  const mod = (pkg) => path.join(REPO, 'node_modules', '@modelcontextprotocol', pkg, 'dist', 'index.js');
  const files = tempDir('search-files-');
  const registry = {
    'mcp-servers.d/everything.yaml': yamlOf('everything', [mod('server-everything'), 'stdio'], spec.servers.everything),
    'mcp-servers.d/memory.yaml':
      yamlOf('memory', [mod('server-memory')], spec.servers.memory) +
      `env:\n  MEMORY_FILE_PATH: ${JSON.stringify(path.join(files, 'memory.jsonl'))}\n`,
    'mcp-servers.d/filesystem.yaml':
      yamlOf('filesystem', [mod('server-filesystem'), files], spec.servers.filesystem) +
      `grants: [filesystem]\nfilesystem:\n  write: [${JSON.stringify(files)}]\n`,
  };
  // At least the 36 tools a plain client sees; server-everything adds some for a client (the broker)
  // that declares elicitation and roots.
  const { broker, operator, upstreamTools } = await brokerWith(registry, 36, log);
  try {
    const bySet = {};
    const misses = [];
    const ms = [];
    for (const q of spec.queries) {
      const t = performance.now();
      const r = await callFacade(operator, 'find_tools', { query: q.query, limit: 5 });
      ms.push(performance.now() - t);
      const top = r.structuredContent.tools.map((x) => x.name);
      const recall = q.relevant.filter((n) => top.includes(n)).length / Math.min(q.relevant.length, 5);
      const s = (bySet[q.set] ??= { n: 0, sum: 0 });
      s.n++;
      s.sum += recall;
      if (recall < 1) misses.push({ set: q.set, query: q.query, relevant: q.relevant, top });
    }
    const sets = Object.fromEntries(Object.entries(bySet).map(([k, v]) => [k, { n: v.n, recall: v.sum / v.n }]));
    const n = spec.queries.length;
    const overall = Object.values(bySet).reduce((a, v) => a + v.sum, 0) / n;
    for (const [k, v] of Object.entries(sets)) log(`  recall@5 ${k}: ${v.recall.toFixed(3)} over ${v.n} queries`);
    for (const m of misses.filter((x) => x.set === FAIR_SET))
      log(`  missed (${FAIR_SET}): "${m.query}" wanted ${m.relevant.join(', ')} → ${m.top.join(', ') || 'nothing'}`);
    return {
      queries: n,
      recall: overall,
      sets,
      fairSet: FAIR_SET,
      misses,
      findMs: summarize(ms),
      tools: upstreamTools,
    };
  } finally {
    await operator.close().catch(() => undefined);
    await broker.stop();
  }
}
