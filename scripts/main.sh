#!/usr/bin/env bash
# The README's main command: sets up whatever is missing (idempotent), builds the package,
# and analyses a real Claude Code transcript — per API call, the real context size next to
# our estimate, the warning state at the end, and what micro-compaction would free.
#   bash scripts/main.sh [path/to/session.jsonl] [--json]
# A relative path is taken from the directory you run it in.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$repo" && bash scripts/setup.sh && bash scripts/build.sh) >&2
exec node "$repo/scripts/analyze.mjs" "$@"
