// The Guardrails tab: for the server being edited, the rules and limits in force that apply to its
// calls (with each limit's counts now), and the recent calls to it that a guardrail decided. Read
// with read_audit and server_status (the extension answers `readGuardrails`), live every few seconds
// while shown, like Recent calls.
import type { AuditTail, ServerGuardrail } from '../src/broker/control/controlApi';
import { $, h } from './dom';
import { decisionRows, ruleRows } from './guardrailRows';
import { state, vscode } from './session';

let rules: ServerGuardrail[] | undefined;
let tail: AuditTail | undefined;
let timer: ReturnType<typeof setInterval> | undefined;

const LIVE_MS = 3000;

export function requestGuardrails(): void {
  if (state.savedName) vscode.postMessage({ type: 'readGuardrails', name: state.savedName });
}

function table(head: string[], rows: HTMLElement[]): HTMLElement {
  return h(
    'table',
    { class: 'audit' },
    h('thead', {}, h('tr', {}, ...head.map((t) => h('th', {}, t)))),
    h('tbody', {}, ...rows),
  );
}

function render(): void {
  const server = state.savedName;
  const ruleList = ruleRows(rules);
  const decisions = server && tail ? decisionRows(tail.entries, server) : [];
  $('view-guardrails').replaceChildren(
    h(
      'header',
      {},
      h('h1', {}, server ? `Guardrails of ${server}` : 'Guardrails'),
      h(
        'div',
        { class: 'subtitle' },
        'The rules and limits of the approved policies (policies.d/) that can apply to this server’s calls.',
      ),
    ),
    h('div', { class: 'error', id: 'guardrails-error', role: 'alert' }),
    h('h2', {}, 'Rules and limits in force'),
    ruleList.length
      ? table(
          ['Name', 'Action', 'Applies to', 'Condition or budget', 'Now', 'Source'],
          ruleList.map((r) =>
            h(
              'tr',
              { class: `guardrail-${r.action}` },
              h('td', {}, h('code', {}, r.name)),
              h('td', {}, h('span', { class: `badge ${r.action === 'deny' ? 'fail' : 'ok'}` }, r.action)),
              h('td', {}, r.applies),
              h('td', {}, r.condition ? h('code', {}, r.condition) : ''),
              h('td', {}, r.counts || (r.action === 'limit' ? 'no calls in the last minute' : '')),
              h('td', {}, r.source),
            ),
          ),
        )
      : h(
          'div',
          { class: 'empty' },
          rules ? 'No approved policy has a rule or limit for this server: every call it is offered goes on.' : '',
        ),
    h('h2', {}, 'Recent decisions'),
    decisions.length
      ? table(
          ['Time', 'Rule', 'Decision', 'Client', 'Tool'],
          decisions.map((d) =>
            h(
              'tr',
              {},
              h('td', { title: d.at }, new Date(d.at).toLocaleTimeString([], { hour12: false })),
              h('td', {}, h('code', {}, d.rule)),
              h(
                'td',
                {},
                h(
                  'span',
                  { class: `badge ${d.decision === 'allow' || d.decision === 'ask: accepted' ? 'ok' : 'fail'}` },
                  d.decision,
                ),
              ),
              h('td', {}, d.client),
              h('td', {}, h('code', {}, d.tool)),
            ),
          ),
        )
      : h(
          'div',
          { class: 'empty' },
          tail ? 'No call to this server was decided by a guardrail lately.' : 'Reading the audit log…',
        ),
  );
}

/** Shows the tab and starts reading, live while it is shown. */
export function openGuardrails(): void {
  render();
  requestGuardrails();
  if (timer) clearInterval(timer);
  timer = setInterval(requestGuardrails, LIVE_MS);
}

export function closeGuardrails(): void {
  if (timer) clearInterval(timer);
  timer = undefined;
}

export function guardrailsArrived(next: { rules?: ServerGuardrail[]; tail?: AuditTail; error?: string }): void {
  if (next.rules) rules = next.rules;
  if (next.tail) tail = next.tail;
  render();
  $('guardrails-error').textContent = next.error ? `Could not read the guardrails: ${next.error}` : '';
}
