// One remote server's OAuth client, in the shape of the SDK's OAuthClientProvider (auth() drives
// it; this file does not import the SDK): the registered client, the tokens and the discovery
// state, kept in the per-user token store, and the browser step in progress, if any.
import { AsyncLocalStorage } from 'node:async_hooks';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { OAuthSettings, ServerDef } from '../../../registry/schema';
import { webAddressProblem } from '../../../registry/webAddress';
import { telemetry } from '../../telemetry/telemetry';
import { relatedTrace } from '../serverRequests';
import type { TokenStore } from './oauthTokenStore';
import { merged } from '../../shared/objects';

export interface OAuthTokens {
  access_token: string;
  token_type: string;
  expires_in?: number;
  scope?: string;
  refresh_token?: string;
  id_token?: string;
  issuer?: string;
}

export interface ClientInformation {
  client_id: string;
  client_secret?: string;
  redirect_uris?: string[];
  issuer?: string;
  [field: string]: unknown;
}

/** What the token store keeps for one sign-in. */
interface SignInRecord {
  version: 1;
  tokens?: OAuthTokens;
  /** When the tokens were received (ms): with expires_in, when the access token expires. */
  obtainedAt?: number;
  /** A dynamically registered client (a configured clientId is never stored). */
  client?: ClientInformation;
  discovery?: unknown;
}

/** The browser step in progress, as auth() must see it while it builds the URL and exchanges the code. */
export interface BrowserStep {
  redirectUrl: string;
  state: string;
  verifier?: string;
  url?: URL;
}

/** No usable tokens: the person has to sign in (again, or with more scope). Never carries a token. */
export class SignInRequired extends Error {
  constructor(
    message: string,
    /** The scope the server asked for, when it asked for more (403 insufficient_scope). */
    readonly scope?: string,
  ) {
    super(message);
  }
}

/** Until a sign-in runs there is no listener; registration metadata still needs a redirect URI. */
const PLACEHOLDER_REDIRECT = 'http://127.0.0.1/callback';

/** The key a server's sign-in is stored under: its name and everything that decides whom it signs in to. */
export function signInKey(def: ServerDef): string {
  const auth = def.auth as OAuthSettings;
  const settings = [auth.type, auth.clientId ?? null, auth.scopes ?? null, auth.clientMetadataUrl ?? null];
  const bound = JSON.stringify([def.url, ...settings]);
  return `${def.name}/${crypto.createHash('sha256').update(bound).digest('hex').slice(0, 16)}`;
}

export class ServerOAuth {
  private record: SignInRecord;
  private readonly step = new AsyncLocalStorage<BrowserStep>();
  private refreshing?: Promise<void>;
  /** A wider scope the server asked for (403 insufficient_scope): the next sign-in asks for it. */
  stepUpScope?: string;

  constructor(
    readonly serverName: string,
    readonly serverUrl: string,
    readonly settings: OAuthSettings,
    readonly key: string,
    private readonly store: TokenStore,
    private readonly root: string,
  ) {
    this.record = this.load();
  }

  get storeKind(): TokenStore['kind'] {
    return this.store.kind;
  }

  private load(): SignInRecord {
    try {
      const parsed = JSON.parse(this.store.read(this.key) ?? '') as SignInRecord;
      if (parsed && parsed.version === 1) return parsed;
    } catch {
      /* nothing stored, or unreadable: sign in again */
    }
    return { version: 1 };
  }

  private persist(): void {
    const { tokens, client, discovery } = this.record;
    if (!tokens && !client && !discovery) this.store.remove(this.key);
    else this.store.write(this.key, JSON.stringify(this.record));
  }

  /** Runs `fn` as part of the browser step: auth() then sees its redirect URL, state and verifier. */
  withBrowserStep<T>(step: BrowserStep, fn: () => Promise<T>): Promise<T> {
    return this.step.run(step, fn);
  }

  /** A dynamically registered client names its redirect URIs; a new loopback port needs a new registration. */
  prepareBrowserStep(redirectUrl: string): void {
    const client = this.record.client;
    if (client && !this.settings.clientId && !client.redirect_uris?.includes(redirectUrl)) {
      this.record.client = undefined;
      this.persist();
    }
  }

  // ---- OAuthClientProvider ----

  get redirectUrl(): string {
    return this.step.getStore()?.redirectUrl ?? this.record.client?.redirect_uris?.[0] ?? PLACEHOLDER_REDIRECT;
  }

  get clientMetadataUrl(): string | undefined {
    return this.settings.clientMetadataUrl;
  }

  get clientMetadata() {
    return {
      client_name: 'MCP Switchboard',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.settings.clientSecretFile ? 'client_secret_basic' : 'none',
      ...(this.settings.scopes?.length ? { scope: this.settings.scopes.join(' ') } : {}),
    };
  }

  state(): string {
    const step = this.step.getStore();
    if (!step) throw new SignInRequired(this.needsSignInMessage());
    return step.state;
  }

  clientInformation(): ClientInformation | undefined {
    if (this.settings.clientId) {
      const secret = this.settings.clientSecretFile ? this.readClientSecret(this.settings.clientSecretFile) : undefined;
      return { client_id: this.settings.clientId, ...(secret ? { client_secret: secret } : {}) };
    }
    return this.record.client;
  }

  saveClientInformation(info: ClientInformation): void {
    if (this.settings.clientId) return; // configured, not learned
    this.record.client = info;
    this.persist();
  }

  /** Outside a browser step: the stored tokens. In one: none, so auth() asks the person instead of refreshing. */
  tokens(): OAuthTokens | undefined {
    return this.step.getStore() ? undefined : this.record.tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    // A refresh may omit the refresh token: the old one stays valid then (RFC 6749 §6).
    const refresh = tokens.refresh_token ?? this.record.tokens?.refresh_token;
    this.record.tokens = merged(tokens, refresh ? { refresh_token: refresh } : {});
    this.record.obtainedAt = Date.now();
    this.persist();
  }

  /**
   * The authorization endpoint comes from the server's metadata: a hostile server can name a
   * `file:` path or a custom scheme that the browser opener (xdg-open, open, start) would hand to
   * another program. Only a web page is ever returned to be opened.
   */
  redirectToAuthorization(url: URL): void {
    const step = this.step.getStore();
    if (!step) throw new SignInRequired(this.needsSignInMessage(), this.stepUpScope);
    const problem = webAddressProblem(url.href);
    if (problem) {
      // Without the query: it carries this flow's state and PKCE challenge.
      const endpoint = new URL(url.href);
      endpoint.search = endpoint.hash = endpoint.username = endpoint.password = '';
      throw new Error(
        `the authorization server of '${this.serverName}' names ${endpoint.href.slice(0, 200)} as its authorization endpoint, ` +
          `which is not opened: ${problem}`,
      );
    }
    step.url = url;
  }

  saveCodeVerifier(verifier: string): void {
    const step = this.step.getStore();
    if (step) step.verifier = verifier;
  }

  codeVerifier(): string {
    const verifier = this.step.getStore()?.verifier;
    if (!verifier) throw new SignInRequired('no sign-in is in progress; start one again');
    return verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.record.client = undefined;
    if (scope === 'all' || scope === 'tokens') {
      this.record.tokens = undefined;
      this.record.obtainedAt = undefined;
    }
    if (scope === 'all' || scope === 'discovery') this.record.discovery = undefined;
    const step = this.step.getStore();
    if (step && (scope === 'all' || scope === 'verifier')) step.verifier = undefined;
    this.persist();
  }

  saveDiscoveryState(state: unknown): void {
    this.record.discovery = state;
    this.persist();
  }

  discoveryState(): never | undefined {
    return this.record.discovery as never;
  }

  // ---- for the broker ----

  get signedIn(): boolean {
    return this.record.tokens !== undefined;
  }

  get accessToken(): string | undefined {
    return this.record.tokens?.access_token;
  }

  get grantedScope(): string | undefined {
    return this.record.tokens?.scope;
  }

  /** The access token expires soon (a quarter of its lifetime, at most a minute): refresh it before use. */
  refreshDue(now = Date.now()): boolean {
    const { tokens, obtainedAt } = this.record;
    if (!tokens?.refresh_token || tokens.expires_in === undefined || obtainedAt === undefined) return false;
    const lifetime = tokens.expires_in * 1000;
    return now >= obtainedAt + lifetime - Math.min(60_000, lifetime / 4);
  }

  /** One refresh at a time: a second caller waits for the first instead of spending the refresh token again. */
  refreshOnce(run: () => Promise<void>): Promise<void> {
    const traced = telemetry();
    // While telemetry is on, a span in the request that needed the new token (never a token in it).
    const refreshed = traced
      ? () =>
          traced.span(
            {
              name: 'sign-in refresh',
              kind: 'client',
              attributes: { 'switchboard.server': this.serverName },
              parent: relatedTrace(),
            },
            run,
          )
      : run;
    this.refreshing ??= refreshed().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** The scope the next sign-in asks for: a step-up's, else the configured one (else the server's). */
  scopeToRequest(): string | undefined {
    if (this.stepUpScope) return this.stepUpScope;
    return this.settings.scopes?.length ? this.settings.scopes.join(' ') : undefined;
  }

  /** A 403 insufficient_scope: the next sign-in asks for what was granted and what is now required. */
  requireScope(scope: string | undefined): void {
    const had = (this.grantedScope ?? this.scopeToRequest() ?? '').split(' ');
    const wanted = new Set([...had, ...(scope ?? '').split(' ')]);
    wanted.delete('');
    this.stepUpScope = [...wanted].join(' ') || undefined;
  }

  signedInWithStepUp(): void {
    this.stepUpScope = undefined;
  }

  /** Deletes the tokens (and a dynamically registered client) from the store. */
  signOut(): void {
    this.record = { version: 1 };
    this.stepUpScope = undefined;
    this.store.remove(this.key);
  }

  /** Removes this sign-in's token values from text (an error from an authorization server may quote one). */
  scrub(text: string): string {
    let out = text;
    for (const value of [this.record.tokens?.access_token, this.record.tokens?.refresh_token]) {
      if (value && value.length >= 8) out = out.split(value).join('[redacted]');
    }
    return out;
  }

  needsSignInMessage(): string {
    const how = `sign in from the Switchboard view or run: switchboard login ${this.serverName}`;
    if (this.stepUpScope) return `'${this.serverName}' asks for more access (scope: ${this.stepUpScope}); ${how}`;
    return `'${this.serverName}' needs you to sign in: ${how}`;
  }

  private readClientSecret(file: string): string {
    const resolved = file.startsWith('~/') ? path.join(os.homedir(), file.slice(2)) : path.resolve(this.root, file);
    try {
      return fs.readFileSync(resolved, 'utf8').trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new Error(`could not read auth.clientSecretFile ${resolved} (${code}); create it with the client secret`, {
        cause: err,
      });
    }
  }
}
