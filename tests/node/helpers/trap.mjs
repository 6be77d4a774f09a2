// Makes WebAssembly traps on purpose (tests/node/instance-reset.test.mjs and the browser test
// tests/browser/reset.html): the built .wasm rewritten with binaryen so that chosen exports
// execute `unreachable` when their last (externref) argument is null.
import assert from 'node:assert/strict';
import binaryen from 'binaryen';

/**
 * Rewrites the exports `pick` chooses so that each executes `unreachable` when its last
 * (externref) parameter is null, and otherwise calls the original function.
 */
export function trapWhenNull(wasm, pick) {
  const mod = binaryen.readBinary(wasm);
  // What wasm-bindgen's output uses (Features.All would write encodings engines refuse).
  const F = binaryen.Features;
  mod.setFeatures(F.MVP | F.MutableGlobals | F.NontrappingFPToInt | F.BulkMemory | F.BulkMemoryOpt | F.SignExt | F.ReferenceTypes | F.CallIndirectOverlong | F.Multivalue);
  const exports = [];
  for (let i = 0; i < mod.getNumExports(); i++) {
    const info = binaryen.getExportInfo(mod.getExportByIndex(i));
    if (info.kind === binaryen.ExternalFunction) exports.push(info);
  }
  const chosen = pick(exports.map((e) => ({ ...e, params: binaryen.expandType(binaryen.getFunctionInfo(mod.getFunction(e.value)).params) })));
  assert.ok(chosen.length > 0, 'no export to rewrite');
  for (const e of chosen) {
    const fn = binaryen.getFunctionInfo(mod.getFunction(e.value));
    const params = binaryen.expandType(fn.params);
    const last = params.length - 1;
    assert.equal(params[last], binaryen.externref, `${e.name}: its last parameter is an externref`);
    const args = params.map((t, k) => mod.local.get(k, t));
    const name = `trap_when_null_${e.name}`;
    // (if (ref.is_null last) (unreachable)) (call original params…): its value is the result.
    mod.addFunction(name, fn.params, fn.results, [], mod.block(null, [
      mod.if(mod.ref.is_null(mod.local.get(last, binaryen.externref)), mod.unreachable()),
      mod.call(e.value, args, fn.results),
    ], fn.results));
    mod.removeExport(e.name);
    mod.addFunctionExport(name, e.name);
  }
  assert.ok(mod.validate(), 'the rewritten module validates');
  const out = mod.emitBinary();
  mod.dispose();
  return out;
}

