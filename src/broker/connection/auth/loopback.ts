// The browser's way back to the broker after sign-in: a one-use HTTP listener on 127.0.0.1 and a
// random port that accepts exactly one redirect carrying the expected `state`, then closes.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackRedirect {
  /** `http://127.0.0.1:<port>/callback`: the redirect_uri of this sign-in. */
  readonly redirectUrl: string;
  /** The authorization code, or a rejection saying why the sign-in did not complete. */
  readonly code: Promise<string>;
  close(): void;
}

const CALLBACK_PATH = '/callback';

function page(title: string, text: string): string {
  const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
    `<body style="font-family:sans-serif;margin:3em"><h1>${escape(title)}</h1><p>${escape(text)}</p></body></html>`
  );
}

function respond(res: http.ServerResponse, status: number, title: string, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  });
  res.end(page(title, text));
}

/** Compares without leaking how much of the state matched (by timing) to a page probing the port. */
function sameState(given: string | null, expected: string): boolean {
  if (given === null) return false;
  const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
  return crypto.timingSafeEqual(digest(given), digest(expected));
}

/**
 * Listens until one request to /callback carries `state` (a code or an error), or `timeoutMs`
 * passes. Requests with another state are refused and do not end the wait: a page that guesses
 * the port cannot cancel the user's sign-in, nor inject its own code.
 */
export async function listenForRedirect(
  state: string,
  serverName: string,
  timeoutMs: number,
): Promise<LoopbackRedirect> {
  let settle!: { resolve(code: string): void; reject(err: Error): void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  code.catch(() => undefined);
  let done = false;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
      respond(res, 404, 'Not found', 'This address only receives the sign-in redirect.');
      return;
    }
    if (done || !sameState(url.searchParams.get('state'), state)) {
      respond(res, 400, 'Sign-in not accepted', 'This link does not belong to the sign-in in progress.');
      return;
    }
    done = true;
    const error = url.searchParams.get('error');
    const received = url.searchParams.get('code');
    if (error || !received) {
      const why = url.searchParams.get('error_description') ?? error ?? 'no authorization code was returned';
      respond(res, 400, 'Sign-in failed', `${serverName}: ${why}. Close this tab and try again.`);
      settle.reject(new Error(`the authorization server refused the sign-in: ${why.slice(0, 300)}`));
    } else {
      respond(res, 200, 'Signed in', `Switchboard is signed in to ${serverName}. You can close this tab.`);
      settle.resolve(received);
    }
    res.once('finish', close);
  });
  const timer = setTimeout(() => {
    done = true;
    settle.reject(new Error(`the sign-in was not completed within ${Math.round(timeoutMs / 1000)} s`));
    close();
  }, timeoutMs);
  timer.unref();
  function close(): void {
    clearTimeout(timer);
    server.close();
    server.closeAllConnections();
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    code,
    close: () => {
      if (!done) settle.reject(new Error('the sign-in was cancelled'));
      done = true;
      close();
    },
  };
}
