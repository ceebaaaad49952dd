// One reader of `text/event-stream` bodies for the broker's own HTTP clients (the stdio bridge and
// the 2026-07-28 upstream connection). eventsource-parser (the SSE parser the MCP SDK itself uses)
// handles the framing: CRLF or LF, multi-line data, comments used as keep-alives, a split chunk.
import { createParser } from 'eventsource-parser';

export type SseMessage = Record<string, unknown>;

/**
 * Reads an SSE body as JSON messages, in order. `onMessage` returns false once it has what it waited
 * for; the rest of the stream is then cancelled. An event whose data is not a JSON object is skipped:
 * one malformed event must not end a stream that carries other callers' replies.
 */
export async function readSseMessages(res: Response, onMessage: (m: SseMessage) => boolean | void): Promise<void> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let stopped = false;
  const parser = createParser({
    onEvent(event) {
      if (stopped || !event.data) return;
      let message: unknown;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message && typeof message === 'object' && !Array.isArray(message)) {
        if (onMessage(message as SseMessage) === false) stopped = true;
      }
    },
  });
  try {
    while (!stopped) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
