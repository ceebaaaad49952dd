// Redaction of a server's secret values from anything the broker shows or writes (logs, state,
// errors, probe output), in the forms a server is likely to print them: as they are, base64
// (standard and URL-safe, at any alignment), hex and URL-encoded. A value printed in pieces
// (two halves on two lines) is not recognized; docs/trust-and-sandbox.md says so.
import type { ServerDef } from '../../registry/schema';

export const REDACTED = '[redacted]';

/** Shorter values are not redacted: they would turn up by chance in ordinary text. */
const MIN_SECRET_LENGTH = 4;
/** Shorter encoded fragments are not redacted for the same reason. */
const MIN_ENCODED_LENGTH = 8;

/**
 * The base64 text that any base64 encoding containing `value` must contain: for each of the three
 * byte alignments, the characters encoding whole 3-byte groups of the value only.
 */
function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let skip = 0; skip < 3; skip++) {
    const groups = Math.floor((bytes.length - skip) / 3);
    if (groups <= 0) continue;
    const core = bytes.subarray(skip, skip + groups * 3).toString('base64');
    out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

/** The value and the encodings of it a server might print instead. */
function encodedForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  // The whole encoding too: a value encoded on its own ends in a partial group the cores leave out.
  const whole = [bytes.toString('base64'), bytes.toString('base64url')];
  const encoded = [...whole, ...base64Cores(bytes), hex, hex.toUpperCase(), encodeURIComponent(value)];
  return [value, ...encoded.filter((f) => f !== value && f.length >= MIN_ENCODED_LENGTH)];
}

export class Redactor {
  /** Every string that is replaced, longest first (so a value inside a longer one cannot split it). */
  readonly forms: readonly string[];

  constructor(values: Iterable<string>) {
    const forms = new Set<string>();
    for (const value of values)
      if (value.length >= MIN_SECRET_LENGTH) for (const f of encodedForms(value)) forms.add(f);
    this.forms = [...forms].sort((a, b) => b.length - a.length);
  }

  /** One redactor for the forms of several (a server's launch secrets and its current tokens). */
  static combined(...redactors: Redactor[]): Redactor {
    const out = new Redactor([]);
    const forms = [...new Set(redactors.flatMap((r) => r.forms))].sort((a, b) => b.length - a.length);
    (out as { forms: readonly string[] }).forms = forms;
    return out;
  }

  redact(text: string): string {
    let out = text;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }
}

/** A URL fit to show: user name, password, every query value and a fragment with values replaced. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\/\/[^/@]*@/, `//${REDACTED}@`).replace(/([?&][^=&#]*=)[^&#]*/g, `$1${REDACTED}`);
  }
  // Rebuilt by hand: URL and URLSearchParams would percent-encode the brackets of the marker.
  const query = [...parsed.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=${REDACTED}`).join('&');
  const hidden = [parsed.username ? REDACTED : '', parsed.password ? `:${REDACTED}` : ''].join('');
  const userInfo = hidden ? `${hidden}@` : '';
  // A fragment with values (`#access_token=…`, as OAuth's implicit flow returns) is hidden whole.
  const hash = parsed.hash.includes('=') ? `#${REDACTED}` : parsed.hash;
  return `${parsed.protocol}//${userInfo}${parsed.host}${parsed.pathname}${query ? `?${query}` : ''}${hash}`;
}

/** The credentials a URL carries (user name, password, query and fragment values), raw and as written. */
export function urlSecretValues(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const values = [parsed.username, parsed.password, ...parsed.searchParams.values()];
  if (parsed.hash.includes('=')) values.push(...new URLSearchParams(parsed.hash.slice(1)).values());
  for (const v of [parsed.username, parsed.password]) if (v) values.push(decodeURIComponent(v));
  // As sent in Basic authentication (launch.ts), whose base64 then is redacted whole.
  if (parsed.username || parsed.password)
    values.push(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`);
  return values.filter((v) => v.length > 0);
}

/** The definition as it may be shown: its URL without credentials. */
export function withRedactedUrl<T extends Pick<ServerDef, 'url'>>(def: T): T {
  return def.url ? { ...def, url: redactUrl(def.url) } : def;
}
