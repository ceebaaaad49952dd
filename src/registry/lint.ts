// Warnings: definitions that are valid but probably not what the author meant. They never stop a
// file from loading; they are shown next to it so the surprise happens in the editor, not at run time.

import { packageRunnerWarning } from './packageRunner';
import type { DataPath } from './positions';
import type { ClientDef, DefByKind, Kind, PromptDef, ServerDef } from './schema';
import { INPUT_REFERENCE, PLACEHOLDER_PATTERN } from './schema';

export interface Lint {
  path: DataPath;
  message: string;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function lintServer(s: ServerDef): Lint[] {
  const out: Lint[] = [];
  if (s.envFile !== undefined && !s.grants.includes('secrets')) {
    out.push({
      path: ['envFile'],
      message: "the values in 'envFile' are withheld because this server has no 'secrets' grant",
    });
  }
  if (!s.grants.includes('secrets')) {
    for (const [field, values] of [
      ['env', s.env],
      ['headers', s.headers],
    ] as const) {
      for (const [key, value] of Object.entries(values)) {
        const names = [...value.matchAll(INPUT_REFERENCE)].map((m) => m[1]);
        if (names.length === 0) continue;
        const message = `the input ${names.join(', ')} is withheld because this server has no 'secrets' grant`;
        out.push({ path: [field, key], message });
      }
    }
  }
  const runner = packageRunnerWarning(s);
  if (runner) out.push({ path: ['command'], message: runner });
  if (s.url !== undefined) {
    const u = new URL(s.url);
    if (u.protocol === 'http:' && !LOOPBACK_HOSTS.has(u.hostname)) {
      out.push({
        path: ['url'],
        message: `plain http:// to ${u.hostname} sends headers (and any token in them) unencrypted; prefer https://`,
      });
    }
  }
  if (s.auth !== undefined) {
    const authHeader = Object.keys(s.headers).find((h) => h.toLowerCase() === 'authorization');
    if (authHeader !== undefined) {
      out.push({
        path: ['headers', authHeader],
        message: "this header replaces the token from signing in ('auth'); remove one of the two",
      });
    }
    const secretFile = s.auth.type === 'oauth' ? s.auth.clientSecretFile : undefined;
    if (secretFile !== undefined && !secretFile.startsWith('~/') && !/^([a-zA-Z]:)?[\\/]/.test(secretFile)) {
      out.push({
        path: ['auth', 'clientSecretFile'],
        message:
          'a client secret inside the workspace can end up in version control; ' +
          'keep it in your home directory (e.g. ~/.config/...)',
      });
    }
  }
  return out;
}

function lintPrompt(p: PromptDef): Lint[] {
  const used = new Set<string>();
  for (const m of p.messages) for (const match of m.content.matchAll(PLACEHOLDER_PATTERN)) used.add(match[1]);
  return p.arguments.flatMap((a, i) =>
    used.has(a.name)
      ? []
      : [
          {
            path: ['arguments', i, 'name'],
            message: `argument '${a.name}' is declared but no message uses {{${a.name}}}`,
          },
        ],
  );
}

function lintClient(c: ClientDef): Lint[] {
  const lints: Lint[] = [];
  if (c.mcp_allow.includes('write') && !c.mcp_allow.includes('read')) {
    lints.push({
      path: ['mcp_allow'],
      message: "'write' without 'read' lets this client change servers it cannot list; add 'read'",
    });
  }
  if (c.toolMode === 'search' && !c.mcp_allow.includes('read')) {
    lints.push({
      path: ['toolMode'],
      message: "toolMode search needs 'read' in mcp_allow: switchboard__find_tools is a read tool",
    });
  }
  if (c.pinnedTools?.length && c.toolMode !== 'search') {
    lints.push({ path: ['pinnedTools'], message: 'pinnedTools only apply with toolMode: search' });
  }
  return lints;
}

export function lintDefinition<K extends Kind>(kind: K, def: DefByKind[K]): Lint[] {
  switch (kind) {
    case 'server':
      return lintServer(def as ServerDef);
    case 'prompt':
      return lintPrompt(def as PromptDef);
    case 'client':
      return lintClient(def as ClientDef);
    default:
      return [];
  }
}
