// Client and prompt commands: copy a client's connection details, rotate its token, remove a prompt.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  addAgent,
  AGENTS,
  listAgents,
  removeAgent,
  type AgentClientOptions,
  type Scope,
} from '../../broker/cli/agentClients';
import type { Ctx, FolderEntry } from '../ctx';
import { pickOne } from '../quickInput';
import { isNode, withProgress, type Cmd, type NoPrompt } from './shared';

function clientName(arg: unknown): string | undefined {
  if (isNode(arg) && arg.client) return arg.client.name;
  return typeof arg === 'string' ? arg : undefined;
}

async function resolveClient(
  ctx: Ctx,
  arg: unknown,
  placeHolder: string,
): Promise<{ entry: FolderEntry; name: string } | undefined> {
  if (isNode(arg) && arg.client) return { entry: arg.entry, name: arg.client.name };
  const name = clientName(arg);
  const entries = ctx.activeEntries();
  if (name) {
    const entry = entries.find((e) => e.state?.clients.some((c) => c.name === name));
    if (!entry) throw new Error(`No client named '${name}' in clients.d/.`);
    return { entry, name };
  }
  const items = entries.flatMap((entry) =>
    (entry.state?.clients ?? []).map((c) => ({
      label: c.name,
      description: `scopes: ${c.mcp_allow.join(', ') || 'none'}${entries.length > 1 ? ` · ${entry.name}` : ''}`,
      detail: c.description,
      ref: { entry, name: c.name },
    })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      'No clients are declared. ' +
        'Add a file to clients.d/ (for example terminal.yaml with "mcp_allow: [read]") to give an agent its own token.',
    );
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder }))?.ref;
}

export const copyConnection: Cmd = (ctx) => async (arg?: unknown) => {
  const ref = await resolveClient(ctx, arg, 'Copy the connection details of which client?');
  if (!ref) return;
  const info = await withProgress(`Switchboard: preparing the connection for '${ref.name}'`, () =>
    ref.entry.conn.call('client_connection', { name: ref.name }),
  );
  if (!info) return;
  const cli = ctx.brokerCli();
  const text = [
    `# MCP Switchboard — connection for the client '${ref.name}'`,
    `URL:        ${info.url}   (Streamable HTTP)`,
    `Header:     ${info.header}`,
    `Token file: ${info.tokenFile}   (readable only by you; the token is not in this text)`,
    '',
    '# stdio-only agents (Claude Code, Codex, ...) can use the bridge, which finds the broker and its current port itself:',
    `node "${cli}" connect --root "${ref.entry.root}" --client ${ref.name}`,
  ].join('\n');
  await vscode.env.clipboard.writeText(text);
  void vscode.window.showInformationMessage(
    `Copied the connection details for '${ref.name}': URL, header, and the bridge command. The token stays in ${info.tokenFile}.`,
  );
  return info;
};

export const rotateClientToken: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  const ref = await resolveClient(ctx, arg, 'Rotate the token of which client?');
  if (!ref) return;
  if (!opts?.skipConfirmation) {
    const pick = await vscode.window.showWarningMessage(
      `Rotate the token of '${ref.name}'?`,
      {
        modal: true,
        detail: 'Agents connected as this client are disconnected now and need the new token to reconnect.',
      },
      'Rotate',
    );
    if (pick !== 'Rotate') return;
  }
  const info = await withProgress(`Switchboard: rotating the token of '${ref.name}'`, () =>
    ref.entry.conn.call('client_connection', { name: ref.name, rotate: true }),
  );
  if (info) void vscode.window.showInformationMessage(`New token for '${ref.name}' written to ${info.tokenFile}.`);
  return info;
};

export const removePrompt: Cmd = (ctx) => async (arg?: unknown, opts?: NoPrompt) => {
  let ref: { entry: FolderEntry; name: string } | undefined;
  if (isNode(arg) && arg.prompt) ref = { entry: arg.entry, name: arg.prompt.name };
  else {
    const items = ctx.activeEntries().flatMap((entry) =>
      (entry.state?.prompts ?? []).map((p) => ({
        label: p.name,
        detail: p.description,
        ref: { entry, name: p.name },
      })),
    );
    ref =
      typeof arg === 'string'
        ? items.find((i) => i.label === arg)?.ref
        : (await vscode.window.showQuickPick(items, { placeHolder: 'Remove which prompt?' }))?.ref;
  }
  if (!ref) return;
  if (!opts?.skipConfirmation) {
    const pick = await vscode.window.showWarningMessage(
      `Remove the prompt '${ref.name}'?`,
      { modal: true, detail: `This deletes prompts.d/${ref.name}.yaml; no client will be offered it any more.` },
      'Remove',
    );
    if (pick !== 'Remove') return;
  }
  const r = ref;
  return withProgress(`Switchboard: removing the prompt '${r.name}'`, () =>
    r.entry.conn.call('remove_prompt', { name: r.name }),
  );
};

/** `~/…` for a path under the home directory: shorter in a message, and says whose file it is. */
function tildify(file: string, home: string): string {
  return file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
}

/**
 * Connect an Agent…: writes a coding agent's own MCP configuration so that it runs this folder's
 * broker through the stdio bridge, as a client of its own (the same code as `switchboard clients add`).
 * On an agent that is already connected it offers to keep it (checking and repairing the entry and
 * token), to change its scope, or to disconnect it.
 */
export const connectAgent: Cmd =
  (ctx) => async (agent?: string, opts?: { scope?: Scope; home?: string; remove?: boolean }) => {
    const entry = await ctx.pickEntry("Connect an agent to which folder's broker?", true);
    if (!entry) return;
    const home = opts?.home ?? os.homedir();
    const base: AgentClientOptions = {
      root: entry.root,
      agentEnv: opts?.home
        ? { home: opts.home, platform: process.platform, env: {} }
        : { home, platform: process.platform, env: process.env },
      // The agent starts the bridge itself, outside VS Code: plain `node` from its PATH.
      node: 'node',
      script: ctx.brokerCli(),
    };
    let id = agent;
    let remove = opts?.remove === true;
    let scope = opts?.scope;
    if (!id) {
      const rows = await listAgents(base);
      const pick = await pickOne(
        rows.map((r) => ({
          label: r.label,
          description:
            r.configured === 'yes'
              ? `$(check) connected as '${r.client}' (${(r.scopes ?? ['read']).join(', ')})`
              : r.configured === 'other'
                ? "$(warning) its 'switchboard' entry runs something else"
                : r.installed
                  ? 'found on this machine'
                  : 'not found',
          detail: tildify(r.file, home),
          row: r,
        })),
        {
          title: 'Connect an Agent',
          placeHolder: "Which agent should use this workspace's broker? (its own MCP configuration is edited)",
        },
      );
      if (!pick) return;
      const row = pick.row;
      id = row.id;
      if (row.configured === 'yes') {
        const current: Scope = row.scopes?.includes('write') ? 'write' : 'read';
        const next = await pickOne(
          [
            {
              label: '$(check) Keep it',
              description: `scopes: ${current === 'write' ? 'read, write' : 'read'}`,
              detail: `Checks the entry in ${tildify(row.file, home)} and the token of '${row.client}'; repairs what is missing.`,
              action: 'keep' as const,
            },
            current === 'write'
              ? {
                  label: '$(eye) Read only',
                  detail: 'It may call tools, list servers and read logs, but no longer change servers.',
                  action: 'read' as const,
                }
              : {
                  label: '$(edit) Allow write too',
                  detail: 'It may also enable, restart, add and edit servers.',
                  action: 'write' as const,
                },
            {
              label: '$(debug-disconnect) Disconnect',
              detail: `Removes the 'switchboard' entry from ${tildify(row.file, home)}, the client '${row.client}' and its token.`,
              action: 'remove' as const,
            },
          ],
          { title: 'Connect an Agent', placeHolder: `${row.label} already runs this broker as '${row.client}'.` },
        );
        if (!next) return;
        if (next.action === 'remove') remove = true;
        else scope = next.action === 'keep' ? current : next.action;
      }
    }
    if (!remove && !scope && !agent) {
      const s = await pickOne(
        [
          {
            label: 'read',
            description: 'recommended',
            detail: 'Call tools, list servers, read logs.',
            scope: 'read' as const,
          },
          { label: 'read, write', detail: 'Also enable, restart, add and edit servers.', scope: 'write' as const },
        ],
        { title: 'Connect an Agent', placeHolder: 'What may the agent do with the broker itself?' },
      );
      if (!s) return;
      scope = s.scope;
    }
    const label = AGENTS.find((a) => a.id === id)?.label ?? id;
    try {
      const report = remove ? await removeAgent(id, base) : await addAgent(id, { ...base, scope });
      for (const c of report.changes) ctx.output.info(`Connect an agent: ${c}`);
      const file = tildify(report.file, home);
      const scopes = scope === 'write' ? 'read, write' : 'read';
      // What changed, in detail, is in the log; the message says what it means for the person.
      const text = remove
        ? report.changes.length === 0
          ? `${label} was not connected to this broker: nothing to remove from ${file}.`
          : `${label} is disconnected: its 'switchboard' entry, the client '${report.client}' and its token are removed.`
        : report.changes.length === 0
          ? `${label} is connected as '${report.client}' (scopes: ${scopes}); ` +
            `its entry in ${file} and its token are in place. Nothing changed.`
          : `${label} is connected as '${report.client}' (scopes: ${scopes}) through its entry in ${file}. ` +
            (report.changes.some((c) => c.startsWith('changed the scopes'))
              ? 'The new scope applies at once.'
              : `Restart ${label} to use it.`);
      const open = remove && !fs.existsSync(report.file) ? [] : ['Open File'];
      void vscode.window.showInformationMessage(text, ...open).then((p) => {
        if (p) void vscode.window.showTextDocument(vscode.Uri.file(report.file));
      });
      return report;
    } catch (err) {
      void vscode.window.showErrorMessage(
        `Cannot ${remove ? 'disconnect' : 'connect'} ${label}: ${(err as Error).message}`,
      );
      return undefined;
    }
  };
