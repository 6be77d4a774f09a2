// What a loop of failing calls leaves behind in an instance of the package's module (`wasm`,
// what its glue's initSync gives once initialised): how much wasm-bindgen's externref table
// and the WASM memory grew over `n` calls of `f`, after a warm-up of `warm` calls of the same.
// Each call must answer or throw a coded error (anything else is rethrown); with `mustThrow`,
// each must throw one.
export function growth(wasm, f, n, { warm = 1000, mustThrow = false } = {}) {
  const state = () => ({ slots: wasm.__wbindgen_externrefs.length, bytes: wasm.memory.buffer.byteLength });
  const run = (k) => {
    for (let i = 0; i < k; i++) {
      try {
        f();
      } catch (e) {
        if (typeof e?.code !== 'string') throw e;
        continue;
      }
      if (mustThrow) throw new Error('expected the call to throw');
    }
  };
  run(warm);
  const before = state();
  run(n);
  const after = state();
  return { slots: after.slots - before.slots, bytes: after.bytes - before.bytes };
}
