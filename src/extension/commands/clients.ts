// Client and prompt commands: copy a client's connection details, rotate its token, remove a prompt.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { addAgent, listAgents, removeAgent, type AgentClientOptions, type Scope } from '../../broker/agentClients';
import type { Ctx, FolderEntry } from '../ctx';
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

/**
 * Connect an Agent…: writes a coding agent's own MCP configuration so that it runs this folder's
 * broker through the stdio bridge, as a client of its own (the same code as `switchboard clients add`).
 * On an agent that is already connected it offers to disconnect it instead.
 */
export const connectAgent: Cmd =
  (ctx) => async (agent?: string, opts?: { scope?: Scope; home?: string; remove?: boolean }) => {
    const entry = await ctx.pickEntry("Connect an agent to which folder's broker?", true);
    if (!entry) return;
    const base: AgentClientOptions = {
      root: entry.root,
      agentEnv: opts?.home
        ? { home: opts.home, platform: process.platform, env: {} }
        : { home: os.homedir(), platform: process.platform, env: process.env },
      // The agent starts the bridge itself, outside VS Code: plain `node` from its PATH.
      node: 'node',
      script: ctx.brokerCli(),
    };
    let id = agent;
    let remove = opts?.remove === true;
    if (!id) {
      const rows = await listAgents(base);
      const pick = await vscode.window.showQuickPick(
        rows.map((r) => ({
          label: r.label,
          description:
            r.configured === 'yes'
              ? `connected as '${r.client}' (${(r.scopes ?? ['read']).join(', ')})`
              : r.configured === 'other'
                ? "its 'switchboard' entry runs something else"
                : r.installed
                  ? 'found on this machine'
                  : 'not found',
          detail: r.file,
          row: r,
        })),
        { placeHolder: "Connect which agent to this workspace's broker? (its own MCP configuration is edited)" },
      );
      if (!pick) return;
      id = pick.row.id;
      if (pick.row.configured === 'yes') {
        const answer = await vscode.window.showInformationMessage(
          `${pick.row.label} already runs this broker as '${pick.row.client}'.`,
          {
            modal: true,
            detail: `Disconnecting removes the entry from ${pick.row.file} and the client '${pick.row.client}'.`,
          },
          'Disconnect',
        );
        if (answer !== 'Disconnect') return;
        remove = true;
      }
    }
    let scope = opts?.scope;
    if (!remove && !scope && !agent) {
      const s = await vscode.window.showQuickPick(
        [
          {
            label: 'read',
            description: 'recommended',
            detail: 'Call tools, list servers, read logs.',
            scope: 'read' as const,
          },
          { label: 'read, write', detail: 'Also enable, restart, add and edit servers.', scope: 'write' as const },
        ],
        { placeHolder: 'What may the agent do with the broker itself?' },
      );
      if (!s) return;
      scope = s.scope;
    }
    try {
      const report = remove ? await removeAgent(id, base) : await addAgent(id, { ...base, scope });
      for (const c of report.changes) ctx.output.info(`Connect an agent: ${c}`);
      void vscode.window.showInformationMessage(
        report.changes.length === 0
          ? remove
            ? `Nothing to remove from ${report.file}.`
            : `Already connected: ${report.file} runs this broker as '${report.client}'. Nothing changed.`
          : remove
            ? `Disconnected '${report.client}': ${report.changes.join('; ')}.`
            : `Connected as '${report.client}': ${report.changes.join('; ')}. Restart the agent to use it.`,
      );
      return report;
    } catch (err) {
      void vscode.window.showErrorMessage(
        `Cannot ${remove ? 'disconnect' : 'connect'} ${id}: ${(err as Error).message}`,
      );
      return undefined;
    }
  };
