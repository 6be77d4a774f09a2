#!/usr/bin/env bash
# Installs what building and testing context-compaction needs, and only what is missing:
#   - the wasm32-unknown-unknown Rust target, plus rustfmt and clippy;
#   - wasm-pack;
#   - wasm-bindgen-cli at exactly the wasm-bindgen version the crate pins (Cargo.lock), so
#     that wasm-pack uses it instead of trying to download one;
#   - the npm dev dependencies of package.json (binaryen's wasm-opt, playwright-core, esbuild
#     for the package's node.cjs, …);
#   - Debian's chromium and chromium-driver, for the headless-browser tests.
# Idempotent: on a machine that has everything it prints nothing and takes about a second.
# Works on a fresh Debian machine with only Rust (rustup), Node.js 20 and apt. Never downloads
# a browser or a prebuilt binary: everything comes from crates.io, npm or apt.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'setup: %s\n' "$*" >&2; }
die() {
  printf 'setup: ERROR: %s\n' "$*" >&2
  exit 1
}

# Root runs apt-get directly; anyone else goes through sudo.
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  SUDO=()
fi

# apt_install PKG...: installs Debian packages; refreshes the package lists only when the
# first attempt fails (a fresh machine has none, a warm one usually has current ones).
apt_install() {
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install by hand: $*"
  say "apt-get install $*"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends "$@" >/dev/null; then
    say "apt-get install failed; running apt-get update and retrying"
    "${SUDO[@]}" apt-get update -q >/dev/null
    "${SUDO[@]}" apt-get install -y -q --no-install-recommends "$@" >/dev/null
  fi
}

# missing_debs PKG...: prints the given Debian packages that are not installed.
missing_debs() {
  local p
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || echo "$p"
  done
}

# cargo_install ARGS...: `cargo install --locked` (the tool's own tested dependency versions);
# when a locked version is not available from the registry (yanked, or not mirrored), falls
# back to the newest compatible versions.
cargo_install() {
  if ! cargo install --locked --quiet "$@"; then
    say "cargo install --locked $* failed; retrying without --locked"
    cargo install --quiet "$@"
  fi
}

# Building a cargo tool needs a C toolchain; wasm-pack's HTTP stack wants pkg-config and
# OpenSSL headers on some versions. Installed once, before the first `cargo install`.
build_deps_ready=0
ensure_build_deps() {
  [ "$build_deps_ready" -eq 1 ] && return 0
  build_deps_ready=1
  command -v dpkg-query >/dev/null 2>&1 || return 0
  local missing
  missing=$(missing_debs build-essential pkg-config libssl-dev)
  if [ -n "$missing" ]; then
    # shellcheck disable=SC2086 # one package name per word
    apt_install $missing
  fi
}

# --- Rust: target and components -------------------------------------------------------------
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust with rustup first"
if command -v rustup >/dev/null 2>&1; then
  # Listed into variables first: `cmd | grep -q` can fail under pipefail when grep exits early.
  targets=$(rustup target list --installed)
  components=$(rustup component list --installed)
  if ! grep -qx wasm32-unknown-unknown <<<"$targets"; then
    say "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown >/dev/null
  fi
  for component in rustfmt clippy; do
    if ! grep -q "^${component}-" <<<"$components"; then
      say "rustup component add $component"
      rustup component add "$component" >/dev/null
    fi
  done
  # The pinned nightly the package's .wasm is built with (scripts/toolchain.sh). Optional:
  # without it build.sh builds with stable, a larger package.
  # shellcheck source=scripts/toolchain.sh
  . scripts/toolchain.sh
  if ! size_toolchain_ready; then
    say "rustup toolchain install $SIZE_TOOLCHAIN (rust-src, wasm32: the package's size build)"
    timeout 900 rustup toolchain install "$SIZE_TOOLCHAIN" --profile minimal --component rust-src \
      --target wasm32-unknown-unknown >/dev/null 2>&1 ||
      say "could not install $SIZE_TOOLCHAIN: the package will be built with stable (larger)"
  fi
else
  # Without rustup the target cannot be added here; say so rather than fail later.
  [ -d "$(rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ] ||
    die "the wasm32-unknown-unknown target is missing and rustup is not available"
fi

# --- wasm-pack -------------------------------------------------------------------------------
if ! command -v wasm-pack >/dev/null 2>&1; then
  ensure_build_deps
  say "cargo install wasm-pack (a few minutes)"
  cargo_install wasm-pack
fi

# --- wasm-bindgen-cli, the version the crate is locked to --------------------------------------
# Cargo.lock is the truth (it is what gets compiled); Cargo.toml's `=x.y.z` pin is the fallback
# before the first build has written a lock file.
wbg_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' \
  Cargo.lock 2>/dev/null || true)
if [ -z "$wbg_version" ]; then
  wbg_version=$(sed -n 's/^wasm-bindgen *= *"=\{0,1\}\([0-9][0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)
fi
[ -n "$wbg_version" ] || die "could not read the wasm-bindgen version from Cargo.lock or Cargo.toml"
have_wbg=$( (wasm-bindgen --version 2>/dev/null || true) | awk '{ print $2 }')
have_runner=$( (wasm-bindgen-test-runner --version 2>/dev/null || true) | awk '{ print $2 }')
if [ "$have_wbg" != "$wbg_version" ] || [ "$have_runner" != "$wbg_version" ]; then
  ensure_build_deps
  say "cargo install wasm-bindgen-cli --version $wbg_version (found: ${have_wbg:-none})"
  cargo_install --force wasm-bindgen-cli --version "$wbg_version"
fi

# --- npm dev dependencies ----------------------------------------------------------------------
# node_modules is current when it was installed from exactly this package.json and lock file
# (a hash kept in node_modules/) and the tools the scripts call are there.
command -v node >/dev/null 2>&1 || die "node not found: install Node.js 20 or later"
command -v npm >/dev/null 2>&1 || die "npm not found: install Node.js 20 or later with npm"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "Node.js 20 or later is needed (found $(node --version))"
stamp=node_modules/.context-compaction-setup
deps_hash() { { cat package.json; cat package-lock.json 2>/dev/null || true; } | sha256sum | cut -d' ' -f1; }
want_hash=$(deps_hash)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want_hash" ] ||
  [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] ||
  [ ! -d node_modules/esbuild ]; then
  if [ -f package-lock.json ]; then
    say "npm ci"
    # `npm ci` refuses a lock file that is out of step with package.json: then install.
    if ! npm ci --no-audit --no-fund --loglevel=error >/dev/null; then
      say "npm ci failed (lock file out of date?); running npm install"
      npm install --no-audit --no-fund --loglevel=error >/dev/null
    fi
  else
    say "npm install"
    npm install --no-audit --no-fund --loglevel=error >/dev/null
  fi
  # Hash again: `npm install` may have rewritten the lock file.
  deps_hash >"$stamp"
fi

# --- Chromium and ChromeDriver (Debian's; never a downloaded browser) ---------------------------
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  apt_install chromium chromium-driver
fi
command -v chromium >/dev/null 2>&1 || die "chromium is still missing after apt-get install"
command -v chromedriver >/dev/null 2>&1 || die "chromedriver is still missing after apt-get install"
