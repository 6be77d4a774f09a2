// Checks of the hand-written declarations beyond `tsc` (run by types/check.sh after it):
// 1. no `any` in types/index.d.ts, and no value of type `any` declared in the examples;
// 2. the plain-data shapes: the Rust field names (target/ts-shapes.json, written by
//    `cargo test --test ts_shapes`, which types/check.sh runs first) against the interfaces;
// 3. against the built package (pkg/; without it the check fails unless TYPES_SKIP_PACKAGE=1):
//    a scratch copy of it with types/index.d.ts as its index.d.ts, imported through its
//    package.json like a user would:
//    - the signatures wasm-bindgen generated from the Rust attributes (context_compaction.d.ts)
//      against the declarations (types/compare.mjs);
//    - errorCodes() against the `ErrorCode` union; every coded error an instance of the
//      exported ContextCompactionError; the keys of real result objects against their
//      interfaces;
//    - every runtime export of web.js / node.js is declared, and nothing else is;
//    - the declared constants are the runtime values;
//    - the examples compile for Node (node16 resolution, no DOM) and for bundlers (with DOM).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { compareShapes, compareSignatures, unionLiterals } from './compare.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const types = join(root, 'types');
const failures = [];
const fail = (msg) => failures.push(msg);

function report(diags) {
  const host = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  };
  return ts.formatDiagnostics(diags, host);
}

// ---- 1. no `any` --------------------------------------------------------------------------
{
  const file = join(types, 'index.d.ts');
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) {
      const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
      fail(`types/index.d.ts:${line + 1}: \`any\` in a declaration`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);

  const parsed = ts.getParsedCommandLineOfConfigFile(join(types, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => fail(report([d])),
  });
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.includes('/types/examples/')) continue;
    const visitNames = (node) => {
      if (
        (ts.isVariableDeclaration(node) || ts.isParameter(node) || ts.isBindingElement(node)) &&
        ts.isIdentifier(node.name)
      ) {
        const t = checker.getTypeAtLocation(node.name);
        const elem = checker.isArrayType(t) ? checker.getTypeArguments(t)[0] : undefined;
        if (t.flags & ts.TypeFlags.Any || (elem && elem.flags & ts.TypeFlags.Any)) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
          fail(`${sf.fileName.slice(root.length)}:${line + 1}: \`${node.name.text}\` has type any`);
        }
      }
      ts.forEachChild(node, visitNames);
    };
    visitNames(sf);
  }
}

// ---- 2. plain-data shapes against the Rust -------------------------------------------------
const indexProgram = ts.createProgram([join(types, 'index.d.ts')], {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: [],
  noEmit: true,
  strict: true,
});
{
  const shapesFile = join(root, 'target', 'ts-shapes.json');
  if (!existsSync(shapesFile)) {
    fail('target/ts-shapes.json is missing: run `cargo test --test ts_shapes` (types/check.sh does)');
  } else {
    const shapes = JSON.parse(readFileSync(shapesFile, 'utf8'));
    const found = compareShapes(indexProgram, join(types, 'index.d.ts'), shapes);
    found.forEach(fail);
    if (!found.length) console.log(`types/check.mjs: ${Object.keys(shapes).length} Rust shapes match their interfaces`);
  }
}

// ---- 3. against the built package ---------------------------------------------------------
const pkg = join(root, 'pkg');
if (!existsSync(join(pkg, 'package.json')) || !existsSync(join(pkg, 'node.js'))) {
  // A missing package must not pass as a checked one: skipping is asked for by name.
  if (process.env.TYPES_SKIP_PACKAGE === '1') {
    console.log('types/check.mjs: TYPES_SKIP_PACKAGE=1: the package checks are SKIPPED (pkg/ is not built)');
  } else {
    fail('pkg/ is not built (run scripts/build.sh), so the declarations cannot be compared with the package; set TYPES_SKIP_PACKAGE=1 to check the rest only');
  }
} else {
  const scratch = mkdtempSync(join(tmpdir(), 'cc-types-'));
  try {
    const dest = join(scratch, 'node_modules', 'context-compaction');
    mkdirSync(dirname(dest), { recursive: true });
    cpSync(pkg, dest, { recursive: true });
    cpSync(join(types, 'index.d.ts'), join(dest, 'index.d.ts'));
    writeFileSync(join(scratch, 'package.json'), '{ "type": "module", "private": true }\n');

    // Runtime exports of both entries.
    const meta = JSON.parse(readFileSync(join(dest, 'package.json'), 'utf8'));
    const entry = meta.exports['.'];
    const web = await import(pathToFileURL(join(dest, entry.default)).href);
    // `node` is a path, or conditions inside it (module-sync, require, default: the ES module).
    const nodeEntry = typeof entry.node === 'string' ? entry.node : entry.node.default;
    const node = await import(pathToFileURL(join(dest, nodeEntry)).href);
    if (entry.types !== './index.d.ts' && meta.types !== './index.d.ts') {
      fail(`pkg/package.json: exports["."].types is ${entry.types}, not ./index.d.ts`);
    }

    // Declared value exports.
    const indexFile = join(dest, 'index.d.ts');
    const declProgram = ts.createProgram([indexFile], {
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      noEmit: true,
      strict: true,
    });
    const checker = declProgram.getTypeChecker();
    const moduleSymbol = checker.getSymbolAtLocation(declProgram.getSourceFile(indexFile));
    const declared = new Set();
    for (const s of checker.getExportsOfModule(moduleSymbol)) {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      const typeOnly = s.declarations?.some(
        (d) => (ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly)),
      );
      if (target.flags & ts.SymbolFlags.Value && !typeOnly) declared.add(s.escapedName === 'default' ? 'default' : s.name);
    }
    const runtime = new Set([...Object.keys(web), ...Object.keys(node)]);
    for (const n of runtime) if (!declared.has(n)) fail(`exported at run time but not declared: ${n}`);
    for (const n of declared) if (!runtime.has(n)) fail(`declared but not exported at run time: ${n}`);
    for (const n of Object.keys(web)) if (!(n in node) && n !== 'initSync') fail(`only the browser entry exports ${n}`);
    for (const n of Object.keys(node)) if (!(n in web)) fail(`only the Node entry exports ${n}`);

    // The signatures wasm-bindgen generated from the Rust attributes against the declarations.
    {
      const found = compareSignatures(
        readFileSync(join(dest, 'context_compaction.d.ts'), 'utf8'),
        readFileSync(join(types, 'index.d.ts'), 'utf8'),
        // wasm-bindgen's own: the loaders (declared in index.d.ts with their own types) and
        // the disposal hook (not declared: it needs the esnext.disposable lib).
        new Set(['__wbg_init', 'initSync', 'Compactor.[Symbol.dispose]']),
      );
      found.forEach(fail);
      if (!found.length) console.log('types/check.mjs: the generated signatures match index.d.ts');
    }

    // Error codes at run time against the union, and the error class.
    {
      const declaredCodes = unionLiterals(declProgram, indexFile, 'ErrorCode') ?? [];
      const runtimeCodes = node.errorCodes();
      const onlyRust = runtimeCodes.filter((c) => !declaredCodes.includes(c));
      const onlyTs = declaredCodes.filter((c) => !runtimeCodes.includes(c));
      if (onlyRust.length) fail(`errorCodes() has codes the ErrorCode union lacks: ${onlyRust.join(', ')}`);
      if (onlyTs.length) fail(`the ErrorCode union has codes errorCodes() lacks: ${onlyTs.join(', ')}`);
      if (web.ContextCompactionError !== node.ContextCompactionError) fail('the entries export different ContextCompactionError classes');
      try {
        node.parseTranscript('not json');
        fail('parseTranscript did not throw');
      } catch (e) {
        if (!(e instanceof node.ContextCompactionError) || e.name !== 'ContextCompactionError' || e.code !== 'MALFORMED_TRANSCRIPT') {
          fail(`a coded error is not a ContextCompactionError with its code: ${e}`);
        }
      }
    }

    // Result objects made at run time against their interfaces: every key they have is
    // declared, and every required key of the interface is there.
    {
      const checker = declProgram.getTypeChecker();
      const exported = new Map(checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));
      const keysOf = (name) => {
        const t = checker.getDeclaredTypeOfSymbol(exported.get(name));
        return checker.getPropertiesOfType(t).map((p) => ({ name: p.name, optional: !!(p.flags & ts.SymbolFlags.Optional) }));
      };
      const messages = [
        { role: 'user', content: 'Please read src/main.rs and fix the failing test in it.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'src/main.rs' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'fn main() {}\n'.repeat(200) }] },
        { role: 'assistant', content: 'The test fails because main is empty.' },
      ];
      const result = await node.compactConversation(messages, { model: 'claude-sonnet-4-5', summarize: node.offlineSummarizer() });
      const chat = new node.Compactor({ model: 'claude-sonnet-4-5', messages });
      const samples = {
        CompactionResult: result,
        LossReport: result.lossReport,
        CompactBoundaryLine: result.boundaryMarker,
        TokenWarningState: node.calculateTokenWarningState(1000, 'claude-sonnet-4-5'),
        ModelOutputLimits: node.getModelOutputLimits('claude-sonnet-4-5'),
        ContextOverflow: node.parseContextOverflowError('prompt is too long: 2 tokens > 1 maximum'),
        MicroCompactResult: node.microCompact(messages),
        ApiValidation: node.validateForApi(messages),
        CompactionPreview: await node.previewCompaction(messages, { model: 'claude-sonnet-4-5' }),
        ReactiveCompactResult: await node.reactiveCompact(
          messages,
          { model: 'claude-sonnet-4-5', summarize: node.offlineSummarizer() },
          'prompt is too long: 300000 tokens > 200000 maximum',
          { turnId: 1 },
        ),
        Compactor: chat,
      };
      for (const [name, value] of Object.entries(samples)) {
        const declaredKeys = keysOf(name);
        const runtimeKeys =
          name === 'Compactor'
            ? Object.getOwnPropertyNames(Object.getPrototypeOf(value)).filter((k) => k !== 'constructor' && !k.startsWith('__'))
            : Object.keys(value);
        const undeclared = runtimeKeys.filter((k) => !declaredKeys.some((d) => d.name === k));
        const missing = declaredKeys.filter((d) => !d.optional && !runtimeKeys.includes(d.name)).map((d) => d.name);
        if (undeclared.length) fail(`${name}: keys at run time that index.d.ts does not declare: ${undeclared.join(', ')}`);
        if (missing.length) fail(`${name}: required keys of index.d.ts missing at run time: ${missing.join(', ')}`);
      }
      const tracking = Object.keys(chat.tracking).sort().join(', ');
      if (tracking !== 'consecutiveFailures, thrashing') fail(`Compactor.tracking has keys ${tracking}`);
      chat.free();
    }

    // Constants: mutual assignability of the declared literal types and the runtime values.
    const constantsCheck = join(scratch, 'constants-check.ts');
    writeFileSync(
      constantsCheck,
      "import { constants, getConstants } from 'context-compaction';\n" +
        `const runtime = ${JSON.stringify(node.constants, null, 2)} as const;\n` +
        'export const declaredFromRuntime: typeof constants = runtime;\n' +
        'export const runtimeFromDeclared: typeof runtime = constants;\n' +
        'export const fromFunction: typeof runtime = getConstants();\n',
    );
    if (JSON.stringify(node.getConstants()) !== JSON.stringify(node.constants)) {
      fail('getConstants() differs from constants');
    }

    // The examples as a user compiles them: Node (node16, no DOM) and bundler (DOM).
    const ex = join(scratch, 'examples');
    cpSync(join(types, 'examples'), ex, { recursive: true });
    const base = {
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      noUncheckedIndexedAccess: true,
      typeRoots: [join(root, 'node_modules', '@types')],
    };
    const runs = [
      {
        name: 'Node (module node16, lib es2022 + @types/node, no DOM)',
        files: [join(ex, 'node-example.ts'), constantsCheck],
        options: {
          ...base,
          module: ts.ModuleKind.Node16,
          moduleResolution: ts.ModuleResolutionKind.Node16,
          lib: ['lib.es2022.d.ts'],
          types: ['node'],
        },
      },
      {
        name: 'bundler (module esnext, lib es2022 + DOM, no @types/node)',
        files: [join(ex, 'browser-example.ts'), join(ex, 'count-example.ts'), constantsCheck],
        options: {
          ...base,
          module: ts.ModuleKind.ESNext,
          moduleResolution: ts.ModuleResolutionKind.Bundler,
          lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
          types: [],
        },
      },
      {
        name: 'legacy resolution (moduleResolution node10: the package.json "types" field; count.d.ts by its path)',
        files: [join(ex, 'browser-example.ts'), join(ex, 'count-example.ts')],
        options: {
          ...base,
          module: ts.ModuleKind.ESNext,
          moduleResolution: ts.ModuleResolutionKind.Node10,
          lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
          types: [],
        },
      },
      {
        name: 'Node + DOM (module nodenext, every example)',
        files: ['node-example.ts', 'browser-example.ts', 'count-example.ts', 'type-tests.ts'].map((f) => join(ex, f)),
        options: {
          ...base,
          module: ts.ModuleKind.NodeNext,
          moduleResolution: ts.ModuleResolutionKind.NodeNext,
          lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
          types: ['node'],
        },
      },
    ];
    for (const run of runs) {
      const program = ts.createProgram(run.files, run.options);
      const diags = ts.getPreEmitDiagnostics(program);
      const resolved = program.getSourceFiles().some((f) => f.fileName === indexFile);
      if (!resolved) fail(`${run.name}: 'context-compaction' did not resolve to the package's index.d.ts`);
      if (diags.length) fail(`${run.name}:\n${report(diags)}`);
      else console.log(`types/check.mjs: ${run.name}: ok`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (failures.length) {
  console.error(failures.map((f) => `FAIL ${f}`).join('\n'));
  process.exit(1);
}
console.log('types/check.mjs: ok');
