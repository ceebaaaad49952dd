// The tool search sections of docs/benchmarks.md (tokens per session, recall@5) and their targets.
const n0 = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const n3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : '—');
const ms = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : '—');

/** Targets from issue 19: ≥ 10× fewer tokens in search mode, recall@5 ≥ 0.9. */
export function searchVerdicts(S) {
  const out = [];
  const tk = S.tokens;
  if (tk?.all) {
    out.push({
      target: 'tool-definition tokens per session, 1,000-tool fleet: search after 3 searches ≥ 10× fewer than all',
      met: tk.ratio >= 10,
      measured: `${n0(tk.all.tokens)} vs ${n0(tk.searchAfter.tokens)} + ${n0(tk.findResultTokens)} = ${tk.ratio.toFixed(1)}× fewer`,
      context: 'search: listed tools after the 3 searches plus the text of the 3 find_tools results (cl100k_base)',
    });
  } else out.push({ target: 'tokens per session all vs search ≥ 10×', met: null, measured: 'tokens section not run' });
  const rc = S.recall;
  if (rc?.sets) {
    // Results from before the fair set was named judged the first blind set.
    const fair = rc.fairSet ?? 'blind';
    const judged = rc.sets[fair];
    const seen = Object.entries(rc.sets).filter(([k]) => k !== fair);
    out.push({
      target: 'find_tools recall@5 ≥ 0.9 on ≥ 100 queries against npm servers',
      met: judged?.n >= 100 && judged?.recall >= 0.9,
      measured:
        `${fair} set ${n3(judged?.recall)} (${judged?.n} queries); ` +
        `sets seen while tuning: ${seen.map(([k, v]) => `${k} ${n3(v.recall)} (${v.n})`).join(', ')}`,
      context:
        `judged on the ${fair} set: written after the ranker was final and committed before it was first run; ` +
        'the other sets were looked at while building the ranker',
    });
  } else out.push({ target: 'find_tools recall@5 ≥ 0.9', met: null, measured: 'recall section not run' });
  return out;
}

const table = (head, rows) =>
  [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '--').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

/** Markdown lines of the two sections (none for a section that did not run). */
export function renderSearch(S) {
  const L = [];
  const tk = S.tokens;
  if (tk?.all) {
    L.push('## Tool search: tool-definition tokens per session', '');
    L.push(
      `${tk.fleet.servers} servers of \`test/fixtures/many-tools.mjs\` (${n0(tk.fleet.tools)} tools, plus the broker's own). ` +
        'Tokens are cl100k_base (js-tiktoken) of each tool definition as tools/list sends it, counted by the bench ' +
        `(the broker's own count for the all-client: ${n0(tk.brokerCountedAll)}). The search session is a read-only ` +
        `client in \`toolMode: search\` after three find_tools calls (${tk.searches.map((s) => `"${s.query}"`).join(', ')}, ` +
        `default limit 5); the text of those three results is counted too, since it also lands in the context.`,
      '',
    );
    L.push(
      table(
        ['session', 'tools listed', 'tokens'],
        [
          ['toolMode all', n0(tk.all.tools), n0(tk.all.tokens)],
          ['toolMode search, at start', n0(tk.searchStart.tools), n0(tk.searchStart.tokens)],
          ['toolMode search, after 3 searches', n0(tk.searchAfter.tools), n0(tk.searchAfter.tokens)],
          ['… plus the 3 find_tools results', '', n0(tk.searchAfter.tokens + tk.findResultTokens)],
          ['ratio all / search', '', `${tk.ratio.toFixed(1)}×`],
        ],
      ),
      '',
    );
    L.push(
      `find_tools over the 1,000-tool index: ${tk.searches.map((s) => ms(s.ms)).join(', ')} (first includes indexing)` +
        (tk.warmFind
          ? `; then ${tk.warmFind.n} more queries from an all-mode session: p50 ${ms(tk.warmFind.p50)}, max ${ms(tk.warmFind.max)} per call over HTTP.`
          : '.'),
      '',
    );
  }
  const rc = S.recall;
  if (rc?.sets) {
    L.push('## Tool search: recall@5', '');
    const fair = rc.fairSet ?? 'blind';
    const seen = Object.keys(rc.sets).filter((k) => k !== fair);
    L.push(
      `\`switchboard__find_tools\` (limit 5) over ${rc.queries} hand-written queries in \`bench/fixtures/tool-queries.json\` ` +
        `against the ${rc.tools} real tools (as the broker lists them) of server-everything, server-memory and server-filesystem from npm (plus the ` +
        "broker's own tools as distractors). Its header says how each set was made. " +
        `${seen.map((k) => `**${k}**`).join(', ')} were looked at while the ranker was built (their misses were published ` +
        `and then tuned on), so their figures are optimistic; **${fair}** was written after this ranker was final and ` +
        'committed on its own before it was first evaluated: it is the fair figure.',
      '',
    );
    L.push(
      table(
        ['query set', 'queries', 'recall@5'],
        Object.entries(rc.sets).map(([k, v]) => [k, n0(v.n), n3(v.recall)]),
      ),
      '',
    );
    L.push(`find_tools p50 ${ms(rc.findMs?.p50)}, max ${ms(rc.findMs?.max)} (operator session, over HTTP).`, '');
    for (const set of [fair]) {
      const misses = rc.misses.filter((m) => m.set === set);
      if (!misses.length) continue;
      L.push(`Misses of the ${set} set (query → top 5):`, '');
      for (const m of misses)
        L.push(`- "${m.query}" (wanted ${m.relevant.join(' or ')}) → ${m.top.join(', ') || 'nothing'}`);
      L.push('');
    }
  }
  return L;
}
