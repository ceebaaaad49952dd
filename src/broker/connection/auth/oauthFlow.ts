// The SDK's OAuth client (auth(): discovery, registration, PKCE, the resource parameter, refresh)
// applied to a remote upstream: the fetch every request of its transport goes through, and the
// two halves of the browser step. The SDK is loaded on first use, like the remote transports.
// Every request auth() makes goes through oauthFetch (addresses, sizes and time bounded).
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { oauthFetch } from './oauthFetch';
import { SignInRequired, type BrowserStep, type ServerOAuth } from './serverOAuth';
import { merged } from '../../shared/objects';

type Fetch = typeof fetch;

const sdkAuth = () => import('@modelcontextprotocol/sdk/client/auth.js');

/** The provider as the SDK types it (ServerOAuth implements the interface without importing it). */
const asProvider = (oauth: ServerOAuth): OAuthClientProvider => oauth as unknown as OAuthClientProvider;

/** Runs auth() outside a browser step: a refresh, or SignInRequired when only a person can help. */
async function refresh(oauth: ServerOAuth, resourceMetadataUrl?: URL): Promise<void> {
  const { auth } = await sdkAuth();
  const fetchFn = oauthFetch(oauth.serverUrl);
  const result = await auth(asProvider(oauth), { serverUrl: oauth.serverUrl, resourceMetadataUrl, fetchFn });
  if (result !== 'AUTHORIZED') throw new SignInRequired(oauth.needsSignInMessage());
}

/** A schema refusal of the server's metadata (the SDK's zod), as one sentence instead of a JSON dump. */
function metadataRefusal(oauth: ServerOAuth, err: unknown): string | undefined {
  const issues = (err as { name?: string; issues?: { path?: PropertyKey[]; message?: string }[] }).issues;
  if ((err as Error)?.name !== 'ZodError' || !Array.isArray(issues)) return undefined;
  const said = issues.slice(0, 3).map((i) => `${(i.path ?? []).map(String).join('.') || 'the document'}: ${i.message}`);
  return `the authorization server of '${oauth.serverName}' answered with metadata that cannot be used (${said.join('; ')})`;
}

function scrubbed(oauth: ServerOAuth, err: unknown): Error {
  if (err instanceof SignInRequired) return err;
  const message = metadataRefusal(oauth, err) ?? (err instanceof Error ? err.message : String(err));
  return new Error(oauth.scrub(message), { cause: err });
}

/** The access token to send now, refreshed first when it is about to expire. */
async function currentToken(oauth: ServerOAuth): Promise<string> {
  if (oauth.refreshDue()) {
    await oauth
      .refreshOnce(() => refresh(oauth))
      .catch((err: unknown) => {
        // An authorization server that is down for a moment: the old token may still be accepted.
        if (err instanceof SignInRequired) throw err;
      });
  }
  const token = oauth.accessToken;
  if (!token) throw new SignInRequired(oauth.needsSignInMessage());
  return token;
}

/**
 * The fetch of a signed-in remote transport: a bearer token on every request, refreshed before it
 * expires or once after a 401; a 401 that a refresh cannot cure, or a 403 insufficient_scope,
 * rejects with SignInRequired (the person must sign in, with the wider scope for a 403).
 */
export function authorizedFetch(oauth: ServerOAuth, base: Fetch = fetch): Fetch {
  return async (input, init) => {
    const send = async (token: string) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${token}`);
      return base(input, merged(init, { headers }));
    };
    const used = await currentToken(oauth);
    let res = await send(used);
    if (res.status === 401) {
      const { extractWWWAuthenticateParams } = await sdkAuth();
      const { resourceMetadataUrl } = extractWWWAuthenticateParams(res);
      await res.body?.cancel();
      // Another request may have refreshed meanwhile; otherwise refresh now (once for all of them).
      if (oauth.accessToken === used) {
        await oauth
          .refreshOnce(() => refresh(oauth, resourceMetadataUrl))
          .catch((err: unknown) => {
            throw scrubbed(oauth, err);
          });
      }
      res = await send(await currentToken(oauth));
      if (res.status === 401) {
        await res.body?.cancel();
        throw new SignInRequired(oauth.needsSignInMessage());
      }
    }
    if (res.status === 403) {
      const { extractWWWAuthenticateParams } = await sdkAuth();
      const { error, scope } = extractWWWAuthenticateParams(res);
      if (error === 'insufficient_scope') {
        await res.body?.cancel();
        oauth.requireScope(scope);
        throw new SignInRequired(oauth.needsSignInMessage(), oauth.stepUpScope);
      }
    }
    return res;
  };
}

/** What the server's 401 says about where its metadata is and what scope it wants. */
async function challengeOf(serverUrl: string): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  try {
    const res = await fetch(serverUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":0,"method":"ping"}',
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    if (res.status !== 401) return {};
    const { extractWWWAuthenticateParams } = await sdkAuth();
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
    return { resourceMetadataUrl, scope };
  } catch {
    return {}; // discovery falls back to the well-known locations
  }
}

/**
 * First half of the browser step: discovery, registration if needed, PKCE; returns the
 * authorization URL the person opens (auth() hands it to the step, see ServerOAuth).
 */
export async function authorizationUrl(oauth: ServerOAuth, step: BrowserStep): Promise<URL> {
  const { auth } = await sdkAuth();
  const challenge = await challengeOf(oauth.serverUrl);
  const scope = oauth.scopeToRequest() ?? challenge.scope;
  let result;
  try {
    const { resourceMetadataUrl } = challenge;
    result = await oauth.withBrowserStep(step, () =>
      auth(asProvider(oauth), {
        serverUrl: oauth.serverUrl,
        scope,
        resourceMetadataUrl,
        fetchFn: oauthFetch(oauth.serverUrl),
      }),
    );
  } catch (err) {
    throw scrubbed(oauth, err);
  }
  if (result !== 'REDIRECT' || !step.url)
    throw new Error(`the authorization server of '${oauth.serverName}' did not ask for a sign-in`);
  return step.url;
}

/** Second half: exchanges the code the loopback listener received, in the same browser step. */
export async function exchangeCode(oauth: ServerOAuth, step: BrowserStep, code: string): Promise<void> {
  const { auth } = await sdkAuth();
  try {
    const result = await oauth.withBrowserStep(step, () =>
      auth(asProvider(oauth), {
        serverUrl: oauth.serverUrl,
        authorizationCode: code,
        fetchFn: oauthFetch(oauth.serverUrl),
      }),
    );
    if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
  } catch (err) {
    throw scrubbed(oauth, err);
  }
}
