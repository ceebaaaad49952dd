// The editor as the broker's fallback client: a form elicitation as VS Code quick input (one step
// per field), a URL elicitation as a consent modal then the browser, sampling through vscode.lm
// after a consent prompt. Thin: what to ask and what to answer is editorClientForm.ts.
import * as vscode from 'vscode';
import type { ServerRequest } from '../broker/connection/serverRequests';
import type { Root } from '../broker/supervision/editorLink';
import { ErrorCodes, McpFailure, type JsonObject } from '../broker/shared/mcpTypes';
import type { EditorRole } from './brokerConnection';
import {
  formContent,
  formSteps,
  originOf,
  samplingMessages,
  samplingResult,
  stepPrompt,
  stepTitle,
  trustLabel,
  UnsupportedForm,
  urlOrigin,
  type FormStep,
  type Origin,
} from './editorClientForm';

/** Servers the person allowed to sample "always", in this workspace. */
const SAMPLING_ALLOWED_KEY = 'switchboard.sampling.alwaysAllowed';
/** The spec's code for a sampling request the user rejected. */
const USER_REJECTED = -1;

interface PickItem extends vscode.QuickPickItem {
  value: string;
}

type StepOutcome = { answer: string | string[] } | 'back' | 'decline' | 'cancel';

/** An input as it is shown: for the VS Code test suite, which answers it through the real quick input. */
export interface ShownInput {
  origin: Origin;
  step: FormStep;
  input: vscode.QuickPick<PickItem> | vscode.InputBox;
}

const DECLINE_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('circle-slash'),
  tooltip: 'Decline: tell the server no',
};

export class EditorClient implements EditorRole, vscode.Disposable {
  private readonly shown = new vscode.EventEmitter<ShownInput>();
  /** Fires with each input shown, only when `testHooks` is on (the VS Code test suite). */
  readonly onDidShowInput = this.shown.event;

  constructor(
    private readonly workspaceState: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
    private readonly testHooks = false,
  ) {}

  dispose(): void {
    this.shown.dispose();
  }

  roots(): Root[] {
    return (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === 'file')
      .map((f) => ({ uri: f.uri.toString(), name: f.name }));
  }

  async answer(request: ServerRequest): Promise<JsonObject> {
    const origin = originOf(request.params);
    this.log.info(`${origin.server} sent ${request.method}${origin.client ? ` for client '${origin.client}'` : ''}.`);
    if (request.method === 'elicitation/create') {
      return request.params.mode === 'url' ? this.openUrl(request, origin) : this.form(request, origin);
    }
    if (request.method === 'sampling/createMessage') return this.sample(request, origin);
    throw new McpFailure(ErrorCodes.MethodNotFound, `VS Code does not answer ${request.method} for the broker.`);
  }

  private async form(request: ServerRequest, origin: Origin): Promise<JsonObject> {
    let steps: FormStep[];
    try {
      steps = formSteps(request.params.requestedSchema);
    } catch (err) {
      if (!(err instanceof UnsupportedForm)) throw err;
      const why = `VS Code cannot show the form of server '${origin.server}': ${err.message}.`;
      throw new McpFailure(ErrorCodes.InvalidParams, why);
    }
    const message = typeof request.params.message === 'string' ? request.params.message : '';
    if (steps.length === 0) return this.confirm(message, origin, request.signal);
    const answers = new Map<string, string | string[]>();
    for (let i = 0; i < steps.length;) {
      const previous = answers.get(steps[i].key);
      const outcome = await this.askStep(steps[i], i, steps.length, message, origin, previous, request.signal);
      if (outcome === 'cancel' || outcome === 'decline') return { action: outcome };
      if (outcome === 'back') {
        i = Math.max(0, i - 1);
        continue;
      }
      answers.set(steps[i].key, outcome.answer);
      i++;
    }
    return { action: 'accept', content: formContent(steps, answers) };
  }

  /** A form without fields: accept or decline. */
  private async confirm(message: string, origin: Origin, signal: AbortSignal): Promise<JsonObject> {
    const accept: PickItem = { label: 'Accept', value: 'accept' };
    const decline: PickItem = { label: 'Decline', value: 'decline' };
    const pick = vscode.window.createQuickPick<PickItem>();
    pick.title = `${origin.server} (${trustLabel(origin.trust)}) asks`;
    pick.placeholder = message;
    pick.items = [accept, decline];
    pick.ignoreFocusOut = true;
    const outcome = await this.run(pick, signal, () => pick.selectedItems[0]?.value ?? 'accept');
    if (outcome === 'accept') return { action: 'accept', content: {} };
    return { action: outcome === 'decline' ? 'decline' : 'cancel' };
  }

  private askStep(
    step: FormStep,
    index: number,
    total: number,
    message: string,
    origin: Origin,
    previous: string | string[] | undefined,
    signal: AbortSignal,
  ): Promise<StepOutcome> {
    const initial = previous ?? step.initial;
    const common = (input: vscode.QuickInput & { buttons: readonly vscode.QuickInputButton[] }): void => {
      input.title = stepTitle(origin, step);
      input.step = index + 1;
      input.totalSteps = total;
      // A person may look something up in another window while answering.
      input.ignoreFocusOut = true;
      input.buttons = index > 0 ? [vscode.QuickInputButtons.Back, DECLINE_BUTTON] : [DECLINE_BUTTON];
    };
    if (step.kind === 'text' || step.kind === 'number') {
      const box = vscode.window.createInputBox();
      common(box);
      box.prompt = stepPrompt(message, origin, step);
      box.value = typeof initial === 'string' ? initial : '';
      box.placeholder = step.required ? '' : 'leave empty to skip';
      box.onDidChangeValue((text) => (box.validationMessage = text === '' ? undefined : step.validate(text)));
      return this.run(
        box,
        signal,
        () => {
          const invalid = step.validate(box.value);
          box.validationMessage = invalid;
          return invalid === undefined ? { answer: box.value } : undefined;
        },
        step,
        origin,
      );
    }
    const pick = vscode.window.createQuickPick<PickItem>();
    common(pick);
    pick.placeholder = stepPrompt(message, origin, step);
    const items: PickItem[] = step.options.map((o) => ({ label: o.label, value: o.value }));
    if (!step.required && step.kind !== 'multi') items.push({ label: 'Leave empty', value: '', description: 'skip' });
    pick.items = items;
    pick.canSelectMany = step.kind === 'multi';
    const chosen = Array.isArray(initial) ? initial : initial !== undefined ? [initial] : [];
    const preselected = items.filter((item) => chosen.includes(item.value));
    if (pick.canSelectMany) pick.selectedItems = preselected;
    else if (preselected.length) pick.activeItems = preselected;
    return this.run(
      pick,
      signal,
      () => {
        if (pick.canSelectMany) return { answer: pick.selectedItems.map((item) => item.value) };
        const item = pick.selectedItems[0] ?? pick.activeItems[0];
        return item ? { answer: item.value } : undefined;
      },
      step,
      origin,
    );
  }

  /**
   * Shows an input until it is accepted (`accepted` returns undefined to stay), hidden (cancel),
   * declined, or the request is cancelled by the server.
   */
  private run<T>(
    input: vscode.QuickPick<PickItem> | vscode.InputBox,
    signal: AbortSignal,
    accepted: () => T | undefined,
    step?: FormStep,
    origin?: Origin,
  ): Promise<T | 'back' | 'decline' | 'cancel'> {
    return new Promise((resolve) => {
      let settled = false;
      const subs: vscode.Disposable[] = [];
      const finish = (value: T | 'back' | 'decline' | 'cancel'): void => {
        if (settled) return;
        settled = true;
        for (const s of subs) s.dispose();
        signal.removeEventListener('abort', onAbort);
        input.hide();
        input.dispose();
        resolve(value);
      };
      const onAbort = (): void => finish('cancel');
      subs.push(
        input.onDidAccept(() => {
          const value = accepted();
          if (value !== undefined) finish(value);
        }),
        input.onDidTriggerButton((button) => finish(button === vscode.QuickInputButtons.Back ? 'back' : 'decline')),
        // Esc or closing it: the spec's `cancel` (dismissed without an explicit choice).
        input.onDidHide(() => finish('cancel')),
      );
      if (signal.aborted) return finish('cancel');
      signal.addEventListener('abort', onAbort, { once: true });
      input.show();
      if (this.testHooks && step && origin) this.shown.fire({ origin, step, input });
    });
  }

  private async openUrl(request: ServerRequest, origin: Origin): Promise<JsonObject> {
    const url = request.params.url;
    const site = urlOrigin(url);
    if (!site || typeof url !== 'string') {
      const why = `Server '${origin.server}' asked VS Code to open a URL that is not http(s).`;
      throw new McpFailure(ErrorCodes.InvalidParams, why);
    }
    const open = 'Open in Browser';
    const decline = 'Decline';
    const message = typeof request.params.message === 'string' ? request.params.message : '';
    const pick = await vscode.window.showWarningMessage(
      `${origin.server} (${trustLabel(origin.trust)}) asks you to open a page on ${site}`,
      {
        modal: true,
        detail:
          `${message}\n\n${url}\n\n` +
          (origin.client ? `It asks while handling a call of client '${origin.client}'. ` : '') +
          'Open it only if you expect this server to send you there.',
      },
      open,
      decline,
    );
    if (pick !== open) return { action: pick === decline ? 'decline' : 'cancel' };
    await vscode.env.openExternal(vscode.Uri.parse(url, true));
    return { action: 'accept' };
  }

  private async sample(request: ServerRequest, origin: Origin): Promise<JsonObject> {
    const messages = samplingMessages(request.params);
    if (!this.alwaysAllowed().includes(origin.server)) {
      const once = 'Allow Once';
      const always = 'Always for This Server';
      const deny = 'Deny';
      const first = messages.find((m) => m.role === 'user')?.text ?? '';
      const pick = await vscode.window.showInformationMessage(
        `${origin.server} (${trustLabel(origin.trust)}) asks to use one of VS Code's language models`,
        {
          modal: true,
          detail:
            `It sends ${messages.length} message${messages.length === 1 ? '' : 's'}` +
            `${origin.client ? ` while handling a call of client '${origin.client}'` : ''}. ` +
            `It begins: "${first.slice(0, 300)}${first.length > 300 ? '…' : ''}"`,
        },
        once,
        always,
        deny,
      );
      if (pick === always) {
        await this.workspaceState.update(SAMPLING_ALLOWED_KEY, [...this.alwaysAllowed(), origin.server]);
      } else if (pick !== once) {
        throw new McpFailure(USER_REJECTED, `The user declined the sampling request of server '${origin.server}'.`);
      }
    }
    const models = await vscode.lm.selectChatModels();
    const hints = ((request.params.modelPreferences as JsonObject | undefined)?.hints ?? []) as { name?: string }[];
    const hinted = (m: vscode.LanguageModelChat): boolean =>
      hints.some((h) => h.name && (m.family.includes(h.name) || m.name.includes(h.name)));
    const model = models.find(hinted) ?? models[0];
    if (!model) {
      throw new McpFailure(
        ErrorCodes.InternalError,
        `VS Code has no language model to answer the sampling request of server '${origin.server}': ` +
          'install and sign in to a chat extension (such as GitHub Copilot) and retry.',
      );
    }
    const cancel = new vscode.CancellationTokenSource();
    const onAbort = (): void => cancel.cancel();
    request.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const { Assistant, User } = vscode.LanguageModelChatMessage;
      const chat = messages.map((m) => (m.role === 'assistant' ? Assistant(m.text) : User(m.text)));
      const justification = `MCP server '${origin.server}' asks for a completion (through Switchboard).`;
      const response = await model.sendRequest(chat, { justification }, cancel.token);
      let text = '';
      for await (const part of response.text) text += part;
      return samplingResult(text, model.id);
    } finally {
      request.signal.removeEventListener('abort', onAbort);
      cancel.dispose();
    }
  }

  private alwaysAllowed(): string[] {
    return this.workspaceState.get<string[]>(SAMPLING_ALLOWED_KEY, []);
  }
}
