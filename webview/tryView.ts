// The Try-a-tool tab: a tool's title, description, annotations and input schema, a form generated
// from that schema (schemaForm.ts, with the server form's field markup), Call, and the result
// (toolResult.ts) with its latency. The call itself goes to the extension, which makes it through
// the broker as the operator.
import type { Tool } from '../src/broker/shared/mcpTypes';
import { $, h } from './dom';
import {
  buildArguments,
  formOfSchema,
  initialValues,
  RAW,
  type FormValues,
  type SchemaField,
  type SchemaForm,
} from './schemaForm';
import { vscode } from './session';
import { field, input, textarea } from './shell';
import { sizeText, viewOfFailure, viewOfResult, type ResultView } from './toolResult';

let tool: Tool | undefined;
let form: SchemaForm = { fields: [] };
let values: FormValues = {};
let calling = false;
let touched = false;

const present = (...nodes: (Node | undefined)[]): Node[] => nodes.filter((n): n is Node => n !== undefined);

const idOf = (path: string): string => `arg-${path.replace(/[^\w-]/g, '_')}`;

export function showTool(next: Tool, listed: boolean): void {
  tool = next;
  form = formOfSchema(next.inputSchema);
  values = initialValues(form);
  calling = false;
  touched = false;
  const annotations = (next.annotations ?? {}) as Record<string, unknown>;
  const hints = Object.entries(annotations)
    .filter(([k, v]) => k.endsWith('Hint') && typeof v === 'boolean')
    .map(([k, v]) => h('span', { class: `hint ${v ? 'on' : 'off'}` }, `${k.replace(/Hint$/, '')}: ${String(v)}`));
  const title =
    typeof next.title === 'string' ? next.title : typeof annotations.title === 'string' ? annotations.title : '';
  $('view-tool').replaceChildren(
    ...present(
      h(
        'header',
        {},
        h('h1', { id: 'tool-title' }, h('code', {}, next.name), title ? ` — ${title}` : ''),
        h(
          'div',
          { class: 'subtitle' },
          'Called through the broker as the operator: scopes, pins and the audit log apply.',
        ),
        hints.length ? h('div', { class: 'hints' }, ...hints) : undefined,
      ),
      listed
        ? undefined
        : h(
            'div',
            { class: 'banner error' },
            'This tool is not in the broker’s tool list for you (quarantined, hidden or gone). Call it to see what the broker says.',
          ),
      typeof next.description === 'string' && next.description
        ? h('p', { class: 'tool-description' }, next.description)
        : undefined,
      h(
        'details',
        { class: 'item schema-box' },
        h('summary', {}, 'Input schema'),
        h('pre', { class: 'schema', tabindex: '0' }, JSON.stringify(next.inputSchema ?? {}, null, 2)),
      ),
      h(
        'form',
        { id: 'tool-form', novalidate: true },
        ...(form.raw !== undefined
          ? [
              field(
                idOf(RAW),
                'Arguments (JSON)',
                textarea('{ }', 8),
                `Raw JSON: ${form.raw}, so the console offers no form for it.`,
              ),
            ]
          : form.fields.length
            ? form.fields.map(control)
            : [h('p', { class: 'empty' }, 'This tool takes no arguments.')]),
        h('div', { class: 'error form-error', id: 'tool-form-error', role: 'alert' }),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'submit', id: 'call', title: 'Call the tool with these arguments (Ctrl+Enter)' }, 'Call'),
          h('span', { class: 'busy', id: 'call-busy', 'aria-live': 'polite' }),
        ),
      ),
      h('section', { id: 'tool-result', class: 'results', 'aria-live': 'polite', 'aria-label': 'Result' }),
    ),
  );
  writeValues();
  const f = $('tool-form');
  f.addEventListener('input', () => onEdit());
  f.addEventListener('change', () => onEdit());
  f.addEventListener('submit', (e) => {
    e.preventDefault();
    call();
  });
  f.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
      e.preventDefault();
      call();
    }
  });
  (f.querySelector('input, select, textarea') as HTMLElement | null)?.focus();
}

function label(f: SchemaField): string {
  return `${f.label}${f.required ? ' *' : ''}`;
}

function help(f: SchemaField, extra?: string): string | undefined {
  const parts = [f.description, extra].filter(Boolean);
  return parts.length ? parts.join(' — ') : undefined;
}

function control(f: SchemaField): HTMLElement {
  const id = idOf(f.path);
  switch (f.kind) {
    case 'object':
      return h(
        'fieldset',
        { class: 'group', 'data-field': id },
        h('legend', {}, label(f)),
        f.description ? h('div', { class: 'help' }, f.description) : undefined,
        ...f.fields.map(control),
      );
    case 'string':
      return field(id, label(f), f.multiline ? textarea('', 4) : input(f.format ?? ''), help(f));
    case 'number':
    case 'integer': {
      const range = [
        f.minimum !== undefined ? `≥ ${f.minimum}` : '',
        f.maximum !== undefined ? `≤ ${f.maximum}` : '',
      ].filter(Boolean);
      return field(
        id,
        label(f),
        input(f.kind === 'integer' ? 'a whole number' : 'a number'),
        help(f, range.join(', ')),
      );
    }
    case 'boolean':
      if (f.required) {
        return h(
          'label',
          { class: 'choice toggle', 'data-field': id },
          h('input', { type: 'checkbox', id }),
          h('span', {}, h('strong', {}, label(f)), f.description ? ` — ${f.description}` : ''),
        );
      }
      return field(
        id,
        label(f),
        h(
          'select',
          {},
          h('option', { value: '' }, '(not set)'),
          h('option', { value: 'true' }, 'true'),
          h('option', { value: 'false' }, 'false'),
        ),
        help(f),
      );
    case 'enum':
      return field(
        id,
        label(f),
        h(
          'select',
          {},
          f.required ? undefined : h('option', { value: '' }, '(not set)'),
          ...f.options.map((o) => h('option', { value: JSON.stringify(o) }, String(o))),
        ),
        help(f),
      );
    case 'list':
      return field(id, label(f), textarea(`one ${f.item} per line`, 3), help(f, `a list of ${f.item}s, one per line`));
    case 'json':
      return field(id, label(f), textarea('JSON', 3), help(f, `JSON, since ${f.why}`));
  }
}

function paths(): string[] {
  return Object.keys(values);
}

function writeValues(): void {
  for (const p of paths()) {
    const el = document.getElementById(idOf(p)) as HTMLInputElement | null;
    if (!el) continue;
    if (el.type === 'checkbox') el.checked = values[p] === true;
    else el.value = String(values[p]);
  }
}

function readValues(): void {
  for (const p of paths()) {
    const el = document.getElementById(idOf(p)) as HTMLInputElement | null;
    if (!el) continue;
    values[p] = el.type === 'checkbox' ? el.checked : el.value;
  }
}

function onEdit(): void {
  readValues();
  if (touched) validate();
}

function validate(): ReturnType<typeof buildArguments> {
  const built = buildArguments(form, values);
  for (const p of paths()) {
    const err = document.getElementById(`${idOf(p)}-error`);
    const msgs = built.errors.get(p) ?? [];
    if (err) err.textContent = msgs.join(' · ');
    document.getElementById(idOf(p))?.setAttribute('aria-invalid', msgs.length ? 'true' : 'false');
    err?.closest('[data-field]')?.classList.toggle('invalid', msgs.length > 0);
  }
  return built;
}

function call(): void {
  if (!tool || calling) return;
  readValues();
  touched = true;
  const built = validate();
  if (built.errors.size) {
    const first = [...built.errors.keys()][0];
    document.getElementById(idOf(first))?.focus();
    return;
  }
  calling = true;
  ($('call') as HTMLButtonElement).disabled = true;
  $('call-busy').textContent = 'Calling…';
  vscode.postMessage({ type: 'callTool', name: tool.name, arguments: built.arguments });
}

export function showToolResult(name: string, view: ResultView): void {
  if (!tool || tool.name !== name) return;
  calling = false;
  ($('call') as HTMLButtonElement).disabled = false;
  $('call-busy').textContent = '';
  const badge = view.status === 'ok' ? 'ok' : 'fail';
  const blocks = view.blocks.map((b): HTMLElement => {
    switch (b.kind) {
      case 'text':
        return h('pre', { class: 'result-text', tabindex: '0' }, b.text);
      case 'image':
        return h(
          'figure',
          { class: 'result-image' },
          h('img', { src: b.src, alt: `image returned by the tool (${b.mimeType})` }),
          h('figcaption', {}, `${b.mimeType}, ${sizeText(b.bytes)}`),
        );
      case 'resource':
        return h(
          'div',
          { class: 'result-resource' },
          h(
            'div',
            {},
            h('span', { class: 'badge' }, 'resource'),
            ' ',
            h('code', {}, b.uri),
            b.mimeType ? ` (${b.mimeType})` : '',
          ),
          b.text !== undefined ? h('pre', { tabindex: '0' }, b.text) : undefined,
          b.image ? h('img', { src: b.image, alt: `resource ${b.uri}` }) : undefined,
          b.text === undefined && !b.image && b.bytes !== undefined
            ? h('div', { class: 'desc' }, `binary, ${sizeText(b.bytes)}`)
            : undefined,
        );
      case 'link':
        return h(
          'div',
          { class: 'result-resource' },
          h('span', { class: 'badge' }, 'resource link'),
          ' ',
          h('code', {}, b.uri),
          b.title || b.name ? ` — ${b.title ?? b.name}` : '',
          b.description ? h('div', { class: 'desc' }, b.description) : undefined,
        );
      case 'note':
        return h('div', { class: 'desc' }, b.text);
    }
  });
  $('tool-result').replaceChildren(
    ...present(
      h('h2', {}, 'Result'),
      h(
        'div',
        { class: `probe-summary ${badge}`, id: 'result-summary' },
        h(
          'span',
          { class: `badge ${badge}` },
          view.status === 'ok' ? 'OK' : view.status === 'tool-error' ? 'Tool error' : 'Failed',
        ),
        ` ${view.headline}`,
      ),
      ...blocks,
      view.structured !== undefined
        ? h(
            'section',
            { class: 'list' },
            h('h3', {}, 'Structured content'),
            h('pre', { class: 'schema', tabindex: '0' }, view.structured),
          )
        : undefined,
    ),
  );
}

export function toolResult(name: string, result: Record<string, unknown>, ms: number): void {
  showToolResult(name, viewOfResult(result, ms));
}

export function toolFailure(name: string, message: string, ms: number, code?: number): void {
  showToolResult(name, viewOfFailure(message, ms, code));
}
