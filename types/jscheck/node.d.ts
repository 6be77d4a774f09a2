// js/cli-lib.mjs imports './node.js', the package's Node entry, which exists only in the built
// package (scripts/package.mjs writes pkg/node.js; its types are pkg/index.d.ts). For the JS
// check (types/tsconfig.js.json) `rootDirs` merges this folder with js/, so that import finds
// this file: the Node entry exports what index.d.ts declares.
export * from 'context-compaction';
export { default } from 'context-compaction';
