// The editor's half of `${input:NAME}` secrets and VS Code accounts: values entered once live in
// the editor's SecretStorage and are handed to the broker (memory only) on every connection, so
// they survive a broker restart; VS Code account tokens are fetched silently and handed over again
// whenever the account's sessions change. Values and tokens are never logged.
import * as vscode from 'vscode';
import type { ServerStatus } from '../broker/control/controlApi';
import type { FolderEntry } from './folderEntry';
import { inputsToRestore, inputTitle, missingInputs } from './inputsNeeded';

const KEY_PREFIX = 'switchboard.input.';

/** The password box as shown: for the VS Code test suite, which answers it through the real quick input. */
export interface ShownSecretInput {
  server: string;
  input: string;
  box: vscode.InputBox;
}

/** What the secrets need of the extension's context (Ctx): the folders, their changes, the log. */
export interface SecretsHost {
  readonly output: vscode.LogOutputChannel;
  readonly onDidChange: vscode.Event<FolderEntry | undefined>;
  activeEntries(): FolderEntry[];
}

export class EditorSecrets implements vscode.Disposable {
  private readonly shown = new vscode.EventEmitter<ShownSecretInput>();
  /** Fires with each password box shown, only when `testHooks` is on (the VS Code test suite). */
  readonly onDidShowSecretInput = this.shown.event;
  /** What was already tried for a broker process: `folder|pid|what`, so a restart tries again. */
  private readonly tried = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [this.shown];

  constructor(
    private readonly ctx: SecretsHost,
    private readonly storage: vscode.SecretStorage,
    private readonly testHooks = false,
  ) {
    this.disposables.push(
      ctx.onDidChange((entry) => {
        for (const e of entry ? [entry] : ctx.activeEntries()) void this.sync(e);
      }),
      vscode.authentication.onDidChangeSessions((e) => {
        for (const entry of ctx.activeEntries()) void this.accountsChanged(entry, e.provider.id);
      }),
    );
  }

  /** Asks for one input's value in a password box; undefined when dismissed. */
  async ask(
    server: string,
    input: { name: string; description?: string; password: boolean },
  ): Promise<string | undefined> {
    const box = vscode.window.createInputBox();
    box.title = inputTitle(server, input);
    box.prompt = `Kept in VS Code's secret storage and handed to the broker, never written to the workspace.`;
    box.password = input.password;
    box.ignoreFocusOut = true;
    const value = await new Promise<string | undefined>((resolve) => {
      box.onDidAccept(() => {
        if (box.value === '') {
          box.validationMessage = 'Enter a value, or press Escape to cancel.';
          return;
        }
        resolve(box.value);
        box.hide();
      });
      box.onDidHide(() => resolve(undefined));
      box.show();
      if (this.testHooks) this.shown.fire({ server, input: input.name, box });
    });
    box.dispose();
    return value;
  }

  /** Stores the value in SecretStorage and hands it to the broker. */
  async enter(entry: FolderEntry, name: string, value: string): Promise<string[]> {
    await this.storage.store(KEY_PREFIX + name, value);
    const { servers } = await entry.conn.call('set_input', { name, value });
    this.ctx.output.info(`Secret '${name}' entered (used by ${servers.join(', ') || 'no server yet'}).`);
    return servers;
  }

  /** Deletes the value from SecretStorage and makes every broker forget it. */
  async forget(name: string): Promise<void> {
    await this.storage.delete(KEY_PREFIX + name);
    for (const entry of this.ctx.activeEntries()) {
      if (entry.phase === 'connected') await entry.conn.call('set_input', { name });
    }
    this.ctx.output.info(`Secret '${name}' forgotten.`);
  }

  async has(name: string): Promise<boolean> {
    return (await this.storage.get(KEY_PREFIX + name)) !== undefined;
  }

  /** Hands a freshly (re)connected broker what it misses: stored inputs and VS Code account tokens. */
  private async sync(entry: FolderEntry): Promise<void> {
    const state = entry.state;
    if (entry.phase !== 'connected' || !state) return;
    const pid = state.broker.pid;
    const stored = new Set<string>();
    for (const i of missingInputs(state.servers)) {
      const mark = `${entry.key}|${pid}|input:${i.name}`;
      if (this.tried.has(mark)) continue;
      this.tried.add(mark);
      if (await this.has(i.name)) stored.add(i.name);
    }
    for (const name of inputsToRestore(state.servers, stored)) {
      const value = await this.storage.get(KEY_PREFIX + name);
      if (value === undefined) continue;
      await entry.conn
        .call('set_input', { name, value })
        .then(() => this.ctx.output.info(`Secret '${name}' handed to the broker from VS Code's secret storage.`))
        .catch((err: Error) => this.ctx.output.warn(`Secret '${name}' not handed over: ${err.message}`));
    }
    for (const s of state.servers) {
      if (!s.account || s.account.supplied) continue;
      const mark = `${entry.key}|${pid}|account:${s.name}|${s.account.provider}|${s.account.scopes.join(' ')}`;
      if (this.tried.has(mark)) continue;
      this.tried.add(mark);
      await this.handOverAccount(entry, s, false);
    }
  }

  private async accountsChanged(entry: FolderEntry, provider: string): Promise<void> {
    if (entry.phase !== 'connected') return;
    for (const s of entry.state?.servers ?? []) {
      if (s.account?.provider === provider) await this.handOverAccount(entry, s, false);
    }
  }

  /**
   * Gets the server's VS Code account session (asking the person only when `interactive`) and hands
   * its token to the broker; with no session any more, withdraws the one handed over before.
   */
  async handOverAccount(entry: FolderEntry, s: ServerStatus, interactive: boolean): Promise<ServerStatus | undefined> {
    const account = s.account;
    if (!account) return undefined;
    let session: vscode.AuthenticationSession | undefined;
    try {
      session = await vscode.authentication.getSession(
        account.provider,
        account.scopes,
        // Not silent when not interactive: VS Code's passive flow returns no session but puts "Sign in
        // with <provider> to use Switchboard" in its Accounts menu (a badge), which is where a person
        // expects it; `silent` would leave no trace of the request.
        interactive ? { createIfNone: true } : {},
      );
    } catch (err) {
      if (interactive) throw err;
      this.ctx.output.warn(`No '${account.provider}' account for '${s.name}': ${(err as Error).message}`);
      return undefined;
    }
    const params = { name: s.name, provider: account.provider, scopes: account.scopes };
    if (session) {
      const status = await entry.conn.call('set_account_token', {
        ...params,
        token: session.accessToken,
        account: session.account.label,
      });
      this.ctx.output.info(`'${s.name}' uses the ${account.provider} account ${session.account.label}.`);
      return status;
    }
    if (!account.supplied) return undefined;
    this.ctx.output.info(`The ${account.provider} account of '${s.name}' is gone: its token is withdrawn.`);
    return entry.conn.call('set_account_token', params);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
