// SPEC §2: a Claude Code session file is read as the conversation Claude Code would resume —
// the `parentUuid` chain from the latest leaf — and a sub-agent's own file (every line
// `isSidechain: true`) as its own conversation. The lines themselves come back unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET, recordingSummarizer, summaryResponse } from './helpers/support.mjs';

let clock = Date.parse('2026-01-05T16:00:00Z');
const at = () => new Date((clock += 1000)).toISOString();
const base = (type, uuid, parentUuid, more = {}) => ({ type, uuid, parentUuid, isSidechain: false, sessionId: 's', timestamp: at(), ...more });
const user = (uuid, parent, content, more) => base('user', uuid, parent, { message: { role: 'user', content }, ...more });
const call = (uuid, parent, msgId, id, more) =>
  base('assistant', uuid, parent, { message: { id: msgId, role: 'assistant', model: SONNET, content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: `/src/${id}.rs` } }] }, ...more });
const text = (uuid, parent, msgId, t, more) =>
  base('assistant', uuid, parent, { message: { id: msgId, role: 'assistant', model: SONNET, content: [{ type: 'text', text: t }] }, ...more });
const result = (uuid, parent, id, more) =>
  user(uuid, parent, [{ type: 'tool_result', tool_use_id: id, content: `contents of ${id} `.repeat(40) }], more);
const progress = (uuid, parent) => base('progress', uuid, parent, { data: { type: 'hook_progress' } });

/** What the lines are in the file, as text (parseTranscript gives them back as read). */
const jsonl = (lines) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
const toolUseIds = (api) => api.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_use').map((b) => b.id);

// Like the real 2.0.76 session: a response answered after API errors, then written again
// under the same parent (a resume), with its results and the rest of the conversation.
function forked() {
  return [
    user('u1', null, 'Read the two files and tell me what they do.'),
    base('system', 'e1', 'u1', { subtype: 'api_error', level: 'error' }),
    call('a1', 'e1', 'msg_1', 'toolu_a'),
    call('a2', 'a1', 'msg_1', 'toolu_b'),
    result('r1', 'a2', 'toolu_a'),
    result('r2', 'r1', 'toolu_b'),
    { type: 'summary', summary: 'Reading files', leafUuid: 'r2' },
    call('b1', 'e1', 'msg_1', 'toolu_a'),
    call('b2', 'b1', 'msg_1', 'toolu_b'),
    result('s1', 'b2', 'toolu_a'),
    result('s2', 's1', 'toolu_b'),
    text('t1', 's2', 'msg_2', 'They parse and print.'),
    user('u2', 't1', 'Thanks, now summarize them.'),
  ];
}

test('a file holding two branches is read as the chain from the leaf: the rewritten turn once', () => {
  const src = jsonl(forked());
  const lines = cc.parseTranscript(src);
  assert.deepEqual(cc.validateForApi(lines), { valid: true, problems: [] });
  const api = cc.toApiMessages(lines);
  assert.deepEqual(toolUseIds(api), ['toolu_a', 'toolu_b']);
  assert.deepEqual(api.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user']);
  // The lines themselves are all there, unchanged.
  assert.equal(lines.length, 13);
  assert.equal(cc.serializeTranscript(lines), src);
  // microCompact's output is still a valid conversation, every line kept.
  const mc = cc.microCompact(lines, { keepRecent: 1 });
  assert.equal(mc.messages.length, lines.length);
  assert.equal(cc.validateForApi(mc.messages).valid, true);
});

test('the summary request of a forked file is that of the branch resumed', async () => {
  const request = async (lines) => {
    const summarize = recordingSummarizer(summaryResponse('They read two files.'));
    const r = await cc.compactConversation(lines, { model: SONNET, summarize }, {});
    assert.equal(summarize.calls.length, 1);
    assert.equal(cc.validateForApi(cc.buildPostCompactMessages(r)).valid, true);
    return summarize.calls[0].request.messages;
  };
  const lines = forked();
  // The same file without the branch left behind (its first copy of the response).
  const resumed = lines.filter((_, i) => i < 2 || i > 5);
  const sent = await request(lines);
  assert.deepEqual(sent, await request(resumed));
});

test('parallel calls hung from one another (and from progress lines) are all followed', () => {
  // Claude Code 2.1: the second call hangs from the first call's progress line, each result
  // from its own call, and the next turn continues from the last result written.
  const lines = [
    user('u1', null, 'Read both.'),
    call('c1', 'u1', 'msg_1', 'toolu_a'),
    progress('p1', 'c1'),
    call('c2', 'p1', 'msg_1', 'toolu_b'),
    progress('p2', 'c2'),
    result('r2', 'c2', 'toolu_b'),
    result('r1', 'c1', 'toolu_a'),
    base('attachment', 'h1', 'r2', { attachment: { type: 'hook_additional_context', content: 'a hook said so' } }),
    text('t1', 'r1', 'msg_2', 'Done.'),
  ];
  const api = cc.toApiMessages(lines);
  assert.deepEqual(toolUseIds(api).sort(), ['toolu_a', 'toolu_b']);
  assert.match(JSON.stringify(api), /a hook said so/);
  assert.equal(cc.validateForApi(lines).valid, true);
});

test('a broken chain is read in file order: nothing is lost', () => {
  const lines = forked();
  lines[7] = { ...lines[7], parentUuid: 'not-in-this-file' };
  const api = cc.toApiMessages(cc.parseTranscript(jsonl(lines)));
  // File order: both copies of the response are there (as before chains were followed).
  assert.deepEqual(toolUseIds(api), ['toolu_a', 'toolu_b', 'toolu_a', 'toolu_b']);
  // Lines that name no parent at all say nothing of their place either.
  const unlinked = forked().map(({ parentUuid, ...rest }) => rest);
  assert.equal(toolUseIds(cc.toApiMessages(unlinked)).length, 4);
});

test('a compact boundary is crossed by its logicalParentUuid; the conversation starts after it', () => {
  const lines = [
    ...forked(),
    base('system', 'k', null, { subtype: 'compact_boundary', logicalParentUuid: 'u2', compactMetadata: { trigger: 'auto', preTokens: 9000 } }),
    user('cs', 'k', 'This session is being continued. Summary: two files were read.', { isCompactSummary: true }),
    text('t9', 'cs', 'msg_9', 'Continuing.'),
  ];
  const api = cc.toApiMessages(lines);
  assert.equal(api.length, 2);
  assert.match(JSON.stringify(api[0]), /two files were read/);
  assert.equal(cc.validateForApi(lines).valid, true);
});

test("a sub-agent's own file (every line isSidechain) is read as its own conversation", () => {
  const side = { isSidechain: true, agentId: 'a289' };
  const lines = [
    user('s1', null, 'Find where the parser lives.', side),
    call('s2', 's1', 'msg_1', 'toolu_a', side),
    result('s3', 's2', 'toolu_a', side),
    text('s4', 's3', 'msg_2', 'In src/parse.rs.', side),
  ];
  const api = cc.toApiMessages(lines);
  assert.deepEqual(api.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
  assert.deepEqual(cc.validateForApi(lines), { valid: true, problems: [] });
  // In a main session file, sub-agent lines are still left out.
  const main = [user('m1', null, 'Go.'), ...lines.slice(1), text('m2', 'm1', 'msg_3', 'Done.')];
  assert.deepEqual(cc.toApiMessages(main).map((m) => m.role), ['user', 'assistant']);
});

// The counts (tokenCountWithEstimation, shouldAutoCompact, a Compactor's running count and
// warning state, microCompact's choice) read the same conversation as the compaction: the
// chain from the leaf, a sub-agent's own file, file order when the chain is broken.
const withUsage = (line, input) => ({ ...line, message: { ...line.message, stop_reason: 'end_turn', usage: { input_tokens: input, cache_read_input_tokens: 0, output_tokens: 50 } } });
const noUsage = (lines) => lines.map((l) => (l.message?.usage ? { ...l, message: { ...l.message, usage: undefined } } : l));

// A rewind: the second question was answered by a response whose usage says the context was
// nearly full; the user rewound to before it and asked again under the first answer.
function rewound() {
  return [
    user('q1', null, 'What does the parser do?'),
    withUsage(text('r1', 'q1', 'msg_1', 'It reads tokens.'), 1200),
    user('q2', 'r1', 'Paste every file of the repository here.'),
    withUsage(text('r2', 'q2', 'msg_2', 'Here they are: ' + 'fn main() {} '.repeat(200)), 190_000),
    user('q3', 'r1', 'Just name the main function, please.'),
  ];
}
// The same conversation as it is resumed: without the branch left behind.
const rewoundResumed = () => rewound().filter((l) => l.uuid !== 'q2' && l.uuid !== 'r2');

// A resume wrote a turn again under another parent; the tool calls of each copy have their own ids.
function forkedCalls() {
  return [
    user('u1', null, 'Read the two files and tell me what they do.'),
    call('a1', 'u1', 'msg_1', 'toolu_x'),
    result('x1', 'a1', 'toolu_x'),
    call('a2', 'x1', 'msg_2', 'toolu_y'),
    result('y1', 'a2', 'toolu_y'),
    call('b1', 'u1', 'msg_3', 'toolu_a'),
    result('s1', 'b1', 'toolu_a'),
    call('b2', 's1', 'msg_4', 'toolu_b'),
    result('s2', 'b2', 'toolu_b'),
    text('t1', 's2', 'msg_5', 'They parse and print.'),
  ];
}
const forkedResumed = () => forkedCalls().filter((l) => !['a1', 'x1', 'a2', 'y1'].includes(l.uuid));

test('a rewound file is counted along its chain: not the usage of the branch left behind', () => {
  const lines = rewound();
  const expected = cc.tokenCountWithEstimation(rewoundResumed());
  assert.ok(expected < 5000, String(expected));
  assert.equal(cc.tokenCountWithEstimation(lines), expected);
  assert.equal(cc.tokenCountWithEstimation(cc.parseTranscript(jsonl(lines))), expected);
  assert.equal(cc.tokenCountWithEstimation(lines, { model: SONNET }), expected, 'the general path too');
  assert.equal(cc.shouldAutoCompact(lines, SONNET), false);
  assert.equal(cc.shouldAutoCompact(lines, SONNET, {}), false);
  // A Compactor built from the lines, and one given them one by one.
  const built = new cc.Compactor({ model: SONNET, messages: lines });
  assert.equal(built.tokenCount(), expected);
  assert.deepEqual(built.warningState(), cc.calculateTokenWarningState(expected, SONNET));
  assert.equal(built.warningState().isAboveAutoCompactThreshold, false);
  const pushed = new cc.Compactor({ model: SONNET });
  for (const l of lines) pushed.push(l);
  assert.equal(pushed.tokenCount(), expected);
  // Before the rewind, the branch was the conversation: past the threshold.
  assert.equal(cc.shouldAutoCompact(lines.slice(0, 4), SONNET), true);
  const before = new cc.Compactor({ model: SONNET, messages: lines.slice(0, 4) });
  assert.equal(before.warningState().isAboveAutoCompactThreshold, true);
  before.push(lines[4]);
  assert.equal(before.tokenCount(), expected);
  assert.equal(before.warningState().isAboveAutoCompactThreshold, false);
});

test('a forked file is counted along its chain: the copy of the turn left behind is not counted, nor cleared', () => {
  const lines = forkedCalls();
  const expected = cc.tokenCountWithEstimation(forkedResumed());
  assert.equal(cc.tokenCountWithEstimation(lines), expected);
  assert.equal(cc.tokenCountWithEstimation(lines, { model: SONNET }), expected);
  assert.equal(new cc.Compactor({ model: SONNET, messages: lines }).tokenCount(), expected);
  const pushed = new cc.Compactor({ model: SONNET });
  pushed.pushMany(lines.slice(0, 5));
  for (const l of lines.slice(5)) pushed.push(l);
  assert.equal(pushed.tokenCount(), expected);
  assert.deepEqual(pushed.warningState(), cc.calculateTokenWarningState(expected, SONNET));
  // microCompact clears results of the conversation only (the oldest, keeping the latest).
  const mc = cc.microCompact(lines, { keepRecent: 1 });
  assert.deepEqual(mc.clearedToolUseIds, cc.microCompact(forkedResumed(), { keepRecent: 1 }).clearedToolUseIds);
  assert.deepEqual(mc.clearedToolUseIds, ['toolu_a']);
  assert.equal(mc.messages.length, lines.length);
  // With usage on the resumed branch's latest response, the record of the end is read.
  const used = forkedCalls();
  used[9] = withUsage(used[9], 3000);
  const resumedUsed = used.filter((l) => !['a1', 'x1', 'a2', 'y1'].includes(l.uuid));
  assert.equal(cc.tokenCountWithEstimation(used), cc.tokenCountWithEstimation(resumedUsed));
  used.push(user('u2', 't1', 'Thanks.'));
  resumedUsed.push(used.at(-1));
  assert.equal(cc.tokenCountWithEstimation(used), cc.tokenCountWithEstimation(resumedUsed));
});

test('a rewound file keeps what the branch left behind taught (system prompt and tools): stateless and Compactor agree at every line', () => {
  // A branch of three responses whose usage shows 20,000 tokens sent besides the messages
  // (ratio 1), then a rewind to the first question, a response without usage, and one with.
  const OVERHEAD = 20_000;
  const lines = [];
  const add = (line, usage) => {
    // The request sent the messages of the chain before the response: their estimate.
    const sent = usage ? cc.tokenCountWithEstimation(noUsage(lines.filter((l) => usage.chain.includes(l.uuid)))) : 0;
    lines.push(usage ? withUsage(line, OVERHEAD + sent) : line);
  };
  add(user('q1', null, 'What does the parser do? ' + 'context '.repeat(50)));
  add(text('r1', 'q1', 'msg_1', 'It reads tokens. ' + 'detail '.repeat(500)), { chain: ['q1'] });
  add(user('q2', 'r1', 'Show me every function. ' + 'more '.repeat(1000)));
  add(text('r2', 'q2', 'msg_2', 'Here: ' + 'fn f() {} '.repeat(600)), { chain: ['q1', 'r1', 'q2'] });
  add(user('q3', 'r2', 'And the tests. ' + 'more '.repeat(1500)));
  add(text('r3', 'q3', 'msg_3', 'Here: ' + 'fn t() {} '.repeat(600)), { chain: ['q1', 'r1', 'q2', 'r2', 'q3'] });
  const REWIND = lines.length;
  add(user('q4', 'q1', 'Just name the main function, please.'));
  add(text('r4', 'q4', 'msg_4', 'main, in src/main.rs.'));
  add(user('q5', 'r4', 'Thanks. What does it call first?'));
  add(text('r5', 'q5', 'msg_5', 'parse_args.'), { chain: ['q1', 'q4', 'r4', 'q5'] });
  const counts = countsAtEveryLine(lines);
  // After the rewind, until a response on the chain reports usage, the count is the line the
  // branch left behind taught: the chain's estimate and the overhead the messages never show.
  for (let k = REWIND + 1; k < lines.length; k++) {
    const chain = lines.slice(0, k).filter((_, i) => i === 0 || i >= REWIND);
    const estimate = cc.tokenCountWithEstimation(chain);
    assert.ok(estimate < 1000, String(estimate));
    assert.ok(Math.abs(counts[k - 1] - (OVERHEAD + estimate)) < 200, `${counts[k - 1]} after ${k} lines, ${estimate} estimated`);
  }
  // The chain's own usage anchors the count; the branch left behind's never does.
  assert.equal(counts.at(-1), lines.at(-1).message.usage.input_tokens + 50);
  // The same file as a sub-agent's own file: the same counts.
  assert.deepEqual(countsAtEveryLine(lines.map((l) => ({ ...l, isSidechain: true, agentId: 'a1' }))), counts);
  // Rewound again, past the usage of the second branch: both branches are learned from (the
  // second one's usage against the estimate of the lines before it in the file, the first
  // branch's too: a little more than its request sent, which lowers the line a little).
  lines.push(user('q6', 'q1', 'Start over: what does the printer do?'));
  const again = countsAtEveryLine(lines);
  assert.ok(again.at(-1) > 0.9 * OVERHEAD, String(again.at(-1)));
});

/** The stateless count of every prefix of `lines`, checked against the general path, the
 * parsed file, a Compactor built from the prefix and one given the lines one by one. */
function countsAtEveryLine(lines) {
  const pushed = new cc.Compactor({ model: SONNET });
  const batches = new cc.Compactor({ model: SONNET });
  const counts = [];
  for (let k = 1; k <= lines.length; k++) {
    const prefix = lines.slice(0, k);
    pushed.push(lines[k - 1]);
    if (k % 3 === 0) batches.pushMany(lines.slice(k - 3, k));
    const stateless = cc.tokenCountWithEstimation(prefix);
    counts.push(stateless);
    assert.equal(cc.tokenCountWithEstimation(prefix, { model: SONNET }), stateless, `the general path, ${k} lines`);
    assert.equal(cc.tokenCountWithEstimation(cc.parseTranscript(jsonl(prefix))), stateless, `parsed, ${k} lines`);
    const built = new cc.Compactor({ model: SONNET, messages: prefix });
    assert.equal(built.tokenCount(), stateless, `a Compactor built from ${k} lines`);
    assert.equal(pushed.tokenCount(), stateless, `a Compactor given ${k} lines one by one`);
    assert.deepEqual(pushed.calibration(), built.calibration(), `what they learned, ${k} lines`);
    if (k % 3 === 0) assert.equal(batches.tokenCount(), stateless, `a Compactor given ${k} lines three by three`);
    assert.deepEqual(pushed.warningState(), cc.calculateTokenWarningState(stateless, SONNET));
    assert.equal(cc.shouldAutoCompact(prefix, SONNET), false);
  }
  return counts;
}

test("a sub-agent's own file is counted as its conversation, and auto-compacts past the threshold", () => {
  const side = { isSidechain: true, agentId: 'a289' };
  const main = rewoundResumed();
  const own = [
    user('s1', null, 'Find where the parser lives.', side),
    call('s2', 's1', 'msg_1', 'toolu_a', side),
    result('s3', 's2', 'toolu_a', side),
    withUsage(text('s4', 's3', 'msg_2', 'In src/parse.rs.', side), 180_000),
    user('s5', 's4', 'And the printer?', side),
  ];
  const asMain = own.map((l) => ({ ...l, isSidechain: false }));
  const expected = cc.tokenCountWithEstimation(asMain);
  assert.ok(expected > 180_000);
  assert.equal(cc.tokenCountWithEstimation(own), expected);
  assert.equal(cc.tokenCountWithEstimation(noUsage(own)), cc.tokenCountWithEstimation(noUsage(asMain)));
  assert.ok(cc.tokenCountWithEstimation(noUsage(own)) > 0);
  assert.equal(cc.shouldAutoCompact(own, SONNET), true);
  assert.equal(cc.shouldAutoCompact(own, SONNET, {}), true);
  const built = new cc.Compactor({ model: SONNET, messages: own });
  assert.equal(built.tokenCount(), expected);
  assert.equal(built.warningState().isAboveAutoCompactThreshold, true);
  const pushed = new cc.Compactor({ model: SONNET });
  for (const l of own) pushed.push(l);
  assert.equal(pushed.tokenCount(), expected);
  // In a main session file, sub-agent lines are still left out of the count.
  const mixed = [...main.slice(0, 2), ...own, ...main.slice(2).map((l) => ({ ...l, parentUuid: 'r1' }))];
  assert.equal(cc.tokenCountWithEstimation(mixed), cc.tokenCountWithEstimation(main));
});

test('a broken chain is counted in file order, as the compaction reads it', () => {
  const lines = rewound();
  lines[4] = { ...lines[4], parentUuid: 'not-in-this-file' };
  // File order: the latest usage is the branch's, whatever the links say.
  const unlinked = rewound().map(({ parentUuid, ...rest }) => rest);
  const expected = cc.tokenCountWithEstimation(unlinked);
  assert.ok(expected > 190_000);
  assert.equal(cc.tokenCountWithEstimation(lines), expected);
  assert.equal(cc.tokenCountWithEstimation(lines, { model: SONNET }), expected);
  assert.equal(cc.shouldAutoCompact(lines, SONNET), true);
  assert.equal(new cc.Compactor({ model: SONNET, messages: lines }).tokenCount(), expected);
  const pushed = new cc.Compactor({ model: SONNET });
  for (const l of lines) pushed.push(l);
  assert.equal(pushed.tokenCount(), expected);
  // The compaction reads the same messages: both copies' tool calls of the forked file.
  const broken = forkedCalls();
  broken[5] = { ...broken[5], parentUuid: 'not-in-this-file' };
  assert.equal(toolUseIds(cc.toApiMessages(broken)).length, 4);
  assert.equal(cc.tokenCountWithEstimation(broken), cc.tokenCountWithEstimation(broken.map(({ parentUuid, ...rest }) => rest)));
  assert.equal(cc.microCompact(broken, { keepRecent: 1 }).clearedToolUseIds.length, 3);
});
