// The console's form markup and its DOM ⇄ form-values mapping: builds the page shell (fields,
// help texts, buttons, result areas) and reads/writes the field values. No state, no messages.
import type { Field } from './form';
import type { ConsoleState } from './protocol';
import { $, h } from './dom';

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

/** A labelled control with its help text and an error line (`<id>-error`): the server form's and the tool form's. */
export function field(id: Field | string, label: string, control: HTMLElement, help?: string): HTMLElement {
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

export function input(placeholder = '', type = 'text'): HTMLInputElement {
  return h('input', { type, placeholder, spellcheck: 'false', autocomplete: 'off' });
}

export function textarea(placeholder: string, rows = 3): HTMLTextAreaElement {
  return h('textarea', { placeholder, rows: String(rows), spellcheck: 'false' });
}

/** A fieldset of radios or checkboxes, one per value, each with its help text; errors under it. */
function choiceGroup(
  name: string,
  legend: string,
  type: 'radio' | 'checkbox',
  values: string[],
  help: Record<string, string>,
): HTMLElement {
  return h(
    'fieldset',
    {
      class: type === 'radio' ? 'field radios' : 'field checks',
      'data-field': name,
      id: name,
      'aria-describedby': `${name}-error`,
    },
    h('legend', {}, legend),
    ...values.map((v) =>
      h(
        'label',
        { class: 'choice' },
        h('input', { type, name, value: v }),
        h('span', {}, h('strong', {}, v), ' — ', help[v]),
      ),
    ),
    h('div', { class: 'error', id: `${name}-error`, role: 'alert' }),
  );
}

export function renderShell(): void {
  const trust = choiceGroup('trust', 'Trust tier', 'radio', ['builtin', 'trusted', 'community'], TRUST_HELP);
  const grants = choiceGroup('grants', 'Grants', 'checkbox', ['network', 'secrets', 'filesystem'], GRANT_HELP);
  const transport = h(
    'select',
    {},
    h('option', { value: 'stdio' }, 'stdio — run a local command'),
    h('option', { value: 'http' }, 'Streamable HTTP — connect to a URL'),
    h('option', { value: 'sse' }, 'SSE (legacy HTTP + Server-Sent Events)'),
  );
  const lifecycle = h(
    'select',
    {},
    h('option', { value: '' }, "the trust tier's default (community: lazy; trusted, builtin: eager)"),
    h('option', { value: 'eager' }, 'eager — runs as soon as it may'),
    h('option', { value: 'lazy' }, 'lazy — starts on first use, stops when idle'),
  );
  const enabled = h(
    'label',
    { class: 'choice toggle', 'data-field': 'enabled' },
    h('input', { type: 'checkbox', id: 'enabled' }),
    h('span', {}, h('strong', {}, 'Enabled'), ' — run it (a community server also needs your approval)'),
  );

  document.body.replaceChildren(
    h(
      'nav',
      { class: 'tabs', role: 'tablist', 'aria-label': 'Console views' },
      h('button', { type: 'button', role: 'tab', id: 'tab-server', 'data-view': 'server' }, 'Server'),
      h('button', { type: 'button', role: 'tab', id: 'tab-tool', 'data-view': 'tool' }, 'Try a tool'),
      h('button', { type: 'button', role: 'tab', id: 'tab-audit', 'data-view': 'audit' }, 'Recent calls'),
      h('button', { type: 'button', role: 'tab', id: 'tab-guardrails', 'data-view': 'guardrails' }, 'Guardrails'),
    ),
    h(
      'main',
      { id: 'view-server', role: 'tabpanel', 'aria-labelledby': 'tab-server' },
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
        h(
          'section',
          { class: 'grid' },
          field('transport', 'Transport', transport),
          field(
            'lifecycle',
            'Lifecycle',
            lifecycle,
            "A lazy server's tools are listed from the catalog cache; it stops after idleStopMs without use.",
          ),
        ),
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
    h('main', { id: 'view-tool', role: 'tabpanel', 'aria-labelledby': 'tab-tool', hidden: true }),
    h('main', { id: 'view-audit', role: 'tabpanel', 'aria-labelledby': 'tab-audit', hidden: true }),
    h('main', { id: 'view-guardrails', role: 'tabpanel', 'aria-labelledby': 'tab-guardrails', hidden: true }),
  );
}

/** The form's text inputs and selects, each read and written as its value (trust, grants and enabled are not). */
const TEXT_FIELDS = [
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
  'lifecycle',
] as const;

export function readForm(): ConsoleState['form'] {
  const form: ConsoleState['form'] = {};
  for (const id of TEXT_FIELDS) {
    form[id] = ($(id) as HTMLInputElement).value;
  }
  form.trust = (document.querySelector('input[name=trust]:checked') as HTMLInputElement | null)?.value ?? 'community';
  form.grants = Array.from(document.querySelectorAll<HTMLInputElement>('input[name=grants]:checked')).map(
    (c) => c.value,
  );
  form.enabled = ($('enabled') as HTMLInputElement).checked;
  return form;
}

export function writeForm(form: ConsoleState['form']): void {
  for (const id of TEXT_FIELDS) {
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

export function showTransport(): void {
  const remote = ($('transport') as HTMLSelectElement).value !== 'stdio';
  $('stdio-fields').hidden = remote;
  $('remote-fields').hidden = !remote;
}
