// The App preview's document (no `vscode`: test/vscode/ui-apps.mjs loads the same one in Chromium).

/**
 * The host script and nothing else. Its CSP is the page's (a srcdoc frame is held to its parent's
 * policy as well as its own) plus the source the script is loaded from.
 */
export function previewDocument(csp: string, script: string): string {
  const attr = (v: string): string => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<style>body{padding:8px 12px;font-family:var(--vscode-font-family,system-ui,sans-serif);color:var(--vscode-foreground,#1f2328)}
.header{font-weight:600;margin-bottom:4px}.csp{font-size:11px;opacity:.75;margin-bottom:6px;word-break:break-all}
iframe{display:block;width:100%;height:420px;border:1px solid var(--vscode-panel-border,#d0d7de);background:#fff}</style>
<title>App preview</title></head>
<body><script src="${attr(script)}"></script></body></html>`;
}
