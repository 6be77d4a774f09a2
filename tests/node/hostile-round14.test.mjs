// Fourteenth round of hostile inputs (the probe's findings): a conversation whose text would
// not fit the WebAssembly memory (16 references to one 300 MB string) is refused with
// INVALID_ARGUMENT naming its size and the limit before it is copied, where the instance
// trapped (INSTANCE_RESET: every live Compactor lost). A `Compactor` freed (or dropped) while
// its summary written ahead runs cancels that summary, which went on (a paid request nobody
// can use, and a timer that kept Node alive up to `summaryTimeoutMs`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));

// Runs `code` (an ES module) in a fresh Node with `flags`; its stdout.
function run(code, flags = []) {
  return execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 240_000 }).trim();
}

test('a conversation too large for the WebAssembly memory is refused before the copy, and other Compactors live on', () => {
  const out = run(
    `
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    const big = 'a'.repeat(100 * 2 ** 20);
    const msgs = [];
    for (let i = 0; i < 8; i++) msgs.push({ role: 'user', content: big }, { role: 'assistant', content: 'ok ' + i });
    const bystander = new L.Compactor({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hello' }] });
    let e1;
    try { L.toApiMessages(msgs); } catch (e) { e1 = e; }
    console.log(JSON.stringify({ code: e1?.code, message: e1?.message, bystander: bystander.tokenCount() }));`,
    ['--max-old-space-size=4000'],
  );
  const r = JSON.parse(out);
  // Before: INSTANCE_RESET (the copy of 800 MB and what is made of it passed 4 GiB), and the
  // bystander threw INSTANCE_RESET too.
  assert.equal(r.code, 'INVALID_ARGUMENT', r.message);
  assert.match(r.message, /reaches \d+ bytes at messages\[\d+\]; at most 536870912 bytes/);
  assert.equal(r.bystander, 1);
});

for (const how of ['free()', 'dropped']) {
  test(`a Compactor ${how} while its summary written ahead runs cancels that summary`, () => {
    const out = run(
      `
      const L = await import(${JSON.stringify(PKG + 'node.js')});
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      const seen = [];
      // Answers only when aborted, or after the time limit.
      const summarize = (req, opts) => { const at = { aborted: false }; seen.push(at);
        return new Promise((res) => opts.signal.addEventListener('abort', () => { at.aborted = true; res({ content: [{ type: 'text', text: '<summary>s</summary>' }] }); })); };
      let running;
      (() => {
        const c = new L.Compactor({ model: 'claude-sonnet-4-5', summarize, preemptive: { earlyLine: 20000 }, summaryTimeoutMs: 5000 });
        for (let i = 0; i < 40; i++) { c.push({ role: 'user', content: 'q' + i + ' ' + 'x'.repeat(4000) }); c.push({ role: 'assistant', content: 'a' + i }); }
        running = c.background.state;
        if (${JSON.stringify(how)} === 'free()') c.free();
      })();
      const t0 = Date.now();
      for (let k = 0; k < 10; k++) { if (typeof gc === 'function') gc(); await sleep(20); }
      process.on('exit', () => console.log(JSON.stringify({ running, seen, exitAfter: Date.now() - t0 })));`,
      ['--expose-gc'],
    );
    const r = JSON.parse(out);
    assert.equal(r.running, 'running');
    // Before: the summarizer was called with a signal never aborted, and the process waited
    // for the 5 s limit.
    assert.ok(r.seen.every((s) => s.aborted), JSON.stringify(r.seen));
    assert.ok(r.exitAfter < 2500, `exited after ${r.exitAfter} ms`);
  });
}
