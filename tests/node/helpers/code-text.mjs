// Deterministic code-like text for session tests: `code(seed, n)` is `n` characters of Rust
// keywords, with a line break now and then (the same text for the same seed).
const WORDS = ['fn', 'let', 'mut', 'struct', 'impl', 'pub', 'use', 'match', 'Some', 'None', 'Ok', 'Err', 'return', 'async', 'await', 'u64'];

/** `n` characters of code-like text from `seed`. */
export const code = (seed, n) => {
  let s = '';
  let k = seed >>> 0 || 1;
  while (s.length < n) {
    k = (k * 1664525 + 1013904223) >>> 0;
    s += WORDS[k % WORDS.length] + (k % 7 === 0 ? ';\n' : ' ');
  }
  return s.slice(0, n);
};
