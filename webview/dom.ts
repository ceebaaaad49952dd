// Tiny DOM helpers for the console webview: an element builder and a lookup by id.
export type Attrs = Record<string, string | boolean | undefined>;
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}
export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
