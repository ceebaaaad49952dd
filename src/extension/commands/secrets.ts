// Enter Secret and Forget Secret: `${input:NAME}` values a server's env or headers use, typed once
// in a password box, kept in VS Code's secret storage and handed to the broker (editorSecrets.ts).
import * as vscode from 'vscode';
import type { InputStatus } from '../../broker/control/controlApi';
import type { Ctx } from '../ctx';
import { resolveServer, withProgress, type Cmd } from './shared';

function secretsOf(ctx: Ctx): NonNullable<Ctx['secrets']> {
  if (!ctx.secrets) throw new Error('Secrets are not available in this window.');
  return ctx.secrets;
}

async function pickInput(inputs: InputStatus[], placeHolder: string): Promise<InputStatus | undefined> {
  if (inputs.length === 1) return inputs[0];
  const picked = await vscode.window.showQuickPick(
    inputs.map((i) => ({
      label: i.name,
      description: i.source === 'editor' ? 'entered' : i.source === 'store' ? 'from switchboard secret' : 'missing',
      detail: i.description,
      input: i,
    })),
    { placeHolder },
  );
  return picked?.input;
}

/** A server node or name (and optionally an input name), or a pick of the servers with inputs. */
export const enterSecret: Cmd = (ctx) => async (arg?: unknown, inputName?: string) => {
  const secrets = secretsOf(ctx);
  const ref = await resolveServer(ctx, arg, 'Enter a secret for which server?', (s) => !!s.inputs?.length);
  if (!ref) return undefined;
  const inputs = ref.entry.server(ref.name)?.inputs ?? [];
  const missing = inputs.filter((i) => i.source === undefined);
  const input = inputName
    ? inputs.find((i) => i.name === inputName)
    : await pickInput(missing.length ? missing : inputs, `Which secret of '${ref.name}'?`);
  if (!input) {
    if (inputName) throw new Error(`'${ref.name}' uses no input named '${inputName}'.`);
    return undefined;
  }
  const value = await secrets.ask(ref.name, input);
  if (value === undefined) return undefined;
  const servers = await withProgress(`Switchboard: handing '${input.name}' to the broker`, () =>
    secrets.enter(ref.entry, input.name, value),
  );
  if (servers) vscode.window.setStatusBarMessage(`$(key) Secret '${input.name}' entered`, 4000);
  return servers ? { name: input.name, servers } : undefined;
};

/** Deletes an entered value from VS Code's secret storage and from every broker. */
export const forgetSecret: Cmd = (ctx) => async (arg?: unknown, inputName?: string) => {
  const secrets = secretsOf(ctx);
  const ref = await resolveServer(ctx, arg, 'Forget a secret of which server?', (s) =>
    (s.inputs ?? []).some((i) => i.source === 'editor'),
  );
  if (!ref) return undefined;
  const entered = (ref.entry.server(ref.name)?.inputs ?? []).filter((i) => i.source === 'editor');
  const input = inputName
    ? entered.find((i) => i.name === inputName)
    : await pickInput(entered, `Forget which secret of '${ref.name}'?`);
  if (!input) {
    if (inputName) throw new Error(`'${ref.name}' has no entered secret named '${inputName}'.`);
    return undefined;
  }
  await withProgress(`Switchboard: forgetting '${input.name}'`, () => secrets.forget(input.name));
  vscode.window.setStatusBarMessage(`$(key) Secret '${input.name}' forgotten`, 4000);
  return { name: input.name };
};
