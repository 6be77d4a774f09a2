#!/usr/bin/env bash
# Builds the npm package into pkg/: three .wasm modules from this crate (Cargo features, see
# Cargo.toml) — context_compaction_bg.wasm (`base`: what the main entries load at init),
# context_compaction_extra_bg.wasm (`extra`: offlineSummarizer, previewCompaction,
# simulateSession, loaded on first use) and context_compaction_count_bg.wasm (`count`: the
# counting module of the `context-compaction/count` entry) — then scripts/package.mjs writes the entries (web.js,
# node.js, inline.js, workerd.js, node.cjs). Assumes scripts/setup.sh ran.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# One build at a time: pkg/ is rewritten in place.
exec 9>"${TMPDIR:-/tmp}/context-compaction-build.lock"
flock 9
extra_dir=target/pkg-extra
count_dir=target/pkg-count
# The shipped modules are built with the pinned nightly that rebuilds the standard library
# (scripts/toolchain.sh), or with stable when it is not installed.
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh
choose_build_toolchain build.sh
build() { # OUT_DIR OUT_NAME FEATURE
  wasm-pack build --release --target web --out-dir "$1" --out-name "$2" -- --no-default-features --features "$3" "${cargo_args[@]}" \
    >/dev/null 2>pkg-build.log || {
    cat pkg-build.log >&2
    exit 1
  }
}
# wasm-pack rewrites the snippets but leaves files it did not write (the source maps
# package.mjs adds): a stale one would make the two builds' snippets differ below.
rm -rf pkg/snippets "$extra_dir/snippets" "$count_dir/snippets"
# A build killed while wasm-opt ran leaves its output (NAME.wasm-opt.wasm) beside the module;
# the next wasm-pack would optimize that file too, and fail on its own temporary name.
rm -f pkg/*.wasm-opt.wasm "$extra_dir"/*.wasm-opt.wasm "$count_dir"/*.wasm-opt.wasm
build "$extra_dir" context_compaction_extra extra
build "$count_dir" context_compaction_count count
build pkg context_compaction base
rm -f pkg-build.log
# The second module's glue, .wasm and declarations beside the first; both glues import the
# same snippets (src/bindings/*.js), which wasm-bindgen names after the crate.
# The same for the counting module of the `count` entry.
for f in context_compaction_extra.js context_compaction_extra_bg.wasm context_compaction_extra.d.ts context_compaction_extra_bg.wasm.d.ts; do
  cp "$extra_dir/$f" pkg/
done
for f in context_compaction_count.js context_compaction_count_bg.wasm context_compaction_count.d.ts context_compaction_count_bg.wasm.d.ts; do
  cp "$count_dir/$f" pkg/
done
for d in "$extra_dir" "$count_dir"; do
  if ! diff -r -q "$d/snippets" pkg/snippets >/dev/null; then
    echo "build.sh: the modules' snippets differ (pkg/snippets vs $d/snippets)" >&2
    exit 1
  fi
done
node scripts/package.mjs
