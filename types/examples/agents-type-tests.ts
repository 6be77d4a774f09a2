// Type-level tests of the agent helpers with the SDKs' own types (round 17): the documented
// calls type-check with no cast. Nothing here runs; checked by `bash types/check.sh`.

import Anthropic from '@anthropic-ai/sdk';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Compactor, ContextCompactionError, buildApiContextManagement, offlineSummarizer } from 'context-compaction';
import { compactionPrepareStep } from '../../js/agents/ai-sdk.js';
import { runToolLoop } from '../../js/agents/anthropic.js';
import { expectType, type Equal } from './expect.js';

const summarize = offlineSummarizer();
const model = new MockLanguageModelV3();

// compactionPrepareStep is generateText's / streamText's `prepareStep`, with or without tools
// (a PrepareStepFunction<any> was not: its activeTools were `keyof any`).
const prepareStep = compactionPrepareStep({ summarize });
const readFile = tool({ description: 'Reads a file', inputSchema: jsonSchema<{ path: string }>({ type: 'object' }), execute: async ({ path }) => path });
export async function aiSdkRuns(): Promise<void> {
  const plain = await generateText({ model, messages: [{ role: 'user', content: 'hi' }], stopWhen: stepCountIs(5), prepareStep });
  const withTools = await generateText({ model, tools: { readFile }, messages: [{ role: 'user', content: 'hi' }], prepareStep });
  streamText({ model, tools: { readFile }, messages: [{ role: 'user', content: 'hi' }], prepareStep });
  prepareStep.conversation([...plain.response.messages, ...withTools.response.messages], withTools);
  // The caller's own prepareStep, typed for its tools.
  compactionPrepareStep({ summarize, prepareStep: async ({ stepNumber }) => (stepNumber > 2 ? { activeTools: ['readFile'] } : undefined) });
}

// runToolLoop over `client.messages`, and over `client.beta` with the API's own compaction
// (README "Agent loops"): the beta request's `context_management` and `betas`.
declare const anthropic: Anthropic;
const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize });
export async function anthropicRuns(): Promise<void> {
  const ga = await runToolLoop({ client: anthropic, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 1024 } });
  expectType<Equal<typeof ga.message, Anthropic.Message>>();
  const beta = await runToolLoop({
    client: anthropic.beta,
    compactor,
    request: { model: 'claude-sonnet-4-5', max_tokens: 1024, betas: ['compact-2026-01-12'], context_management: buildApiContextManagement({ compact: true, pauseAfterCompaction: true }) },
  });
  expectType<Equal<typeof beta.message, Anthropic.Beta.BetaMessage>>();
}

// A failed request is the library's coded error: PROVIDER_ERROR with the SDK's status, the
// SDK's own error as its cause (round 19).
export async function anthropicFailure(): Promise<void> {
  try {
    await runToolLoop({ client: anthropic, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 1024 } });
  } catch (e) {
    if (e instanceof ContextCompactionError && e.code === 'PROVIDER_ERROR') {
      expectType<Equal<typeof e.status, number | undefined>>();
      if (e.cause instanceof Anthropic.APIError) void e.cause.headers;
    }
  }
}
