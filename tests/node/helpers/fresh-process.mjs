// A test body run in a fresh Node process that records the byte length of every WebAssembly
// module compiled (`compiled()`), for the tests of what loads when (tests/node/extras.test.mjs,
// tests/node/count-entry.test.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/**
 * Runs `prelude` (top-level statements) then `body` (an async function body; it sees what
 * `prelude` declared and `compiled()`) as an ES module in a fresh process, and returns what
 * `body` returns (as JSON). `ours`: the module byte lengths `compiled()` reports (Node
 * compiles modules of its own, e.g. its HTTP parser); every one when omitted.
 */
export function runFresh(prelude, body, { env = {}, ours } = {}) {
  const script = `
    const sizes = [];
    const Module = WebAssembly.Module;
    WebAssembly.Module = function (bytes, ...rest) { sizes.push(bytes.byteLength ?? bytes.length); return new Module(bytes, ...rest); };
    WebAssembly.Module.prototype = Module.prototype;
    for (const name of ['compile', 'instantiate']) {
      const f = WebAssembly[name];
      WebAssembly[name] = function (source, ...rest) {
        if (source && typeof source.byteLength === 'number') sizes.push(source.byteLength);
        return f.call(this, source, ...rest);
      };
    }
    const ours = ${ours === undefined ? 'undefined' : JSON.stringify(ours)};
    const compiled = () => sizes.filter((n) => ours === undefined || ours.includes(n));
    ${prelude}
    const out = await (async () => { ${body} })();
    process.stdout.write(JSON.stringify(out));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * Statements declaring a small conversation that compacts (`model`, `messages`) and an
 * API-style summarizer answering `<summary>from the API</summary>` (`api`).
 */
export const SAMPLE = `
  const model = 'claude-opus-4-6';
  const messages = [
    { role: 'user', content: 'Read the file and fix it. '.repeat(50) },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/src/a.rs' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'fn a() {}\\n'.repeat(300) }] },
    { role: 'assistant', content: 'Fixed.' },
  ];
  const api = async () => ({ content: [{ type: 'text', text: '<summary>from the API</summary>' }], usage: { input_tokens: 10, output_tokens: 5 } });
`;
