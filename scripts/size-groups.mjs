// Sums twiggy's per-item sizes by owner (docs/size.md): the crate's modules (two path levels),
// serde_json, serde, formatting, the Rust core library, data segments, wasm-bindgen's export
// shims (which hold the inlined bodies of the exported functions), and the name section (kept
// only in the measuring build, not shipped).
// Usage: node scripts/size-groups.mjs <module with names>.wasm [rows]
import { execFileSync } from 'node:child_process';

const [file, rows = '40'] = process.argv.slice(2);
if (!file) throw new Error('usage: node scripts/size-groups.mjs <module.wasm> [rows]');
const items = JSON.parse(
  execFileSync('twiggy', ['top', '-n', '1000000', '--format', 'json', file], { maxBuffer: 1 << 28 }).toString(),
);
// The toolchain that builds the package (scripts/toolchain.sh) writes v0-style names, with a
// hash after each crate (`context_compaction[268cf2bc00ecd74e]::…`): dropped before grouping.
const groupOf = (full) => {
  const name = full.replace(/\[[0-9a-f]{16}\]/g, '');
  if (name.includes('function names') || name.includes('data names')) return '(names: not shipped)';
  if (name.startsWith('data segment')) return 'data (strings, tables)';
  if (/ shim/.test(name)) return 'export shims (inlined export bodies)';
  const own = name.match(/^<*&?(?:mut )?context_compaction::((?:\w+::){0,1}\w+)/);
  if (own) return `context_compaction::${own[1]}`;
  if (/serde_json/.test(name)) return 'serde_json';
  if (/serde_wasm_bindgen/.test(name)) return 'serde_wasm_bindgen';
  if (/^<*serde/.test(name)) return 'serde (derive, generic)';
  if (/fmt/.test(name)) return 'formatting (core::fmt, Display)';
  const crate = name.replace(/^<+/, '').match(/^([a-z_0-9]+)/);
  return crate ? crate[1] : 'other';
};
const total = items.reduce((s, i) => s + i.shallow_size, 0);
const groups = new Map();
for (const i of items) groups.set(groupOf(i.name), (groups.get(groupOf(i.name)) ?? 0) + i.shallow_size);
console.log('\nby owner (raw bytes of the names build):');
for (const [g, b] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
  console.log(`${String(b).padStart(8)}  ${((100 * b) / total).toFixed(1).padStart(5)} %  ${g}`);
}
