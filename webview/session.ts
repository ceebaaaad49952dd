// The console's session state and its persistence: the VS Code webview API handle, the draft
// (ConsoleState, kept by VS Code and mirrored to the extension), and the per-session UI state.
import type { ServerStatus } from '../src/broker/control/controlApi';
import { buildDefinition, type Built } from './form';
import type { ConsoleState, FromWebview } from './protocol';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): ConsoleState | undefined;
  setState(state: ConsoleState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;
export const vscode = acquireVsCodeApi();

export let state: ConsoleState = vscode.getState() ?? {
  folder: '',
  mode: 'new',
  form: {},
  extras: {},
  registryDir: 'mcp-servers.d',
  trusted: true,
};
export let touched = new Set<string>();
export let busy: 'probe' | 'save' | undefined;
export let existingNames: string[] = [];
export let liveStatus: ServerStatus | undefined;
/** The server's live numbers in words, as the extension said them. */
export let liveText: string | undefined;
export let brokerUp = true;

// Reassignments from other modules go through these (an import binding is read-only there).
export function setState(next: ConsoleState): void {
  state = next;
}
export function setTouched(next: Set<string>): void {
  touched = next;
}
export function setBusyFlag(next: typeof busy): void {
  busy = next;
}
export function setExistingNames(next: string[]): void {
  existingNames = next;
}
export function setLiveStatus(next: ServerStatus | undefined, text?: string): void {
  liveStatus = next;
  liveText = text;
}
export function setBrokerUp(next: boolean): void {
  brokerUp = next;
}

export function build(form: ConsoleState['form']): Built {
  return buildDefinition(form, { extras: state.extras, mode: state.mode, existingNames });
}

let stateTimer: ReturnType<typeof setTimeout> | undefined;
export function save_state(): void {
  state.savedAt = Date.now();
  vscode.setState(state);
  // The extension keeps a copy too: it resumes the draft when the console is closed and reopened.
  clearTimeout(stateTimer);
  stateTimer = setTimeout(() => vscode.postMessage({ type: 'state', state }), 250);
}
