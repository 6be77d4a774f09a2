// SPEC §17: parseTranscript / serializeTranscript on real Claude Code session files and on
// broken input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { microCompact, parseTranscript, serializeTranscript } from '../../pkg/node.js';
import { TRANSCRIPTS as TRANSCRIPTS_DIR } from './helpers/support.mjs';

const FILES = readdirSync(TRANSCRIPTS_DIR).filter((f) => f.endsWith('.jsonl')).sort();

function malformed(fn, lineNumber) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'MALFORMED_TRANSCRIPT');
    assert.match(e.message, new RegExp(`\\bline ${lineNumber}\\b`), e.message);
    return true;
  });
}

test('the shared transcripts are all there', () => {
  assert.ok(FILES.length >= 4, FILES.join(', '));
  for (const f of ['cc_small_short.jsonl', 'cc_long_autocompact_4d5611e5.jsonl', 'cc_image_9e953218.jsonl']) assert.ok(FILES.includes(f), f);
});

for (const file of FILES) {
  test(`byte-identical round trip: ${file}`, () => {
    const text = readFileSync(TRANSCRIPTS_DIR + file, 'utf8');
    const lines = parseTranscript(text);
    assert.equal(lines.length, text.split('\n').filter((l) => l !== '').length, 'one object per line, none dropped');
    lines.forEach((l, i) => assert.ok(l !== null && typeof l === 'object' && !Array.isArray(l), `line ${i + 1} is an object`));
    const back = serializeTranscript(lines);
    assert.equal(back.length, text.length);
    assert.ok(back === text, 'serializeTranscript(parseTranscript(text)) === text');
    // Line objects equal what JSON.parse gives, unknown types included.
    const expected = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
    assert.deepEqual(lines, expected);
  });
}

test('every line type of the real transcripts survives (progress, snapshots, queue operations, system subtypes)', () => {
  const text = readFileSync(TRANSCRIPTS_DIR + 'cc_long_autocompact_4d5611e5.jsonl', 'utf8');
  const lines = parseTranscript(text);
  const types = new Set(lines.map((l) => l.type + (l.subtype ? '/' + l.subtype : '')));
  for (const t of ['user', 'assistant', 'progress', 'file-history-snapshot', 'queue-operation', 'system/compact_boundary', 'system/stop_hook_summary', 'system/turn_duration']) {
    assert.ok(types.has(t), t);
  }
  const boundary = lines.find((l) => l.subtype === 'compact_boundary');
  assert.deepEqual(boundary.compactMetadata, { trigger: 'auto', preTokens: 170_251 });
  assert.equal(lines.indexOf(boundary), 753);
  assert.equal(lines[754].isCompactSummary, true);
});

test('synthetic round trips: unknown line types, no type at all, unicode, escapes', () => {
  const text =
    '{"type":"queue-operation","operation":"enqueue","x":[1,{"y":null}]}\n' +
    '{"no_type":true}\n' +
    '{"type":"user","message":{"role":"user","content":"héllo 😀 \\"quoted\\" \\\\ tab\\t nl\\n"}}\n' +
    '{"type":"future-thing","nested":{"deep":[[[]]],"n":-0.5,"big":12345678901234}}\n';
  assert.equal(serializeTranscript(parseTranscript(text)), text);
  assert.equal(serializeTranscript([]), '');
  assert.deepEqual(parseTranscript(''), []);
});

test('line endings: final newline optional, CRLF accepted, BOM skipped', () => {
  assert.deepEqual(parseTranscript('{"a":1}\n{"b":2}'), [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(parseTranscript('{"a":1}\r\n{"b":2}\r\n'), [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(parseTranscript('\ufeff{"a":1}\n'), [{ a: 1 }]);
  assert.equal(serializeTranscript(parseTranscript('{"a":1}\n{"b":2}')), '{"a":1}\n{"b":2}\n', 'always ends in a newline');
});

test('unchanged lines are written back as they were read: big and overflowing numbers, CRLF, a BOM, spacing, escapes', () => {
  const user = (extra) => `{"type":"user","uuid":"u1","parentUuid":null${extra},"message":{"role":"user","content":"hi"}}`;
  const cases = [
    user(',"toolUseResult":{"id":12345678901234567890123}') + '\n',
    user(',"toolUseResult":{"v":1e400,"w":-1e400,"x":1.0,"y":-0,"z":1E5,"q":0.1e1}') + '\n',
    user('') + '\r\n' + '{"type":"assistant","uuid":"u2","parentUuid":"u1","message":{"role":"assistant","content":"yo"}}\r\n',
    '\ufeff' + user('') + '\n',
    '{"type": "user", "uuid": "u1", "parentUuid": null, "message": {"role": "user", "content": "hi"}}\n',
    '{"type":"user","message":{"role":"user","content":"caf\\u00e9 \\/ \\ud83d\\ude00"}}\n',
    '\ufeff{ "a" : [ 1 , 2.50 ] }\r\n{"b":1}\n',
  ];
  for (const text of cases) assert.equal(serializeTranscript(parseTranscript(text)), text, JSON.stringify(text));
  // The values are what JSON.parse gives; the text kept is not enumerable.
  const [line] = parseTranscript(cases[0]);
  assert.deepEqual(line, JSON.parse(cases[0]));
  assert.deepEqual(Object.keys(line), Object.keys(JSON.parse(cases[0])));
  assert.equal(JSON.stringify(line), JSON.stringify(JSON.parse(cases[0])));
  // A last line without an ending gets the file's ending; a new line too.
  const crlf = parseTranscript('{"a": 1}\r\n{"b": 2}');
  assert.equal(serializeTranscript(crlf), '{"a": 1}\r\n{"b": 2}\r\n');
  assert.equal(serializeTranscript([...crlf, { c: 3 }]), '{"a": 1}\r\n{"b": 2}\r\n{"c":3}\r\n');
  // The mark goes with the first line only while it is first.
  const bom = parseTranscript('\ufeff{"a":1}\n{"b":2}\n');
  assert.equal(serializeTranscript([bom[1], bom[0]]), '{"b":2}\n{"a":1}\n');
});

test('a changed line is written anew, with the numbers it still holds spelled as they were read', () => {
  const text = '{"type": "user", "n": 12345678901234567890123, "v": 1e400, "list": [1.0, 2, 99999999999999999999], "message": {"role": "user", "content": "hi"}}\n';
  const [line] = parseTranscript(text);
  line.message.content = 'changed';
  line.extra = 12345678901234567890123; // a new field: written as JSON.stringify writes it
  assert.equal(
    serializeTranscript([line]),
    '{"type":"user","n":12345678901234567890123,"v":1e400,"list":[1.0,2,99999999999999999999],"message":{"role":"user","content":"changed"},"extra":1.2345678901234568e+22}\n',
  );
  // A number changed is written as it now is; one moved elsewhere too.
  line.n = 5;
  line.list = [line.list[2], line.list[0]];
  assert.equal(
    serializeTranscript([line]),
    '{"type":"user","n":5,"v":1e400,"list":[100000000000000000000,1],"message":{"role":"user","content":"changed"},"extra":1.2345678901234568e+22}\n',
  );
  // A string that looks like the placeholder the rewriting uses stays a string.
  line.message.content = '\u0001abc#0';
  assert.match(serializeTranscript([line]), /"content":"\\u0001abc#0"/);
});

test('a line microCompact edits keeps the numbers it still holds as they were read', () => {
  const id = (i) => `toolu_${i}`;
  const lines = [];
  for (let i = 0; i < 8; i++) {
    lines.push(`{"type":"assistant","uuid":"a${i}","message":{"id":"m${i}","role":"assistant","content":[{"type":"tool_use","id":"${id(i)}","name":"Read","input":{"file_path":"/f${i}"}}]}}`);
    lines.push(`{"type":"user","uuid":"r${i}","toolUseResult":{"n":12345678901234567890123},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"${id(i)}","content":"${'x'.repeat(4000)}"}]}}`);
  }
  const text = '{"type":"user","uuid":"u","message":{"role":"user","content":"go"}}\n' + lines.join('\n') + '\n';
  const parsed = parseTranscript(text);
  const { messages } = microCompact(parsed, { keepRecent: 1 });
  const out = serializeTranscript(messages).split('\n');
  const edited = out.filter((l) => l.includes('"tool_result"') && !l.includes('x'.repeat(4000)));
  assert.ok(edited.length > 0, 'microCompact cleared some results');
  for (const l of edited) assert.match(l, /"toolUseResult":\{"n":12345678901234567890123\}/);
});

test('blank lines are reported with their line number, never dropped', () => {
  malformed(() => parseTranscript('{"a":1}\n\n{"b":2}\n'), 2);
  malformed(() => parseTranscript('{"a":1}\n{"b":2}\n   \n{"c":3}\n'), 3);
  malformed(() => parseTranscript('\n{"a":1}\n'), 1);
  malformed(() => parseTranscript('{"a":1}\r\n\r\n{"b":2}\r\n'), 2);
  malformed(() => parseTranscript('{"a":1}\n\n'), 2);
});

test('malformed lines are reported with their line number', () => {
  malformed(() => parseTranscript('{"a":1}\n{"b":2}\n{oops\n'), 3);
  malformed(() => parseTranscript('{"a":1}\n{"b":2'), 2);
  malformed(() => parseTranscript('{"a":1} trailing\n'), 1);
  malformed(() => parseTranscript('{"a":1}\n[1,2]\n'), 2);
  malformed(() => parseTranscript('null\n'), 1);
  malformed(() => parseTranscript('{"a":1}\n{"b":2}\n{"c":3}\n"just a string"\n'), 4);
  malformed(() => parseTranscript('42'), 1);
  // The real file with one line broken in the middle.
  const lines = readFileSync(TRANSCRIPTS_DIR + 'cc_small_short.jsonl', 'utf8').split('\n');
  lines[6] = lines[6].slice(0, 40);
  malformed(() => parseTranscript(lines.join('\n')), 7);
});

test('serializeTranscript writes one compact JSON object per line', () => {
  const msgs = [{ type: 'user', message: { role: 'user', content: 'a\nb' } }, { role: 'assistant', content: [] }];
  const before = structuredClone(msgs);
  const text = serializeTranscript(msgs);
  assert.deepEqual(msgs, before);
  assert.equal(text, JSON.stringify(msgs[0]) + '\n' + JSON.stringify(msgs[1]) + '\n');
  assert.equal(text.split('\n').length, 3, 'newlines inside strings are escaped');
});

test('serializeTranscript: plain objects are known to write as objects without reading their text; anything else is checked by its text', () => {
  // Plain objects (literals, JSON.parse, no prototype) with non-ASCII text: written as the
  // engine writes them.
  const plain = [
    { type: 'user', message: { role: 'user', content: 'héllo — 日本語 🙂' } },
    Object.assign(Object.create(null), { type: 'assistant', text: 'ünïcode' }),
    JSON.parse('{"type":"system","content":"\\u00e9"}'),
  ];
  assert.equal(serializeTranscript(plain), plain.map((m) => JSON.stringify(m) + '\n').join(''));
  // A class instance writes as an object too (its text is read to know it).
  class Line { constructor() { this.type = 'user'; this.note = 'é'; } }
  assert.equal(serializeTranscript([new Line()]), '{"type":"user","note":"é"}\n');
  // What does not write as an object is an error naming the message, however it got there.
  const notObjects = {
    'own toJSON': { type: 'user', toJSON: () => 'text' },
    'inherited toJSON': Object.assign(Object.create({ toJSON: () => [1] }), { type: 'user' }),
    'boxed string': new String('{}'),
    'a Date': new Date(0),
  };
  for (const [what, m] of Object.entries(notObjects)) {
    assert.throws(() => serializeTranscript([plain[0], m]), (e) => e.code === 'SERIALIZATION_FAILED' && /messages\[1\]/.test(e.message), what);
  }
});
