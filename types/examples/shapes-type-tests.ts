// Type-level tests against the ecosystems' own message types (dev dependencies, never
// runtime ones): each is accepted as it is, and what comes back is the caller's type with no
// cast — also the conversation after a compaction. Nothing here runs; checked by
// `bash types/check.sh`.

import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { LanguageModelUsage, ModelMessage, UIMessage } from 'ai';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { BaseMessage, StoredMessage } from '@langchain/core/messages';
import {
  buildPostCompactMessages,
  compactConversation,
  Compactor,
  microCompact,
  shouldAutoCompact,
  stripImagesFromMessages,
  tokenCountWithEstimation,
  truncateHeadForPTLRetry,
  type CompactContext,
  type IsOtherShape,
  type Message,
} from 'context-compaction';
import { expectType, type Equal } from './expect.js';


declare const context: CompactContext;
declare const anthropic: MessageParam[];
declare const model: ModelMessage[];
declare const ui: UIMessage[];
declare const chat: ChatCompletionMessageParam[];
declare const items: ResponseInputItem[];
declare const langchain: BaseMessage[];
declare const stored: StoredMessage[];

// Every ecosystem's own type is accepted as it is.
tokenCountWithEstimation(anthropic);
tokenCountWithEstimation(model);
tokenCountWithEstimation(ui);
tokenCountWithEstimation(chat);
tokenCountWithEstimation(items);
tokenCountWithEstimation(langchain);
tokenCountWithEstimation(stored);
shouldAutoCompact(ui, 'gpt-5');

// The usage each SDK reports is accepted as it is, for messages that carry none.
declare const aiUsage: LanguageModelUsage;
declare const chatUsage: CompletionUsage;
shouldAutoCompact(model, 'gpt-5', { usage: aiUsage });
tokenCountWithEstimation(chat, { usage: chatUsage, usageAt: 3 });
// The system prompt and tools in each SDK's own form.
declare const anthropicTools: Array<import('@anthropic-ai/sdk/resources/messages').Tool>;
declare const chatTools: Array<import('openai/resources/chat/completions').ChatCompletionTool>;
tokenCountWithEstimation(anthropic, { system: [{ type: 'text', text: 'You are terse.' }], tools: anthropicTools });
shouldAutoCompact(chat, 'gpt-5', { system: 'You are terse.', tools: chatTools });

// Edits come back as the caller's type.
expectType<Equal<ReturnType<typeof microCompact<ModelMessage>>['messages'], ModelMessage[]>>();
expectType<Equal<ReturnType<typeof stripImagesFromMessages<UIMessage>>, UIMessage[]>>();
expectType<Equal<ReturnType<typeof microCompact<BaseMessage>>['messages'], BaseMessage[]>>();
expectType<Equal<ReturnType<typeof microCompact<ChatCompletionMessageParam>>['messages'], ChatCompletionMessageParam[]>>();

// Only Anthropic messages and lines get a boundary line after a compaction; the other
// shapes get their own type back, ready for their client with no cast.
expectType<Equal<IsOtherShape<MessageParam>, false>>();
expectType<Equal<IsOtherShape<Message>, false>>();
expectType<Equal<IsOtherShape<ModelMessage>, true>>();
expectType<Equal<IsOtherShape<UIMessage>, true>>();
expectType<Equal<IsOtherShape<ChatCompletionMessageParam>, true>>();
expectType<Equal<IsOtherShape<ResponseInputItem>, true>>();
expectType<Equal<IsOtherShape<BaseMessage>, true>>();
expectType<Equal<IsOtherShape<StoredMessage>, true>>();

export async function afterCompaction(): Promise<void> {
  const nextModel: ModelMessage[] = buildPostCompactMessages(await compactConversation(model, context));
  const nextUi: UIMessage[] = buildPostCompactMessages(await compactConversation(ui, context));
  const nextChat: ChatCompletionMessageParam[] = buildPostCompactMessages(await compactConversation(chat, context));
  const nextItems: ResponseInputItem[] = buildPostCompactMessages(await compactConversation(items, context));
  const nextLangchain: BaseMessage[] = buildPostCompactMessages(await compactConversation(langchain, context));
  const truncated = truncateHeadForPTLRetry(chat, 'prompt is too long');
  const c = new Compactor<ModelMessage>({ model: 'gpt-5' });
  c.push({ role: 'user', content: 'hello' });
  const kept: ModelMessage[] = c.messages;
  void [nextModel, nextUi, nextChat, nextItems, nextLangchain, truncated, kept];
}
