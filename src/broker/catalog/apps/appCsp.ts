// The Content-Security-Policy a host puts on an app's page, from what the page declares in
// `_meta.ui.csp` (the MCP Apps spec's mapping): nothing but the page itself unless declared.
import type { JsonObject } from '../../shared/mcpTypes';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Origins of a declared list, each checked to be one origin (a quote or `;` could add a directive). */
function origins(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^\s;'",]+$/i.test(v));
}

/**
 * The page's CSP: inline script and style (an app page is one HTML document), `connect-src` from
 * `connectDomains`, scripts, styles, images, fonts and media also from `resourceDomains`, frames from
 * `frameDomains`, `base-uri` from `baseUriDomains`; an empty or absent list allows nothing there.
 * `host`: a source the host's own document loads its script and style from (the console's webview).
 */
export function pageCsp(ui: unknown, host = ''): string {
  const csp = isObject(ui) && isObject(ui.csp) ? ui.csp : {};
  const connect = origins(csp.connectDomains);
  const resources = origins(csp.resourceDomains);
  const frames = origins(csp.frameDomains);
  const bases = origins(csp.baseUriDomains);
  const join = (...parts: string[]): string => parts.filter(Boolean).join(' ');
  const load = resources.join(' ');
  return [
    "default-src 'none'",
    join('script-src', host, "'unsafe-inline'", load),
    join('style-src', host, "'unsafe-inline'", load),
    join('img-src data:', load),
    join('font-src data:', load),
    join('media-src data:', load),
    `connect-src ${connect.length ? connect.join(' ') : "'none'"}`,
    `frame-src ${frames.length ? frames.join(' ') : "'none'"}`,
    `base-uri ${bases.length ? bases.join(' ') : "'self'"}`,
  ].join('; ');
}
