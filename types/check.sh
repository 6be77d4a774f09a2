#!/usr/bin/env bash
# Type-checks the hand-written declarations (types/index.d.ts) and the TypeScript examples,
# including the type-level tests of types/examples/type-tests.ts; then types/check.mjs checks
# that nothing is typed `any`, that the plain-data interfaces have the Rust fields and
# that the declarations match what the package exports and the signatures
# wasm-bindgen generated from the Rust attributes (a scratch copy of pkg/ imported through
# its package.json). Needs the root devDependencies (`npm install`), cargo (for the Rust
# shapes) and pkg/ (scripts/build.sh); TYPES_SKIP_PACKAGE=1 checks the rest without pkg/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install tsc -p types/tsconfig.json --noEmit
# The same declarations under exactOptionalPropertyTypes (the SDKs' own optional fields).
npx --no-install tsc -p types/tsconfig.exact.json --noEmit
# The project's own JavaScript (js/, www/) as a typed consumer of the declarations.
npx --no-install tsc -p types/tsconfig.js.json
# The Rust side of the plain-data shapes (target/ts-shapes.json), compared by check.mjs.
cargo test --quiet --test ts_shapes >/dev/null
node types/check.mjs
echo "types: ok"
