#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for a fixed time each (docs/fuzzing.md).
#
#   scripts/fuzz.sh [seconds-per-target] [target…]
#
# Defaults: 600 s per target, every target (`cargo fuzz list`). Installs cargo-fuzz when it
# is missing, builds once, runs each target with -max_total_time, keeps the corpus under
# fuzz/corpus/<target>/ (seeded from ../shared/transcripts the first time) and prints per
# target: executions, corpus size, and any crash / timeout / OOM artifact. Before fuzzing it
# replays fuzz/regressions/<target>/ (earlier findings). Exits non-zero if a replay fails or
# any target found something.
#
# Environment:
#   FUZZ_PARALLEL=N     targets run at once (default 1; the machines have 2 cores)
#   FUZZ_SANITIZER=S    none (default: safe Rust, fastest, works on stable) or address
#                       (needs nightly features: RUSTC_BOOTSTRAP=1 is set on a stable toolchain)
#   FUZZ_MAX_LEN=N      libFuzzer -max_len (default 8192)
#   FUZZ_ARGS="…"       extra libFuzzer arguments
#
# Not part of CI's test command: a full run takes targets × seconds / FUZZ_PARALLEL.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ="$ROOT/fuzz"
SECS="${1:-600}"
shift || true
PARALLEL="${FUZZ_PARALLEL:-1}"
SANITIZER="${FUZZ_SANITIZER:-none}"
MAX_LEN="${FUZZ_MAX_LEN:-8192}"

case "$SECS" in
  ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [seconds-per-target] [target…]" >&2; exit 2 ;;
esac

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "== installing cargo-fuzz (crates.io)"
  cargo install cargo-fuzz --locked
fi

if [ "$SANITIZER" != none ] && ! rustc --version | grep -q nightly; then
  # -Zsanitizer needs nightly features. Cargo caches its rustc probe in
  # fuzz/target/.rustc_info.json without keying it on RUSTC_BOOTSTRAP: a probe that failed
  # without the variable would keep failing, so the cache is dropped.
  export RUSTC_BOOTSTRAP=1
  rm -f "$FUZZ/target/.rustc_info.json"
fi

cd "$FUZZ"
if [ "$#" -gt 0 ]; then
  TARGETS=("$@")
else
  mapfile -t TARGETS < <(cargo fuzz list)
fi

# The library source the binaries are built from (cargo fuzz rebuilds before each run).
src_version() {
  local rev dirty=""
  rev="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  git -C "$ROOT" diff --quiet HEAD -- src Cargo.toml 2>/dev/null || dirty="+uncommitted src changes"
  echo "$rev$dirty"
}

echo "== building ${TARGETS[*]} (sanitizer: $SANITIZER, source $(src_version))"
for t in "${TARGETS[@]}"; do
  cargo fuzz build --sanitizer "$SANITIZER" "$t"
done

# Every reproducer of an earlier finding (fuzz/regressions/<target>/) must pass the target's
# checks before the target fuzzes: a fixed finding stays fixed.
for t in "${TARGETS[@]}"; do
  dir="$ROOT/fuzz/regressions/$t"
  [ -d "$dir" ] || continue
  # The structured targets read `arbitrary` bytes: only their .fuzz-input files are inputs
  # (the readable .json/.jsonl beside them are replayed by tests/fuzz_regressions.rs). The
  # text targets read their readable reproducers as they are.
  case "$t" in
    parse_transcript|messages_from_json) pattern='*' ;;
    *) pattern='*.fuzz-input' ;;
  esac
  mapfile -t files < <(find "$dir" -type f -name "$pattern" ! -name '*.md' | sort)
  [ "${#files[@]}" -gt 0 ] || continue
  echo "== replaying ${#files[@]} regression input(s) of $t"
  if ! cargo fuzz run --sanitizer "$SANITIZER" "$t" "${files[@]}" >"$FUZZ/target/replay-$t.log" 2>&1; then
    grep -m1 -A2 'panicked at' "$FUZZ/target/replay-$t.log" >&2 || tail -20 "$FUZZ/target/replay-$t.log" >&2
    echo "a regression input of $t fails (log: fuzz/target/replay-$t.log)" >&2
    exit 1
  fi
done

# Seeds for the text targets from the shared Claude Code transcripts: groups of 3 lines of at
# most 2,500 bytes each (JSONL for parse_transcript, a JSON array for messages_from_json).
seed() {
  local t="$1" dir="$FUZZ/corpus/$1" src="$ROOT/../shared/transcripts"
  mkdir -p "$dir"
  [ -e "$dir/seed-0001" ] && return 0
  [ -d "$src" ] || return 0
  case "$t" in
    parse_transcript) mode=jsonl ;;
    messages_from_json) mode=array ;;
    *) return 0 ;;
  esac
  awk -v dir="$dir" -v mode="$mode" '
    length($0) <= 2500 && length($0) > 0 {
      buf[n++] = $0
      if (n == 3) { flush(); }
    }
    function flush(   i, f) {
      f = sprintf("%s/seed-%04d", dir, ++k)
      if (mode == "array") {
        printf "[" > f
        for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), buf[i] > f
        printf "]" > f
      } else {
        for (i = 0; i < n; i++) print buf[i] > f
      }
      close(f); n = 0
      if (k >= 200) exit
    }' "$src"/*.jsonl
}

LOGS="$FUZZ/target/fuzz-logs"
mkdir -p "$LOGS"

run() {
  local t="$1" log="$LOGS/$1.log"
  seed "$t"
  mkdir -p "$FUZZ/corpus/$t"
  local rc=0 dict=()
  # JSON keywords and literals for the text targets (fuzz/dict/json.dict).
  case "$t" in
    parse_transcript|messages_from_json) dict=(-dict="$FUZZ/dict/json.dict") ;;
  esac
  # shellcheck disable=SC2086
  cargo fuzz run --sanitizer "$SANITIZER" "$t" "$FUZZ/corpus/$t" -- \
    -max_total_time="$SECS" -max_len="$MAX_LEN" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 "${dict[@]}" ${FUZZ_ARGS:-} >"$log" 2>&1 || rc=$?
  echo "$rc" >"$log.rc"
}

active=0
for t in "${TARGETS[@]}"; do
  echo "== fuzzing $t for ${SECS}s, source $(src_version) (log: ${LOGS#"$ROOT/"}/$t.log)"
  run "$t" &
  active=$((active + 1))
  if [ "$active" -ge "$PARALLEL" ]; then
    wait -n || true
    active=$((active - 1))
  fi
done
wait || true

found=0
printf '\n%-22s %14s %10s %8s  %s\n' target executions exec/s corpus finding
for t in "${TARGETS[@]}"; do
  log="$LOGS/$t.log"
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
  [ -n "$execs" ] || execs="$(grep -o '^#[0-9]*[[:space:]]*DONE' "$log" | grep -o '[0-9]*' | tail -1 || true)"
  rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
  corpus="$(find "$FUZZ/corpus/$t" -type f | wc -l)"
  artifact="$(grep -o 'Test unit written to .*' "$log" | sed 's/^Test unit written to //' | tail -1 || true)"
  rc="$(cat "$log.rc" 2>/dev/null || echo '?')"
  finding="-"
  if [ -n "$artifact" ] || [ "$rc" != 0 ]; then
    found=1
    finding="${artifact:-exit code $rc, see $log}"
    panic="$(grep -m1 -A1 'panicked at' "$log" | tr '\n' ' ' || true)"
    [ -n "$panic" ] && finding="$finding  [$panic]"
  fi
  printf '%-22s %14s %10s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$finding"
done
if [ "$found" -ne 0 ]; then
  echo "fuzzing found a problem: minimize it with 'cargo fuzz tmin --sanitizer $SANITIZER <target> <artifact>' (in fuzz/)" >&2
  exit 1
fi
echo "no finding"
