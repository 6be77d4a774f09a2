#!/usr/bin/env bash
# Where the bytes of the .wasm go (docs/size.md). Builds the release .wasm with its function
# names kept (cargo + wasm-bindgen --keep-debug + wasm-opt -Oz -g, the package's flags), then
# prints the raw and gzip -9 sizes of the shipped form (names stripped) and twiggy's top items.
#   bash scripts/size.sh               # both feature sets in one module (as wasm-pack test builds it)
#   bash scripts/size.sh --base        # the first module the package ships (feature `base`)
#   bash scripts/size.sh --extra       # the second module, loaded on first use (feature `extra`)
#   bash scripts/size.sh --count       # the counting module of the `count` entry (feature `count`)
#   TOP=60 bash scripts/size.sh        # more rows
# Output in target/size/<variant>/: module.wasm (shipped form), module.names.wasm (with names).
# Needs twiggy for the breakdown (`cargo install twiggy`); without it only the sizes print.
# Uses its own cargo build of the wasm32 target: do not run it while another cargo build runs.
# Builds with the package's toolchain (scripts/toolchain.sh) when installed, as build.sh does;
# BUILD_WITH_STABLE=1 measures a stable build.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
variant=full
features=()
case "${1:-}" in
  --base | --core) variant=base; features=(--no-default-features --features base) ;;
  --extra) variant=extra; features=(--no-default-features --features extra) ;;
  --count) variant=count; features=(--no-default-features --features count) ;;
esac
out="target/size/$variant"
rm -rf "$out" && mkdir -p "$out"
# The toolchain the package is built with (scripts/toolchain.sh), as scripts/build.sh chooses it.
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh
choose_build_toolchain size.sh
cargo build --quiet --release --target wasm32-unknown-unknown --lib "${features[@]}" "${cargo_args[@]}"
wasm-bindgen --target web --keep-debug --out-dir "$out/bindgen" "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/context_compaction.wasm"
# The same wasm-opt flags as Cargo.toml's [package.metadata.wasm-pack.profile.release].
flags=(-Oz --converge --enable-bulk-memory --enable-nontrapping-float-to-int --enable-reference-types --enable-sign-ext --enable-mutable-globals)
wasm-opt "${flags[@]}" -g "$out/bindgen/context_compaction_bg.wasm" -o "$out/module.names.wasm"
wasm-opt "${flags[@]}" "$out/bindgen/context_compaction_bg.wasm" -o "$out/module.wasm"
raw=$(wc -c <"$out/module.wasm")
gz=$(gzip -9c "$out/module.wasm" | wc -c)
glue=$(gzip -9c "$out/bindgen/context_compaction.js" | wc -c)
echo "$variant: .wasm $raw B raw, $gz B gzip -9; wasm-bindgen glue $glue B gzip -9"
if command -v twiggy >/dev/null; then
  twiggy top -n "${TOP:-30}" "$out/module.names.wasm"
  node scripts/size-groups.mjs "$out/module.names.wasm"
else
  echo "(install twiggy for the breakdown: cargo install twiggy)"
fi
