// The Switchboard console: a server form validated inline by the registry's own zod schema, and a
// probe of the unsaved definition. Plain DOM + VS Code theme variables; state survives reloads.
// This entry wires the page's DOM events and the extension's messages to the modules that act on
// them; esbuild bundles it (with the modules it imports) into dist/webview/console.js.
import { extrasOf, formFromDefinition } from './form';
import type { ConsoleState, ConsoleView, InitMessage, ToWebview } from './protocol';
import { $ } from './dom';
import { onEdit, probe, renderHeader, save, setBusy, showBanner, validate } from './actions';
import { renderProbe } from './probeView';
import {
  existingNames,
  save_state,
  setBrokerUp,
  setBusyFlag,
  setExistingNames,
  setLiveStatus,
  setState,
  setTouched,
  state,
  touched,
  vscode,
} from './session';
import { renderShell, writeForm } from './shell';
import { showTool, toolFailure, toolResult } from './tryView';
import { auditArrived, closeAudit, openAudit, requestAudit } from './auditView';
import { closeGuardrails, guardrailsArrived, openGuardrails } from './guardrailsView';
import './console.css';

// ------------------------------------------------------------------------------ tabs
type View = ConsoleView;
function showView(view: View): void {
  vscode.postMessage({ type: 'view', view });
  for (const v of ['server', 'tool', 'audit', 'guardrails'] as View[]) {
    $(`view-${v}`).hidden = v !== view;
    const tab = $(`tab-${v}`);
    tab.setAttribute('aria-selected', String(v === view));
    tab.classList.toggle('active', v === view);
  }
  if (view === 'audit') openAudit();
  else closeAudit();
  if (view === 'guardrails') openGuardrails();
  else closeGuardrails();
}

/** The Guardrails tab is about a saved server: shown once there is one. */
function showGuardrailsTab(): void {
  $('tab-guardrails').hidden = !state.savedName;
}

// ------------------------------------------------------------------------------ DOM events
function wireShell(): void {
  for (const tab of Array.from(document.querySelectorAll<HTMLElement>('nav.tabs [data-view]')))
    tab.addEventListener('click', () => showView(tab.dataset.view as View));
  $('tab-tool').hidden = true;
  $('tab-guardrails').hidden = true;
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

// ------------------------------------------------------------------------------ messages
function applyState(restoredState: ConsoleState): void {
  setState(restoredState);
  writeForm(state.form);
  renderHeader();
  showGuardrailsTab();
  renderProbe(state.probe?.result);
  validate();
}

function init(msg: InitMessage): void {
  // A definition loaded (Edit Server…, Add Server…) is shown, whichever tab was open.
  showView('server');
  if (msg.restore) {
    setExistingNames(msg.existingNames);
    applyState({ ...msg.restore, trusted: msg.trusted });
    save_state();
    return;
  }
  setState({
    folder: msg.folder,
    mode: msg.mode,
    savedName: msg.mode === 'edit' ? String(msg.definition?.name ?? '') : undefined,
    form: formFromDefinition(msg.definition),
    extras: extrasOf(msg.definition),
    probe: undefined,
    registryDir: msg.registryDir,
    trusted: msg.trusted,
  });
  setExistingNames(msg.existingNames);
  setTouched(new Set());
  setBusyFlag(undefined);
  writeForm(state.form);
  $('banner').hidden = true;
  renderHeader();
  showGuardrailsTab();
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
      setLiveStatus(msg.server, msg.liveText);
      setExistingNames(msg.existingNames);
      setBrokerUp(msg.brokerUp);
      renderHeader();
      showGuardrailsTab();
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
      showGuardrailsTab();
      showBanner(`Saved to ${msg.file}.`, 'ok');
      break;
    case 'saveError':
      setBusy(undefined);
      showBanner(`Not saved: ${msg.message}`, 'error');
      break;
    case 'tryTool':
      $('tab-tool').hidden = false;
      showTool(msg.tool, msg.listed);
      showView('tool');
      break;
    case 'toolResult':
      toolResult(msg.name, msg.result, msg.ms);
      requestAudit();
      break;
    case 'toolError':
      toolFailure(msg.name, msg.message, msg.ms, msg.code);
      requestAudit();
      break;
    case 'showAudit':
      showView('audit');
      openAudit(msg.client);
      break;
    case 'audit':
      auditArrived(msg.tail, msg.error);
      break;
    case 'guardrails':
      guardrailsArrived(msg);
      break;
  }
});

renderShell();
wireShell();
showView('server');
const restored = vscode.getState();
if (restored && restored.folder) applyState(restored);
vscode.postMessage({ type: 'ready' });
