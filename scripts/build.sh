#!/usr/bin/env bash
# Builds the npm package into pkg/: one .wasm, a browser entry (web.js, needs `await init()`)
# and a Node entry (node.js, loads the .wasm from disk at import). Assumes scripts/setup.sh ran.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# One build at a time: pkg/ is rewritten in place.
exec 9>"${TMPDIR:-/tmp}/context-compaction-build.lock"
flock 9
wasm-pack build --release --target web --out-dir pkg --out-name context_compaction >/dev/null 2>pkg-build.log || {
  cat pkg-build.log >&2
  exit 1
}
rm -f pkg-build.log
node scripts/package.mjs
