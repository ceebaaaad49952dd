// The Switchboard console: a server form validated inline by the registry's own zod schema, and a
// probe of the unsaved definition. Plain DOM + VS Code theme variables; state survives reloads.
import type { ProbeResult } from '../src/broker/probe';
import type { ServerStatus } from '../src/broker/controlApi';
import { buildDefinition, extrasOf, FIELDS, formFromDefinition, isBlocking, type Built, type Field } from './form';
import type { ConsoleState, FromWebview, InitMessage, ToWebview } from './protocol';
import './console.css';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): ConsoleState | undefined;
  setState(state: ConsoleState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;
const vscode = acquireVsCodeApi();

// ------------------------------------------------------------------------------ tiny DOM helpers
type Attrs = Record<string, string | boolean | undefined>;
function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}
const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

// ------------------------------------------------------------------------------ the form model
let state: ConsoleState = vscode.getState() ?? {
  folder: '',
  mode: 'new',
  form: {},
  extras: {},
  registryDir: 'mcp-servers.d',
  trusted: true,
};
let touched = new Set<string>();
let busy: 'probe' | 'save' | undefined;
let existingNames: string[] = [];
let liveStatus: ServerStatus | undefined;
let brokerUp = true;

function build(form: ConsoleState['form']): Built {
  return buildDefinition(form, { extras: state.extras, mode: state.mode, existingNames });
}

// ------------------------------------------------------------------------------ rendering
const TRUST_HELP: Record<string, string> = {
  builtin: 'Part of this workspace; starts as soon as it is registered.',
  trusted: 'Starts as soon as it is registered.',
  community: 'Third-party: stays inert until you approve exactly what it runs (command, arguments, grants).',
};
const GRANT_HELP: Record<string, string> = {
  network: 'may open network connections (otherwise cut off where the OS allows it)',
  secrets: 'receives its env file and secret-looking variables (otherwise withheld)',
  filesystem: 'may read and write files (recorded and audited)',
};

function field(id: Field, label: string, control: HTMLElement, help?: string): HTMLElement {
  const helpId = `${id}-help`;
  const errId = `${id}-error`;
  control.id = id;
  control.setAttribute('aria-describedby', `${help ? helpId : ''} ${errId}`.trim());
  return h(
    'div',
    { class: 'field', 'data-field': id },
    h('label', { for: id }, label),
    control,
    help ? h('div', { class: 'help', id: helpId }, help) : undefined,
    h('div', { class: 'error', id: errId, role: 'alert', 'aria-live': 'polite' }),
  );
}

function input(placeholder = '', type = 'text'): HTMLInputElement {
  return h('input', { type, placeholder, spellcheck: 'false', autocomplete: 'off' });
}

function textarea(placeholder: string, rows = 3): HTMLTextAreaElement {
  return h('textarea', { placeholder, rows: String(rows), spellcheck: 'false' });
}

function renderShell(): void {
  const trust = h(
    'fieldset',
    { class: 'field radios', 'data-field': 'trust', id: 'trust', 'aria-describedby': 'trust-error' },
    h('legend', {}, 'Trust tier'),
    ...['builtin', 'trusted', 'community'].map((t) =>
      h(
        'label',
        { class: 'choice' },
        h('input', { type: 'radio', name: 'trust', value: t }),
        h('span', {}, h('strong', {}, t), ' — ', TRUST_HELP[t]),
      ),
    ),
    h('div', { class: 'error', id: 'trust-error', role: 'alert' }),
  );
  const grants = h(
    'fieldset',
    { class: 'field checks', 'data-field': 'grants', id: 'grants', 'aria-describedby': 'grants-error' },
    h('legend', {}, 'Grants'),
    ...['network', 'secrets', 'filesystem'].map((g) =>
      h(
        'label',
        { class: 'choice' },
        h('input', { type: 'checkbox', name: 'grants', value: g }),
        h('span', {}, h('strong', {}, g), ' — ', GRANT_HELP[g]),
      ),
    ),
    h('div', { class: 'error', id: 'grants-error', role: 'alert' }),
  );
  const transport = h(
    'select',
    {},
    h('option', { value: 'stdio' }, 'stdio — run a local command'),
    h('option', { value: 'http' }, 'Streamable HTTP — connect to a URL'),
    h('option', { value: 'sse' }, 'SSE (legacy HTTP + Server-Sent Events)'),
  );
  const enabled = h(
    'label',
    { class: 'choice toggle', 'data-field': 'enabled' },
    h('input', { type: 'checkbox', id: 'enabled' }),
    h('span', {}, h('strong', {}, 'Enabled'), ' — run it (a community server also needs your approval)'),
  );

  document.body.replaceChildren(
    h(
      'main',
      {},
      h(
        'header',
        {},
        h('h1', { id: 'title' }, 'New MCP server'),
        h('div', { class: 'subtitle', id: 'subtitle' }),
        h('div', { class: 'status', id: 'live', 'aria-live': 'polite' }),
      ),
      h('div', { class: 'banner error', id: 'restricted', hidden: true, role: 'status' }),
      h(
        'form',
        { id: 'form', novalidate: true },
        h(
          'section',
          { class: 'grid' },
          field(
            'name',
            'Name',
            input('e.g. github'),
            "Lowercase letters, digits and '-', starting with a letter; becomes the file name and the tool prefix (name__tool).",
          ),
          field('description', 'Description', input('What it is for, shown to agents and in the tree')),
        ),
        trust,
        h('section', { class: 'grid' }, field('transport', 'Transport', transport)),
        h(
          'fieldset',
          { id: 'stdio-fields', class: 'group' },
          h('legend', {}, 'Command'),
          h(
            'section',
            { class: 'grid' },
            field('command', 'Command', input('npx, node, uvx, docker…'), 'The program to run; found on PATH.'),
            field('cwd', 'Working directory', input('.'), 'Relative to the registry folder.'),
          ),
          field(
            'args',
            'Arguments',
            textarea('one argument per line\n-y\n@modelcontextprotocol/server-memory', 4),
            'One per line, no quoting needed.',
          ),
          h(
            'section',
            { class: 'grid' },
            field('env', 'Environment', textarea("KEY=value per line; ${env:NAME} reads the broker's environment", 3)),
            field(
              'envFile',
              'Env file',
              input('.env'),
              "A dotenv file whose values are passed only with the 'secrets' grant.",
            ),
          ),
        ),
        h(
          'fieldset',
          { id: 'remote-fields', class: 'group' },
          h('legend', {}, 'Remote server'),
          field('url', 'URL', input('https://example.com/mcp', 'url')),
          field('headers', 'Headers', textarea('Name: value per line', 3)),
        ),
        grants,
        h(
          'section',
          { class: 'grid' },
          field(
            'allowedTools',
            'Allowed tools',
            textarea('globs, e.g. read_*', 2),
            'Only matching tools are exposed (empty: all).',
          ),
          field(
            'excludeTools',
            'Excluded tools',
            textarea('globs, e.g. delete_*', 2),
            'Matching tools are hidden (wins over allowed).',
          ),
        ),
        enabled,
        h('div', { class: 'error form-error', id: 'form-error', role: 'alert' }),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              id: 'probe',
              class: 'secondary',
              title: 'Start this definition once, list what it offers, then stop it (Ctrl+Enter)',
            },
            'Probe',
          ),
          h('button', { type: 'submit', id: 'save', title: 'Write the definition to the registry (Ctrl+S)' }, 'Save'),
          h('button', { type: 'button', id: 'open-file', class: 'link', hidden: true }, 'Open YAML file'),
          h('span', { class: 'busy', id: 'busy', 'aria-live': 'polite' }),
        ),
        // Outcome of the last Save or Probe, next to the buttons that caused it.
        h('div', { class: 'banner', id: 'banner', hidden: true, role: 'status', 'aria-live': 'polite' }),
      ),
      h('section', { id: 'probe-results', class: 'results', 'aria-live': 'polite', 'aria-label': 'Probe results' }),
    ),
  );

  const form = $('form');
  form.addEventListener('input', (e) => onEdit(e.target as HTMLElement));
  form.addEventListener('change', (e) => onEdit(e.target as HTMLElement));
  form.addEventListener('focusout', (e) => {
    const f = (e.target as HTMLElement).closest('[data-field]')?.getAttribute('data-field');
    if (f) {
      touched.add(f);
      validate();
    }
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    save();
  });
  $('probe').addEventListener('click', () => probe());
  $('open-file').addEventListener('click', () => {
    if (state.savedName) vscode.postMessage({ type: 'openFile', name: state.savedName });
  });
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === 's') {
      e.preventDefault();
      save();
    }
    if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
      e.preventDefault();
      probe();
    }
  });
}

function readForm(): ConsoleState['form'] {
  const form: ConsoleState['form'] = {};
  for (const id of [
    'name',
    'description',
    'transport',
    'command',
    'args',
    'cwd',
    'env',
    'envFile',
    'url',
    'headers',
    'allowedTools',
    'excludeTools',
  ] as const) {
    form[id] = ($(id) as HTMLInputElement).value;
  }
  form.trust = (document.querySelector('input[name=trust]:checked') as HTMLInputElement | null)?.value ?? 'community';
  form.grants = Array.from(document.querySelectorAll<HTMLInputElement>('input[name=grants]:checked')).map(
    (c) => c.value,
  );
  form.enabled = ($('enabled') as HTMLInputElement).checked;
  return form;
}

function writeForm(form: ConsoleState['form']): void {
  for (const id of [
    'name',
    'description',
    'transport',
    'command',
    'args',
    'cwd',
    'env',
    'envFile',
    'url',
    'headers',
    'allowedTools',
    'excludeTools',
  ] as const) {
    ($(id) as HTMLInputElement).value = String(form[id] ?? (id === 'transport' ? 'stdio' : ''));
  }
  for (const r of Array.from(document.querySelectorAll<HTMLInputElement>('input[name=trust]')))
    r.checked = r.value === (form.trust ?? 'community');
  const grants = (form.grants as string[] | undefined) ?? [];
  for (const c of Array.from(document.querySelectorAll<HTMLInputElement>('input[name=grants]')))
    c.checked = grants.includes(c.value);
  ($('enabled') as HTMLInputElement).checked = form.enabled !== false;
  showTransport();
}

function showTransport(): void {
  const remote = ($('transport') as HTMLSelectElement).value !== 'stdio';
  $('stdio-fields').hidden = remote;
  $('remote-fields').hidden = !remote;
}

function onEdit(target: HTMLElement): void {
  if (target.id === 'transport') showTransport();
  state.form = readForm();
  save_state();
  validate();
  renderProbeStaleness();
}

let stateTimer: ReturnType<typeof setTimeout> | undefined;
function save_state(): void {
  state.savedAt = Date.now();
  vscode.setState(state);
  // The extension keeps a copy too: it resumes the draft when the console is closed and reopened.
  clearTimeout(stateTimer);
  stateTimer = setTimeout(() => vscode.postMessage({ type: 'state', state }), 250);
}

/** Shows errors for touched fields (all of them after a Save or Probe attempt). Returns the build. */
function validate(all = false): Built {
  const built = build(state.form);
  if (all) for (const f of [...FIELDS, 'form']) touched.add(f);
  for (const f of [...FIELDS, 'form'] as string[]) {
    const el = document.getElementById(`${f}-error`);
    if (!el) continue;
    const msgs = touched.has(f) ? (built.errors.get(f) ?? []) : [];
    el.textContent = msgs.join(' · ');
    const control = document.getElementById(f);
    if (control) control.setAttribute('aria-invalid', msgs.length ? 'true' : 'false');
    el.closest('[data-field]')?.classList.toggle('invalid', msgs.length > 0);
  }
  ($('save') as HTMLButtonElement).disabled = busy !== undefined || !state.trusted;
  ($('probe') as HTMLButtonElement).disabled = busy !== undefined || !state.trusted;
  return built;
}

function focusFirstError(built: Built): void {
  const first = FIELDS.find((f) => built.errors.has(f));
  const el = first ? document.querySelector<HTMLElement>(`#${first}, [data-field=${first}] input`) : undefined;
  el?.focus();
}

function setBusy(what: typeof busy, text = ''): void {
  busy = what;
  if (what) $('banner').hidden = true;
  $('busy').textContent = text;
  validate();
}

function probe(): void {
  if (busy) return;
  const built = validate(true);
  if (isBlocking(built)) {
    focusFirstError(built);
    return;
  }
  setBusy('probe', 'Probing… (starting it once, listing what it offers)');
  vscode.postMessage({ type: 'probe', definition: built.definition });
}

function save(): void {
  if (busy) return;
  const built = validate(true);
  if (isBlocking(built)) {
    focusFirstError(built);
    return;
  }
  setBusy('save', 'Saving…');
  vscode.postMessage({ type: 'save', definition: built.definition });
}

function renderHeader(): void {
  const name = String(state.form.name ?? '');
  $('title').textContent = state.mode === 'edit' && state.savedName ? `Server '${state.savedName}'` : 'New MCP server';
  $('subtitle').textContent =
    state.mode === 'edit' && state.savedName
      ? `${state.registryDir}/${state.savedName}.yaml`
      : `Saved as ${state.registryDir}/${name || '<name>'}.yaml through the broker's registry writer`;
  $('open-file').hidden = !(state.mode === 'edit' && state.savedName);
  const live = $('live');
  if (!brokerUp) live.textContent = 'The broker is not running yet: Probe or Save starts it.';
  else if (liveStatus)
    live.textContent = `Now: ${liveStatus.state}${liveStatus.lastError ? ` — ${liveStatus.lastError}` : ''}`;
  else live.textContent = '';
  live.className = `status ${liveStatus?.state ?? ''}`;
  const restricted = $('restricted');
  restricted.hidden = state.trusted;
  restricted.textContent = state.trusted
    ? ''
    : 'Restricted Mode: this workspace is not trusted, so nothing can be probed or saved. Trust the workspace to continue.';
}

function renderProbeStaleness(): void {
  const note = document.getElementById('probe-stale');
  if (!note || !state.probe) return;
  const current = JSON.stringify(build(state.form).definition);
  note.hidden = current === JSON.stringify(state.probe.definition);
}

function renderProbe(result: ProbeResult | undefined): void {
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

function showBanner(text: string, kind: 'ok' | 'error'): void {
  const banner = $('banner');
  banner.hidden = false;
  banner.className = `banner ${kind}`;
  banner.textContent = text;
}

// ------------------------------------------------------------------------------ messages
function applyState(restoredState: ConsoleState): void {
  state = restoredState;
  writeForm(state.form);
  renderHeader();
  renderProbe(state.probe?.result);
  validate();
}

function init(msg: InitMessage): void {
  if (msg.restore) {
    existingNames = msg.existingNames;
    applyState({ ...msg.restore, trusted: msg.trusted });
    save_state();
    return;
  }
  state = {
    folder: msg.folder,
    mode: msg.mode,
    savedName: msg.mode === 'edit' ? String(msg.definition?.name ?? '') : undefined,
    form: formFromDefinition(msg.definition),
    extras: extrasOf(msg.definition),
    probe: undefined,
    registryDir: msg.registryDir,
    trusted: msg.trusted,
  };
  existingNames = msg.existingNames;
  touched = new Set();
  busy = undefined;
  writeForm(state.form);
  $('banner').hidden = true;
  renderHeader();
  renderProbe(undefined);
  validate();
  save_state();
  ($('name') as HTMLInputElement).focus();
  if (msg.probeNow) probe();
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const msg = event.data;
  switch (msg.type) {
    case 'init':
      init(msg);
      break;
    case 'status':
      liveStatus = msg.server;
      existingNames = msg.existingNames;
      brokerUp = msg.brokerUp;
      renderHeader();
      validate();
      break;
    case 'probeRequest':
      probe();
      break;
    case 'probeResult':
      setBusy(undefined);
      state.probe = { result: msg.result, definition: msg.definition };
      save_state();
      renderProbe(msg.result);
      break;
    case 'probeError':
      setBusy(undefined);
      showBanner(`Probe failed: ${msg.message}`, 'error');
      break;
    case 'saving':
      setBusy('save', 'Saving…');
      break;
    case 'saved':
      setBusy(undefined);
      state.mode = 'edit';
      state.savedName = msg.name;
      state.form = formFromDefinition(msg.definition);
      state.extras = extrasOf(msg.definition);
      if (!existingNames.includes(msg.name)) existingNames.push(msg.name);
      writeForm(state.form);
      save_state();
      renderHeader();
      showBanner(`Saved to ${msg.file}.`, 'ok');
      break;
    case 'saveError':
      setBusy(undefined);
      showBanner(`Not saved: ${msg.message}`, 'error');
      break;
  }
});

renderShell();
const restored = vscode.getState();
if (restored && restored.folder) applyState(restored);
vscode.postMessage({ type: 'ready' });
