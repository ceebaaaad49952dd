// Audit log entries as the console's table rows, and its filters, without the DOM. Shared by the
// webview and its unit tests.
import type { AuditRecord } from '../src/broker/control/controlApi';

export type Outcome = 'ok' | 'tool error' | 'refused' | 'error';
export const OUTCOMES: readonly Outcome[] = ['ok', 'tool error', 'refused', 'error'];

export interface AuditRow {
  at: string;
  /** The client, `operator` for the editor and CLI, `—` for the broker's own events. */
  client: string;
  server?: string;
  /** What was called: `echo__echo`, `switchboard__list_servers`, `echo → elicitation/create`, … */
  what: string;
  outcome: Outcome;
  /** The error (and its JSON-RPC code), the refused host, … */
  detail?: string;
  ms?: number;
  /** The OpenTelemetry trace of a call, while the broker's telemetry is on. */
  traceId?: string;
}

/** -32003: the caller's scope, tool profile, a quarantine or a guardrail rule does not allow it. */
const FORBIDDEN = -32003;
/** -32006: a guardrail limit (calls per minute or at once) is spent. */
const RATE_LIMITED = -32006;

export function rowOf(e: AuditRecord): AuditRow {
  const server = typeof e.server === 'string' ? e.server : undefined;
  const client = e.operator === true ? 'operator' : typeof e.client === 'string' ? e.client : '—';
  let what: string;
  switch (e.event) {
    case 'call':
      what = server ? `${server}__${String(e.tool)}` : String(e.tool);
      break;
    case 'facade':
      what = String(e.tool);
      break;
    case 'server-request':
      what = `${server} → ${String(e.method)}`;
      break;
    case 'task-cancel':
      what = `${server} task cancelled`;
      break;
    case 'network-refused':
      what = `${server}: network`;
      break;
    default:
      what = server ? `${e.event}: ${server}` : e.event;
  }
  let outcome: Outcome = 'ok';
  if (e.event === 'rejected' || e.event === 'network-refused') outcome = 'refused';
  else if (e.outcome === 'error') outcome = e.code === FORBIDDEN || e.code === RATE_LIMITED ? 'refused' : 'error';
  else if (e.isError === true) outcome = 'tool error';
  let detail: string | undefined;
  if (typeof e.error === 'string') detail = `${e.code !== undefined ? `${e.code}: ` : ''}${e.error}`;
  else if (e.event === 'rejected') detail = `HTTP ${String(e.status)}: ${String(e.reason)}`;
  else if (e.event === 'network-refused') detail = `${String(e.host)}:${String(e.port)}`;
  else if (e.event === 'registry')
    detail = e.removed
      ? 'removed'
      : `trust ${String(e.trust)}, grants [${Array.isArray(e.grants) ? e.grants.join(', ') : ''}], approval ${String(e.approval)}`;
  else if (e.event === 'server-request' && typeof e.routedTo === 'string') detail = `answered by ${e.routedTo}`;
  // The guardrail that decided the call (docs/guardrails.md): named, whatever the outcome.
  const rule =
    typeof e.rule === 'string'
      ? `rule ${e.rule}${e.operatorAnswer ? ` (operator: ${String(e.operatorAnswer)})` : ''}`
      : '';
  const limit = typeof e.rateLimited === 'string' ? `limit ${e.rateLimited}` : '';
  const guard = [rule, limit].filter(Boolean).join(', ');
  if (guard) detail = detail ? `${guard}: ${detail}` : guard;
  return {
    at: e.at,
    client,
    ...(server ? { server } : {}),
    what,
    outcome,
    ...(detail ? { detail } : {}),
    ...(typeof e.ms === 'number' ? { ms: e.ms } : {}),
    ...(typeof e.traceId === 'string' && /^[0-9a-f]{32}$/.test(e.traceId) ? { traceId: e.traceId } : {}),
  };
}

export interface AuditFilter {
  client: string;
  server: string;
  outcome: Outcome | '';
  /** Words that must all appear in the row (case-insensitive). */
  text: string;
  /** Only calls (tools/call of upstreams and facade tools), not the broker's own events. */
  callsOnly: boolean;
}

export const NO_FILTER: AuditFilter = { client: '', server: '', outcome: '', text: '', callsOnly: false };

/** Rows newest first, filtered. */
export function auditRows(entries: readonly AuditRecord[], f: AuditFilter = NO_FILTER): AuditRow[] {
  const words = f.text.toLowerCase().split(/\s+/).filter(Boolean);
  const out: AuditRow[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (f.callsOnly && e.event !== 'call' && e.event !== 'facade') continue;
    const row = rowOf(e);
    if (f.client && row.client !== f.client) continue;
    if (f.server && row.server !== f.server) continue;
    if (f.outcome && row.outcome !== f.outcome) continue;
    if (words.length) {
      const hay = `${row.client} ${row.what} ${row.outcome} ${row.detail ?? ''}`.toLowerCase();
      if (!words.every((w) => hay.includes(w))) continue;
    }
    out.push(row);
  }
  return out;
}

/** The clients and servers that occur, sorted, for the filter menus. */
export function facets(entries: readonly AuditRecord[]): { clients: string[]; servers: string[] } {
  const clients = new Set<string>();
  const servers = new Set<string>();
  for (const e of entries) {
    const row = rowOf(e);
    if (row.client !== '—') clients.add(row.client);
    if (row.server) servers.add(row.server);
  }
  return { clients: [...clients].sort(), servers: [...servers].sort() };
}
