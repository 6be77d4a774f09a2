#!/usr/bin/env bash
# Type-checks the hand-written declarations (types/index.d.ts) and the TypeScript examples,
# including the type-level tests of types/examples/type-tests.ts; then types/check.mjs checks
# that nothing is typed `any` and, when pkg/ is built, that the declarations match what the
# package exports (a scratch copy of pkg/ imported through its package.json). Needs the root
# devDependencies (`npm install`); does not need pkg/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install tsc -p types/tsconfig.json --noEmit
node types/check.mjs
echo "types: ok"
