//! Saving and restoring a [`Session`](crate::drive::session::Session): the rules of
//! `Compactor.snapshot()` and `Compactor.restore()`.
//!
//! A snapshot is small, plain JSON data, the same on every machine:
//!
//! ```json
//! { "format": "context-compaction/compactor", "v": 1,
//!   "messages": 12, "fingerprint": "5c0d9e31a2b7f4e8", "tokenCount": 48210,
//!   "consecutiveFailures": 2,
//!   "thrash": { "turnsSinceCompaction": 2, "rapidRefills": 1, "thrashing": false },
//!   "check": "aa7729ae91d95a1d" }
//! ```
//!
//! It holds what the messages cannot give back (the failures in a row of automatic
//! compaction, the thrashing detection) and what checks that the messages given to `restore`
//! are the ones it was taken of: their number, a fingerprint and the running count. The
//! messages themselves are not in it: the caller stores them where it stores its
//! conversation, and the running count is rebuilt from them.
//!
//! The fingerprint folds, message by message, exactly what the running count reads of each
//! message (its kind, sub-agent and boundary flags, `message.id`, its usage and its estimated
//! size: [`MessageFacts`]). Messages with the same fingerprint therefore give the same count
//! and the same decisions; it costs nothing beyond reading the messages, which restoring does
//! anyway (no text is copied or hashed). A compaction running when the snapshot is taken is
//! not in it: restored, the conversation is the one held then, as if that compaction had
//! been abandoned.
//!
//! Every value is checked: a snapshot of another format, a field of the wrong type, an
//! unknown field or a `check` that does not match the content is `INVALID_SNAPSHOT`; a
//! version this library does not know is `UNSUPPORTED_SNAPSHOT_VERSION`; messages that are
//! not the ones of the snapshot are `SNAPSHOT_MISMATCH`. Nothing is ever restored partly.

use serde_json::{json, Value};

use crate::drive::autocompact::ThrashDetector;
use crate::drive::options::Source;
use crate::measure::calibration::{Calibration, Observation, MAX_OBSERVATIONS};
use crate::measure::tokens::MessageFacts;
use crate::model::error::{Error, ErrorCode, Result};
use crate::model::messages::Kind;
use crate::model::number::js_text;
use crate::model::view::UsageCounts;

/// The `format` every snapshot carries.
pub const SNAPSHOT_FORMAT: &str = "context-compaction/compactor";
/// The snapshot version this library writes (and the only one it reads).
pub const SNAPSHOT_VERSION: u32 = 1;
/// The keys of a version-1 snapshot.
const KEYS: &[&str] = &[
    "usage",
    "calibration",
    "calibrationClean",
    "format",
    "v",
    "messages",
    "fingerprint",
    "tokenCount",
    "consecutiveFailures",
    "thrash",
    "check",
];
/// The fields of its `usage` (given with `Compactor.setUsage`; absent when none).
const USAGE_KEYS: &[&str] = &[
    "at",
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
];
/// The keys of its `thrash` object.
const THRASH_KEYS: &[&str] = &[
    "turnsSinceCompaction",
    "rapidRefills",
    "thrashing",
    "pausedAtThreshold",
];

/// The 64-bit mix of the fingerprint and the check. Frozen: it is part of snapshot format 1
/// (a snapshot written on one machine is checked on another, by another build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mix(u64);

impl Mix {
    const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
    const START: Mix = Mix(0x243f_6a88_85a3_08d3);

    fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(Self::SEED);
    }

    fn bytes(&mut self, b: &[u8]) {
        self.word(b.len() as u64);
        for chunk in b.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.word(u64::from_le_bytes(w));
        }
    }

    /// The final value, avalanched (splitmix64's finaliser).
    fn finish(self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The fingerprint of a conversation, folded message by message (order matters): see the
/// module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint(Mix);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(Mix::START)
    }
}

impl Fingerprint {
    /// Folds in the next message.
    pub fn push(&mut self, f: &MessageFacts) {
        let m = &mut self.0;
        // Fixed codes (not the enum's discriminants): part of the format.
        let kind = match f.kind {
            None => 0,
            Some(Kind::User) => 1,
            Some(Kind::Assistant) => 2,
            Some(Kind::System) => 3,
            Some(Kind::Attachment) => 4,
            Some(Kind::Other) => 5,
        };
        let flags = u64::from(f.sidechain)
            | u64::from(f.boundary) << 1
            | u64::from(f.partial) << 2
            | u64::from(f.usage.is_some()) << 3
            | u64::from(f.id.is_some()) << 4
            | u64::from(f.clears_at_user) << 5;
        m.word(kind | flags << 8);
        m.word(f.tokens);
        m.word(f.boundary_kept as u64);
        if let Some(u) = &f.usage {
            m.word(u.input_tokens);
            m.word(u.cache_creation_input_tokens);
            m.word(u.cache_read_input_tokens);
            m.word(u.output_tokens);
        }
        if let Some(id) = &f.id {
            m.bytes(id.as_bytes());
        }
    }

    /// The fingerprint as a number.
    pub fn value(&self) -> u64 {
        self.0.finish()
    }
}

/// The state of a session that a snapshot carries, and what checks it against the messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSnapshot {
    /// How many messages the session held.
    pub messages: usize,
    /// Their [`Fingerprint`].
    pub fingerprint: u64,
    /// Their running count (`tokenCount()`).
    pub token_count: u64,
    /// Failed automatic compactions in a row.
    pub consecutive_failures: u32,
    /// The thrashing detection.
    pub thrash: ThrashDetector,
    /// Usage given with `Compactor.setUsage` since the last compaction, and how many
    /// messages were held when it was given.
    pub usage: Option<(usize, UsageCounts)>,
    /// What the usage seen taught (also before compactions: the messages cannot give it
    /// back). Saved as `calibration: [[estimated, real], …]`, absent when empty, and, when
    /// some of those requests held a tool result cleared since, the observations of the
    /// others as `calibrationClean` (absent otherwise: snapshots of conversations without
    /// cleared results, and those written before it, read as before).
    pub calibration: Calibration,
}

/// 16 lower-case hex digits.
fn hex(n: u64) -> String {
    format!("{n:016x}")
}

/// An `INVALID_SNAPSHOT` error.
fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidSnapshot, message)
}

/// A non-negative integer field that fits `max`.
fn integer<S: Source>(obj: &S, key: &str, what: &str, max: f64) -> Result<u64> {
    match obj.get(key).number() {
        Some(n) if n.fract() == 0.0 && (0.0..=max).contains(&n) => Ok(n as u64),
        Some(n) => Err(invalid(format!(
            "{what}.{key} must be a non-negative integer up to {max}, got {}",
            js_text(n)
        ))),
        None => Err(invalid(format!(
            "{what}.{key} is missing or not a number (a non-negative integer)"
        ))),
    }
}

/// Rejects a key of `obj` that is not in `known`.
fn closed<S: Source>(obj: &S, what: &str, known: &[&str]) -> Result<()> {
    let keys = obj
        .keys()
        .map_err(|e| invalid(format!("{what}: {}", e.message)))?;
    match keys.into_iter().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(invalid(format!(
            "{what}.{k} is not a field of a version-{SNAPSHOT_VERSION} snapshot; its fields: {}",
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Reads `calibration` and `calibrationClean` (see [`SessionSnapshot::calibration`]).
fn calibration_field<S: Source>(v: &S) -> Result<Calibration> {
    let all = observations_field(v, "calibration")?.unwrap_or_default();
    let clean = observations_field(v, "calibrationClean")?;
    Ok(Calibration::from_sets(all, clean))
}

/// Reads the field `key`: at most [`MAX_OBSERVATIONS`] pairs `[estimated, real]` of
/// non-negative integers (`None`: absent).
fn observations_field<S: Source>(v: &S, key: &str) -> Result<Option<Vec<Observation>>> {
    let field = v.get(key);
    if field.is_absent() {
        return Ok(None);
    }
    let bad = || {
        invalid(format!(
            "snapshot.{key} must be an array of at most {MAX_OBSERVATIONS} pairs \
             [estimated, real] of non-negative integers"
        ))
    };
    let items = field.items().ok_or_else(bad)?;
    if items.len() > MAX_OBSERVATIONS {
        return Err(bad());
    }
    let mut seen = Vec::with_capacity(items.len());
    for pair in items {
        let pair = pair.items().ok_or_else(bad)?;
        if pair.len() != 2 {
            return Err(bad());
        }
        let whole = |k: usize| match pair[k].number() {
            Some(x) if x.fract() == 0.0 && (0.0..=MAX_SAFE).contains(&x) => Ok(x as u64),
            _ => Err(bad()),
        };
        seen.push(Observation {
            estimated: whole(0)?,
            real: whole(1)?,
        });
    }
    Ok(Some(seen))
}

/// The largest integer a JSON number holds exactly (2^53 − 1).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

impl SessionSnapshot {
    /// The check over every other field: a snapshot edited or damaged in storage does not
    /// match it.
    fn check(&self) -> u64 {
        let mut m = Mix::START;
        m.bytes(SNAPSHOT_FORMAT.as_bytes());
        m.word(u64::from(SNAPSHOT_VERSION));
        m.word(self.messages as u64);
        m.word(self.fingerprint);
        m.word(self.token_count);
        m.word(u64::from(self.consecutive_failures));
        match self.thrash.turns_since_compaction {
            None => m.word(0),
            Some(t) => {
                m.word(1);
                m.word(u64::from(t));
            }
        }
        m.word(u64::from(self.thrash.rapid_refills));
        m.word(u64::from(self.thrash.thrashing));
        // Absent, it adds nothing: snapshots written before it was kept keep their check.
        if let Some(t) = self.thrash.paused_at {
            m.word(5);
            m.word(t);
        }
        // Absent usage adds nothing, so snapshots without it keep their check.
        if let Some((at, u)) = &self.usage {
            m.word(2);
            m.word(*at as u64);
            m.word(u.input_tokens);
            m.word(u.cache_creation_input_tokens);
            m.word(u.cache_read_input_tokens);
            m.word(u.output_tokens);
        }
        // Likewise an empty calibration, and one with no observation spanning a clearing.
        if !self.calibration.is_empty() {
            m.word(3);
            m.word(self.calibration.observations().len() as u64);
            for o in self.calibration.observations() {
                m.word(o.estimated);
                m.word(o.real);
            }
        }
        if let Some(clean) = self.calibration.observations_clean() {
            m.word(4);
            m.word(clean.len() as u64);
            for o in clean {
                m.word(o.estimated);
                m.word(o.real);
            }
        }
        m.finish()
    }

    /// The snapshot as JSON data (the object `Compactor.snapshot()` returns).
    pub fn to_json(&self) -> Value {
        let mut out = json!({
            "format": SNAPSHOT_FORMAT,
            "v": SNAPSHOT_VERSION,
            "messages": self.messages,
            "fingerprint": hex(self.fingerprint),
            "tokenCount": self.token_count,
            "consecutiveFailures": self.consecutive_failures,
            "thrash": {
                "turnsSinceCompaction": self.thrash.turns_since_compaction,
                "rapidRefills": self.thrash.rapid_refills,
                "thrashing": self.thrash.thrashing,
            },
            "check": hex(self.check()),
        });
        if let (Some(t), Some(Value::Object(o))) = (self.thrash.paused_at, out.get_mut("thrash")) {
            o.insert("pausedAtThreshold".into(), t.into());
        }
        if let (Some((at, u)), Value::Object(o)) = (&self.usage, &mut out) {
            o.insert(
                "usage".into(),
                json!({
                    "at": at,
                    "input_tokens": u.input_tokens,
                    "cache_creation_input_tokens": u.cache_creation_input_tokens,
                    "cache_read_input_tokens": u.cache_read_input_tokens,
                    "output_tokens": u.output_tokens,
                }),
            );
        }
        if let (false, Value::Object(o)) = (self.calibration.is_empty(), &mut out) {
            let pairs: Vec<Value> = self
                .calibration
                .observations()
                .map(|o| json!([o.estimated, o.real]))
                .collect();
            o.insert("calibration".into(), Value::Array(pairs));
        }
        if let (Some(clean), Value::Object(o)) = (self.calibration.observations_clean(), &mut out) {
            let pairs: Vec<Value> = clean.map(|o| json!([o.estimated, o.real])).collect();
            o.insert("calibrationClean".into(), Value::Array(pairs));
        }
        out
    }

    /// Reads a snapshot (a JS object or JSON data), checking every field: see the module
    /// documentation for the codes.
    pub fn parse<S: Source>(v: &S) -> Result<SessionSnapshot> {
        const WHAT: &str = "snapshot";
        if !v.is_object() || v.is_array() {
            return Err(invalid(
                "snapshot must be the object Compactor.snapshot() returned (or its JSON text)",
            ));
        }
        if v.get("format").string().as_deref() != Some(SNAPSHOT_FORMAT) {
            return Err(invalid(format!(
                "snapshot.format is not \"{SNAPSHOT_FORMAT}\": this is not a Compactor snapshot"
            )));
        }
        let version = v.get("v");
        match version.number() {
            Some(n) if n == f64::from(SNAPSHOT_VERSION) => {}
            Some(n) if n.fract() == 0.0 && n > f64::from(SNAPSHOT_VERSION) => {
                return Err(Error::new(
                    ErrorCode::UnsupportedSnapshotVersion,
                    format!(
                        "snapshot.v is {}: written by a newer version of context-compaction; \
                         this one reads version {SNAPSHOT_VERSION}",
                        js_text(n)
                    ),
                ))
            }
            _ => {
                // As short as other options' errors: a huge number as JavaScript writes it
                // (`1e+300`, not 301 digits), a string cut after 40 characters (a megabyte
                // string was repeated whole).
                let shown = if version.is_absent() {
                    "missing".to_string()
                } else if version.number().is_some() || version.string().is_some() {
                    crate::drive::options::describe_value(&version)
                } else {
                    "not a number".to_string()
                };
                return Err(Error::new(
                    ErrorCode::UnsupportedSnapshotVersion,
                    format!(
                        "snapshot.v is {shown}: not a snapshot version this library knows \
                         (it reads version {SNAPSHOT_VERSION})"
                    ),
                ));
            }
        }
        closed(v, WHAT, KEYS)?;
        let fingerprint = hex_field(v, "fingerprint")?;
        let check = hex_field(v, "check")?;
        let thrash = v.get("thrash");
        if !thrash.is_object() || thrash.is_array() {
            return Err(invalid("snapshot.thrash must be an object"));
        }
        closed(&thrash, "snapshot.thrash", THRASH_KEYS)?;
        // Each absent (or null) when there is none.
        let optional = |key: &str, max: f64| -> Result<Option<u64>> {
            if thrash.get(key).is_absent() {
                return Ok(None);
            }
            integer(&thrash, key, "snapshot.thrash", max).map(Some)
        };
        let turns_since_compaction =
            optional("turnsSinceCompaction", f64::from(u32::MAX))?.map(|t| t as u32);
        let paused_at = optional("pausedAtThreshold", MAX_SAFE)?;
        let thrashing = thrash
            .get("thrashing")
            .boolean()
            .ok_or_else(|| invalid("snapshot.thrash.thrashing must be a boolean"))?;
        let given = v.get("usage");
        let usage = if given.is_absent() {
            None
        } else {
            if !given.is_object() || given.is_array() {
                return Err(invalid("snapshot.usage must be an object"));
            }
            closed(&given, "snapshot.usage", USAGE_KEYS)?;
            let n = |k: &str| integer(&given, k, "snapshot.usage", MAX_SAFE);
            Some((
                n("at")? as usize,
                UsageCounts {
                    input_tokens: n("input_tokens")?,
                    cache_creation_input_tokens: n("cache_creation_input_tokens")?,
                    cache_read_input_tokens: n("cache_read_input_tokens")?,
                    output_tokens: n("output_tokens")?,
                },
            ))
        };
        let calibration = calibration_field(v)?;
        let snapshot = SessionSnapshot {
            messages: integer(v, "messages", WHAT, MAX_SAFE)? as usize,
            fingerprint,
            token_count: integer(v, "tokenCount", WHAT, MAX_SAFE)?,
            consecutive_failures: integer(v, "consecutiveFailures", WHAT, f64::from(u32::MAX))?
                as u32,
            thrash: ThrashDetector {
                turns_since_compaction,
                rapid_refills: integer(
                    &thrash,
                    "rapidRefills",
                    "snapshot.thrash",
                    f64::from(u32::MAX),
                )? as u32,
                thrashing,
                paused_at,
            },
            usage,
            calibration,
        };
        if snapshot.check() != check {
            return Err(invalid(
                "snapshot.check does not match the snapshot's content: it was edited or \
                 damaged after Compactor.snapshot() wrote it",
            ));
        }
        Ok(snapshot)
    }

    /// Checks that messages read as `messages`, `fingerprint` and `token_count` are the ones
    /// this snapshot was taken of (`SNAPSHOT_MISMATCH` naming what differs).
    pub fn check_messages(
        &self,
        messages: usize,
        fingerprint: u64,
        token_count: u64,
    ) -> Result<()> {
        let mismatch = |what: String| {
            Err(Error::new(
                ErrorCode::SnapshotMismatch,
                format!(
                    "the messages given are not the ones the snapshot was taken of: {what}; \
                     restore with the messages stored with this snapshot (or start a new \
                     Compactor over these messages)"
                ),
            ))
        };
        if messages != self.messages {
            return mismatch(format!(
                "the snapshot holds {} messages, {messages} given",
                self.messages
            ));
        }
        if fingerprint != self.fingerprint {
            return mismatch(format!(
                "their fingerprint is {}, the snapshot's {} (a message differs in kind, \
                 size, id or usage, or a version of this library that measures a message \
                 differently took the snapshot)",
                hex(fingerprint),
                hex(self.fingerprint)
            ));
        }
        if token_count != self.token_count {
            return mismatch(format!(
                "they count {token_count} tokens, the snapshot {} (counted by another \
                 version of the library?)",
                self.token_count
            ));
        }
        Ok(())
    }
}

/// A 16-hex-digit field.
fn hex_field<S: Source>(v: &S, key: &str) -> Result<u64> {
    let s = v.get(key).string();
    s.as_deref()
        .filter(|s| s.len() == 16)
        .and_then(|s| u64::from_str_radix(s, 16).ok())
        .ok_or_else(|| invalid(format!("snapshot.{key} must be a string of 16 hex digits")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SessionSnapshot {
        SessionSnapshot {
            messages: 12,
            fingerprint: 0x5c0d_9e31_a2b7_f4e8,
            token_count: 48_210,
            consecutive_failures: 2,
            thrash: ThrashDetector {
                turns_since_compaction: Some(2),
                rapid_refills: 1,
                thrashing: false,
                paused_at: None,
            },
            usage: None,
            calibration: Calibration::default(),
        }
    }

    #[test]
    fn the_calibration_round_trips_and_is_checked() {
        let mut s = sample();
        s.calibration = Calibration::from_observations([
            Observation {
                estimated: 37,
                real: 26_450,
            },
            Observation {
                estimated: 2_426,
                real: 29_361,
            },
        ]);
        let v = s.to_json();
        assert_eq!(v["calibration"], json!([[37, 26_450], [2_426, 29_361]]));
        assert_eq!(SessionSnapshot::parse(&v).unwrap(), s);
        // Edited: the check no longer matches.
        let mut edited = v.clone();
        edited["calibration"][0][1] = json!(26_451);
        let e = SessionSnapshot::parse(&edited).unwrap_err();
        assert!(e.message.contains("snapshot.check"), "{}", e.message);
        // Malformed: named.
        for bad in [json!(7), json!([[1]]), json!([[1, -2]]), json!([[1, 2.5]])] {
            let mut b = v.clone();
            b["calibration"] = bad.clone();
            let e = SessionSnapshot::parse(&b).unwrap_err();
            assert!(
                e.message.contains("snapshot.calibration"),
                "{bad}: {}",
                e.message
            );
        }
        // An empty calibration leaves the field (and the check) as before.
        assert!(sample().to_json().get("calibration").is_none());
    }

    #[test]
    fn the_observations_before_a_clearing_round_trip_and_are_checked() {
        use crate::measure::calibration::Observed;
        let o = |estimated, real| Observation { estimated, real };
        let mut s = sample();
        s.calibration = Calibration::from_observations([o(37, 26_450)]);
        s.calibration.observe_as(Observed {
            observation: o(2_426, 49_361),
            spans_clearing: true,
        });
        let v = s.to_json();
        assert_eq!(v["calibration"], json!([[37, 26_450], [2_426, 49_361]]));
        assert_eq!(v["calibrationClean"], json!([[37, 26_450]]));
        let back = SessionSnapshot::parse(&v).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.calibration.fit(), s.calibration.fit());
        // Edited (or dropped): the check no longer matches.
        let mut edited = v.clone();
        edited["calibrationClean"][0][1] = json!(26_451);
        let e = SessionSnapshot::parse(&edited).unwrap_err();
        assert!(e.message.contains("snapshot.check"), "{}", e.message);
        let mut dropped = v.clone();
        dropped.as_object_mut().unwrap().remove("calibrationClean");
        assert!(SessionSnapshot::parse(&dropped).is_err());
        for bad in [json!({}), json!([[1, 2, 3]]), json!([["1", 2]])] {
            let mut b = v.clone();
            b["calibrationClean"] = bad.clone();
            let e = SessionSnapshot::parse(&b).unwrap_err();
            assert!(
                e.message.contains("snapshot.calibrationClean"),
                "{bad}: {}",
                e.message
            );
        }
        // Without a clearing, the snapshot (and its check) is the one written before.
        let mut plain = sample();
        plain.calibration = Calibration::from_observations([o(37, 26_450), o(2_426, 29_361)]);
        let v = plain.to_json();
        assert!(v.get("calibrationClean").is_none());
        assert_eq!(v["check"], "dca5837fe859f00d");
    }

    #[test]
    fn given_usage_round_trips_and_is_checked() {
        let mut s = sample();
        s.usage = Some((
            7,
            UsageCounts {
                input_tokens: 30_000,
                output_tokens: 250,
                ..Default::default()
            },
        ));
        let json = s.to_json();
        assert_eq!(SessionSnapshot::parse(&json).unwrap(), s);
        let mut edited = json.clone();
        edited["usage"]["input_tokens"] = 1.into();
        assert_eq!(
            SessionSnapshot::parse(&edited).unwrap_err().code,
            ErrorCode::InvalidSnapshot,
            "the check covers the usage"
        );
        // A snapshot without usage keeps its check (and its JSON has no usage field).
        assert!(sample().to_json().get("usage").is_none());
    }

    #[test]
    fn a_snapshot_reads_back_from_its_json_and_its_text() {
        let s = sample();
        assert_eq!(SessionSnapshot::parse(&s.to_json()).unwrap(), s);
        let text = s.to_json().to_string();
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(SessionSnapshot::parse(&back).unwrap(), s);
        let none = SessionSnapshot {
            thrash: ThrashDetector::default(),
            ..sample()
        };
        assert_eq!(SessionSnapshot::parse(&none.to_json()).unwrap(), none);
    }

    fn code(v: &Value) -> ErrorCode {
        SessionSnapshot::parse(v).unwrap_err().code
    }

    #[test]
    fn every_field_is_checked() {
        let good = sample().to_json();
        let with = |path: &[&str], value: Value| {
            let mut v = good.clone();
            let mut cur = &mut v;
            for k in &path[..path.len() - 1] {
                cur = cur.get_mut(*k).unwrap();
            }
            cur[path[path.len() - 1]] = value;
            v
        };
        assert_eq!(code(&json!(null)), ErrorCode::InvalidSnapshot);
        assert_eq!(code(&json!([1])), ErrorCode::InvalidSnapshot);
        assert_eq!(code(&json!("x")), ErrorCode::InvalidSnapshot);
        assert_eq!(
            code(&with(&["format"], json!("other"))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["v"], json!(2))),
            ErrorCode::UnsupportedSnapshotVersion
        );
        assert_eq!(
            code(&with(&["v"], json!(0))),
            ErrorCode::UnsupportedSnapshotVersion
        );
        assert_eq!(
            code(&with(&["v"], json!("1"))),
            ErrorCode::UnsupportedSnapshotVersion
        );
        assert_eq!(
            code(&with(&["messages"], json!(-1))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["messages"], json!(1.5))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["tokenCount"], json!("9"))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["fingerprint"], json!("xyz"))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["extra"], json!(1))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["thrash"], json!(true))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["thrash", "thrashing"], json!(1))),
            ErrorCode::InvalidSnapshot
        );
        assert_eq!(
            code(&with(&["thrash", "rapidRefills"], json!(-1))),
            ErrorCode::InvalidSnapshot
        );
        // A well-formed value that is not the one written: the check catches it.
        for (path, value) in [
            (&["messages"][..], json!(13)),
            (&["tokenCount"], json!(48_211)),
            (&["consecutiveFailures"], json!(0)),
            (&["thrash", "rapidRefills"], json!(2)),
            (&["thrash", "turnsSinceCompaction"], json!(null)),
            (&["thrash", "thrashing"], json!(true)),
            (&["fingerprint"], json!("5c0d9e31a2b7f4e9")),
        ] {
            let e = SessionSnapshot::parse(&with(path, value)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidSnapshot, "{path:?}");
            assert!(e.message.contains("snapshot.check"), "{}", e.message);
        }
    }

    #[test]
    fn the_threshold_of_a_pause_round_trips_and_is_checked() {
        let mut s = sample();
        s.thrash.thrashing = true;
        s.thrash.paused_at = Some(35_000);
        let v = s.to_json();
        assert_eq!(v["thrash"]["pausedAtThreshold"], json!(35_000));
        assert_eq!(SessionSnapshot::parse(&v).unwrap(), s);
        let mut edited = v.clone();
        edited["thrash"]["pausedAtThreshold"] = json!(200_000);
        let e = SessionSnapshot::parse(&edited).unwrap_err();
        assert!(e.message.contains("snapshot.check"), "{}", e.message);
        edited["thrash"]["pausedAtThreshold"] = json!("35000");
        assert_eq!(
            SessionSnapshot::parse(&edited).unwrap_err().code,
            ErrorCode::InvalidSnapshot
        );
        // Without it (no pause, or written before it was kept) the snapshot and its check are
        // what they were.
        assert!(sample().to_json()["thrash"]
            .get("pausedAtThreshold")
            .is_none());
        let mut old = v;
        old["thrash"]
            .as_object_mut()
            .unwrap()
            .remove("pausedAtThreshold");
        s.thrash.paused_at = None;
        old["check"] = json!(hex(s.check()));
        assert_eq!(SessionSnapshot::parse(&old).unwrap(), s);
    }

    #[test]
    fn the_version_is_read_before_the_fields() {
        let v = json!({"format": SNAPSHOT_FORMAT, "v": 7, "conversation": []});
        let e = SessionSnapshot::parse(&v).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedSnapshotVersion);
        assert!(e.message.contains("newer version"), "{}", e.message);
    }

    /// A version or count far out of range is named as JavaScript writes it and a long string
    /// cut short: `v: 1e300` wrote 301 digits, a 1 MB string `v` a 1 MB error message.
    #[test]
    fn errors_about_huge_values_stay_short() {
        for (key, value, said) in [
            ("v", json!(1e300), "1e+300"),
            ("v", json!(-1e300), "-1e+300"),
            ("v", json!(1e20), "100000000000000000000"),
            ("v", json!("x".repeat(1_000_000)), "xxxx"),
            ("messages", json!(1e300), "1e+300"),
        ] {
            let mut v = sample().to_json();
            v[key] = value;
            let e = SessionSnapshot::parse(&v).unwrap_err();
            assert!(e.message.contains(said), "{}", e.message);
            assert!(e.message.len() < 200, "{} chars", e.message.len());
        }
    }

    #[test]
    fn the_mix_is_frozen() {
        // Snapshots cross machines and releases: these values must never change.
        let mut f = Fingerprint::default();
        f.push(&MessageFacts {
            kind: Some(Kind::User),
            tokens: 12,
            ..Default::default()
        });
        f.push(&MessageFacts {
            kind: Some(Kind::Assistant),
            usage: Some(crate::model::view::UsageCounts {
                input_tokens: 1_000,
                cache_creation_input_tokens: 20,
                cache_read_input_tokens: 300,
                output_tokens: 4,
            }),
            id: Some("msg_01".into()),
            tokens: 3,
            ..Default::default()
        });
        assert_eq!(hex(f.value()), "6c1e0525b1144ee5");
        assert_eq!(hex(sample().check()), "aa7729ae91d95a1d");
    }
}
