// The Recent calls tab: the audit log's newest entries (read_audit) as a table, filtered by client,
// server, outcome and words; refreshed with a button, live every few seconds while shown, and after
// each call made from the console.
import type { AuditTail } from '../src/broker/control/controlApi';
import { auditRows, facets, NO_FILTER, OUTCOMES, type AuditFilter } from './auditRows';
import { $, h } from './dom';
import { vscode } from './session';
import { fmtMs } from './toolResult';

let tail: AuditTail | undefined;
let filter: AuditFilter = { ...NO_FILTER, callsOnly: true };
let built = false;
let timer: ReturnType<typeof setInterval> | undefined;

const LIVE_MS = 3000;

export function requestAudit(): void {
  vscode.postMessage({ type: 'readAudit' });
}

function select(id: string, label: string, options: string[], value: string): HTMLElement {
  return h(
    'label',
    { class: 'filter' },
    `${label} `,
    h(
      'select',
      { id },
      h('option', { value: '' }, 'all'),
      ...options.map((o) => h('option', { value: o, selected: o === value }, o)),
    ),
  );
}

function build(): void {
  built = true;
  $('view-audit').replaceChildren(
    h(
      'header',
      {},
      h('h1', {}, 'Recent calls'),
      h('div', { class: 'subtitle', id: 'audit-file' }, 'From the audit log'),
    ),
    h(
      'div',
      { class: 'filters', id: 'audit-filters' },
      h('span', { id: 'audit-selects' }),
      h('input', { id: 'audit-text', type: 'search', placeholder: 'Filter by words', spellcheck: 'false' }),
      h(
        'label',
        { class: 'filter' },
        h('input', { type: 'checkbox', id: 'audit-calls', checked: true }),
        ' calls only',
      ),
      h('label', { class: 'filter' }, h('input', { type: 'checkbox', id: 'audit-live', checked: true }), ' live'),
      h('button', { type: 'button', id: 'audit-refresh', class: 'secondary' }, 'Refresh'),
    ),
    h('div', { class: 'error', id: 'audit-error', role: 'alert' }),
    h('div', { id: 'audit-table' }),
  );
  $('view-audit').addEventListener('change', onFilter);
  $('audit-text').addEventListener('input', onFilter);
  $('audit-refresh').addEventListener('click', requestAudit);
  $('audit-table').addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-trace]');
    if (!button) return;
    void navigator.clipboard.writeText(button.dataset.trace ?? '').then(
      () => (button.textContent = 'Copied'),
      () => (button.textContent = 'Could not copy'),
    );
  });
}

function onFilter(): void {
  const val = (id: string): string => (document.getElementById(id) as HTMLSelectElement | null)?.value ?? '';
  filter = {
    client: val('audit-client'),
    server: val('audit-server'),
    outcome: val('audit-outcome') as AuditFilter['outcome'],
    text: val('audit-text'),
    callsOnly: ($('audit-calls') as HTMLInputElement).checked,
  };
  live(($('audit-live') as HTMLInputElement).checked);
  render();
}

/** Shows the tab (optionally filtered to one client) and starts reading. */
export function openAudit(client?: string): void {
  if (!built) build();
  if (client !== undefined) filter = { ...filter, client };
  render();
  requestAudit();
  live(($('audit-live') as HTMLInputElement).checked);
}

export function closeAudit(): void {
  live(false);
}

function live(on: boolean): void {
  if (timer) clearInterval(timer);
  timer = on && !$('view-audit').hidden ? setInterval(requestAudit, LIVE_MS) : undefined;
}

export function auditArrived(next: AuditTail | undefined, error?: string): void {
  if (!built) build();
  $('audit-error').textContent = error ? `Could not read the audit log: ${error}` : '';
  if (next) tail = next;
  render();
}

function render(): void {
  const entries = tail?.entries ?? [];
  const { clients, servers } = facets(entries);
  if (filter.client && !clients.includes(filter.client)) clients.push(filter.client);
  $('audit-selects').replaceChildren(
    select('audit-client', 'Client', clients, filter.client),
    select('audit-server', 'Server', servers, filter.server),
    select('audit-outcome', 'Outcome', [...OUTCOMES], filter.outcome),
  );
  $('audit-file').textContent = tail
    ? `The newest ${entries.length} entries of ${tail.file ?? 'the audit log'} (never arguments or results)`
    : 'Reading the audit log…';
  const rows = auditRows(entries, filter);
  $('audit-table').replaceChildren(
    rows.length
      ? h(
          'table',
          { class: 'audit' },
          h(
            'thead',
            {},
            h('tr', {}, ...['Time', 'Client', 'Tool or event', 'Outcome', 'Latency'].map((t) => h('th', {}, t))),
          ),
          h(
            'tbody',
            {},
            ...rows.map((r) =>
              h(
                'tr',
                { class: `outcome-${r.outcome.replace(' ', '-')}` },
                h('td', { title: r.at }, new Date(r.at).toLocaleTimeString([], { hour12: false })),
                h('td', {}, r.client),
                h(
                  'td',
                  {},
                  h('code', {}, r.what),
                  r.detail ? h('div', { class: 'desc' }, r.detail) : undefined,
                  r.traceId
                    ? h(
                        'button',
                        { type: 'button', class: 'link', 'data-trace': r.traceId, title: `Trace ${r.traceId}` },
                        'Copy trace id',
                      )
                    : undefined,
                ),
                h('td', {}, h('span', { class: `badge ${r.outcome === 'ok' ? 'ok' : 'fail'}` }, r.outcome)),
                h('td', { class: 'num' }, r.ms !== undefined ? fmtMs(r.ms) : ''),
              ),
            ),
          ),
        )
      : h('div', { class: 'empty' }, tail ? 'No entries match the filters.' : ''),
  );
}
