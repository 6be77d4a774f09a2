// Type-level tests of the summarizers for OpenAI, the AI SDK and LangChain: each is a
// `Summarizer` the library accepts, and each takes the ecosystem's own objects as they are (the
// AI SDK's model and functions, a LangChain chat model class) with no cast. Nothing here runs;
// checked by `bash types/check.sh`.

import { generateText, streamText, type LanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import {
  anthropicSummarizer,
  compactConversation,
  langchainSummarizer,
  openaiSummarizer,
  type Message,
  type OpenAiApiErrorCode,
  type Summarizer,
  type SummarizerErrorCode,
} from 'context-compaction';
import { aiSdkSummarizer } from '../../js/ai-sdk.js';
import { expectType, type Equal } from './expect.js';

declare const messages: Message[];
declare const languageModel: Exclude<LanguageModel, string>;
declare const chatModel: BaseChatModel;

const openai: Summarizer = openaiSummarizer({ model: 'gpt-4.1-mini', api: 'responses', maxOutputTokens: 16_384 });
const viaAiSdk: Summarizer = aiSdkSummarizer(languageModel, { generateText, streamText, maxRetries: 1 });
const viaMock: Summarizer = aiSdkSummarizer(new MockLanguageModelV3(), { generateText });
const viaGateway: Summarizer = aiSdkSummarizer('openai/gpt-4.1-mini');
const viaLangChain: Summarizer = langchainSummarizer(chatModel, { callOptions: { tags: ['compaction'] } });
const viaFake: Summarizer = langchainSummarizer(new FakeListChatModel({ responses: ['x'] }));
void compactConversation(messages, { model: 'gpt-4.1', summarize: openai });
void [viaAiSdk, viaMock, viaGateway, viaLangChain, viaFake];

expectType<Equal<ReturnType<typeof openaiSummarizer>['api'], 'chat' | 'responses'>>();
expectType<Equal<OpenAiApiErrorCode, 'OPENAI_API_ERROR' | 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE'>>();
expectType<Equal<Extract<SummarizerErrorCode, 'PROMPT_TOO_LONG'>, 'PROMPT_TOO_LONG'>>();
// The id of the model a LangChain summarizer calls, read by the library (summaryModel).
expectType<Equal<ReturnType<typeof langchainSummarizer>['summaryModel'], string | undefined>>();

// Summarizer headers in every form the runtime reads: a record, pairs (an array or another
// iterable), a Map, a Headers.
openaiSummarizer({ headers: { 'openai-beta': 'x', 'x-drop': null } });
openaiSummarizer({ headers: [['openai-beta', 'x']] });
openaiSummarizer({ headers: new Map([['openai-beta', 'x']]) });
openaiSummarizer({ headers: new Map<string, string | null>([['x-drop', null]]) });
openaiSummarizer({ headers: new Headers([['openai-beta', 'x']]) });
openaiSummarizer({ headers: new Set([['openai-beta', 'x'] as const]) });
anthropicSummarizer({ headers: new Map([['anthropic-beta', 'x']]) });
anthropicSummarizer({ headers: [['anthropic-beta', 'x']] });
// @ts-expect-error a header line is not a form of headers
anthropicSummarizer({ headers: 'anthropic-beta: x' });
// @ts-expect-error a pair of three
openaiSummarizer({ headers: [['openai-beta', 'x', 'y']] });

// @ts-expect-error an unknown API name
openaiSummarizer({ api: 'completions' });
// @ts-expect-error a misspelt option
langchainSummarizer(chatModel, { maxRetry: 1 });
