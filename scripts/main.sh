#!/usr/bin/env bash
# The README's main command: sets up whatever is missing (idempotent), builds the package,
# and analyses a real Claude Code transcript — per API call, the real context size next to
# our estimate, the warning state at the end, and what micro-compaction would free.
#   bash scripts/main.sh [path/to/session.jsonl] [--json]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec node scripts/analyze.mjs "$@"
