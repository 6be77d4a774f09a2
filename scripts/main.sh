#!/usr/bin/env bash
# The README's main command: sets up whatever is missing (idempotent), builds the package, and
# shows the whole job on a real Claude Code transcript with no API key and no network:
#   1. the analysis: per API call, the real context size next to our estimate, the warning
#      state at the end, what micro-compaction would free;
#   2. a preview, then an offline compaction of the transcript (written next to a temp copy),
#      with tokens before/after, restored files and the loss report;
#   3. the web page (chat, context meter, open/compact/download session files), served on
#      http://127.0.0.1:8080/ until Ctrl-C (skip with --no-serve; PORT=… to change the port).
#   bash scripts/main.sh [path/to/session.jsonl] [--json] [--no-serve]
# A relative path is taken from the directory you run it in.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
serve=1
args=()
file=""
for a in "$@"; do
  case "$a" in
    --no-serve) serve=0 ;;
    -*) args+=("$a") ;;
    *) file="$a"; args+=("$a") ;;
  esac
done
(cd "$repo" && bash scripts/setup.sh && bash scripts/build.sh) >&2

echo "== 1. Analysis ============================================================="
node "$repo/scripts/analyze.mjs" "${args[@]+"${args[@]}"}"

src="${file:-$repo/../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl}"
work="$(mktemp -d "${TMPDIR:-/tmp}/context-compaction-demo.XXXXXX")"
cp "$src" "$work/session.jsonl"
echo
echo "== 2. Preview and offline compaction (no API key, no network) =============="
node "$repo/pkg/cli.mjs" compact "$work/session.jsonl" --preview
node "$repo/pkg/cli.mjs" compact "$work/session.jsonl" --offline -o "$work/session.compacted.jsonl"
echo "compacted transcript: $work/session.compacted.jsonl"

if [ "$serve" -eq 1 ]; then
  echo
  echo "== 3. The web page (Ctrl-C to stop) ========================================"
  exec node "$repo/www/serve.mjs" "${PORT:-8080}"
fi
