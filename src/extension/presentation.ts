// What the views say about the broker's state: labels, descriptions, icons, tooltips and the
// contextValue tokens the menus key on. Pure (no `vscode`), so the words are unit tested.
import type { BrokerState, ServerStatus } from '../broker/control/controlApi';
import type { Phase } from './brokerConnection';
import { isHeld } from '../broker/supervision/upstreamStates';
import { signsOf, type ScanItemFinding } from '../broker/trust/scanReport';
import { SIGN_LABELS } from '../broker/trust/toolScanner';
import { busiestServerLine, liveNumbersText } from './liveNumbers';

export type State = ServerStatus['state'];

export interface IconSpec {
  /** Codicon id, e.g. `pass-filled`, `sync~spin`. */
  id: string;
  /** Theme color id, when the icon should carry one. */
  color?: string;
}

const STATE_LABELS: Record<State, string> = {
  running: 'running',
  starting: 'starting',
  backoff: 'crashed, restarting',
  failed: 'failed',
  stopped: 'stopped',
  idle: 'idle (starts on first use)',
  disabled: 'disabled',
  'awaiting-approval': 'awaiting approval',
  blocked: 'blocked (Restricted Mode)',
  'needs-sign-in': 'needs sign-in',
  'needs-input': 'needs a secret',
};

export function stateLabel(state: State): string {
  return STATE_LABELS[state] ?? state;
}

export function stateIcon(state: State): IconSpec {
  switch (state) {
    case 'running':
      return { id: 'pass-filled', color: 'testing.iconPassed' };
    case 'starting':
      return { id: 'sync~spin' };
    case 'backoff':
      return { id: 'sync~spin', color: 'list.warningForeground' };
    case 'failed':
      return { id: 'error', color: 'list.errorForeground' };
    case 'stopped':
      return { id: 'circle-large-outline' };
    case 'idle':
      return { id: 'debug-pause' };
    case 'disabled':
      return { id: 'circle-slash', color: 'disabledForeground' };
    case 'awaiting-approval':
      return { id: 'shield', color: 'list.warningForeground' };
    case 'blocked':
      return { id: 'lock', color: 'disabledForeground' };
    case 'needs-sign-in':
      return { id: 'account', color: 'list.warningForeground' };
    case 'needs-input':
      return { id: 'key', color: 'list.warningForeground' };
    default:
      return { id: 'question' };
  }
}

/** The warning a server whose tools differ from their pins carries instead of its state icon. */
export const TOOLS_CHANGED_ICON: IconSpec = { id: 'warning', color: 'list.warningForeground' };

/** A server node's icon: its state, or the warning while tools are held back after a change. */

/**
 * "2 tools quarantined" / "1 prompt quarantined" / "instructions changed" / "tools changed" while a
 * server's tools, prompts or instructions differ from their pins, else undefined.
 */
export function toolChangeLabel(s: ServerStatus): string | undefined {
  if (s.pins?.status !== 'changed') return undefined;
  const n = s.pins.quarantined.length;
  const p = s.pins.quarantinedPrompts?.length ?? 0;
  const r = (s.pins.quarantinedResourceTemplates?.length ?? 0) + (s.pins.quarantinedResources?.length ?? 0);
  const parts = [
    ...(n ? [`${plural(n, 'tool')} quarantined`] : []),
    ...(p ? [`${plural(p, 'prompt')} quarantined`] : []),
    ...(r ? [`${plural(r, 'resource')} quarantined`] : []),
    ...(s.pins.instructionsChanged ? ['instructions changed'] : []),
  ];
  return parts.length ? parts.join(', ') : 'tools changed';
}

/** "2 flagged (high)" when the tool-description scanner found something in the server, else undefined. */
export function scanLabel(s: ServerStatus): string | undefined {
  return s.scan ? `${plural(s.scan.flagged, 'item')} flagged (${s.scan.severity})` : undefined;
}

/** The scanner's findings in one tool, as the tree shows them ("instructions to the model, …"); undefined without any. */
export function toolScanLabel(s: ServerStatus, tool: string): string | undefined {
  const findings = s.scan?.findings.filter((f) => f.item === `tool '${tool}'`) ?? [];
  return findings.length ? signsOf(findings) : undefined;
}

/** Every finding, one line each, for a tooltip or the review. */
export function scanFindingLines(findings: readonly ScanItemFinding[]): string[] {
  return findings.map((f) => `${f.item} (${f.where}): ${SIGN_LABELS[f.sign]}, ${f.severity} — "${f.excerpt}"`);
}

/** A short badge for the trust tier, as it appears in the tree's description column. */
export function trustBadge(trust: ServerStatus['trust']): string {
  switch (trust) {
    case 'builtin':
      return '◆ builtin';
    case 'trusted':
      return '✓ trusted';
    default:
      return '⚠ community';
  }
}

export function trustExplanation(trust: ServerStatus['trust']): string {
  switch (trust) {
    case 'builtin':
      return "builtin: ships with this workspace; starts once you accept the workspace's builtin servers";
    case 'trusted':
      return 'trusted: starts once you accept the servers this workspace marks trusted';
    default:
      return 'community: third-party; runs only after you approve exactly what it runs';
  }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * A server that keeps failing between restarts: starting or waiting to restart while the last attempt
 * failed (a successful start clears lastError). Shown as such, not as a hopeful "starting" spinner.
 */
export function isCrashLooping(s: Pick<ServerStatus, 'state' | 'restarts' | 'lastError'>): boolean {
  return (s.state === 'starting' || s.state === 'backoff') && s.restarts > 0 && !!s.lastError;
}

/** The first line of an error, short enough for a tree row. */
export function shortReason(text: string, width = 60): string {
  const line = text.split(/\r?\n/, 1)[0].replace(/[;:]\s*$/, '');
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** The icon of a server node: its state's, or a warning for one that is crash-looping. */
export function serverIcon(s: ServerStatus): IconSpec {
  if (s.pins?.status === 'changed') return TOOLS_CHANGED_ICON;
  return isCrashLooping(s) ? { id: 'warning', color: 'list.warningForeground' } : stateIcon(s.state);
}

/** The description column of a server node: `◆ builtin · running · 3 tools`. */
export function serverDescription(s: ServerStatus): string {
  if (isCrashLooping(s)) {
    return `${trustBadge(s.trust)} · crash-looping (${plural(s.restarts, 'restart')}): ${shortReason(s.lastError ?? '')}`;
  }
  const parts = [trustBadge(s.trust), stateLabel(s.state)];
  if (s.state === 'running') parts.push(plural(s.tools.length, 'tool'));
  else if (s.catalog === 'cached') parts.push(`${plural(s.tools.length, 'tool')} (cached)`);
  else if (s.state === 'backoff' && s.nextRestartInMs !== undefined)
    parts.push(`next try in ${Math.ceil(s.nextRestartInMs / 1000)} s`);
  if (s.approval === 'changed') parts.push('changed since approval');
  const held = toolChangeLabel(s);
  if (held) parts.push(held);
  return parts.join(' · ');
}

export function formatUptime(ms: number | undefined): string {
  if (ms === undefined) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h ${m % 60} min` : `${Math.floor(h / 24)} days`;
}

export function grantLabel(grant: string): { label: string; description: string; icon: string } {
  const icon = grant === 'network' ? 'globe' : grant === 'filesystem' ? 'file-directory' : 'key';
  let description: string;
  if (grant === 'network') description = 'may use the network';
  else if (grant === 'filesystem') description = 'may read and write files';
  else description = 'gets its env file and secret variables';
  return { label: grant, description, icon };
}

/** What is not granted and how the broker holds it back (or honestly cannot); what a scoped grant covers. */
export function enforcementLines(s: ServerStatus): string[] {
  const lines: string[] = [];
  const e = s.enforcement;
  if (e.allowedHosts?.length) lines.push(`network: only ${e.allowedHosts.join(', ')} (through the broker's proxy)`);
  else if (s.grants.includes('network') && e.network === 'enforced')
    lines.push('network: blocked (its allow-list needs bubblewrap, which cannot run here)');
  else if (!s.grants.includes('network')) {
    lines.push(
      e.network === 'enforced'
        ? 'network: blocked (own network namespace)'
        : 'network: not granted, but not blockable here',
    );
  }
  if (!s.grants.includes('secrets')) lines.push('secrets: withheld (no env file values, no secret-looking variables)');
  const scoped = [...(e.readPaths ?? []).map((p) => `${p} (read)`), ...(e.writePaths ?? []).map((p) => `${p} (write)`)];
  if (e.filesystem === 'enforced' && scoped.length) lines.push(`filesystem: sandboxed, plus ${scoped.join(', ')}`);
  else if (e.filesystem === 'enforced')
    lines.push('filesystem: sandboxed (reads the system and the registry root; writes only its own temp dir; no home)');
  else if (!s.grants.includes('filesystem'))
    lines.push('filesystem: not granted, but not restricted here (recorded and audited only)');
  else if (e.filesystem === 'not-enforced')
    lines.push('filesystem: the granted paths are not enforced here (full access)');
  return lines;
}

/**
 * contextValue of a server node: space-separated tokens after `server`, matched by the menus'
 * `viewItem =~ /^server\b.*\btoken\b/`: enabled|disabled, needsApproval, approved, restartable,
 * needsSignIn (state needs-sign-in), signedIn (a server with auth that has tokens: it can sign out).
 */
export function serverContextValue(s: ServerStatus): string {
  const tokens = ['server', s.enabled ? 'enabled' : 'disabled', s.trust];
  if (s.approval === 'required' || s.approval === 'changed') tokens.push('needsApproval');
  if (s.approval === 'approved') tokens.push('approved');
  if (s.pins?.status === 'changed') tokens.push('toolsChanged');
  if (s.enabled && !isHeld(s.state)) tokens.push('restartable');
  // A VS Code account or an OAuth sign-in: both offer Sign In.
  if (s.state === 'needs-sign-in' || (s.account && !s.account.supplied)) tokens.push('needsSignIn');
  if (s.inputs?.length) tokens.push('hasInputs');
  if (s.auth?.signedIn) tokens.push('signedIn');
  tokens.push(s.state);
  // What the row's inline actions key on: a failing server offers Restart and Logs, nothing else.
  if (s.state === 'failed' || s.state === 'backoff' || isCrashLooping(s)) tokens.push('failing');
  return tokens.join(' ');
}

/** Markdown tooltip of a server node. */
export function serverTooltip(s: ServerStatus): string {
  const out: string[] = [];
  out.push(
    `**${s.name}** — ${stateLabel(s.state)}` +
      `${s.pid ? ` (pid ${s.pid}${s.uptimeMs !== undefined ? `, up ${formatUptime(s.uptimeMs)}` : ''})` : ''}`,
  );
  if (s.description) out.push('', escapeMarkdown(s.description));
  out.push('', `- Trust: ${trustExplanation(s.trust)}`);
  out.push(
    `- ${s.transport === 'stdio' ? 'Runs' : `Connects (${s.transport}) to`}: \`${s.target.replace(/`/g, "'")}\``,
  );
  if (s.protocol) out.push(`- Protocol: ${s.protocol}`);
  out.push(`- Grants: ${s.grants.length ? s.grants.join(', ') : 'none'}`);
  for (const line of enforcementLines(s)) out.push(`  - ${line}`);
  if (s.toolTokens !== undefined) {
    out.push(`- Tool definitions: ${s.toolTokens.toLocaleString('en-US')} tokens of context per request (cl100k_base)`);
  }
  if (s.withheldEnv.length) out.push(`- Withheld for want of the secrets grant: ${s.withheldEnv.join(', ')}`);
  if (s.restarts) out.push(`- Restarts: ${s.restarts}`);
  if (s.live) out.push(`- Calls: ${liveNumbersText(s.live)}`);
  if (s.auth) {
    const where = s.auth.tokenStore === 'keychain' ? 'the OS keychain' : 'a private file in your Switchboard folder';
    const scope = s.auth.grantedScope ? ` (scope ${s.auth.grantedScope})` : '';
    const signed = s.auth.signedIn ? `signed in${scope}` : 'not signed in';
    out.push(`- Sign-in: ${signed}; tokens kept in ${where}`);
  }
  if (s.account) {
    const scopes = s.account.scopes.length ? ` (scopes ${s.account.scopes.join(', ')})` : '';
    const who = s.account.account ? ` as ${escapeMarkdown(s.account.account)}` : '';
    const state = s.account.supplied ? `token handed over by VS Code${who}, held in memory` : 'no token yet';
    out.push(`- Sign-in: VS Code account ${s.account.provider}${scopes}; ${state}`);
  }
  for (const i of s.inputs ?? []) {
    const where =
      i.source === 'editor' ? "VS Code's secret storage" : i.source === 'store' ? 'your per-user store' : '';
    const state = i.withheld ? "withheld (no 'secrets' grant)" : where ? `entered (${where})` : 'not entered yet';
    out.push(`- Secret \`${i.name}\`: ${state}`);
  }
  if (s.state === 'needs-sign-in') out.push('', '$(account) Sign in to use this server (the Sign In action).');
  if (s.state === 'needs-input') out.push('', '$(key) Enter its secret to use this server (the Enter Secret action).');
  if (s.approval === 'required') out.push('', '$(shield) Needs your approval before it runs.');
  if (s.approval === 'changed') {
    // While it waits, lastError is the broker's reason, which names what changed.
    const why =
      s.state === 'awaiting-approval' && s.lastError
        ? s.lastError
        : 'it changed since you approved it; approve it again before it next starts';
    out.push('', `$(shield) ${escapeMarkdown(why.charAt(0).toUpperCase() + why.slice(1))}.`);
  }
  if (s.pins?.status === 'changed') {
    const names = [
      ...s.pins.quarantined,
      ...(s.pins.quarantinedPrompts ?? []).map((p) => `prompt ${p}`),
      ...(s.pins.quarantinedResourceTemplates ?? []).map((t) => `resource template ${t}`),
      ...(s.pins.quarantinedResources ?? []).map((r) => `resource ${r}`),
    ];
    const held = names.length ? `Held back: ${names.join(', ')}. ` : '';
    const what = 'Its tools, prompts or resources differ from the ones pinned at approval.';
    out.push('', `$(warning) ${what} ${escapeMarkdown(held)}Review Tool Changes…`);
  }
  if (s.scan) {
    out.push('', `$(warning) Scanner: ${escapeMarkdown(scanLabel(s) ?? '')} in its descriptions:`);
    for (const line of scanFindingLines(s.scan.findings)) out.push(`- ${escapeMarkdown(line)}`);
  }
  if (s.lastError && showsError(s)) out.push('', `$(error) ${escapeMarkdown(s.lastError)}`);
  return out.join('\n');
}

/**
 * Whether `lastError` is an error worth showing: for a server that waits for approval, is disabled
 * or blocked, the broker's reason repeats what the state already says.
 */
export function showsError(s: ServerStatus): boolean {
  return !!s.lastError && !isHeld(s.state);
}

export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]<>#|]/g, (c) => `\\${c}`);
}

export function firstLine(text: string | undefined, max = 120): string {
  if (!text) return '';
  const line =
    text
      .split(/\r?\n/)
      .find((l) => l.trim())
      ?.trim() ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** What the approval dialog shows: every field the approval binds, warnings under their line. */
export function approvalDetail(s: ServerStatus): string {
  const lines = s.approvalItems.flatMap((l) => [`${l.label}: ${l.value}`, ...(l.warning ? [`  ${l.warning}`] : [])]);
  for (const line of enforcementLines(s)) lines.push(`  ${line}`);
  lines.push(
    '',
    `Definition: ${s.file}`,
    '',
    'The approval is stored for you only (not in the workspace) and bound to all of the above, including env ' +
      "values and the env file's contents: if any of it changes, the server waits for your approval again.",
  );
  return lines.join('\n');
}

export interface Summary {
  text: string;
  tooltip: string;
  /** `error` and `warning` map to the status bar's error/warning background. */
  severity?: 'error' | 'warning';
}

export interface FolderSummaryInput {
  folder: string;
  phase: Phase | 'none';
  state?: BrokerState;
  lastError?: string;
  retryInMs?: number;
  untrusted: boolean;
}

/** The status bar item: one line for all folders, details per folder in the tooltip. */
export function statusSummary(folders: FolderSummaryInput[]): Summary {
  const active = folders.filter((f) => f.phase !== 'none');
  if (active.length === 0)
    return {
      text: '$(circle-large-outline) Switchboard',
      tooltip: 'No registry in this workspace. Run "Switchboard: Add Server…" to create one.',
    };
  const tips: string[] = [];
  let running = 0;
  let total = 0;
  let failed = 0;
  let waiting = 0;
  let phaseText: string | undefined;
  let severity: Summary['severity'];
  for (const f of active) {
    const servers = f.state?.servers ?? [];
    const r = servers.filter((s) => s.state === 'running').length;
    const bad = servers.filter((s) => s.state === 'failed' || s.state === 'backoff').length;
    const approval = servers.filter((s) => s.state === 'awaiting-approval').length;
    running += r;
    total += servers.length;
    failed += bad;
    waiting += approval;
    let line = `${f.folder}: `;
    switch (f.phase) {
      case 'connected':
        line += f.state?.broker.untrusted
          ? 'Restricted Mode — nothing is started until you trust the workspace'
          : `${r} of ${plural(servers.length, 'server')} running${bad ? `, ${bad} failing` : ''}` +
            `${approval ? `, ${approval} awaiting approval` : ''} — ${f.state?.broker.url ?? ''}`;
        break;
      case 'starting':
        line += 'starting the broker…';
        phaseText ??= '$(sync~spin) Switchboard';
        break;
      case 'reconnecting':
        line +=
          `broker lost (${f.lastError ?? 'unknown reason'}); retrying` +
          `${f.retryInMs !== undefined ? ` in ${Math.ceil(f.retryInMs / 1000)} s` : ''}`;
        phaseText = '$(debug-disconnect) Switchboard: reconnecting';
        severity = 'warning';
        break;
      case 'stopped':
        line += 'broker stopped';
        phaseText ??= '$(debug-stop) Switchboard: stopped';
        break;
      case 'failed':
        line += `broker failed to start: ${f.lastError ?? ''}`;
        phaseText = '$(error) Switchboard: broker failed';
        severity = 'error';
        break;
      default:
        line += 'not started';
    }
    tips.push(line);
    const busiest = f.phase === 'connected' ? busiestServerLine(servers) : undefined;
    if (busiest) tips.push(`  ${busiest}`);
  }
  const untrusted = active.every((f) => f.untrusted);
  if (phaseText) return { text: phaseText, tooltip: tips.join('\n'), severity };
  if (untrusted) return { text: '$(shield) Switchboard: restricted', tooltip: tips.join('\n') };
  let text = `$(plug) Switchboard ${running}/${total}`;
  if (failed) {
    text = `$(error) Switchboard ${running}/${total}`;
    severity = 'warning';
  } else if (waiting) text = `$(shield) Switchboard ${running}/${total}`;
  return { text, tooltip: tips.join('\n'), severity };
}

/**
 * The status bar tooltip's line about VS Code's own MCP client, which "MCP: List Servers" describes:
 * that client connects to the broker only when Copilot or agent mode first uses it, so it reads
 * "Stopped" while the broker is already running every server for every other agent.
 */
export function vscodeClientLine(offered: number, running: number, startedAt?: Date): string | undefined {
  if (offered === 0) return undefined;
  const servers = plural(running, 'server');
  if (!startedAt)
    return (
      "VS Code's MCP client: not connected yet — it connects on first use by Copilot or agent mode, " +
      `so "MCP: List Servers" shows Switchboard as Stopped until then; the broker is running ${servers} meanwhile.`
    );
  const at = `${String(startedAt.getHours()).padStart(2, '0')}:${String(startedAt.getMinutes()).padStart(2, '0')}`;
  return (
    `VS Code's MCP client: connected to the broker since ${at} ("MCP: List Servers" shows this connection; ` +
    `the broker is running ${servers}).`
  );
}
