// Reading an HTTP answer from a server the broker does not trust (an authorization server, an MCP
// Registry) without letting it decide how much memory that takes: a declared length over the limit
// is refused before reading, and a body that grows past it is cut off there.

/** `https://host/path` without query or credentials, cut to a length a message can hold. */
export function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}`.slice(0, 200);
}

/**
 * The body, whole, or `refuse(message)` thrown once it passes `limit` bytes (the rest is not read).
 * null when the answer has no body.
 */
export async function readCappedBody(
  res: Response,
  limit: number,
  url: URL,
  refuse: (message: string) => Error,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (!res.body) return null;
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body.cancel();
    throw refuse(`${shownUrl(url)} answered with ${declared} bytes; at most ${limit} are read`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw refuse(`${shownUrl(url)} answered with more than ${limit} bytes; at most ${limit} are read`);
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}
