//! The Rust side of the plain-data shapes the TypeScript declarations describe.
//!
//! Writes `target/ts-shapes.json`: for each interface of `types/index.d.ts` that a Rust type
//! defines, the Rust field names as JS sees them (serde names). `types/check.mjs` compares
//! them with the interface's keys and fails when one side has a field the other lacks
//! (`types/check.sh` runs this test first). Input shapes are read from the `Deserialize`
//! impls (the field list serde itself matches keys against), output shapes from a
//! serialized sample, whose values the interface's property types must accept.

use std::collections::BTreeMap;
use std::path::PathBuf;

use context_compaction::drive::options::{
    COMPACTOR_EXTRA_KEYS, CONTEXT_KEYS, HOOK_KEYS, OPTION_OBJECTS, STATELESS_CONTEXT_KEYS,
    TRACKING_KEYS,
};
use context_compaction::drive::preview::{
    MicroCompactPreview, Preview, RestoredFilePreview, RestoredSkillPreview,
};
use context_compaction::measure::thresholds::{
    output_limits, token_warning_state, ContextWindowSource,
};
use context_compaction::model::config::Config;
use context_compaction::simulate::policy::{
    ClearToolUses, CompactRule, MicroCompactRule, Policy, ServerCompact, ServerRule,
};
use context_compaction::simulate::prices::{PriceOverrides, Prices};
use context_compaction::simulate::report::{
    CacheTotals, Calibration, ClientBreak, PolicyReport, SimulationReport, TokenClasses,
};
use context_compaction::simulate::SimulateOptions;
use context_compaction::summarize::loss::LossReport;
use context_compaction::transforms::context_management::{
    ApplyApiCompactionOptions, ContextManagementOptions,
};
use context_compaction::transforms::messages_api::Problem;
use context_compaction::transforms::ptl::parse_context_overflow_error;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::Serialize;

/// A deserializer that records the field names a `#[derive(Deserialize)]` struct asks for,
/// then stops.
struct FieldRecorder<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for FieldRecorder<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend_from_slice(fields);
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The JS keys a `Deserialize` struct accepts.
fn input_fields<'de, T: Deserialize<'de>>() -> Vec<String> {
    let mut fields = Vec::new();
    let _ = T::deserialize(FieldRecorder(&mut fields));
    assert!(!fields.is_empty(), "not a struct with named fields");
    fields.into_iter().map(String::from).collect()
}

/// A shape for `types/check.mjs`: the JS keys and, for output shapes, a sample value of each
/// key, which the interface's property type must accept.
#[derive(Serialize)]
struct Shape {
    fields: Vec<String>,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    samples: serde_json::Map<String, serde_json::Value>,
}

fn input_shape(fields: Vec<String>) -> Shape {
    Shape {
        fields,
        samples: serde_json::Map::new(),
    }
}

/// The JS keys of a serialized value (an object), with their values as samples.
fn output_fields<T: Serialize>(value: &T) -> Shape {
    match serde_json::to_value(value).expect("serializable") {
        serde_json::Value::Object(map) => Shape {
            fields: map.keys().cloned().collect(),
            samples: map,
        },
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn rust_shapes_for_the_type_check() {
    let mut shapes: BTreeMap<&str, Shape> = BTreeMap::new();

    // Closed option objects read field by field: the keys they accept (Config::read asks
    // for exactly Config::FIELDS; its unit tests check that).
    let keys = |list: &[&str]| input_shape(list.iter().map(|k| k.to_string()).collect());
    shapes.insert("Config", keys(Config::FIELDS));
    shapes.insert(
        "ContextManagementOptions",
        keys(ContextManagementOptions::FIELDS),
    );
    // The open objects: the keys the library reads (others are the caller's own, unless
    // they misspell one of these).
    shapes.insert(
        "ApplyApiCompactionOptions",
        keys(ApplyApiCompactionOptions::FIELDS),
    );
    shapes.insert("CompactContext", keys(CONTEXT_KEYS));
    let compactor: Vec<&str> = CONTEXT_KEYS
        .iter()
        .filter(|k| !STATELESS_CONTEXT_KEYS.contains(k))
        .chain(COMPACTOR_EXTRA_KEYS)
        .copied()
        .collect();
    shapes.insert("CompactorOptions", keys(&compactor));
    shapes.insert("CompactHooks", keys(HOOK_KEYS));
    shapes.insert("Tracking", keys(TRACKING_KEYS));
    // The closed options objects: the keys their one parser accepts.
    for (name, keys) in OPTION_OBJECTS {
        shapes.insert(
            name,
            input_shape(keys.iter().map(|k| k.to_string()).collect()),
        );
    }

    shapes.insert(
        "TokenWarningState",
        output_fields(&token_warning_state(
            0,
            "claude-sonnet-4-5",
            &Config::default(),
        )),
    );
    shapes.insert(
        "ModelOutputLimits",
        output_fields(&output_limits("claude-sonnet-4-5")),
    );
    let overflow = parse_context_overflow_error("prompt is too long: 2 tokens > 1 maximum", None)
        .expect("an overflow");
    shapes.insert("ContextOverflow", output_fields(&overflow));
    shapes.insert("LossReport", output_fields(&LossReport::default()));
    shapes.insert(
        "ApiProblem",
        output_fields(&Problem {
            message: 0,
            problem: String::new(),
        }),
    );
    let file = RestoredFilePreview {
        path: String::new(),
        tokens: 0,
        truncated: false,
        content_known: false,
    };
    let skill = RestoredSkillPreview {
        name: String::new(),
        tokens: 0,
        truncated: false,
    };
    shapes.insert("PreviewRestoredFile", output_fields(&file));
    shapes.insert("PreviewRestoredSkill", output_fields(&skill));
    shapes.insert(
        "CompactionPreview",
        output_fields(&Preview {
            tokens_before: 0,
            estimated_tokens_after: 0,
            threshold: 0,
            is_above_threshold: false,
            context_window: 200_000,
            context_window_source: ContextWindowSource::Default,
            micro_compact: MicroCompactPreview::default(),
            restored_files: vec![file],
            restored_skills: vec![skill],
            estimated_summary_tokens: 0,
        }),
    );

    // The simulator.
    shapes.insert(
        "SimulateOptions",
        input_shape(input_fields::<SimulateOptions>()),
    );
    shapes.insert("SimulationPolicy", input_shape(input_fields::<Policy>()));
    shapes.insert(
        "SimulationCompactRule",
        input_shape(input_fields::<CompactRule>()),
    );
    shapes.insert(
        "SimulationMicroCompactRule",
        input_shape(input_fields::<MicroCompactRule>()),
    );
    shapes.insert(
        "SimulationServerRule",
        input_shape(input_fields::<ServerRule>()),
    );
    shapes.insert(
        "SimulationClearToolUses",
        input_shape(input_fields::<ClearToolUses>()),
    );
    shapes.insert(
        "SimulationServerCompact",
        input_shape(input_fields::<ServerCompact>()),
    );
    shapes.insert(
        "SimulationPriceOverrides",
        input_shape(input_fields::<PriceOverrides>()),
    );
    let prices = Prices::for_model("claude-opus-4-6");
    shapes.insert("SimulationPrices", output_fields(&prices));
    let tokens = TokenClasses::default();
    shapes.insert("SimulationTokens", output_fields(&tokens));
    let totals = CacheTotals::default();
    shapes.insert("SimulationCacheTotals", output_fields(&totals));
    let brk = ClientBreak {
        call: 0,
        line: 0,
        at_tokens: 0,
        model_read: 0,
        at: context_compaction::simulate::report::BreakAt::Hidden(0),
    };
    shapes.insert("SimulationClientBreak", output_fields(&brk));
    let policy_report = PolicyReport {
        name: String::new(),
        description: String::new(),
        requests: 0,
        summary_calls: 0,
        peak_context: 0,
        mean_context: 0,
        compactions: 0,
        micro_compactions: 0,
        tokens,
        cost: 0.0,
        relative_cost: Some(1.0),
        blocked_seconds: 0.0,
        waits: 0,
        swaps: 0,
        early_swaps: 0,
        refused_swaps: 0,
        caught_up: 0,
        failed_compactions: 0,
        paused: Some("thrashing".to_string()),
        paused_at_request: Some(0),
        rereads: 0,
        reread_tokens: 0,
        reread_cost: 0.0,
        lost: 0,
        loss: LossReport::default(),
    };
    shapes.insert("SimulationPolicyReport", output_fields(&policy_report));
    let calibration = Calibration {
        calls: 0,
        recorded: totals,
        simulated: totals,
        read_error_percent: 0.0,
        write_error_percent: 0.0,
        model_only: totals,
        model_only_read_error_percent: 0.0,
        model_only_write_error_percent: 0.0,
        client_breaks: vec![brk],
    };
    shapes.insert("SimulationCalibration", output_fields(&calibration));
    shapes.insert(
        "SimulationReport",
        output_fields(&SimulationReport {
            model: String::new(),
            prices,
            summary_tokens_per_second: 50.0,
            summary_tokens: 4_000,
            threshold: 0,
            hidden_tokens: 0,
            calls: 0,
            policies: vec![policy_report],
            calibration: Some(calibration),
            recommended: Some(String::new()),
        }),
    );

    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&out).expect("target/");
    std::fs::write(
        out.join("ts-shapes.json"),
        serde_json::to_string_pretty(&shapes).expect("JSON") + "\n",
    )
    .expect("target/ts-shapes.json written");
}
