//! Message shapes: which ecosystem's message objects a conversation is made of.
//!
//! The views read each message in its own ecosystem's terms (what its role, content, tool
//! calls and tool results are). A message that fits several shapes (`{role: 'user', content:
//! 'hi'}` is valid in most) is [`Shape::Any`]; the first message of a specific shape decides
//! the array's shape, and a later message of another specific shape is a
//! [`ErrorCode::MixedShapes`] error naming both.

use crate::model::error::{Error, ErrorCode, Result};

/// The ecosystem a message belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Fits several shapes (plain `{role, content}` with string content, text-only parts).
    Any,
    /// Anthropic Messages API messages and Claude Code transcript lines.
    Anthropic,
    /// Vercel AI SDK `ModelMessage` (`tool` role, `tool-call` / `tool-result` parts).
    AiSdkModel,
    /// Vercel AI SDK `UIMessage` (`parts`, tool parts holding input and output).
    AiSdkUi,
    /// OpenAI Chat Completions messages (`tool_calls`, `tool` with `tool_call_id`).
    OpenAiChat,
    /// OpenAI Responses input items (`function_call`, `function_call_output`, …).
    OpenAiResponses,
    /// LangChain JS messages: instances, stored (`{type, data}`) or serialized (`{lc: 1}`).
    LangChain,
}

impl Shape {
    /// Every shape, by code (the number the JS readers write into a message's header).
    pub const ALL: [Shape; 7] = [
        Shape::Any,
        Shape::Anthropic,
        Shape::AiSdkModel,
        Shape::AiSdkUi,
        Shape::OpenAiChat,
        Shape::OpenAiResponses,
        Shape::LangChain,
    ];

    /// The shape with this code; `None` for an unknown code.
    pub fn from_code(code: u32) -> Option<Shape> {
        Shape::ALL.get(code as usize).copied()
    }

    /// The code of this shape (its index in [`Shape::ALL`]).
    pub fn code(self) -> u32 {
        Shape::ALL.iter().position(|s| *s == self).unwrap_or(0) as u32
    }

    /// The stable name (also what an option naming the shape would accept).
    pub fn name(self) -> &'static str {
        match self {
            Shape::Any => "any",
            Shape::Anthropic => "anthropic",
            Shape::AiSdkModel => "ai-sdk-model",
            Shape::AiSdkUi => "ai-sdk-ui",
            Shape::OpenAiChat => "openai-chat",
            Shape::OpenAiResponses => "openai-responses",
            Shape::LangChain => "langchain",
        }
    }

    /// Whether a message a compaction keeps in this shape must lose its usage: the counts read
    /// usage from such messages (LangChain's `usage_metadata`), and no boundary line in the
    /// compacted conversation says which messages were kept from the old context (Anthropic
    /// messages and lines have one; the other shapes' usage is not read from messages).
    pub fn kept_usage_is_stale(self) -> bool {
        self == Shape::LangChain
    }

    /// The shape with this [`Shape::name`].
    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.iter().copied().find(|s| s.name() == name)
    }

    /// Whether this is another ecosystem's shape (not Anthropic messages or lines, not
    /// plain): what a compaction converts, and answers in that shape.
    pub fn is_foreign(self) -> bool {
        !matches!(self, Shape::Any | Shape::Anthropic)
    }

    /// Whether a conversation of this shape may hold messages of `other` as its own: LangChain
    /// reads OpenAI Chat messages as plain dicts (its `coerceMessageLikeToMessage` turns
    /// `{role, content, tool_calls, tool_call_id}` into its messages), so a conversation the
    /// caller names `'langchain'` may hold them. A detected shape never mixes.
    pub fn reads(self, other: Shape) -> bool {
        self == other || (self == Shape::LangChain && other == Shape::OpenAiChat)
    }

    /// How error messages call the shape.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::Any => "a plain {role, content} message",
            Shape::Anthropic => {
                "an Anthropic message (Messages API or Claude Code transcript line)"
            }
            Shape::AiSdkModel => "a Vercel AI SDK ModelMessage",
            Shape::AiSdkUi => "a Vercel AI SDK UIMessage",
            Shape::OpenAiChat => "an OpenAI Chat Completions message",
            Shape::OpenAiResponses => "an OpenAI Responses input item",
            Shape::LangChain => "a LangChain message",
        }
    }
}

/// The shape of an array, learnt message by message as a view reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShapeOf {
    /// The first message of a specific shape: its shape and index.
    first: Option<(Shape, usize)>,
    /// The shape the caller named (the `shape` option): every message must fit it.
    named: Option<Shape>,
    /// Whether a message that fits no Anthropic or AI SDK conversation, but every OpenAI one,
    /// was seen (a plain `developer` message: the Messages API and the AI SDK have no such
    /// role): with no specific shape seen, the array is then answered as OpenAI Chat
    /// messages, whose plain `{role, content}` messages the Responses API and LangChain read
    /// too, never as Anthropic messages with a transcript line.
    openai_plain: bool,
}

/// The shape code a reader writes for a plain message only OpenAI's shapes hold (a
/// `developer` message): no [`Shape::code`] (see [`ShapeOf::see_code`]).
pub const OPENAI_PLAIN_CODE: u32 = 7;

impl ShapeOf {
    /// The shape of an array the caller says is of `shape` (the `shape` option): a message
    /// of another specific shape is then a [`ErrorCode::MixedShapes`] error naming the option,
    /// and plain messages are read and answered as that shape. [`Shape::Any`] names nothing.
    pub fn named(shape: Shape) -> ShapeOf {
        ShapeOf {
            first: None,
            named: (shape != Shape::Any).then_some(shape),
            openai_plain: false,
        }
    }

    /// Records that message `i` is of `shape`; a specific shape other than the one already
    /// seen is a [`ErrorCode::MixedShapes`] error naming both messages.
    pub fn see(&mut self, i: usize, shape: Shape) -> Result<()> {
        if shape == Shape::Any {
            return Ok(());
        }
        if let Some(n) = self.named {
            if n != shape && n.reads(shape) {
                return Ok(());
            }
            if n != shape {
                return Err(Error::new(
                    ErrorCode::MixedShapes,
                    format!(
                        "messages[{i}] is {} but the `shape` option says the messages are {} ('{}')",
                        shape.describe(),
                        n.describe(),
                        n.name()
                    ),
                ));
            }
        }
        match self.first {
            None => {
                self.first = Some((shape, i));
                Ok(())
            }
            Some((s, _)) if s == shape => Ok(()),
            Some((s, j)) => {
                let (a, b) = if j < i {
                    ((j, s), (i, shape))
                } else {
                    ((i, shape), (j, s))
                };
                Err(Error::new(
                    ErrorCode::MixedShapes,
                    format!(
                        "messages[{}] is {} but messages[{}] is {}: one array must hold one shape of message",
                        b.0,
                        b.1.describe(),
                        a.0,
                        a.1.describe()
                    ),
                ))
            }
        }
    }

    /// Records that a plain message of OpenAI's only was seen (see [`ShapeOf::shape`]): it
    /// fits every OpenAI shape, so it never conflicts with one, nor with the shape named.
    pub fn see_openai_plain(&mut self) {
        self.openai_plain = true;
    }

    /// [`ShapeOf::see`] of message `i` by the shape code a reader wrote for it
    /// ([`Shape::code`], or [`OPENAI_PLAIN_CODE`]; any other code fits every shape).
    pub fn see_code(&mut self, i: usize, code: u32) -> Result<()> {
        if code == OPENAI_PLAIN_CODE {
            self.see_openai_plain();
        }
        self.see(i, Shape::from_code(code).unwrap_or(Shape::Any))
    }

    /// The array's shape as far as it was read ([`Shape::Any`] when nothing specific was
    /// seen; [`Shape::OpenAiChat`] when only plain messages were, one of them OpenAI's only).
    pub fn shape(&self) -> Shape {
        self.named
            .or(self.first.map(|(s, _)| s))
            .or(self.openai_plain.then_some(Shape::OpenAiChat))
            .unwrap_or(Shape::Any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes18_a_plain_openai_message_answers_as_chat_and_yields_to_any_shape() {
        let mut of = ShapeOf::default();
        of.see(0, Shape::Any).unwrap();
        of.see_openai_plain();
        assert_eq!(of.shape(), Shape::OpenAiChat);
        // A Responses item (or any specific shape) after it decides; no conflict.
        of.see(2, Shape::OpenAiResponses).unwrap();
        assert_eq!(of.shape(), Shape::OpenAiResponses);
        let mut named = ShapeOf::named(Shape::LangChain);
        named.see_openai_plain();
        assert_eq!(named.shape(), Shape::LangChain);
    }

    #[test]
    fn codes_round_trip() {
        assert_eq!(Shape::from_code(OPENAI_PLAIN_CODE), None);
        for (k, s) in Shape::ALL.iter().enumerate() {
            assert_eq!(Shape::from_code(k as u32), Some(*s));
            assert_eq!(s.code(), k as u32);
        }
        assert_eq!(Shape::from_code(7), None);
        for s in Shape::ALL {
            assert_eq!(Shape::from_name(s.name()), Some(s));
        }
        assert_eq!(Shape::from_name("openai"), None);
        let foreign: Vec<_> = Shape::ALL.into_iter().filter(|s| s.is_foreign()).collect();
        assert_eq!(foreign.len(), 5, "all but plain and Anthropic");
    }

    #[test]
    fn plain_messages_fit_any_shape() {
        let mut of = ShapeOf::default();
        of.see(0, Shape::Any).unwrap();
        of.see(1, Shape::OpenAiChat).unwrap();
        of.see(2, Shape::Any).unwrap();
        of.see(3, Shape::OpenAiChat).unwrap();
        assert_eq!(of.shape(), Shape::OpenAiChat);
    }

    #[test]
    fn a_named_shape_holds_for_plain_messages_and_refuses_others() {
        let mut of = ShapeOf::named(Shape::OpenAiChat);
        assert_eq!(of.shape(), Shape::OpenAiChat, "before any message is read");
        of.see(0, Shape::Any).unwrap();
        of.see(1, Shape::OpenAiChat).unwrap();
        let e = of.see(2, Shape::AiSdkModel).unwrap_err();
        assert_eq!(e.code, ErrorCode::MixedShapes);
        assert!(e
            .message
            .starts_with("messages[2] is a Vercel AI SDK ModelMessage"));
        assert!(e.message.contains("'openai-chat'"), "{}", e.message);
        assert_eq!(ShapeOf::named(Shape::Any), ShapeOf::default());
    }

    #[test]
    fn a_langchain_conversation_may_hold_openai_chat_dicts() {
        let mut of = ShapeOf::named(Shape::LangChain);
        of.see(0, Shape::LangChain).unwrap();
        of.see(1, Shape::OpenAiChat).unwrap();
        of.see(2, Shape::LangChain).unwrap();
        assert_eq!(of.shape(), Shape::LangChain);
        assert!(of.see(3, Shape::AiSdkModel).is_err());
        let mut detected = ShapeOf::default();
        detected.see(0, Shape::LangChain).unwrap();
        assert!(detected.see(1, Shape::OpenAiChat).is_err());
        assert!(ShapeOf::named(Shape::OpenAiChat)
            .see(0, Shape::LangChain)
            .is_err());
    }

    #[test]
    fn a_second_specific_shape_names_both_indices() {
        let mut of = ShapeOf::default();
        of.see(4, Shape::AiSdkModel).unwrap();
        let e = of.see(2, Shape::LangChain).unwrap_err();
        assert_eq!(e.code, ErrorCode::MixedShapes);
        assert!(e
            .message
            .starts_with("messages[4] is a Vercel AI SDK ModelMessage"));
        assert!(e.message.contains("messages[2] is a LangChain message"));
    }
}
