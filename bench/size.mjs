#!/usr/bin/env node
// The download a page pays for the package (issue 12, docs/size.md): gzip -9 of each shipped
// WebAssembly module and of the JS a page loads with it (web.js and every module it imports
// statically, file by file as served), against two numbers:
// - the goal (issue 12): the first module plus its page glue ≤ 100 KB gzip — reported PASS/MISS;
//   the same goal for a first render through the `count` entry (counting module + count.js);
// - the ceiling: today's size with a little room. Past it the size grew, and the bench run
//   fails (exit code 1); the tests do not. Lower a ceiling when a change makes the module smaller.
// Usage: node bench/size.mjs [--json]   (bench/bench.mjs prints the same rows in its table)
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** KB (1,024 bytes) of gzip -9. */
export const SIZE_GOALS = {
  // What a page downloads to count and compact with an API summarizer.
  page: { goal: 100, ceiling: 393.5 },
  // Each shipped .wasm on its own: the first (every entry loads it at init) and the second
  // (offlineSummarizer, previewCompaction, simulateSession; loaded on first use).
  'context_compaction_bg.wasm': { goal: undefined, ceiling: 335.8 },
  'context_compaction_extra_bg.wasm': { goal: undefined, ceiling: 228.8 },
  // A page's first render through the `context-compaction/count` entry: the counting module
  // and the JS count.js loads (compaction is loaded on demand by loadCompaction()).
  countPage: { goal: 100, ceiling: 91.6 },
  'context_compaction_count_bg.wasm': { goal: undefined, ceiling: 66.6 },
};

const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;

/** The .js files a page loads: `entry` and what it imports statically, transitively. */
export function pageModules(entry) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    // Static `import … from './x'`, `export … from './x'` and `import './x'`, anywhere (the
    // shipped JS is minified: several on a line); never `import('./x')`, loaded on demand.
    for (const m of text.matchAll(/\b(?:import|export)\s*(?:[\w$*{}\s,]*?\bfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/g)) {
      visit(path.resolve(path.dirname(file), m[1]));
    }
  };
  visit(entry);
  return [...seen].filter((p) => p.endsWith('.js'));
}

/**
 * The JS of a page built by a bundler (esbuild: bundled, minified, split at dynamic imports)
 * that counts and compacts with the Anthropic summarizer: gzip -9 bytes of the chunks it loads
 * at start (the second module's chunk is loaded on first use, not counted).
 */
export function bundledPageJs(pkgDir) {
  const { buildSync } = createRequire(import.meta.url)('esbuild');
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-size-'));
  try {
    const entry = path.join(dir, 'page.js');
    writeFileSync(
      entry,
      `import init, { Compactor, anthropicSummarizer } from ${JSON.stringify(path.join(pkgDir, 'web.js'))};\n` +
        'await init();\n' +
        "globalThis.chat = new Compactor({ model: 'claude-sonnet-4-5', summarize: anthropicSummarizer({ apiKey: 'k' }) });\n",
    );
    const out = path.join(dir, 'out');
    const r = buildSync({
      entryPoints: [entry], bundle: true, format: 'esm', minify: true, splitting: true, outdir: out,
      loader: { '.wasm': 'file' }, metafile: true, logLevel: 'error',
    });
    // The entry chunk and the chunks it imports statically.
    const outputs = r.metafile.outputs;
    const seen = new Set();
    const visit = (file) => {
      if (seen.has(file) || !outputs[file]) return;
      seen.add(file);
      for (const i of outputs[file].imports) if (i.kind === 'import-statement') visit(i.path);
    };
    visit(Object.keys(outputs).find((k) => outputs[k].entryPoint !== undefined));
    const files = [...seen].filter((f) => f.endsWith('.js'));
    return { bytes: files.reduce((n, f) => n + gz(readFileSync(f)), 0), chunks: readdirSync(out).filter((f) => f.endsWith('.js')).length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Measures the built package in `pkgDir`: `{ size, rows }`, where `rows` are bench rows
 * (`unit: 'KB'`, `target` = goal, `ceiling`, `result` PASS/MISS/info, `overCeiling`).
 */
export function measureSize(pkgDir) {
  // What a page loads at init through `entry`: its .wasm and the JS it imports statically
  // (web.js imports the second module's glue, count.js web.js, dynamically: not part of it).
  const pageOf = (wasmName, entry) => {
    const wasm = readFileSync(path.join(pkgDir, wasmName));
    const files = pageModules(path.join(pkgDir, entry));
    return {
      wasmRaw: wasm.length,
      wasmGz: gz(wasm),
      files: files.map((p) => path.relative(pkgDir, p)),
      glueRaw: files.reduce((s, p) => s + readFileSync(p).length, 0),
      glueGz: files.reduce((s, p) => s + gz(readFileSync(p)), 0),
    };
  };
  const web = pageOf('context_compaction_bg.wasm', 'web.js');
  const count = pageOf('context_compaction_count_bg.wasm', 'count.js');
  const extraWasm = readFileSync(path.join(pkgDir, 'context_compaction_extra_bg.wasm'));
  const extraGlue = readFileSync(path.join(pkgDir, 'context_compaction_extra.js'));
  const size = {
    wasmRaw: web.wasmRaw,
    wasmGz: web.wasmGz,
    glueFiles: web.files,
    glueRaw: web.glueRaw,
    glueGz: web.glueGz,
    extraWasmRaw: extraWasm.length,
    extraWasmGz: gz(extraWasm),
    extraGlueGz: gz(extraGlue),
    countWasmRaw: count.wasmRaw,
    countWasmGz: count.wasmGz,
    countGlueFiles: count.files,
    countGlueGz: count.glueGz,
    countTotalGz: count.wasmGz + count.glueGz,
  };
  size.totalGz = size.wasmGz + size.glueGz;
  size.bundledJsGz = bundledPageJs(pkgDir).bytes;
  const row = (id, name, bytes, limits, note) => {
    const kb = bytes / 1024;
    const overCeiling = limits.ceiling !== undefined && kb > limits.ceiling;
    return {
      id, group: 'size', name, unit: 'KB', value: kb, target: limits.goal, ceiling: limits.ceiling,
      targetText: limits.goal === undefined ? `ceiling ${limits.ceiling} KB` : `≤ ${limits.goal} KB (ceiling ${limits.ceiling})`,
      result: overCeiling ? 'GREW' : limits.goal === undefined ? 'info' : kb <= limits.goal ? 'PASS' : 'MISS',
      overCeiling, note,
    };
  };
  const rows = [
    row('size.page', 'page download, gzip -9: first .wasm + the JS web.js loads', size.totalGz, SIZE_GOALS.page,
      `wasm ${(size.wasmGz / 1024).toFixed(1)} KB + glue ${(size.glueGz / 1024).toFixed(1)} KB (${size.glueFiles.join(', ')}); ` +
      'the second module is not part of it: fetched on first use of offlineSummarizer, previewCompaction, simulateSession (docs/size.md)'),
    row('size.bundledPage', 'page download, bundled: first .wasm + the JS of a bundled page (Compactor + anthropicSummarizer)', size.wasmGz + size.bundledJsGz, { goal: undefined, ceiling: SIZE_GOALS.page.ceiling },
      `wasm ${(size.wasmGz / 1024).toFixed(1)} KB + JS ${(size.bundledJsGz / 1024).toFixed(1)} KB: esbuild --bundle --minify --splitting of a page that imports Compactor and anthropicSummarizer from web.js (the unused summarizers left out, the second module a chunk loaded on first use)`),
    row('size.wasm', 'context_compaction_bg.wasm (first module), gzip -9', size.wasmGz, SIZE_GOALS['context_compaction_bg.wasm'],
      `raw ${(size.wasmRaw / 1024).toFixed(1)} KB; loaded by every entry at init (web, node, inline, workerd)`),
    row('size.extraWasm', 'context_compaction_extra_bg.wasm (second module), gzip -9', size.extraWasmGz, SIZE_GOALS['context_compaction_extra_bg.wasm'],
      `raw ${(size.extraWasmRaw / 1024).toFixed(1)} KB, its glue ${(size.extraGlueGz / 1024).toFixed(1)} KB gzip; loaded on first use only`),
    row('size.countPage', 'first render, count entry, gzip -9: counting .wasm + the JS count.js loads', size.countTotalGz, SIZE_GOALS.countPage,
      `wasm ${(size.countWasmGz / 1024).toFixed(1)} KB + glue ${(size.countGlueGz / 1024).toFixed(1)} KB (${size.countGlueFiles.join(', ')}); ` +
      'what a page pays to count, check and show the warning state; loadCompaction() then fetches the page download above (web.js and the first module)'),
    row('size.countWasm', 'context_compaction_count_bg.wasm (counting module), gzip -9', size.countWasmGz, SIZE_GOALS['context_compaction_count_bg.wasm'],
      `raw ${(size.countWasmRaw / 1024).toFixed(1)} KB; loaded by the count entry's init()`),
  ];
  return { size, rows };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const pkgDir = fileURLToPath(new URL('../pkg/', import.meta.url));
  const { size, rows } = measureSize(pkgDir);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ size, rows }, null, 2));
  } else {
    for (const r of rows) console.log(`${r.name}: ${r.value.toFixed(1)} KB — ${r.targetText} — ${r.result}\n  ${r.note}`);
  }
  if (rows.some((r) => r.overCeiling)) {
    console.error('a module grew past its ceiling (bench/size.mjs SIZE_GOALS)');
    process.exitCode = 1;
  }
}
