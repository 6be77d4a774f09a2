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

/** What a fake provider bills for a request of `system` and Anthropic `messages`: 1.26 ×
 * chars / 4 (code and JSON run above chars/4). */
export const realTokens = (system, messages) => {
  let chars = system.length;
  for (const m of messages) {
    chars += 12;
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const b of m.content) chars += b.type === 'text' ? b.text.length : b.type === 'tool_result' ? String(b.content).length : JSON.stringify(b.input ?? b).length;
  }
  return Math.round((1.26 * chars) / 4);
};
