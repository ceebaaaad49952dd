// Rendering of a probe's result (reachability, tools, prompts, resources, stderr) and of the note
// that the form has changed since the probe ran.
import type { ProbeResult } from '../src/broker/supervision/probe';
import { $, h } from './dom';
import { build, state } from './session';

export function renderProbeStaleness(): void {
  const note = document.getElementById('probe-stale');
  if (!note || !state.probe) return;
  const current = JSON.stringify(build(state.form).definition);
  note.hidden = current === JSON.stringify(state.probe.definition);
}

export function renderProbe(result: ProbeResult | undefined): void {
  const box = $('probe-results');
  if (!result) {
    box.replaceChildren();
    return;
  }
  const summary = result.ok
    ? h(
        'div',
        { class: 'probe-summary ok' },
        h('span', { class: 'badge ok' }, 'Reachable'),
        ` connected in ${fmtMs(result.connectMs)}, listed in ${fmtMs(result.listMs)}`,
        result.serverInfo?.name
          ? ` · ${result.serverInfo.name}${result.serverInfo.version ? ` ${result.serverInfo.version}` : ''}`
          : '',
      )
    : h(
        'div',
        { class: 'probe-summary fail' },
        h('span', { class: 'badge fail' }, 'Not reachable'),
        ` ${result.error ?? 'unknown error'}`,
        result.connectMs !== undefined ? ` (after ${fmtMs(result.connectMs)})` : '',
      );
  const sections: HTMLElement[] = [];
  if (result.ok) {
    sections.push(
      listSection(
        `Tools (${result.tools.length})`,
        result.tools.map((t) =>
          h(
            'details',
            { class: 'item' },
            h(
              'summary',
              {},
              h('code', {}, t.name),
              t.description ? h('span', { class: 'desc' }, ` — ${firstLine(t.description)}`) : '',
            ),
            t.description && t.description.includes('\n') ? h('p', { class: 'full' }, t.description) : undefined,
            h('div', { class: 'schema-label' }, 'Input schema'),
            h('pre', { class: 'schema', tabindex: '0' }, JSON.stringify(t.inputSchema ?? {}, null, 2)),
          ),
        ),
      ),
    );
    sections.push(
      listSection(
        `Prompts (${result.prompts.length})`,
        result.prompts.map((p) =>
          h(
            'div',
            { class: 'item' },
            h('code', {}, p.name),
            p.description ? ` — ${firstLine(p.description)}` : '',
            p.arguments?.length
              ? h(
                  'span',
                  { class: 'desc' },
                  ` (arguments: ${p.arguments.map((a) => `${a.name}${a.required ? '' : '?'}`).join(', ')})`,
                )
              : '',
          ),
        ),
      ),
    );
    sections.push(
      listSection(`Resources (${result.resources.length + result.resourceTemplates.length})`, [
        ...result.resources.map((r) =>
          h(
            'div',
            { class: 'item' },
            h('code', {}, r.uri),
            r.name ? ` — ${r.name}` : '',
            r.mimeType ? h('span', { class: 'desc' }, ` (${r.mimeType})`) : '',
          ),
        ),
        ...result.resourceTemplates.map((r) =>
          h(
            'div',
            { class: 'item' },
            h('code', {}, r.uriTemplate),
            r.name ? ` — ${r.name}` : '',
            h('span', { class: 'desc' }, ' (template)'),
          ),
        ),
      ]),
    );
  }
  if (result.stderrTail.length) {
    sections.push(
      h(
        'details',
        { class: 'stderr', open: !result.ok },
        h('summary', {}, `stderr (last ${result.stderrTail.length} lines)`),
        h('pre', { tabindex: '0' }, result.stderrTail.join('\n')),
      ),
    );
  }
  box.replaceChildren(
    h('h2', {}, 'Probe'),
    h(
      'div',
      { class: 'stale', id: 'probe-stale', hidden: true },
      'The form changed since this probe ran; probe again to check the new definition.',
    ),
    summary,
    ...sections,
  );
  renderProbeStaleness();
}

function listSection(title: string, items: HTMLElement[]): HTMLElement {
  return h(
    'section',
    { class: 'list' },
    h('h3', {}, title),
    items.length ? h('div', {}, ...items) : h('div', { class: 'empty' }, 'none'),
  );
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

function fmtMs(ms: number | undefined): string {
  return ms === undefined ? '?' : ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}
