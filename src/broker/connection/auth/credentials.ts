// The credentials the editor or the person supplies, as the broker holds them: `${input:NAME}`
// values (the editor's, in memory; else the per-user secret store the CLI writes) and VS Code
// account tokens (in memory only, per server). Nothing here is ever written by the broker, logged
// or put in the state: the state shows where a value comes from, never the value.
import { EventEmitter } from 'node:events';
import type { ServerDef, VscodeAuthSettings } from '../../../registry/schema';
import { SecretStore } from './secretStore';

export type InputSource = 'editor' | 'store';

/** A VS Code account's token as the editor handed it over for one server. */
interface AccountToken {
  provider: string;
  scopes: string[];
  token: string;
  /** The account's label (a user name), for the state. */
  account?: string;
}

/** A server's VS Code account as the state shows it: never the token. */
export interface AccountStatus {
  provider: string;
  scopes: string[];
  /** Whether the editor handed over a token for exactly these provider and scopes. */
  supplied: boolean;
  account?: string;
}

export interface CredentialEvents {
  /** Inputs whose value changed (supplied, forgotten, or re-read from the store). */
  inputs: [string[]];
  /** The account token of this server changed. */
  account: [string];
}

/** What the launch path asks: a value for `${input:NAME}`, and a server's account token. */
export interface CredentialSource {
  input(name: string): string | undefined;
  accountToken(def: ServerDef): string | undefined;
}

const sameScopes = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().every((s, i) => s === [...b].sort()[i]);

export class Credentials extends EventEmitter<CredentialEvents> implements CredentialSource {
  private readonly editorInputs = new Map<string, string>();
  private readonly accounts = new Map<string, AccountToken>();
  /** Values read from the per-user store (null: none), until `reloadInput` says the CLI changed one. */
  private readonly stored = new Map<string, string | null>();
  private secrets?: SecretStore;

  constructor(
    private readonly home: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    super();
  }

  /** Opened on first use: a registry without inputs never touches the keychain. */
  get store(): SecretStore {
    this.secrets ??= SecretStore.open(this.home, this.env);
    return this.secrets;
  }

  private storedValue(name: string): string | undefined {
    if (!this.stored.has(name)) this.stored.set(name, this.store.get(name) ?? null);
    return this.stored.get(name) ?? undefined;
  }

  /** The editor's value wins: it is what the person entered in VS Code most recently. */
  input(name: string): string | undefined {
    return this.editorInputs.get(name) ?? this.storedValue(name);
  }

  inputSource(name: string): InputSource | undefined {
    if (this.editorInputs.has(name)) return 'editor';
    return this.storedValue(name) !== undefined ? 'store' : undefined;
  }

  /** The editor's value of an input, held in memory; `undefined` forgets it. */
  supplyInput(name: string, value: string | undefined): boolean {
    const before = this.input(name);
    if (value === undefined) this.editorInputs.delete(name);
    else this.editorInputs.set(name, value);
    const changed = this.input(name) !== before;
    if (changed) this.emit('inputs', [name]);
    return changed;
  }

  /** `switchboard secret set|unset` changed the store: read it again. */
  reloadInput(name: string): boolean {
    const before = this.input(name);
    this.stored.delete(name);
    const changed = this.input(name) !== before;
    if (changed) this.emit('inputs', [name]);
    return changed;
  }

  /**
   * The editor's token of a VS Code account for one server, for the provider and scopes it was
   * asked for: a token for other scopes (the definition changed meanwhile) is refused.
   */
  supplyAccount(
    def: ServerDef,
    given: { provider: string; scopes: string[]; token?: string; account?: string },
  ): AccountStatus {
    const auth = def.auth;
    if (auth?.type !== 'vscode')
      throw new Error(`'${def.name}' does not sign in with a VS Code account (its 'auth' is not type: vscode)`);
    if (given.provider !== auth.provider || !sameScopes(given.scopes, auth.scopes)) {
      throw new Error(
        `'${def.name}' asks for ${describeAccount(auth)}, not ${given.provider} with scopes [${given.scopes.join(', ')}]`,
      );
    }
    const before = this.accounts.get(def.name)?.token;
    if (given.token === undefined) this.accounts.delete(def.name);
    else {
      const account = given.account !== undefined ? { account: given.account } : {};
      this.accounts.set(def.name, {
        provider: auth.provider,
        scopes: [...auth.scopes],
        token: given.token,
        ...account,
      });
    }
    if (before !== given.token) this.emit('account', def.name);
    return this.accountStatus(def)!;
  }

  accountToken(def: ServerDef): string | undefined {
    const auth = def.auth;
    const held = this.accounts.get(def.name);
    if (auth?.type !== 'vscode' || !held) return undefined;
    return held.provider === auth.provider && sameScopes(held.scopes, auth.scopes) ? held.token : undefined;
  }

  accountStatus(def: ServerDef): AccountStatus | undefined {
    const auth = def.auth;
    if (auth?.type !== 'vscode') return undefined;
    const supplied = this.accountToken(def) !== undefined;
    const account = supplied ? this.accounts.get(def.name)?.account : undefined;
    return { provider: auth.provider, scopes: [...auth.scopes], supplied, ...(account ? { account } : {}) };
  }

  /** Every value held, for redaction of text the broker shows. */
  values(): string[] {
    return [...this.editorInputs.values(), ...[...this.accounts.values()].map((a) => a.token)];
  }

  /** Forgets the tokens of servers no longer in the registry. */
  retain(names: ReadonlySet<string>): void {
    for (const name of [...this.accounts.keys()]) if (!names.has(name)) this.accounts.delete(name);
  }
}

/** "your github account (scopes repo, read:org)", for messages. */
export function describeAccount(auth: VscodeAuthSettings): string {
  const scopes = auth.scopes.length ? ` (scopes ${auth.scopes.join(', ')})` : '';
  return `a ${auth.provider} account${scopes}`;
}
