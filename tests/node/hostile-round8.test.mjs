// Eighth round of hostile inputs: a Compactor called again from the caller's code that one of
// its own calls runs (a getter of a message it reads, a toJSON, the usage given to setUsage, its
// tokenCounter, the options of compact, its own options). Before, `compact()` from a pushed
// message's getter found the session borrowed and Rust panicked: the instance trapped, the push
// threw, and that Compactor and every other live one answered INSTANCE_RESET (conversations
// lost). Now every such call gives a coded error (the Compactor is busy) or its right answer,
// and both Compactors keep working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET, apiConversation, summaryResponse } from './helpers/support.mjs';

const summarize = async () => summaryResponse('S');
// Auto-compaction due at 1% of the window: a small conversation is past it.
const config = { autoCompactPctOverride: 1 };
const small = () => apiConversation({ rounds: 4 });

/** The calls made from inside, each with what a right answer looks like. */
const METHODS = {
  compact: [(c) => c.compact(), (r) => Array.isArray(r?.summaryMessages)],
  compactWithInstructions: [(c) => c.compact({ customInstructions: 'keep the file names' }), (r) => Array.isArray(r?.summaryMessages)],
  maybeAutoCompact: [(c) => c.maybeAutoCompact(), (r) => typeof r?.wasCompacted === 'boolean'],
  push: [(c) => c.push({ role: 'user', content: 'inner' }), (r) => r === undefined],
  pushMany: [(c) => c.pushMany([{ role: 'user', content: 'inner' }]), (r) => r === undefined],
  setUsage: [(c) => c.setUsage({ input_tokens: 5, output_tokens: 1 }), (r) => r === undefined],
  tokenCount: [(c) => c.tokenCount(), (r) => Number.isFinite(r) && r > 0],
  warningState: [(c) => c.warningState(), (r) => typeof r?.isAboveWarningThreshold === 'boolean'],
  messages: [(c) => c.messages, (r) => Array.isArray(r)],
  length: [(c) => c.length, (r) => Number.isInteger(r)],
  snapshot: [(c) => c.snapshot(), (r) => r !== null && typeof r === 'object'],
  toTranscript: [(c) => c.toTranscript(), (r) => typeof r === 'string'],
  calibration: [(c) => c.calibration(), (r) => r === null || typeof r === 'object'],
  background: [(c) => c.background, (r) => typeof r?.state === 'string'],
  tracking: [(c) => c.tracking, (r) => typeof r?.consecutiveFailures === 'number'],
  compacting: [(c) => c.compacting, (r) => typeof r === 'boolean'],
  free: [(c) => c.free(), (r) => r === undefined],
  // Not a call: the caller's code throws (to the Compactor's call, which must not stay busy).
  throwing: [() => { throw new Error("the caller's own error"); }, () => true],
};

/**
 * Where the caller's code runs inside a Compactor's call: `options(call, arm)` and
 * `messages(call)` give the Compactor's extra options and its messages, holding a hook that
 * runs `call()`; `run(c, call)` makes the outer call (its promise awaited). `call()` makes the
 * inner call each time it runs while armed: from the outer call on, or (`armLate`) from
 * `arm()` on.
 */
const SITES = {
  pushGetter: { run: (c, call) => c.push({ role: 'user', get content() { call(); return 'outer'; } }) },
  pushManyGetter: {
    run: (c, call) => c.pushMany([{ role: 'user', content: 'a' }, { role: 'assistant', get content() { call(); return 'b'; } }]),
  },
  setUsageGetter: {
    run: (c, call) => {
      c.push({ role: 'assistant', content: 'an answer' });
      c.setUsage({ get input_tokens() { call(); return 100; }, output_tokens: 1 });
    },
  },
  tokenCounter: {
    options: (call) => ({ tokenCounter: (text) => { call(); return Math.ceil(text.length / 4); } }),
    run: (c) => c.push({ role: 'user', content: 'counted by the caller' }),
  },
  compactOptionsGetter: { run: (c, call) => c.compact({ get customInstructions() { call(); return 'x'; } }) },
  ownOptionsGetter: {
    // Read again by every compaction.
    options: (call) => ({ get summarize() { call(); return summarize; } }),
    run: (c) => c.compact(),
  },
  heldGetterInCompact: {
    messages: (call) => [...small(), { role: 'user', get content() { call(); return 'a later question'; } }],
    run: (c) => c.compact(),
  },
  heldGetterInAutoCompact: {
    messages: (call) => [...small(), { role: 'user', get content() { call(); return 'a later question'; } }],
    run: (c) => c.maybeAutoCompact(),
  },
  toJsonInTranscript: {
    messages: (call) => [...small(), { role: 'user', content: 'q', toJSON() { call(); return { role: 'user', content: 'q' }; } }],
    run: (c) => c.toTranscript(),
  },
  // Counting the compacted conversation as it replaces the held one, once the summary is back
  // (inside the promise, where no call of the caller's is on the stack).
  tokenCounterAtCommit: {
    options: (call, arm) => ({
      summarize: async () => {
        await null;
        arm();
        return summaryResponse('S');
      },
      tokenCounter: (text) => { call(); return Math.ceil(text.length / 4); },
    }),
    run: (c) => c.compact(),
    armLate: true,
  },
  // Inside a constructor and a restore that run in the Compactor's own call.
  constructorInside: {
    run: (c, call) => c.push({ role: 'user', get content() {
      new cc.Compactor({ model: SONNET, messages: [{ role: 'user', get content() { call(); return 'y'; } }] });
      return 'outer';
    } }),
  },
  restoreInside: {
    run: (c, call) => {
      const other = new cc.Compactor({ model: SONNET, messages: [{ role: 'user', content: 'z' }] });
      const [snapshot, messages] = [other.snapshot(), other.messages];
      return c.push({ role: 'user', get content() {
        cc.Compactor.restore(snapshot, [{ ...messages[0], get content() { call(); return 'z'; } }], { model: SONNET });
        return 'outer';
      } });
    },
  },
};

/** `options` with the properties of `more` added as they are (getters stay getters). */
const withOptions = (options, more) => Object.defineProperties(options, Object.getOwnPropertyDescriptors(more ?? {}));

/** What `promise` settles to, or a hang reported after `ms` (a call that never settles). */
const settled = (promise, ms = 10_000) => {
  let timer;
  const hang = new Promise((resolve) => { timer = setTimeout(() => resolve({ error: { hang: true } }), ms); });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
};

const coded = (e) => e instanceof Error && typeof e.code === 'string' && e.code.length > 0;

/** Runs one call from inside one site; the problems found (empty: it behaved). */
async function reentry(siteName, methodName) {
  const site = SITES[siteName];
  const [method, valid] = METHODS[methodName];
  const problems = [];
  const say = (what) => problems.push(`${siteName}/${methodName}: ${what}`);
  const bystander = new cc.Compactor({ model: SONNET, summarize, messages: small() });
  const bystanderCount = bystander.tokenCount();
  let c;
  let armed = 'no'; // 'yes' while the outer call runs (from arm() with armLate), then 'done'
  const inners = [];
  let made = 0;
  const call = () => {
    if (armed !== 'yes') return;
    made += 1;
    if (methodName === 'throwing') method(c);
    try {
      const r = method(c);
      inners.push(r instanceof Promise ? r.then((v) => ({ value: v }), (error) => ({ error })) : { value: r });
    } catch (error) {
      inners.push({ error });
    }
  };
  const arm = () => {
    if (armed === 'no') armed = 'yes';
  };
  c = new cc.Compactor(withOptions(
    { model: SONNET, summarize, config, messages: site.messages ? site.messages(call) : small() },
    site.options?.(call, arm),
  ));
  let outer;
  try {
    if (!site.armLate) arm();
    const r = site.run(c, call);
    outer = r instanceof Promise ? await settled(r.then((value) => ({ value }), (error) => ({ error }))) : { value: r };
  } catch (error) {
    outer = { error };
  }
  armed = 'done';
  if (made === 0) say('the inner call was never made (the site does not reach it)');
  for (const inner of inners) {
    const got = await settled(inner);
    if (got.error?.hang) say('inner call: never settled');
    else if (got.error !== undefined) {
      if (!coded(got.error)) say(`inner call: uncoded ${got.error}`);
      else if (got.error.code === 'INSTANCE_RESET') say('inner call: INSTANCE_RESET');
    } else if (!valid(got.value)) {
      say(`inner call: not a right answer: ${JSON.stringify(got.value)?.slice(0, 120)}`);
    }
  }
  if (outer.error?.hang) say('outer call: never settled');
  else if (outer.error !== undefined && (!coded(outer.error) || outer.error.code === 'INSTANCE_RESET')) {
    say(`outer call: ${outer.error.code ?? 'uncoded'} ${outer.error.message}`);
  }
  // The unrelated Compactor made before is untouched.
  try {
    assert.equal(bystander.tokenCount(), bystanderCount);
    bystander.push({ role: 'user', content: 'still here' });
  } catch (e) {
    say(`the unrelated Compactor: ${e.code ?? ''} ${e.message}`);
  }
  // The Compactor itself keeps working (unless the inner call freed it).
  if (methodName !== 'free') {
    try {
      for (let i = 0; c.compacting && i < 1000; i++) await new Promise((r) => setTimeout(r, 1));
      const n = c.length;
      assert.equal(c.messages.length, n);
      c.push({ role: 'user', content: 'afterwards' });
      assert.equal(c.length, n + 1);
      assert.ok(c.tokenCount() > 0);
      const r = await settled(c.compact());
      assert.ok(!r.error?.hang, 'compact() settles');
      assert.ok(r.summaryMessages.length > 0);
      assert.equal(c.compacting, false);
    } catch (e) {
      say(`afterwards: ${e.code ?? ''} ${e.message}`);
    }
  }
  return problems;
}

test('every Compactor method called from the caller code its own calls run: a coded error or a right answer, never a trap', async () => {
  const problems = [];
  for (const site of Object.keys(SITES)) {
    for (const method of Object.keys(METHODS)) problems.push(...(await reentry(site, method)));
  }
  assert.deepEqual([...new Set(problems)], []);
});

test('compact() from a pushed message getter: refused as busy; the push, the Compactor and another Compactor are kept', async () => {
  const other = new cc.Compactor({ model: SONNET, summarize, messages: small() });
  const otherCount = other.tokenCount();
  const c = new cc.Compactor({ model: SONNET, summarize, messages: small() });
  const before = c.length;
  let inner;
  c.push({ role: 'user', get content() { inner ??= c.compact(); return 'x'; } });
  await assert.rejects(inner, (e) => e.code === 'INVALID_ARGUMENT' && /one of its own calls/.test(e.message));
  assert.equal(c.length, before + 1, 'the push added its message');
  assert.equal(other.tokenCount(), otherCount);
  const r = await c.compact();
  assert.ok(r.summaryMessages.length > 0);
});

// With a tokenizer the pushed messages are read (and counted) before they are added; a push
// made from there was added first (twice: the getter is read twice), ahead of the message being
// pushed and in another shape than it (a conversation push refuses as MIXED_SHAPES).
test('a push from inside a push is refused: no inner message before the outer one, no mixed shapes', () => {
  const c = new cc.Compactor({ model: SONNET, messages: [], tokenCounter: (text) => Math.ceil(text.length / 4) });
  const refused = [];
  c.push({ role: 'user', get content() {
    try {
      c.push({ type: 'user', uuid: 'inner', parentUuid: null, message: { role: 'user', content: 'inner' } });
    } catch (e) {
      refused.push(e.code);
    }
    return 'outer';
  } });
  assert.ok(refused.length > 0 && refused.every((code) => code === 'INVALID_ARGUMENT'), String(refused));
  assert.deepEqual(c.messages.map((m) => m.content), ['outer']);
});

// The refusal covers the Compactor's own calls only: the summarizer runs while a compaction is
// awaited (no call of the Compactor on the stack), and what it pushes is kept after the summary.
test('the summarizer may still read and push while the compaction it serves is awaited', async () => {
  let seen;
  const c = new cc.Compactor({
    model: SONNET,
    messages: small(),
    summarize: async () => {
      seen = { length: c.length, compacting: c.compacting };
      c.push({ role: 'user', content: 'asked while the summary was written' });
      return summaryResponse('S');
    },
  });
  const before = c.length;
  await c.compact();
  assert.deepEqual(seen, { length: before, compacting: true });
  assert.equal(c.messages.at(-1).content, 'asked while the summary was written');
});
