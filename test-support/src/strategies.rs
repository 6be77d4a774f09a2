//! Proptest strategies over the conversation model: random conversations that are valid for
//! the Messages API by construction (no [`Damage`]), in the Claude Code style, in both
//! shapes. Every part shrinks on its own (fewer turns, responses, tools, shorter text).

use proptest::prelude::*;

use crate::model::*;

/// Text of `min..max` characters: cycled alphabets (ASCII prose, non-BMP / accented, JSON,
/// escapes) or words; lengths near 0, anywhere in the range, and 33 / 34 (edges of the
/// estimate's rounding).
pub fn txt(min: usize, max: usize) -> impl Strategy<Value = Txt> {
    let lens = prop_oneof![
        4 => min..(min + 64).min(max),
        3 => min..max,
        1 => Just(33usize.max(min)),
        1 => Just(34usize.max(min)),
    ];
    (lens, 0..5u8, any::<u16>()).prop_map(|(len, alpha, seed)| {
        let len = len.min(usize::from(u16::MAX)) as u16;
        if alpha == 4 {
            Txt::Words { len, seed }
        } else {
            Txt::Cycle { len, alpha }
        }
    })
}

/// A block of a user prompt (mostly text).
pub fn user_block() -> impl Strategy<Value = UserBlock> {
    prop_oneof![
        6 => txt(1, 1200).prop_map(UserBlock::Text),
        1 => (0..3u8).prop_map(UserBlock::Image),
        1 => (0..3u8).prop_map(UserBlock::Document),
        1 => prop_oneof![(0..3u8).prop_map(UserBlock::Unknown), Just(UserBlock::Upload)],
    ]
}

/// A block inside a tool result.
pub fn nested() -> impl Strategy<Value = Nested> {
    prop_oneof![
        3 => txt(0, 2000).prop_map(Nested::Text),
        1 => (0..3u8).prop_map(Nested::Image),
        1 => (0..3u8).prop_map(Nested::Document),
    ]
}

/// A tool result's content.
pub fn result_body() -> impl Strategy<Value = ResultBody> {
    prop_oneof![
        8 => txt(0, 4000).prop_map(ResultBody::Str),
        1 => Just(ResultBody::Cleared),
        3 => prop::collection::vec(nested(), 0..4).prop_map(ResultBody::Blocks),
        1 => Just(ResultBody::Absent),
    ]
}

/// A tool call and its result.
pub fn tool() -> impl Strategy<Value = Tool> {
    (
        0..ALL_TOOL_NAMES.len() as u8,
        prop::option::weighted(0.8, 0..4u8),
        result_body(),
        prop::bool::weighted(0.12),
        any::<u8>(),
    )
        .prop_map(|(name, path, result, is_error, finish)| Tool {
            name,
            path,
            result,
            is_error,
            finish,
        })
}

/// A thinking or redacted thinking block.
pub fn thought() -> impl Strategy<Value = Thought> {
    prop_oneof![
        3 => txt(1, 600).prop_map(Thought::Thinking),
        1 => (1..300u16).prop_map(Thought::Redacted),
    ]
}

/// Plausible usage counts (input, cache creation, cache read, output).
pub fn usage() -> impl Strategy<Value = [Count; 4]> {
    (0..50u32, 0..30_000u32, 0..150_000u32, 1..4_000u32)
        .prop_map(|(a, b, c, d)| [Count::Int(a), Count::Int(b), Count::Int(c), Count::Int(d)])
}

/// One response of the assistant.
pub fn response() -> impl Strategy<Value = Response> {
    (
        (
            prop::collection::vec(thought(), 0..3),
            prop::option::weighted(0.8, txt(1, 1000)),
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.1),
            prop::collection::vec(tool(), 0..5),
        ),
        (
            prop::option::weighted(0.65, usage()),
            prop::bool::weighted(0.65),
            0..3u8,
            any::<bool>(),
        ),
    )
        .prop_map(
            |((thoughts, text, search, unknown, tools), (usage, split, stop, search_first))| {
                Response {
                    thoughts,
                    text,
                    search,
                    unknown,
                    tools,
                    usage,
                    split,
                    partial: stop == 0,
                    api_usage: true,
                    stop_every_line: stop == 1,
                    search_first,
                }
            },
        )
}

/// A user turn and its responses.
pub fn turn() -> impl Strategy<Value = Turn> {
    (
        prop::collection::vec(user_block(), 1..4),
        prop::bool::weighted(0.45),
        prop::collection::vec(0..ATTACHMENT_TYPES.len() as u8, 0..3),
        prop::collection::vec(response(), 1..5),
    )
        .prop_map(|(prompt, prompt_as_string, attachments, responses)| Turn {
            prompt,
            prompt_as_string,
            meta: false,
            attachments,
            responses,
        })
}

/// A noise line (transcripts).
pub fn noise() -> impl Strategy<Value = Noise> {
    prop_oneof![
        Just(Noise::Progress),
        Just(Noise::System),
        (0..3u8).prop_map(Noise::SystemSubtype),
        Just(Noise::Snapshot),
        Just(Noise::Unknown),
        any::<u32>().prop_map(Noise::SidechainAssistant),
        Just(Noise::SidechainResult),
        txt(1, 200).prop_map(Noise::SidechainUser),
        Just(Noise::SidechainBoundary),
        Just(Noise::Summary),
    ]
}

/// Whether and where a generated transcript has a compact boundary.
#[derive(Clone, Copy, Debug)]
pub enum Boundary {
    /// With this probability.
    Sometimes(f64),
    /// Always (and the conversation is a transcript).
    Always,
}

/// A valid conversation of `1..max_turns` turns in the Claude Code style, in either shape
/// (a transcript when `boundary` is [`Boundary::Always`]).
pub fn convo_with(max_turns: usize, boundary: Boundary) -> impl Strategy<Value = Convo> {
    let (transcript, boundary_after) = match boundary {
        Boundary::Sometimes(p) => (
            any::<bool>().boxed(),
            prop::option::weighted(p, any::<u16>()).boxed(),
        ),
        Boundary::Always => (Just(true).boxed(), any::<u16>().prop_map(Some).boxed()),
    };
    (
        transcript,
        prop::collection::vec(turn(), 1..max_turns),
        prop::collection::vec((any::<u16>(), noise()), 0..12),
        boundary_after,
        prop::option::weighted(0.2, 0..6u8),
        1..900u32,
    )
        .prop_map(
            |(transcript, turns, noise, boundary_after, boundary_kept, step_seconds)| {
                let mut c = Convo {
                    transcript,
                    turns,
                    noise,
                    boundary_after,
                    boundary_kept: boundary_kept.filter(|_| boundary_after.is_some()),
                    damage: None,
                    style: Style::ClaudeCode,
                    step_seconds,
                };
                // API shape: usage beside the content; transcripts: usage on every line.
                for r in c.turns.iter_mut().flat_map(|t| t.responses.iter_mut()) {
                    r.api_usage = !transcript;
                }
                c
            },
        )
}

/// [`convo_with`]`(8, Boundary::Sometimes(0.2))`.
pub fn convo() -> impl Strategy<Value = Convo> {
    convo_with(8, Boundary::Sometimes(0.2))
}

/// Transcripts that always carry a compact boundary.
pub fn convo_with_boundary() -> impl Strategy<Value = Convo> {
    convo_with(6, Boundary::Always)
}

/// [`convo_with`] restricted to what the Claude Code of the reliability suite writes: every
/// prompt starts with text, every response is finished (its stop reason on every line, no
/// mid-stream usage) and, of the noise
/// lines, progress, `turn_duration`, snapshot, unknown-type and sub-agent assistant lines only.
pub fn finished_convo_with(max_turns: usize) -> impl Strategy<Value = Convo> {
    convo_with(max_turns, Boundary::Sometimes(0.2)).prop_map(|mut c| {
        for (k, t) in c.turns.iter_mut().enumerate() {
            if !matches!(t.prompt.first(), Some(UserBlock::Text(_))) {
                t.prompt.insert(
                    0,
                    UserBlock::Text(Txt::Words {
                        len: 40,
                        seed: k as u16,
                    }),
                );
            }
        }
        for r in c.turns.iter_mut().flat_map(|t| t.responses.iter_mut()) {
            r.partial = false;
            r.stop_every_line = true;
        }
        c.noise.retain(|(_, n)| {
            matches!(
                n,
                Noise::Progress
                    | Noise::SystemSubtype(0)
                    | Noise::Snapshot
                    | Noise::Unknown
                    | Noise::SidechainAssistant(_)
            )
        });
        c
    })
}
