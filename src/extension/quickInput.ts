// Quick picks and input boxes for the commands that ask several questions in a row (Connect an
// Agent, Import from server.json). Built on createQuickPick/createInputBox rather than
// showQuickPick/showInputBox so that the VS Code test suite can see each one as it is shown and
// answer it through the workbench's own quick input, as a person would (the hook fires only when
// the test suite turned it on, like EditorSecrets.onDidShowSecretInput).
import * as vscode from 'vscode';

export type ShownQuickInput =
  | { kind: 'pick'; placeholder: string; pick: vscode.QuickPick<vscode.QuickPickItem> }
  | { kind: 'input'; prompt: string; box: vscode.InputBox };

const shown = new vscode.EventEmitter<ShownQuickInput>();
let hooks = false;

/** Fires with each pick or box as it is shown, once `enableQuickInputHooks` has run. */
export const onDidShowQuickInput = shown.event;

/** Turns the hook on (the VS Code test suite only); disposing it turns it off. */
export function enableQuickInputHooks(): vscode.Disposable {
  hooks = true;
  return new vscode.Disposable(() => {
    hooks = false;
  });
}

export interface PickOptions {
  placeHolder: string;
  title?: string;
}

/** One item of `items`, or undefined when the person presses Escape. */
export async function pickOne<T extends vscode.QuickPickItem>(
  items: readonly T[],
  options: PickOptions,
): Promise<T | undefined> {
  const pick = vscode.window.createQuickPick<T>();
  pick.items = items;
  pick.placeholder = options.placeHolder;
  pick.title = options.title;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  try {
    return await new Promise<T | undefined>((resolve) => {
      pick.onDidAccept(() => {
        const chosen = pick.selectedItems[0] ?? pick.activeItems[0];
        if (!chosen) return;
        resolve(chosen);
        pick.hide();
      });
      pick.onDidHide(() => resolve(undefined));
      pick.show();
      if (hooks) shown.fire({ kind: 'pick', placeholder: options.placeHolder, pick: pick as never });
    });
  } finally {
    pick.dispose();
  }
}

export interface InputOptions {
  prompt: string;
  title?: string;
  placeHolder?: string;
  password?: boolean;
  /** An error to show under the box (and keep it open), or undefined when the value is fine. */
  validate?: (value: string) => string | undefined;
}

/** The text typed, or undefined when the person presses Escape. */
export async function inputText(options: InputOptions): Promise<string | undefined> {
  const box = vscode.window.createInputBox();
  box.prompt = options.prompt;
  box.title = options.title;
  box.placeholder = options.placeHolder;
  box.password = options.password ?? false;
  box.ignoreFocusOut = true;
  try {
    return await new Promise<string | undefined>((resolve) => {
      box.onDidChangeValue(() => {
        box.validationMessage = undefined;
      });
      box.onDidAccept(() => {
        const problem = options.validate?.(box.value);
        if (problem) {
          box.validationMessage = problem;
          return;
        }
        resolve(box.value);
        box.hide();
      });
      box.onDidHide(() => resolve(undefined));
      box.show();
      if (hooks) shown.fire({ kind: 'input', prompt: options.prompt, box });
    });
  } finally {
    box.dispose();
  }
}
