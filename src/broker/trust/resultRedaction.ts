// Redaction of a server's secret values from what it sends back (tool results, resource contents,
// prompts, progress and log messages) before any client sees it, with the same Redactor and the
// same encodings as the logs (redact.ts). A result forwarded as the upstream's bytes (rawJson.ts)
// is only searched: it is parsed and rebuilt only when one of the forms occurs in it.
import { rawResult, rememberedJson } from '../shared/rawJson';
import type { JsonObject } from '../shared/mcpTypes';
import { REDACTED, type Redactor } from './redact';

/** Strings redacted in a value, counted so the server's log can say that something was hidden. */
export interface RedactionCount {
  strings: number;
}

/** Every string inside `value` (object keys left as they are) with the secret forms replaced. */
function redactValue(value: unknown, redactor: Redactor, count: RedactionCount): unknown {
  if (typeof value === 'string') {
    const out = redactor.redact(value);
    if (out !== value) count.strings++;
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redactor, count));
  if (value && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value))
      out[k] = k === 'blob' && typeof v === 'string' ? redactBlob(v, redactor, count) : redactValue(v, redactor, count);
    return out;
  }
  return value;
}

/**
 * A resource's base64 `blob` stays base64: its bytes are redacted (as Latin-1, so binary bytes
 * pass unchanged) and encoded again, which also removes the base64 forms the value had in it.
 */
function redactBlob(blob: string, redactor: Redactor, count: RedactionCount): string {
  const bytes = Buffer.from(blob, 'base64').toString('latin1');
  let out = bytes;
  for (const form of redactor.forms) {
    const latin = Buffer.from(form, 'utf8').toString('latin1');
    if (out.includes(latin)) out = out.split(latin).join(REDACTED);
  }
  if (out === bytes && !redactor.forms.some((f) => blob.includes(f))) return blob;
  count.strings++;
  return Buffer.from(out, 'latin1').toString('base64');
}

/**
 * The forms as they may appear inside JSON text: as they are, and JSON-escaped (a value with a
 * quote, a backslash or a control character), and with non-ASCII as \u escapes (Python's default).
 */
function jsonForms(redactor: Redactor): string[] {
  const out = new Set<string>();
  for (const form of redactor.forms) {
    out.add(form);
    const escaped = JSON.stringify(form).slice(1, -1);
    out.add(escaped);
    out.add(escaped.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  }
  return [...out];
}

const searched = new WeakMap<Redactor, string[]>();

function mayContain(bytes: Buffer | string, redactor: Redactor): boolean {
  let forms = searched.get(redactor);
  if (!forms) searched.set(redactor, (forms = jsonForms(redactor)));
  return forms.some((f) => bytes.includes(f));
}

/**
 * `result` with every secret form replaced; the same object when none occurs (a forwarded result
 * stays its bytes). `onRedacted` hears how many strings were changed, never what they were.
 */
export function redactResult(
  result: JsonObject,
  redactor: Redactor | undefined,
  onRedacted?: (count: number) => void,
): JsonObject {
  if (!redactor || redactor.forms.length === 0) return result;
  const raw = rememberedJson(result);
  if (raw !== undefined && !mayContain(raw, redactor)) return result;
  const parsed: unknown = raw !== undefined ? JSON.parse(raw.toString()) : result;
  const count: RedactionCount = { strings: 0 };
  const out = redactValue(parsed, redactor, count) as JsonObject;
  if (count.strings === 0) return result;
  onRedacted?.(count.strings);
  // Kept a forwarded result: the endpoint writes these bytes as it would have written the upstream's.
  return raw !== undefined ? rawResult(Buffer.from(JSON.stringify(out))) : out;
}

/** A notification's params (progress, log message) with the secret forms replaced. */
export function redactParams<T extends object>(params: T, redactor: Redactor | undefined): T {
  if (!redactor || redactor.forms.length === 0) return params;
  return redactValue(params, redactor, { strings: 0 }) as T;
}
