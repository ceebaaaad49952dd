// Redaction of a server's secret values from anything the broker shows or writes (logs, state,
// errors, probe output).
export const REDACTED = '[redacted]';

/** Shorter values are not redacted: they would turn up by chance in ordinary text. */
const MIN_SECRET_LENGTH = 4;

export class Redactor {
  /** Every string that is replaced, longest first (so a value inside a longer one cannot split it). */
  readonly forms: readonly string[];

  constructor(values: Iterable<string>) {
    const forms = new Set<string>();
    for (const value of values) if (value.length >= MIN_SECRET_LENGTH) forms.add(value);
    this.forms = [...forms].sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }
}
