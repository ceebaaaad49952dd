// Telling a remote server's "sign in again" apart from any other failure of its requests.
import { SignInRequired } from './auth/serverOAuth';
import type { RemoteLaunch } from './connection';
import { authorizedFetch } from './auth/oauthFlow';
import { merged } from '../shared/objects';

/** The fetch every request to a remote server goes through: its OAuth sign-in, its VS Code account, or none. */
export function signedInFetch(launch: RemoteLaunch): typeof fetch {
  if (launch.auth) return authorizedFetch(launch.auth);
  if (launch.bearer) return bearerFetch(launch.bearer);
  return fetch;
}

/**
 * The fetch of a server that uses a VS Code account: the editor's current token on every request.
 * A 401 means VS Code's session no longer works for it: the person must sign in again there.
 */
function bearerFetch(token: () => string | undefined): typeof fetch {
  const refused = 'the server refused the VS Code account token (HTTP 401): sign in again from VS Code';
  return async (input, init) => {
    const current = token();
    if (current === undefined)
      throw new SignInRequired('the VS Code account token was withdrawn: sign in again from VS Code');
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${current}`);
    const res = await fetch(input, merged(init, { headers }));
    if (res.status === 401) {
      await res.body?.cancel();
      throw new SignInRequired(refused);
    }
    return res;
  };
}

/** The sign-in error behind a failure, if that is what it is (the SDK may wrap it as a cause). */
export function signInError(err: unknown): SignInRequired | undefined {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof SignInRequired) return e;
  }
  return undefined;
}
