// Type-level tests (round 18, integrations18): what the library gives back for the Anthropic
// SDK's own message types goes to `client.messages.create` / `client.beta.messages.create`
// with no cast — the view `toApiMessages` sends, and the conversation `applyApiCompaction`
// leaves (README "The Anthropic API's own compaction"). Nothing here runs; checked by
// `bash types/check.sh`.

import Anthropic from '@anthropic-ai/sdk';
import {
  Compactor,
  applyApiCompaction,
  buildApiContextManagement,
  buildPostCompactMessages,
  compactConversation,
  offlineSummarizer,
  toApiMessages,
  type ApiViewMessage,
  type ApiUserTextMessage,
  type CompactBoundaryLine,
  type IsOtherShape,
  type PostCompactMessage,
} from 'context-compaction';
import { expectType, type Equal } from './expect.js';

declare const client: Anthropic;
declare const params: Anthropic.MessageParam[];
declare const betaParams: Anthropic.Beta.BetaMessageParam[];
declare const lines: Array<{ type: 'user'; uuid: string; message: { role: 'user'; content: string } }>;

export async function sendTheView(): Promise<void> {
  // The SDK's params, their view, and a Compactor typed with them.
  await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: toApiMessages(params) });
  await client.beta.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: toApiMessages(betaParams) });
  // A reply goes back as it came, in the SDK's own param type.
  const reply = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: toApiMessages(params) });
  const next: Anthropic.MessageParam[] = [...params, { role: 'assistant', content: reply.content }];
  await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: toApiMessages(next) });
  // The SDK's beta system messages (`content` optional) are Anthropic messages, not another shape.
  expectType<Equal<IsOtherShape<Anthropic.Beta.BetaMessageParam>, false>>();
  // Transcript lines (and anything not an Anthropic message) still give the package's view.
  expectType<Equal<ReturnType<typeof toApiMessages<(typeof lines)[number]>>, ApiViewMessage[]>>();
}

export async function continueAfterTheApiCompaction(): Promise<void> {
  const context_management = buildApiContextManagement({ compact: true, pauseAfterCompaction: true });
  let messages = betaParams;
  const response = await client.beta.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages, context_management, betas: ['compact-2026-01-12'] });
  const applied = applyApiCompaction(messages, response);
  messages = applied.messages;
  await client.beta.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages, context_management, betas: ['compact-2026-01-12'] });
}
// A Compactor typed with the SDK's params, before and after a compaction, and the README's
// compactConversation flow: the view goes to the SDK as it is.
export async function compactThenSend(): Promise<void> {
  const chat = new Compactor<Anthropic.MessageParam>({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  chat.push({ role: 'user', content: 'Fix the failing test' });
  const reply = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: toApiMessages(chat.messages) });
  chat.push({ role: 'assistant', content: reply.content });
  await chat.compact();
  await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: toApiMessages(chat.messages) });
  let messages = params;
  const after = buildPostCompactMessages(await compactConversation(messages, { model: 'claude-sonnet-4-5', summarize: offlineSummarizer() }));
  await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: toApiMessages(after) });
  messages = toApiMessages(after);
  void messages;
}

// After a compaction of the SDK's params: the boundary line, API user messages (summary,
// restored files, hook texts) and your own messages; no transcript line.
expectType<Equal<PostCompactMessage<Anthropic.MessageParam>, CompactBoundaryLine | ApiUserTextMessage | Anthropic.MessageParam>>();
