#!/usr/bin/env bash
# The toolchain the shipped .wasm modules are built with (sourced by setup.sh, build.sh and
# size.sh; docs/size.md, "Built with the standard library rebuilt").
#
# A pinned nightly rebuilds the standard library together with the crate (`-Z build-std`:
# std's code is then optimized for size and cut by LTO with ours, and panic locations carry no
# file names, `-Z location-detail=none`). It saves about 17 KB gzip on each module. Panic
# messages are kept: the panic hook still prints what went wrong (STYLE.md 8). A derived `Debug`
# prints only the type's name (`-Z fmt-debug=shallow`, 1.3 KB gzip off the first module): no
# message of the library writes a derived `Debug` (a caller's text is quoted with
# `model::view::quoted`; tests/layers.rs checks). `none` would save 3 KB more but also empty
# the `Debug` of strings, which serde's own messages quote the caller's value with
# (`invalid type: string "no", expected a boolean`). The standard library is built with its
# `optimize_for_size` feature.
# Tests and clippy use the stable toolchain; only the package build uses this one. When it
# cannot be installed (no network to the Rust distribution server), build.sh builds with stable
# and says so: the package is the same, only larger.
SIZE_TOOLCHAIN=nightly-2026-05-20

# size_toolchain_ready: whether SIZE_TOOLCHAIN is installed with rust-src and the wasm32 target.
size_toolchain_ready() {
  command -v rustup >/dev/null 2>&1 || return 1
  local sysroot
  sysroot=$(rustup run "$SIZE_TOOLCHAIN" rustc --print sysroot 2>/dev/null) || return 1
  [ -d "$sysroot/lib/rustlib/src/rust/library/std" ] && [ -d "$sysroot/lib/rustlib/wasm32-unknown-unknown" ]
}

# choose_build_toolchain WHO: makes cargo in this shell build the shipped form. With
# SIZE_TOOLCHAIN when it is installed: exports its environment (its own target directory, as
# switching toolchains in one directory rebuilds everything) and sets `cargo_args` to its
# arguments; the standard library's `core` (str and slice searches, UTF-8 checks on the
# reading path) stays optimized for speed, the rest for size like the crate (measured: `core`
# at opt-level z made compactConversation about 7 % slower, for 1.9 KB), given on the command
# line because stable builds would warn that `core` matches no package. Else with stable,
# said on stderr by WHO (the calling script). BUILD_WITH_STABLE=1 chooses stable on purpose.
choose_build_toolchain() {
  cargo_args=()
  if [ "${BUILD_WITH_STABLE:-}" = 1 ]; then
    echo "$1: BUILD_WITH_STABLE=1: building with stable" >&2
  elif size_toolchain_ready; then
    export RUSTUP_TOOLCHAIN="$SIZE_TOOLCHAIN"
    export CARGO_TARGET_DIR="$PWD/target/size-toolchain"
    export CARGO_UNSTABLE_BUILD_STD="std,panic_abort"
    # The standard library's smaller variants of its algorithms (sorts, formatting of
    # integers, …): 2.2 KB gzip off the first module, 2.7 KB off the second, no measurable
    # change in speed (docs/size.md).
    export CARGO_UNSTABLE_BUILD_STD_FEATURES="optimize_for_size"
    export RUSTFLAGS="-Zlocation-detail=none -Zfmt-debug=shallow --cfg cc_speed"
    cargo_args=(--config 'profile.release.package.core.opt-level=3')
  else
    echo "$1: $SIZE_TOOLCHAIN (with rust-src) is not installed: building with stable, about 17 KB gzip larger per module (scripts/setup.sh installs it)" >&2
  fi
}
