// What the form does: inline validation, the busy state, the Probe and Save requests to the
// extension, and the header/banner that report where things stand.
import { FIELDS, isBlocking, type Built } from './form';
import { $ } from './dom';
import { renderProbeStaleness } from './probeView';
import {
  brokerUp,
  build,
  busy,
  liveStatus,
  liveText,
  save_state,
  setBusyFlag,
  state,
  touched,
  vscode,
} from './session';
import { readForm, showTransport } from './shell';

export function onEdit(target: HTMLElement): void {
  if (target.id === 'transport') showTransport();
  state.form = readForm();
  save_state();
  validate();
  renderProbeStaleness();
}

/** Shows errors for touched fields (all of them after a Save or Probe attempt). Returns the build. */
export function validate(all = false): Built {
  const built = build(state.form);
  if (all) for (const f of [...FIELDS, 'form']) touched.add(f);
  for (const f of [...FIELDS, 'form'] as string[]) {
    const el = document.getElementById(`${f}-error`);
    if (!el) continue;
    const msgs = touched.has(f) ? (built.errors.get(f) ?? []) : [];
    const warnings = touched.has(f) ? (built.warnings.get(f) ?? []) : [];
    el.textContent = [...msgs, ...warnings.map((w) => `Warning: ${w}`)].join(' · ');
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

export function setBusy(what: typeof busy, text = ''): void {
  setBusyFlag(what);
  if (what) $('banner').hidden = true;
  $('busy').textContent = text;
  validate();
}

export function probe(): void {
  if (busy) return;
  const built = validate(true);
  if (isBlocking(built)) {
    focusFirstError(built);
    return;
  }
  setBusy('probe', 'Probing… (starting it once, listing what it offers)');
  vscode.postMessage({ type: 'probe', definition: built.definition });
}

export function save(): void {
  if (busy) return;
  const built = validate(true);
  if (isBlocking(built)) {
    focusFirstError(built);
    return;
  }
  setBusy('save', 'Saving…');
  vscode.postMessage({ type: 'save', definition: built.definition });
}

export function renderHeader(): void {
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
    live.textContent =
      `Now: ${liveStatus.state}${liveStatus.lastError ? ` — ${liveStatus.lastError}` : ''}` +
      `${liveText ? ` · ${liveText}` : ''}`;
  else live.textContent = '';
  live.className = `status ${liveStatus?.state ?? ''}`;
  const restricted = $('restricted');
  restricted.hidden = state.trusted;
  restricted.textContent = state.trusted
    ? ''
    : 'Restricted Mode: this workspace is not trusted, so nothing can be probed or saved. Trust the workspace to continue.';
}

export function showBanner(text: string, kind: 'ok' | 'error'): void {
  const banner = $('banner');
  banner.hidden = false;
  banner.className = `banner ${kind}`;
  banner.textContent = text;
}
