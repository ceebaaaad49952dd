// Every remote server's sign-in for one broker: the per-server OAuth client (kept across restarts
// of the upstream), the browser step in progress (loopback listener) and signing out.
//
// The authorization URL of a sign-in in progress is returned to whoever started it (begin_sign_in,
// an operator-only tool) and kept nowhere else: it carries the state and PKCE challenge that bind
// the browser's answer to this flow, so anyone holding it could consent with their own account
// and sign every client of the broker in as themselves (login CSRF). The state says only that a
// sign-in is in progress.
import * as crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import { isDeepStrictEqual } from 'node:util';
import type { ServerDef } from '../../../registry/schema';
import { authorizationUrl, exchangeCode } from './oauthFlow';
import { listenForRedirect, type LoopbackRedirect } from './loopback';
import { ServerOAuth, signInKey } from './serverOAuth';
import { openTokenStore, type TokenStore, type TokenStoreKind } from './oauthTokenStore';

/** The longest reason for a failed sign-in the state keeps. */
const LAST_ERROR_LIMIT = 500;

/** How long a started sign-in waits for the browser to come back. */
const SIGN_IN_TIMEOUT_MS = 10 * 60_000;

interface Pending {
  listener: LoopbackRedirect;
}

/** A server's sign-in as the state shows it: never a token. */
export interface SignInStatus {
  signedIn: boolean;
  tokenStore: TokenStoreKind;
  grantedScope?: string;
  /** A sign-in was started and waits for the browser (its URL went to the operator alone). */
  inProgress?: true;
  /** The scope the next sign-in asks for, when the server asked for more. */
  stepUpScope?: string;
  /** Why the last sign-in did not complete. */
  lastError?: string;
}

export interface SignInEvents {
  /** A sign-in started, failed or was cancelled (the state view). */
  changed: [string];
  /** A sign-in completed: the server can be (re)connected. */
  signedIn: [string];
}

/** Why a server has no browser sign-in: no `auth`, or a VS Code account (the editor hands that token over). */
function notOAuth(def: ServerDef, what: string): string {
  if (def.auth?.type === 'vscode')
    return `'${def.name}' uses a VS Code account (${def.auth.provider}): sign in from VS Code, which hands the broker its token`;
  return `'${def.name}' has no 'auth' setting: there is nothing to ${what}`;
}

export class SignIns extends EventEmitter<SignInEvents> {
  private store?: TokenStore;
  private readonly clients = new Map<string, ServerOAuth>();
  private readonly pending = new Map<string, Pending>();
  private readonly lastErrors = new Map<string, string>();

  constructor(
    private readonly home: string,
    private readonly root: string,
  ) {
    super();
  }

  /** Opened on first use: a registry without sign-ins never touches the keychain. */
  private tokenStore(): TokenStore {
    this.store ??= openTokenStore(this.home);
    return this.store;
  }

  /** The OAuth client of a server with `auth`, the same object for as long as its settings stay. */
  forServer(def: ServerDef): ServerOAuth | undefined {
    if (def.auth?.type !== 'oauth' || def.transport === 'stdio' || !def.url) return undefined;
    const key = signInKey(def);
    const known = this.clients.get(def.name);
    // The same sign-in (key) with other settings, e.g. another clientSecretFile: a new client over
    // the same stored tokens, so the file read is always the one the definition names now.
    if (known?.key === key && isDeepStrictEqual(known.settings, def.auth)) return known;
    this.cancel(def.name);
    const oauth = new ServerOAuth(def.name, def.url, def.auth, key, this.tokenStore(), this.root);
    this.clients.set(def.name, oauth);
    return oauth;
  }

  status(def: ServerDef): SignInStatus | undefined {
    const oauth = this.forServer(def);
    if (!oauth) return undefined;
    const pending = this.pending.get(def.name);
    const lastError = this.lastErrors.get(def.name);
    return {
      signedIn: oauth.signedIn,
      tokenStore: oauth.storeKind,
      ...(oauth.grantedScope ? { grantedScope: oauth.grantedScope } : {}),
      ...(pending ? { inProgress: true as const } : {}),
      ...(oauth.stepUpScope ? { stepUpScope: oauth.stepUpScope } : {}),
      ...(lastError ? { lastError } : {}),
    };
  }

  /**
   * Starts the browser step: a loopback listener for the redirect, and the authorization URL to
   * open. The code comes back to the listener only, and the tokens go only to the store.
   */
  async begin(def: ServerDef): Promise<{ url: string }> {
    const oauth = this.forServer(def);
    if (!oauth) throw new Error(notOAuth(def, 'sign in to'));
    this.cancel(def.name);
    this.lastErrors.delete(def.name);
    const state = crypto.randomBytes(24).toString('base64url');
    const listener = await listenForRedirect(state, def.name, SIGN_IN_TIMEOUT_MS);
    const step = { redirectUrl: listener.redirectUrl, state };
    let url: URL;
    try {
      oauth.prepareBrowserStep(listener.redirectUrl);
      url = await authorizationUrl(oauth, step);
    } catch (err) {
      listener.close();
      throw err;
    }
    const pending: Pending = { listener };
    this.pending.set(def.name, pending);
    this.emit('changed', def.name);
    void listener.code
      .then((code) => exchangeCode(oauth, step, code))
      .then(
        () => {
          if (this.pending.get(def.name) !== pending) return;
          this.pending.delete(def.name);
          oauth.signedInWithStepUp();
          this.emit('signedIn', def.name);
        },
        (err: Error) => {
          if (this.pending.get(def.name) !== pending) return;
          this.pending.delete(def.name);
          // The authorization server writes part of this text: kept to a line's length in the state.
          this.lastErrors.set(def.name, oauth.scrub(err.message).slice(0, LAST_ERROR_LIMIT));
          this.emit('changed', def.name);
        },
      );
    return { url: url.href };
  }

  /** Deletes the server's tokens; the next connection needs a new sign-in. */
  signOut(def: ServerDef): void {
    const oauth = this.forServer(def);
    if (!oauth) throw new Error(notOAuth(def, 'sign out of'));
    this.cancel(def.name);
    oauth.signOut();
    this.emit('changed', def.name);
  }

  /** Ends a sign-in in progress (its listener closes). */
  cancel(name: string): void {
    const pending = this.pending.get(name);
    if (!pending) return;
    this.pending.delete(name);
    pending.listener.close();
  }

  /** Forgets servers no longer in the registry, and closes every listener (on shutdown). */
  retain(names: ReadonlySet<string>): void {
    for (const name of [...this.clients.keys()]) {
      if (names.has(name)) continue;
      this.cancel(name);
      this.clients.delete(name);
    }
  }
}
