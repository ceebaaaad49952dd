// Names and globs: the two string rules every part of Switchboard shares.
//
// A registry name becomes a file name (`<root>/<kind dir>/<name>.yaml`), a catalog namespace
// (`<server>__<tool>`) and a URL segment (`/servers/<name>/mcp`). So the rule is deliberately
// narrow: lowercase ASCII letters, digits and '-', starting with a letter. That alone rules out
// path traversal, look-alike characters and the catalog separator, but each failure gets its own
// reason so a person can fix the name without reading a regex.

import { jsonQuoted } from './quote';

/**
 * Windows' device names: `nul.yaml` or `CON` is a device in every folder there, not a file. Kept here,
 * free of node:path, because the webview bundles names.ts. The superscript digits are escaped: a
 * non-ASCII character in a regular expression makes V8 hold the broker's whole bundle as two-byte text.
 */
export function isWindowsDeviceName(base: string): boolean {
  return /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])( *\..*)?[. ]*$/i.test(
    base,
  );
}

/** Lowercase letter first, then up to 30 of [a-z0-9-]: at most 31 characters in all. */
export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,30}$/;

/** Maximum name length implied by NAME_PATTERN. */
export const MAX_NAME_LENGTH = 31;

/** The facade's namespace: no server, prompt or client may take it. */
export const RESERVED_NAME = 'switchboard';

/** The editor's own identity on the endpoint: no declared client may take its name. */
export const OPERATOR_NAME = 'operator';

/** Separates the server from the tool in catalog names, so a name must never contain it. */
export const NAMESPACE_SEPARATOR = '__';

function describeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase().padStart(4, '0');
  // Control characters are printed only as code points so the message itself stays readable.
  return cp < 0x20 || cp === 0x7f ? `U+${hex}` : `'${ch}' (U+${hex})`;
}

/**
 * Why `name` is not an acceptable registry name, or `undefined` if it is.
 * The checks run from the most alarming (NUL, traversal) to the most mundane (pattern),
 * so the reason names the real problem rather than a side effect of it.
 */
export function validateName(name: string): string | undefined {
  if (typeof name !== 'string') return 'a name must be a string';
  if (name.length === 0) return 'the name is empty';
  if (name.includes('\0')) return 'the name contains a NUL character';
  // Non-ASCII first: a Cyrillic 'ѕ' looks exactly like 's', so say so instead of "invalid character".
  const nonAscii = [...name].find((ch) => (ch.codePointAt(0) ?? 0) > 0x7e);
  if (nonAscii !== undefined) {
    return (
      `the name contains the non-ASCII character ${describeChar(nonAscii)}; ` +
      "use only a-z, 0-9 and '-' (look-alike letters are not allowed)"
    );
  }
  if (name.includes('/') || name.includes('\\')) return 'the name must not contain a path separator (/ or \\)';
  if (name.includes('..')) return "the name must not contain '..'";
  if (/^[A-Za-z]:/.test(name)) return 'the name must not be a drive path';
  if (name.length > MAX_NAME_LENGTH) {
    return `the name is ${name.length} characters long; at most ${MAX_NAME_LENGTH} are allowed`;
  }
  if (name.includes(NAMESPACE_SEPARATOR)) {
    return `the name must not contain '${NAMESPACE_SEPARATOR}' (it separates server and tool names in the catalog)`;
  }
  if (/[A-Z]/.test(name)) {
    // Suggest only a name that passes every rule: 'Sequential Thinking' → 'sequential-thinking'.
    const suggestion = suggestName(name);
    return `the name must be lowercase${suggestion ? ` (try '${suggestion}')` : ''}`;
  }
  if (name === RESERVED_NAME) return `'${RESERVED_NAME}' is reserved for the broker's own tools`;
  // On every system: a registry with `nul.yaml` cannot be checked out, or written, on Windows.
  if (isWindowsDeviceName(name)) return `'${name}' is a device name on Windows, where ${name}.yaml cannot be a file`;
  if (!/^[a-z]/.test(name)) return `the name must start with a lowercase letter (a-z), not ${describeChar(name[0])}`;
  const bad = [...name].find((ch) => !/[a-z0-9-]/.test(ch));
  if (bad !== undefined) return `the name may contain only a-z, 0-9 and '-', not ${describeChar(bad)}`;
  // Defensive: the checks above should cover the pattern exactly; keep the pattern authoritative.
  if (!NAME_PATTERN.test(name)) return `the name must match ${NAME_PATTERN}`;
  return undefined;
}

/**
 * A valid name made from `text` (a title, a package name, a name with mistakes), or undefined when
 * nothing usable is left: lowercase ASCII, runs of anything else turned into one '-', a leading
 * non-letter dropped, cut to the length limit, and the reserved name avoided.
 */
export function suggestName(text: string): string | undefined {
  let slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, MAX_NAME_LENGTH)
    .replace(/-+$/, '');
  if (slug === RESERVED_NAME) slug = `${RESERVED_NAME}-server`;
  return slug && NAME_PATTERN.test(slug) ? slug : undefined;
}

/** Throws an Error carrying validateName's reason. For code paths that build file paths. */
export function assertSafeName(name: string): void {
  const reason = validateName(name);
  if (reason !== undefined) {
    // JSON quoting shows hidden characters (NUL, newlines) in the offending name.
    throw new Error(`invalid name ${jsonQuoted(name)}: ${reason}`);
  }
}

// Glob → RegExp compilation is cached: tool filters are evaluated for every tool on every
// catalog rebuild, over a small, stable set of patterns.
const globCache = new Map<string, RegExp>();
const GLOB_CACHE_LIMIT = 1000;

function compileGlob(glob: string): RegExp {
  let re = globCache.get(glob);
  if (re === undefined) {
    let src = '';
    for (const ch of glob) {
      if (ch === '*') src += '.*';
      else if (ch === '?') src += '.';
      else src += ch.replace(/[.+^${}()|[\]\\/-]/g, '\\$&');
    }
    re = new RegExp(`^${src}$`, 's');
    if (globCache.size >= GLOB_CACHE_LIMIT) globCache.clear();
    globCache.set(glob, re);
  }
  return re;
}

/**
 * Whole-string, case-sensitive glob match: `*` is any run of characters (including none and
 * including `__`), `?` is exactly one character; everything else is literal.
 */
export function matchesGlob(name: string, glob: string): boolean {
  return compileGlob(glob).test(name);
}

/**
 * Allow/deny filtering as used by allowedTools/excludeTools and client profiles.
 * - `allow` undefined: everything is allowed; `allow: []` allows nothing (an explicit empty list).
 * - `deny` always wins over `allow`.
 */
export function filterByGlobs(name: string, allow?: readonly string[], deny?: readonly string[]): boolean {
  return whyFilteredOut(name, allow, deny) === undefined;
}

/**
 * Why filterByGlobs drops `name`, in the words of a server definition (`excludeTools` wins over
 * `allowedTools`, as there), or undefined when it passes.
 */
export function whyFilteredOut(name: string, allow?: readonly string[], deny?: readonly string[]): string | undefined {
  const denied = deny?.find((g) => matchesGlob(name, g));
  if (denied !== undefined) return `hidden by excludeTools '${denied}'`;
  if (allow !== undefined && !allow.some((g) => matchesGlob(name, g))) {
    return allow.length ? `not matched by allowedTools (${allow.join(', ')})` : 'allowedTools is empty';
  }
  return undefined;
}
