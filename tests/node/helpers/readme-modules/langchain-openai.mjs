// Stand-in for `@langchain/openai` in the README samples: `ChatOpenAI` is LangChain's own fake
// chat model, answering summary requests with a summary.
import { FakeListChatModel } from '@langchain/core/utils/testing';

export class ChatOpenAI extends FakeListChatModel {
  constructor(fields = {}) {
    super({ responses: [`<summary>\n${'The user is building a parser in src/parser.ts; the tests pass. '.repeat(20)}\n</summary>`] });
    this.fields = fields;
  }
}
