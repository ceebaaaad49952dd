// What the operator is shown before approving: every field the approval hash covers, as labelled
// lines both the CLI and the editor render, with values that could be secrets masked and paths
// outside the registry root flagged.
import * as path from 'node:path';
import { commandWarnings } from '../../registry/commandRisks';
import { inputsReferenced, type ServerDef } from '../../registry/schema';
import { visibleText } from '../../registry/visibleText';
import { isOutsideRoot, relativeToRoot, type EnvFileDigest } from './approvalMaterial';
import { looksSecret } from '../../registry/secretNames';

export interface ApprovalLine {
  label: string;
  value: string;
  /** Something the operator should look at twice, e.g. a path outside the registry root. */
  warning?: string;
}

const MASK = '••••••';

/** Variables that make the program load other code than its command says. */
const LOADS_CODE = new RegExp(
  `^(${[
    'NODE_OPTIONS',
    'NODE_PATH',
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'DYLD_\\w+',
    'PYTHONPATH',
    'PYTHONSTARTUP',
    'PERL5OPT',
    'RUBYOPT',
    'BASH_ENV',
    'ENV',
  ].join('|')})$`,
);

const quoteArg = (a: string): string => (a === '' || /[\s"'\\$`]/.test(a) ? JSON.stringify(a) : a);

/** A URL with its userinfo and query values masked: they are where credentials hide. */
export function maskUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.username) url.username = MASK;
    if (url.password) url.password = MASK;
    for (const key of [...url.searchParams.keys()]) url.searchParams.set(key, MASK);
    // The URL encoder percent-encodes the mask; show it as the other masks are shown.
    return url.toString().split(encodeURIComponent(MASK)).join(MASK);
  } catch {
    return raw;
  }
}

function envValue(name: string, value: string): string {
  const refs = [...value.matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]);
  if (refs.length) return `${MASK} (from your environment: ${refs.join(', ')})`;
  if (looksSecret(name)) return MASK;
  // A connection string carries its password in the userinfo (DATABASE_URL=postgres://u:p@db/x).
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? maskUrl(value) : value;
}

const outside = (rel: string): string => `⚠ outside the registry root: ${rel}`;

/** Pure: the lines that describe `def` for approval (envFile digest says whether the file exists). */
export function approvalLines(def: ServerDef, root: string, envFile: EnvFileDigest = null): ApprovalLine[] {
  const lines: ApprovalLine[] = [];
  const tier = def.trust === 'community' ? 'community' : `${def.trust} (as the workspace's file requests)`;
  lines.push({ label: 'Trust', value: tier });
  if (def.transport === 'stdio') {
    const risks = commandWarnings(def.command, def.args);
    lines.push({
      label: 'Runs',
      value: [def.command ?? '', ...def.args].map(quoteArg).join(' '),
      ...(risks.length ? { warning: `⚠ ${risks.join('; ')}` } : {}),
    });
    const cwd = relativeToRoot(root, def.cwd ?? '.');
    lines.push({ label: 'Working directory', value: cwd, ...(isOutsideRoot(cwd) ? { warning: outside(cwd) } : {}) });
  } else {
    lines.push({ label: 'Connects to', value: `${def.transport} ${maskUrl(def.url ?? '')}` });
  }
  for (const [name, value] of Object.entries(def.env).sort(([a], [b]) => (a < b ? -1 : 1))) {
    lines.push({
      label: `Env ${name}`,
      value: envValue(name, value),
      ...(LOADS_CODE.test(name) ? { warning: `⚠ ${name} changes what code the program loads` } : {}),
    });
  }
  if (def.envFile !== undefined) {
    const rel = relativeToRoot(root, def.envFile);
    const state =
      envFile === 'missing'
        ? ' (the file does not exist now)'
        : envFile === 'unreadable'
          ? ' (not a readable file of at most 1 MiB)'
          : '';
    const passed = def.grants.includes('secrets')
      ? 'its values are passed'
      : "its values are withheld (no 'secrets' grant)";
    const warning = isOutsideRoot(rel) ? { warning: outside(rel) } : {};
    lines.push({ label: 'Env file', value: `${rel}${state}; ${passed}`, ...warning });
  }
  const headers = Object.keys(def.headers).sort();
  if (headers.length) lines.push({ label: 'HTTP headers', value: `${headers.join(', ')} (values hidden)` });
  const inputs = inputsReferenced(def);
  if (inputs.length) {
    const passed = def.grants.includes('secrets') ? 'passed to the server' : "withheld (no 'secrets' grant)";
    lines.push({ label: 'Entered secrets', value: `${inputs.join(', ')} (entered once, kept per user; ${passed})` });
  }
  if (def.auth?.type === 'vscode') {
    const scopes = def.auth.scopes.length ? `scopes ${def.auth.scopes.join(' ')}` : 'no extra scopes';
    lines.push({ label: 'Sign-in', value: `VS Code account: ${def.auth.provider} (${scopes}); token held in memory` });
  } else if (def.auth) {
    const client = def.auth.clientId ? `client ${def.auth.clientId}` : 'registers itself';
    const scopes = def.auth.scopes?.length ? `scopes ${def.auth.scopes.join(' ')}` : "the server's scopes";
    lines.push({ label: 'Sign-in', value: `OAuth (${client}; ${scopes}); tokens kept per user` });
    if (def.auth.clientSecretFile !== undefined)
      lines.push({
        label: 'Client secret',
        value: `the contents of ${def.auth.clientSecretFile}, sent to the authorization server when signing in`,
      });
  }
  lines.push({ label: 'Grants', value: def.grants.length ? [...def.grants].join(', ') : 'none' });
  for (const [label, paths] of [
    ['Reads', def.filesystem?.read],
    ['Writes', def.filesystem?.write],
  ] as const) {
    for (const p of paths ?? []) {
      const rel = p.startsWith('~') || path.isAbsolute(p) ? p : relativeToRoot(root, p);
      const warning = p.startsWith('~') || isOutsideRoot(relativeToRoot(root, p)) ? { warning: outside(rel) } : {};
      lines.push({ label, value: rel, ...warning });
    }
  }
  if (def.network) lines.push({ label: 'Network', value: `only ${def.network.allow.join(', ')} (through a proxy)` });
  if (def.allowedTools) lines.push({ label: 'Allowed tools', value: def.allowedTools.join(', ') || '(none)' });
  if (def.excludeTools) lines.push({ label: 'Excluded tools', value: def.excludeTools.join(', ') || '(none)' });
  // Bound by the approval too: who answers what the server asks, and what a tool change holds back.
  for (const feature of ['elicitation', 'sampling'] as const) {
    const rule = def.clientFeatures[feature];
    if (rule !== 'caller') {
      const who = rule === 'editor' ? 'always VS Code (you)' : 'nobody: refused';
      lines.push({ label: `Answers ${feature}`, value: who });
    }
  }
  if (def.onToolChange === 'quarantine-server')
    lines.push({ label: 'On tool change', value: 'every tool held back (quarantine-server)' });
  if (def.redactResults === false)
    lines.push({
      label: 'Results',
      value: 'not redacted: its results may return the secrets it is given (redactResults: false)',
      warning: '⚠ agents can read the secret values this server is given',
    });
  if (def.holdFlaggedTools) lines.push({ label: 'Flagged tools', value: 'held back until you review them' });
  if (def.pins?.resources === 'strict')
    lines.push({ label: 'New resources', value: 'held back until you review them (pins.resources: strict)' });
  for (const [name, input] of Object.entries(def.inputs ?? {}).sort(([x], [y]) => (x < y ? -1 : 1))) {
    const shown = input.password ? {} : { warning: '⚠ what you type is shown, not hidden' };
    lines.push({ label: `Asks for ${name}`, value: input.description ?? '(no description)', ...shown });
  }
  // A line break, a terminal escape or a bidirectional override in a definition's value would
  // otherwise draw a line of its own ("Grants: none") or hide what follows it.
  return lines.map((l) => ({
    ...l,
    label: visibleText(l.label),
    value: visibleText(l.value),
    ...(l.warning ? { warning: visibleText(l.warning) } : {}),
  }));
}

/** The lines as the approval record keeps them: env values are bound by the hash, never written down. */
export function withoutEnvValues(lines: readonly ApprovalLine[]): ApprovalLine[] {
  return lines.map((l) =>
    l.label.startsWith('Env ') && l.label !== 'Env file' ? { ...l, value: '(set; value not recorded)' } : l,
  );
}

/** One line of text (the tree's tooltip, the approval record): `label: value | …`, warnings kept. */
export function approvalSummaryText(lines: readonly ApprovalLine[]): string {
  return lines.map((l) => `${l.label}: ${l.value}${l.warning ? ` ${l.warning}` : ''}`).join(' | ');
}

/** Several lines of text (the CLI, the editor's modal): one per field, its warning under it. */
export function approvalSummaryBlock(lines: readonly ApprovalLine[], indent = ''): string {
  const width = Math.max(...lines.map((l) => l.label.length));
  return lines
    .flatMap((l) => [
      `${indent}${`${l.label}:`.padEnd(width + 2)}${l.value}`,
      ...(l.warning ? [`${indent}${' '.repeat(width + 2)}${l.warning}`] : []),
    ])
    .join('\n');
}
