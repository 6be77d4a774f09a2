// Type-level tests (round 18, integrations18): what the library gives back for the Anthropic
// SDK's own message types goes to `client.messages.create` / `client.beta.messages.create`
// with no cast — the view `toApiMessages` sends, and the conversation `applyApiCompaction`
// leaves (README "The Anthropic API's own compaction"). Nothing here runs; checked by
// `bash types/check.sh`.

import Anthropic from '@anthropic-ai/sdk';
import { applyApiCompaction, buildApiContextManagement, toApiMessages, type ApiViewMessage, type IsOtherShape } from 'context-compaction';
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