// Telling a remote server's "sign in again" apart from any other failure of its requests.
import { SignInRequired } from '../auth/serverOAuth';

/** The sign-in error behind a failure, if that is what it is (the SDK may wrap it as a cause). */
export function signInError(err: unknown): SignInRequired | undefined {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof SignInRequired) return e;
  }
  return undefined;
}
