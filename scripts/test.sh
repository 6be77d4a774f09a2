#!/usr/bin/env bash
# The project's test command (README, `npm test`, .ci/run). Runs every layer in order and
# stops at the first failure with a banner naming the stage:
#    1 setup         scripts/setup.sh: installs whatever is missing (quiet no-op otherwise)
#    2 fmt           cargo fmt --all --check
#    3 clippy        cargo clippy --workspace --all-targets -- -D warnings (native: core + test-support)
#    4 clippy-wasm   the same for wasm32 (the bindings exist only there)
#    5 cargo-test    cargo test --workspace                             (the core, natively)
#    6 build         scripts/build.sh                                   (pkg/: web.js, node.js)
#    7 wasm-node     wasm-pack test --node                              (bindings inside WASM)
#    8 wasm-chrome   cargo test --target wasm32 in headless Chromium    (the same, in Chrome)
#    9 node-tests    node --test tests/node/*.test.mjs                  (the built package)
#   10 durable       node --test tests/durable/                          (a Compactor in a Durable Object, workerd via miniflare)
#   11 runtimes      node tests/runtimes/run.mjs                        (Node 20/22 ESM+CJS, Deno, Bun,
#                    workerd, an esbuild Node bundle, Vite/webpack/esbuild bundles in Chromium;
#                    installs them from npm into tests/runtimes/node_modules the first time)
#   12 types         bash types/check.sh                                (the .d.ts, tsc --noEmit)
#   13 browser-page  node --test tests/browser/*.test.mjs               (pkg/web.js in a page)
#   14 web-page      node --test tests/e2e/*.test.mjs                   (www/ chat page, end to end)
# Usage: bash scripts/test.sh
#        TEST_FROM=build bash scripts/test.sh   # start at a stage (the skipped ones are listed)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

STAGES=14
stage_no=0
stage_name=""
stage_start=0
summary=()
skipping="${TEST_FROM:-}"
run_start=$(date +%s)
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/context-compaction-test.XXXXXX")
trap 'rm -rf "$LOGDIR"' EXIT

# begin NAME DESCRIPTION: prints the banner of the next stage. Returns 1 when the stage
# comes before $TEST_FROM (it is then listed as skipped, never silently).
begin() {
  stage_no=$((stage_no + 1))
  stage_name=$1
  stage_start=$(date +%s)
  if [ -n "$skipping" ] && [ "$skipping" != "$1" ]; then
    printf '\n==> [%d/%d] %s: SKIPPED (TEST_FROM=%s)\n' "$stage_no" "$STAGES" "$1" "$TEST_FROM"
    summary+=("$(printf '  --  %-13s skipped' "$1")")
    return 1
  fi
  skipping=""
  printf '\n==> [%d/%d] %s: %s\n' "$stage_no" "$STAGES" "$1" "$2"
}

# done_: records the time of the stage that just passed.
done_() {
  local secs=$(($(date +%s) - stage_start))
  summary+=("$(printf '  ok  %-13s %4ds' "$stage_name" "$secs")")
  printf -- '--- %s ok (%ds)\n' "$stage_name" "$secs"
}

# fail [MESSAGE]: the failure banner, then exit non-zero.
fail() {
  local code=${2:-1}
  printf '\n' >&2
  printf '!!! ==================================================================\n' >&2
  printf '!!! FAILED at stage %d/%d: %s\n' "$stage_no" "$STAGES" "$stage_name" >&2
  [ -n "${1:-}" ] && printf '!!! %s\n' "$1" >&2
  printf '!!! ==================================================================\n' >&2
  exit "$code"
}

# step NAME DESCRIPTION CMD...: one stage that is a single command.
step() {
  local name=$1 desc=$2
  shift 2
  begin "$name" "$desc" || return 0
  "$@" || fail "command failed (exit $?): $*"
  done_
}

# wasm_step NAME DESCRIPTION CMD...: a wasm-bindgen test stage. wasm-bindgen-test-runner
# exits 0 when it decides a suite belongs to the other environment ("... so skipping"), so the
# output is checked as well: some suite must have run at least one test, and none skipped.
wasm_step() {
  local name=$1 desc=$2 log="$LOGDIR/$1.log"
  shift 2
  begin "$name" "$desc" || return 0
  # pipefail (set above) makes the pipeline fail when the command does.
  "$@" 2>&1 | tee "$log" || fail "command failed: $*"
  if grep -q 'so skipping' "$log"; then
    fail "the wasm test runner skipped a suite (wrong environment selected?): $(grep 'so skipping' "$log" | head -n 1)"
  fi
  grep -Eq '^running [1-9][0-9]* tests?$' "$log" ||
    fail "no wasm-bindgen test ran: expected a line 'running N tests' with N > 0"
  done_
}

# node_tests NAME DESCRIPTION DIR: runs every *.test.mjs under DIR with node's test runner.
# An empty or missing directory is a failure, not a pass.
node_tests() {
  local name=$1 desc=$2 dir=$3 files=()
  begin "$name" "$desc" || return 0
  if [ -d "$dir" ]; then
    mapfile -t files < <(find "$dir" -name '*.test.mjs' -type f | LC_ALL=C sort)
  fi
  [ "${#files[@]}" -gt 0 ] || fail "no *.test.mjs files found in $dir"
  printf '    %s\n' "${files[@]}"
  node --test --test-reporter=spec "${files[@]}" || fail "node --test failed (exit $?) in $dir"
  done_
}

step setup "install what is missing (scripts/setup.sh)" \
  bash scripts/setup.sh

step fmt "cargo fmt --all --check" \
  cargo fmt --all --check

step clippy "cargo clippy --workspace --all-targets -- -D warnings" \
  cargo clippy --quiet --workspace --all-targets -- -D warnings

# The bindings (src/bindings/, wasm32 only) are invisible to a native clippy run.
step clippy-wasm "cargo clippy --target wasm32-unknown-unknown --all-targets -- -D warnings" \
  cargo clippy --quiet --target wasm32-unknown-unknown --all-targets -- -D warnings

step cargo-test "cargo test --workspace" \
  cargo test --quiet --workspace

step build "bash scripts/build.sh (pkg/)" \
  bash scripts/build.sh

# The test binary has no `wasm_bindgen_test_configure!`, so one binary serves both runs; the
# runner's environment variables choose where it runs.
# Node: as an ES module. The default (CommonJS) glue `require()`s the ES-module snippet
# src/bindings/js_view.js, which only Node >= 20.19 / 22.12 (require(esm)) can load.
wasm_step wasm-node "wasm-pack test --node (ES module mode)" \
  env WASM_BINDGEN_USE_NODE_EXPERIMENTAL=1 wasm-pack test --node

# Chrome: the same suite, each test binary run in Debian's Chromium by scripts/wasm-browser-runner.mjs
# (cargo's runner for wasm32): wasm-bindgen-test-runner serves the suite's page, playwright-core
# opens it. `wasm-pack test --headless --chrome` drove Chrome through chromedriver, whose page
# stayed at "Loading scripts..." until its 300 s timeout in about 1 run of 5 here (CI failed on it
# twice in a row); the script's header has the measurements.
wasm_step wasm-chrome "cargo test --target wasm32-unknown-unknown in headless Chromium (scripts/wasm-browser-runner.mjs)" \
  env CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER="node $PWD/scripts/wasm-browser-runner.mjs" cargo test --target wasm32-unknown-unknown

node_tests node-tests "node --test tests/node/ (the built package in Node)" tests/node

node_tests durable "node --test tests/durable/ (Compactor snapshots in a Durable Object, workerd via miniflare)" tests/durable
step runtimes "node tests/runtimes/run.mjs (every runtime and bundler; docs/runtimes.md)" \
  node tests/runtimes/run.mjs

step types "tsc --noEmit on the declarations, the examples and the type tests" \
  bash types/check.sh

node_tests browser-page "node --test tests/browser/ (pkg/web.js in headless Chromium)" tests/browser

node_tests web-page "node --test tests/e2e/ (the chat page, www/, end to end in Chromium)" tests/e2e

[ -z "$skipping" ] || fail "TEST_FROM=$TEST_FROM names no stage"
if [ -n "${TEST_FROM:-}" ]; then
  printf '\nThe stages from %s on passed in %ds (earlier ones SKIPPED):\n' "$TEST_FROM" "$(($(date +%s) - run_start))"
else
  printf '\nAll %d stages passed in %ds:\n' "$STAGES" "$(($(date +%s) - run_start))"
fi
printf '%s\n' "${summary[@]}"
