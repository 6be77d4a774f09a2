//! The option parsers over JSON values: the same rules as for the JS objects.

use serde_json::{json, Value};

use super::*;

/// JSON data as a runtime holding built-in objects hands it over: `builtin_kind` says what
/// the value is ([`Source::builtin_kind`]), and the fields named in the third element are
/// of the kind given there; the properties are the JSON's.
pub(crate) struct Builtin(
    pub(crate) Value,
    pub(crate) Option<&'static str>,
    pub(crate) &'static [(&'static str, &'static str)],
);

impl Source for Builtin {
    fn is_absent(&self) -> bool {
        self.1.is_none() && self.0.is_absent()
    }
    fn is_object(&self) -> bool {
        Source::is_object(&self.0)
    }
    fn is_array(&self) -> bool {
        Source::is_array(&self.0)
    }
    fn get(&self, key: &str) -> Self {
        let kind = self
            .2
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, kind)| *kind);
        Builtin(Source::get(&self.0, key), kind, &[])
    }
    fn number(&self) -> Option<f64> {
        self.0.number()
    }
    fn boolean(&self) -> Option<bool> {
        self.0.boolean()
    }
    fn string(&self) -> Option<String> {
        self.0.string()
    }
    fn items(&self) -> Option<Vec<Self>> {
        Source::items(&self.0).map(|v| v.into_iter().map(|x| Builtin(x, None, &[])).collect())
    }
    fn length(&self) -> Option<usize> {
        Source::length(&self.0)
    }
    fn entries(&self) -> Option<Vec<(String, Self)>> {
        Source::entries(&self.0).map(|v| {
            v.into_iter()
                .map(|(k, x)| (k, Builtin(x, None, &[])))
                .collect()
        })
    }
    fn keys(&self) -> crate::Result<Vec<String>> {
        Source::keys(&self.0)
    }
    fn to_json(&self) -> std::result::Result<Value, String> {
        Source::to_json(&self.0)
    }
    fn to_config(&self) -> crate::Result<crate::model::config::Config> {
        self.0.to_config()
    }
    fn json_text(&self) -> Option<String> {
        self.0.json_text()
    }
    fn builtin_kind(&self) -> Option<String> {
        self.1.map(str::to_string)
    }
}

fn code(r: Result<impl std::fmt::Debug>) -> (ErrorCode, String) {
    let e = r.expect_err("should be rejected");
    (e.code, e.message)
}

#[test]
fn context_reads_every_data_field() {
    let c = context(&json!({
        "model": "claude-opus-4-6",
        "summaryModel": "claude-haiku-4-5",
        "config": {"autoCompactPctOverride": 50},
        "readFileState": {"a.rs": {"content": "fn a() {}", "timestamp": 5}, "b.rs": "b"},
        "invokedSkills": [{"name": "pdf", "content": "PDF skill"}],
        "tools": ["Read", {"name": "Grep"}],
        "agents": [{"name": "reviewer", "description": "reviews"}],
        "mcpInstructions": {"srv": "use it"},
        "asyncAgents": [{"agentId": "a1", "description": "builds"}],
        "pinned": ["keep me", "", " \n ", {"role": "user", "content": "pinned message"}],
        "plan": "the plan",
        "planMode": true,
        "keepLastUserMessage": true,
        "querySource": "repl_main_thread",
        "snipTokensFreed": 12,
        "retryBaseMs": 7,
        "summaryTimeoutMs": 100,
        "summarize": "callbacks and other keys are not read here",
    }))
    .unwrap();
    let ctx = &c.context;
    assert_eq!(ctx.model, "claude-opus-4-6");
    assert_eq!(ctx.summary_model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(ctx.config.auto_compact_pct_override, Some(50.0));
    assert_eq!(ctx.read_file_state.len(), 2);
    assert_eq!(ctx.read_file_state[0].content.as_deref(), Some("fn a() {}"));
    assert_eq!(ctx.read_file_state[0].timestamp_ms, 5.0);
    assert_eq!(ctx.read_file_state[1].content.as_deref(), Some("b"));
    assert_eq!(ctx.invoked_skills[0].name, "pdf");
    assert_eq!(ctx.discovered_tools, ["Read", "Grep"]);
    assert_eq!(ctx.agents, ["reviewer: reviews"]);
    assert_eq!(ctx.mcp_instructions, ["srv: use it"]);
    assert_eq!(ctx.async_agents[0].id, "a1");
    assert_eq!(ctx.async_agents[0].status, "running");
    assert_eq!(ctx.pinned.len(), 2);
    assert!(matches!(&ctx.pinned[0], Pinned::Text(t) if t == "keep me"));
    assert!(ctx.plan_mode && ctx.keep_last_user_message);
    assert_eq!(c.auto.query_source.as_deref(), Some("repl_main_thread"));
    assert_eq!(c.auto.snip_tokens_freed, 12);
    assert_eq!(c.retry, RetryPolicy::with_base_ms(7));
    assert_eq!(c.summary_timeout_ms, 100.0);
    let minimal = context(&json!({"model": "m"})).unwrap();
    assert_eq!(minimal.retry, RetryPolicy::default());
    assert_eq!(minimal.auto, ShouldAutoCompactOptions::default());
}

#[test]
fn context_rejects_wrong_types_naming_the_field() {
    for (bad, field) in [
        (json!("ctx"), "context"),
        (json!({}), "context.model"),
        (json!({"model": 5}), "context.model"),
        (
            json!({"model": "m", "retryBaseMs": "10"}),
            "context.retryBaseMs",
        ),
        (
            json!({"model": "m", "querySource": 5}),
            "context.querySource",
        ),
        (
            json!({"model": "m", "snipTokensFreed": "5"}),
            "context.snipTokensFreed",
        ),
        (
            json!({"model": "m", "summaryTimeoutMs": -1}),
            "context.summaryTimeoutMs",
        ),
        (json!({"model": "m", "pinned": "x"}), "context.pinned"),
        (json!({"model": "m", "pinned": [5]}), "context.pinned[0]"),
        (
            json!({"model": "m", "asyncAgents": {}}),
            "context.asyncAgents",
        ),
        (
            json!({"model": "m", "readFileState": 5}),
            "context.readFileState",
        ),
        (json!({"model": "m", "agents": [5]}), "context.agents[0]"),
        (json!({"model": "m", "planMode": "yes"}), "context.planMode"),
        (
            json!({"model": "m", "keepLastUserMessage": 1}),
            "context.keepLastUserMessage",
        ),
    ] {
        let (c, m) = code(context(&bad));
        assert_eq!(c, ErrorCode::InvalidArgument, "{bad}: {m}");
        assert!(m.contains(field), "{bad}: {m}");
    }
    let (c, m) = code(context(
        &json!({"model": "m", "config": {"contextWindw": 5}}),
    ));
    assert_eq!(c, ErrorCode::InvalidConfig);
    assert!(m.contains("contextWindw"), "{m}");
}

/// `snipTokensFreed` was clamped to 0 in a `context` but rejected by `shouldAutoCompact`:
/// it is a token count, rejected when negative wherever it is given.
#[test]
fn snip_tokens_freed_is_a_token_count_everywhere() {
    let (c, m) = code(context(&json!({"model": "m", "snipTokensFreed": -1})));
    assert_eq!(c, ErrorCode::InvalidTokenCount);
    assert!(m.contains("context.snipTokensFreed"), "{m}");
    let (c, m) = code(should_auto_compact_options(&json!({"snipTokensFreed": -1})));
    assert_eq!(c, ErrorCode::InvalidTokenCount);
    assert!(m.contains("options.snipTokensFreed"), "{m}");
    for bad in [json!("5"), json!({}), json!(true)] {
        let (c, _) = code(should_auto_compact_options(
            &json!({ "snipTokensFreed": bad }),
        ));
        assert_eq!(c, ErrorCode::InvalidArgument);
        let (c, _) = code(context(&json!({"model": "m", "snipTokensFreed": bad})));
        assert_eq!(c, ErrorCode::InvalidArgument);
    }
    let (o, _) = should_auto_compact_options(&json!({"snipTokensFreed": 3000})).unwrap();
    assert_eq!(o.snip_tokens_freed, 3000);
}

/// `retryBaseMs` of a wrong type was ignored by `Compactor.maybeAutoCompact` and rejected
/// elsewhere: it is rejected wherever it is given; a negative delay is 0 everywhere.
#[test]
fn retry_base_ms_has_one_rule() {
    for parse in [
        |v: &Value| compact_options(v).map(|o| o.retry),
        |v: &Value| compactor_compact_options(v, RetryPolicy::default()).map(|o| o.retry),
        |v: &Value| retry_policy(v, "options"),
    ] {
        assert_eq!(parse(&json!({})).unwrap(), RetryPolicy::default());
        assert_eq!(
            parse(&json!({"retryBaseMs": 250})).unwrap(),
            RetryPolicy::with_base_ms(250)
        );
        assert_eq!(
            parse(&json!({"retryBaseMs": 0})).unwrap(),
            RetryPolicy::with_base_ms(0)
        );
        // A negative delay is a mistake, not "no delay".
        let (c, m) = code(parse(&json!({"retryBaseMs": -1000})));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(
            m.contains("options.retryBaseMs must not be negative, got -1000"),
            "{m}"
        );
        for bad in [json!("1"), json!(true), json!([1]), json!({})] {
            let (c, m) = code(parse(&json!({ "retryBaseMs": bad })));
            assert_eq!(c, ErrorCode::InvalidArgument);
            assert!(m.contains("options.retryBaseMs"), "{m}");
        }
    }
}

/// `Compactor.compact()` ignored the `retryBaseMs` of the `Compactor`'s options, which
/// `maybeAutoCompact` uses: the call's own wins, the Compactor's applies without one.
#[test]
fn compactor_compact_falls_back_to_the_compactor_retry_policy() {
    let compactor = context(&json!({"model": "m", "retryBaseMs": 40}))
        .unwrap()
        .retry;
    assert_eq!(compactor, RetryPolicy::with_base_ms(40));
    let own = compactor_compact_options(&json!({"retryBaseMs": 5}), compactor).unwrap();
    assert_eq!(own.retry, RetryPolicy::with_base_ms(5));
    let none = compactor_compact_options(&json!({}), compactor).unwrap();
    assert_eq!(none.retry, compactor);
    let absent = compactor_compact_options(&Value::Null, compactor).unwrap();
    assert_eq!(absent.retry, compactor);
    // `compactConversation`'s options have no Compactor behind them.
    assert_eq!(
        compact_options(&json!({})).unwrap().retry,
        RetryPolicy::default()
    );
}

/// A malformed `recompactionInfo` was dropped silently: it is an error.
#[test]
fn recompaction_info_must_be_an_object() {
    let o = compact_options(&json!({"recompactionInfo": {"isRecompactionInChain": true}})).unwrap();
    assert_eq!(
        o.recompaction_info,
        Some(json!({"isRecompactionInChain": true}))
    );
    assert_eq!(
        compact_options(&json!({"recompactionInfo": null}))
            .unwrap()
            .recompaction_info,
        None
    );
    for bad in [json!("again"), json!(5), json!([1])] {
        let (c, m) = code(compact_options(&json!({ "recompactionInfo": bad })));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(m.contains("options.recompactionInfo"), "{m}");
    }
}

#[test]
fn closed_option_objects_reject_unknown_keys() {
    let (c, m) = code(compact_options(&json!({"customInstruction": "x"})));
    assert_eq!(c, ErrorCode::InvalidArgument);
    assert!(m.contains("options.customInstruction"), "{m}");
    // `Compactor.compact` is manual: the automatic-only options are not options there.
    for key in ["isAutoCompact", "recompactionInfo"] {
        let (_, m) = code(compactor_compact_options(
            &json!({ key: true }),
            RetryPolicy::default(),
        ));
        assert!(m.contains(key), "{m}");
        assert!(compact_options(&json!({ key: null })).is_ok());
    }
    let o = compactor_compact_options(
        &json!({"customInstructions": "keep the schema",
        "suppressFollowUpQuestions": true, "appendMissing": true, "keepLastUserMessage": true}),
        RetryPolicy::default(),
    )
    .unwrap();
    assert!(!o.is_auto_compact && o.recompaction_info.is_none());
    assert!(o.suppress_follow_up_questions && o.append_missing && o.keep_last_user_message);
    assert!(should_auto_compact_options(&json!({"querySorce": "compact"})).is_err());
    assert!(micro_compact_options(&json!({"keepRecnt": 1}), || 0.0).is_err());
    assert!(truncate_head_options(&json!({"keepLatest": true})).is_err());
    assert!(offline_summarizer_budget(&json!({"budget": 5}), 8000).is_err());
    assert!(token_count_options(&json!({"modl": "m"})).is_err());
    assert!(boundary_options(&json!({"uuuid": "x"})).is_err());
    // Open objects: `context` and `tracking` carry the caller's other keys.
    assert!(context(&json!({"model": "m", "mine": 1})).is_ok());
    assert!(tracking(&json!({"wasCompacted": true, "consecutiveFailures": 1})).is_ok());
}

#[test]
fn unknown_keys_name_the_accepted_ones_and_the_likely_one() {
    let (c, m) = code(micro_compact_options(&json!({"keepRecnt": 1}), || 0.0));
    assert_eq!(c, ErrorCode::InvalidArgument);
    assert!(m.contains("options.keepRecnt"), "{m}");
    assert!(m.contains("did you mean `keepRecent`"), "{m}");
    assert!(m.contains("known: keepRecent, idleMinutes"), "{m}");
    let (_, m) = code(compact_options(&json!({"customInstruction": "x"})));
    assert!(m.contains("did you mean `customInstructions`"), "{m}");
    let (_, m) = code(should_auto_compact_options(
        &json!({"querySorce": "compact"}),
    ));
    assert!(m.contains("did you mean `querySource`"), "{m}");
    // Nothing like any key: named, no suggestion, the known keys listed.
    let (_, m) = code(micro_compact_options(&json!({"colour": 1}), || 0.0));
    assert!(
        !m.contains("did you mean") && m.contains("known: keepRecent"),
        "{m}"
    );
}

#[test]
fn open_objects_reject_misspelt_and_misplaced_keys() {
    for (ctx, named, hint) in [
        (
            json!({"model": "m", "querySorce": "compact"}),
            "context.querySorce",
            "`querySource`",
        ),
        (
            json!({"model": "m", "summaryTimeoutMS": 5}),
            "context.summaryTimeoutMS",
            "`summaryTimeoutMs`",
        ),
        (
            json!({"model": "m", "readFileStat": {}}),
            "context.readFileStat",
            "`readFileState`",
        ),
        (
            json!({"model": "m", "sumarize": 1}),
            "context.sumarize",
            "`summarize`",
        ),
        (
            json!({"model": "m", "hooks": {"PreCompact": 1}}),
            "context.hooks.PreCompact",
            "`preCompact`",
        ),
        (
            json!({"model": "m", "hooks": {"postcompact": 1}}),
            "context.hooks.postcompact",
            "`postCompact`",
        ),
    ] {
        let (c, m) = code(context(&ctx));
        assert_eq!(c, ErrorCode::InvalidArgument, "{m}");
        assert!(m.contains(named) && m.contains(hint), "{m}");
        assert!(m.contains("the keys read here:"), "{m}");
    }
    // A key of the call's options, or of `config`, given in the context itself.
    let (_, m) = code(context(&json!({"model": "m", "customInstructions": "x"})));
    assert!(
        m.contains("context.customInstructions is not read: it is an option of the call"),
        "{m}"
    );
    let (_, m) = code(context(
        &json!({"model": "m", "autoCompactPctOverride": 50}),
    ));
    assert!(m.contains("context.config.autoCompactPctOverride"), "{m}");
    // A Compactor's options also hold `messages`; a context does not need to.
    assert!(compactor_context(&json!({"model": "m", "messages": []})).is_ok());
    let (_, m) = code(compactor_context(&json!({"model": "m", "mesages": []})));
    assert!(m.contains("did you mean `messages`"), "{m}");
    // The caller's own keys pass, even short ones close to a context key.
    let own = json!({"model": "m", "mine": 1, "mode": "x", "agentId": "a", "options": {},
        "abortController": {}, "hooks": {"preCompact": 1, "state": 2}});
    assert!(context(&own).is_ok());
    // tracking: a misspelt key would silently reset the circuit breaker.
    let (_, m) = code(tracking(&json!({"consecutiveFailure": 3})));
    assert!(
        m.contains("tracking.consecutiveFailure") && m.contains("`consecutiveFailures`"),
        "{m}"
    );
    assert!(tracking(
        &json!({"wasCompacted": false, "skipped": "belowThreshold", "consecutiveFailures": 1})
    )
    .is_ok());
}

#[test]
fn a_query_source_that_misspells_a_meaningful_one_is_rejected() {
    for bad in [
        "compct",
        "Compact",
        "sessionMemory",
        "session-memory",
        "marble_origam",
    ] {
        let (c, m) = code(should_auto_compact_options(&json!({ "querySource": bad })));
        assert_eq!(c, ErrorCode::InvalidArgument, "{m}");
        assert!(
            m.contains("options.querySource") && m.contains("\"session_memory\""),
            "{m}"
        );
        let (_, m) = code(context(&json!({"model": "m", "querySource": bad})));
        assert!(m.contains("context.querySource"), "{m}");
    }
    for ok in [
        "compact",
        "session_memory",
        "marble_origami",
        "repl_main_thread",
        "sdk",
        "agent:custom",
        "",
    ] {
        let (o, _) = should_auto_compact_options(&json!({ "querySource": ok })).unwrap();
        assert_eq!(o.query_source.as_deref(), Some(ok));
    }
}

#[test]
fn options_that_are_not_objects_are_rejected() {
    for bad in [json!("x"), json!(5), json!([1]), json!(true)] {
        assert!(compact_options(&bad).is_err());
        assert!(compactor_compact_options(&bad, RetryPolicy::default()).is_err());
        assert!(tracking(&bad).is_err());
        assert!(should_auto_compact_options(&bad).is_err());
        assert!(micro_compact_options(&bad, || 0.0).is_err());
    }
    assert!(compact_options(&Value::Null).is_ok());
    assert!(tracking(&Value::Null).is_ok());
}

#[test]
fn tracking_reads_ids_as_strings() {
    let t = tracking(&json!({"consecutiveFailures": 2, "turnCounter": 7, "reactiveTurnId": "t6"}))
        .unwrap();
    assert_eq!(t.consecutive_failures, 2);
    assert_eq!(t.turn_id.as_deref(), Some("7"));
    assert_eq!(t.reactive_turn_id.as_deref(), Some("t6"));
    let (_, m) = code(tracking(&json!({"consecutiveFailures": -1})));
    assert!(m.contains("tracking.consecutiveFailures"), "{m}");
}

#[test]
fn micro_compact_and_boundary_options() {
    let o = micro_compact_options(
        &json!({"keepRecent": 2, "idleMinutes": 30, "lastAssistantTimestamp": "2025-01-01T00:00:00Z",
                "keepLatestPerPath": true, "compactableTools": ["Read"]}),
        || 42.0,
    )
    .unwrap();
    assert_eq!(o.keep_recent, 2);
    assert_eq!(o.idle_minutes, Some(30.0));
    assert_eq!(o.now_ms, Some(42.0));
    assert_eq!(o.last_assistant_ms, Some(1_735_689_600_000.0));
    assert_eq!(o.compactable_tools, Some(vec!["Read".to_string()]));
    // `now` is a time as `lastAssistantTimestamp` is: ms, or an ISO-8601 string (a `Date` from
    // JS: tests/node/hostile-round17.test.mjs).
    let o = micro_compact_options(&json!({"now": "2025-01-01T01:00:00Z"}), || 42.0).unwrap();
    assert_eq!(o.now_ms, Some(1_735_693_200_000.0));
    for (bad, field) in [
        (json!({"keepRecent": -1}), "keepRecent"),
        (json!({"now": {}}), "now"),
        (
            json!({"lastAssistantTimestamp": true}),
            "lastAssistantTimestamp",
        ),
        (json!({"idleMinutes": -5}), "idleMinutes"),
        (json!({"now": "now"}), "now"),
        (
            json!({"lastAssistantTimestamp": "yesterday"}),
            "lastAssistantTimestamp",
        ),
        (json!({"compactableTools": [5]}), "compactableTools"),
    ] {
        let (_, m) = code(micro_compact_options(&bad, || 0.0));
        assert!(m.contains(field), "{m}");
    }
    let b = boundary_options(&json!({"lastUuid": "u1", "preCompactDiscoveredTools": ["Read"],
        "template": {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "x"}}}))
    .unwrap();
    assert_eq!(b.last_uuid.as_deref(), Some("u1"));
    assert_eq!(b.pre_compact_discovered_tools, ["Read"]);
    assert!(b.template.is_some());
    let (_, m) = code(boundary_options(
        &json!({"preCompactDiscoveredTools": ["Read", 5]}),
    ));
    assert!(m.contains("preCompactDiscoveredTools"), "{m}");
    assert_eq!(
        offline_summarizer_budget(&json!({"maxTokens": 1}), 8000).unwrap(),
        1
    );
    assert_eq!(offline_summarizer_budget(&Value::Null, 8000).unwrap(), 8000);
}

/// Counts (a budget of tokens, messages to keep, failures so far) are whole numbers in range:
/// a negative, fractional or non-finite one is an error naming the option and the value, never
/// clamped or truncated into a different meaning (`keepRecent: 0.5` would have been 0: clear
/// every result; `maxTokens: -5` a budget of 1).
#[test]
fn count_options_are_whole_numbers_in_range() {
    let budget = |v: Value| offline_summarizer_budget(&json!({ "maxTokens": v }), 8000);
    assert_eq!(budget(json!(2000)).unwrap(), 2000);
    for (bad, got) in [
        (json!(-5), "got -5"),
        (json!(0), "got 0"),
        (json!(0.5), "got 0.5"),
        (json!(100.5), "got 100.5"),
        (json!("100"), "got \"100\""),
    ] {
        let (c, m) = code(budget(bad));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(m.contains("options.maxTokens") && m.contains(got), "{m}");
    }
    let keep = |v: Value| micro_compact_options(&json!({ "keepRecent": v }), || 0.0);
    assert_eq!(keep(json!(0)).unwrap().keep_recent, 0);
    assert_eq!(keep(json!(3)).unwrap().keep_recent, 3);
    for bad in [json!(0.5), json!(-1), json!(2.25), json!(true)] {
        let (c, m) = code(keep(bad));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(m.contains("options.keepRecent"), "{m}");
    }
    // Above 2^53 - 1 the message names the upper bound: "a whole number of at least 1, got
    // 1e+308" said nothing true about 1e308.
    for big in [json!(1e308), json!(9007199254740992.0_f64)] {
        let (c, m) = code(budget(big));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(
            m.starts_with("options.maxTokens must be a whole number of at most 9007199254740991"),
            "{m}"
        );
    }
    let (_, m) = code(tracking(&json!({"consecutiveFailures": 1e300})));
    assert!(
        m.contains("at most 9007199254740991") && m.contains("1e+300"),
        "{m}"
    );
    let (_, m) = code(tracking(&json!({"consecutiveFailures": 1.5})));
    assert!(
        m.contains("tracking.consecutiveFailures") && m.contains("1.5"),
        "{m}"
    );
    let (_, m) = code(token_count_options(
        &json!({"calibration": {"overhead": 10, "ratio": 1.2, "observations": 2.5}}),
    ));
    assert!(m.contains("options.calibration.observations"), "{m}");
}

/// The options of another type than the one they take are errors naming them and the value:
/// a `system` prompt or `tools` that is a number, a boundary `template` that is no object.
#[test]
fn options_of_the_wrong_type_are_named_with_their_value() {
    for (opts, words) in [
        (json!({"system": 12345}), "options.system must be a string"),
        (json!({"system": true}), "got true"),
        (
            json!({"system": ["a", 5]}),
            "options.system[1] must be a string or a block, got 5",
        ),
        (
            json!({"tools": 3}),
            "options.tools must be the tool definitions",
        ),
        (json!({"tools": "Read"}), "got \"Read\""),
    ] {
        let (c, m) = code(token_count_options(&opts));
        assert_eq!(c, ErrorCode::InvalidArgument, "{opts}");
        assert!(m.contains(words), "{opts}: {m}");
    }
    // What the request sends is taken in every form it has.
    for ok in [
        json!({"system": "You are terse."}),
        json!({"system": [{"type": "text", "text": "a"}, "b"]}),
        json!({"system": {"role": "system", "content": "x"}}),
        json!({"tools": [{"name": "Read"}]}),
        json!({"tools": {"read": {"description": "d"}}}),
    ] {
        assert!(token_count_options(&ok).is_ok(), "{ok}");
    }
    let (_, m) = code(context(&json!({"model": "m", "system": 7})));
    assert!(m.contains("context.system") && m.contains("got 7"), "{m}");
    let (_, m) = code(context(&json!({"model": "m", "toolDefinitions": false})));
    assert!(m.contains("context.toolDefinitions"), "{m}");
    for bad in [json!("str"), json!(5), json!([{"type": "user"}])] {
        let (c, m) = code(boundary_options(&json!({ "template": bad })));
        assert_eq!(c, ErrorCode::InvalidArgument);
        assert!(
            m.contains("options.template must be a message object"),
            "{m}"
        );
    }
    assert!(boundary_options(&json!({"template": null}))
        .unwrap()
        .template
        .is_none());
    let (_, m) = code(micro_compact_options(
        &json!({"keepRecent": 1, "now": null, "lastAssistantTimestamp": null, "idleMinutes": "5"}),
        || 0.0,
    ));
    assert!(
        m.contains("options.idleMinutes must be a finite number, got \"5\""),
        "{m}"
    );
}

#[test]
fn error_text_reads_every_place_an_error_keeps_words() {
    assert_eq!(error_text(&json!("plain")), ("plain".to_string(), None));
    let (text, status) = error_text(&json!({
        "status": 413,
        "message": "Request failed",
        "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}},
        "body": {"detail": 1}
    }));
    assert_eq!(status, Some(413));
    assert_eq!(
        text,
        "Request failed (prompt is too long: 210000 tokens > 200000 maximum; error; {\"detail\":1})"
    );
    // Words the text already says are not repeated; blank ones are left out.
    assert_eq!(
        error_text(&json!({"message": "400 invalid_request_error: bad", "code": "invalid_request_error", "type": " "})).0,
        "400 invalid_request_error: bad"
    );
    assert_eq!(
        error_text(&json!({"message": "bad request", "code": "E_CUSTOM"})).0,
        "bad request (E_CUSTOM)"
    );
    assert_eq!(error_text(&json!({"code": "E_ONLY"})).0, "E_ONLY");
    // A status outside 100–599 is not an HTTP status; statusCode is read next.
    assert_eq!(
        error_text(&json!({"status": 42, "statusCode": 529})).1,
        Some(529)
    );
    assert_eq!(error_text(&json!({"status": "413"})).1, None);
}

#[test]
fn error_text_reads_through_the_errors_an_error_wraps() {
    let ptl = json!({"status": 400, "error": {"type": "error", "error": {"type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum"}}});
    // `new Error('summary call failed', {cause: apiError})`, twice wrapped.
    let (text, status) = error_text(
        &json!({"message": "wrapped", "cause": {"message": "summary call failed", "cause": ptl}}),
    );
    assert_eq!(status, Some(400));
    assert!(
        text.starts_with("wrapped (summary call failed; prompt is too long: 210000 tokens"),
        "{text}"
    );
    // The outer error's status comes first; a string cause is read as words.
    let (text, status) = error_text(&json!({"message": "overloaded", "status": 529, "cause": ptl}));
    assert_eq!(status, Some(529));
    assert!(text.contains("prompt is too long"), "{text}");
    assert_eq!(
        error_text(&json!({"message": "failed", "cause": "socket hang up"})).0,
        "failed (socket hang up)"
    );
    // An AggregateError's errors.
    let (text, status) = error_text(&json!({"message": "all attempts failed", "errors": [ptl]}));
    assert_eq!(status, Some(400));
    assert!(text.contains("prompt is too long"), "{text}");
    // Read MAX_CAUSE_DEPTH levels deep, no further.
    let mut deep = json!({"message": "level 9"});
    for k in (0..9).rev() {
        deep = json!({"message": format!("level {k}"), "cause": deep});
    }
    let text = error_text(&deep).0;
    assert!(
        text.contains("level 3") && !text.contains("level 4"),
        "{text}"
    );
}

/// No options at all (the per-turn call) reads as an empty options object: every default.
#[test]
fn absent_should_auto_compact_options_are_the_defaults() {
    let empty = should_auto_compact_options(&json!({})).unwrap();
    assert_eq!(should_auto_compact_options(&json!(null)).unwrap(), empty);
    assert_eq!(empty.0, ShouldAutoCompactOptions::default());
}

/// No `microCompact` options read as an empty options object, with the time of the call.
#[test]
fn absent_micro_compact_options_are_the_defaults() {
    let empty = micro_compact_options(&json!({}), || 1234.0).unwrap();
    assert_eq!(
        micro_compact_options(&json!(null), || 1234.0).unwrap(),
        empty
    );
    assert_eq!(empty.now_ms, Some(1234.0));
}

/// A read time may be a number of ms or a time as a caller holds one (a `Date`, which JSON
/// writes as its ISO text): both order the restored files; anything else reads as 0.
#[test]
fn read_file_state_times_are_numbers_or_dates() {
    let c = context(&json!({"model": "m", "readFileState": {
        "a.rs": {"content": "a", "timestamp": "2026-02-10T21:00:00.000Z"},
        "b.rs": {"content": "b", "mtime": 1_000},
        "c.rs": {"content": "c", "timestamp": "yesterday"},
    }}))
    .unwrap();
    let times: Vec<f64> = c
        .context
        .read_file_state
        .iter()
        .map(|f| f.timestamp_ms)
        .collect();
    assert_eq!(times, [1_770_757_200_000.0, 1_000.0, 0.0]);
}

#[test]
fn deferred_tools_are_not_in_the_preamble_until_a_search_loads_them() {
    let read =
        json!({"name": "Read", "description": "Reads a file", "input_schema": {"type": "object"}});
    let grep =
        json!({"name": "Grep", "description": "Searches", "input_schema": {"type": "object"}});
    let mut deferred = grep.clone();
    deferred["defer_loading"] = json!(true);
    let units = |tools: serde_json::Value| {
        token_count_options(&json!({ "tools": tools }))
            .unwrap()
            .preamble
            .unwrap()
            .tools_units
    };
    use crate::model::view;
    let whole = |v: &serde_json::Value| view::utf16_len(&view::json_text(v));
    // Nothing deferred: the array's JSON, as before.
    let both = json!([read, grep]);
    assert_eq!(units(both.clone()), whole(&both));
    // A deferred tool is left out: the rest measure as the array without it.
    assert_eq!(units(json!([read, deferred])), whole(&json!([read])));
    assert_eq!(units(json!([deferred, read])), whole(&json!([read])));
    // `defer_loading: false` (or not a boolean) loads the tool.
    let mut eager = grep.clone();
    eager["defer_loading"] = json!(false);
    assert_eq!(units(json!([read, eager])), whole(&json!([read, eager])));
    // Every tool deferred: nothing of them is in the first request.
    assert_eq!(units(json!([deferred, deferred])), 0);
}

/// A collection given where entries are read (`readFileState`, `invokedSkills`) that is a
/// built-in other than a Map (a Set, whose values are no entries; a WeakMap; a Date) is
/// refused naming what it is, not read as empty (and then cleared).
#[test]
fn a_set_or_another_built_in_is_no_read_file_state() {
    for field in ["readFileState", "invokedSkills"] {
        for kind in ["Set", "WeakMap", "Date", "function"] {
            let kinds: &'static [(&'static str, &'static str)] = match (field, kind) {
                ("readFileState", "Set") => &[("readFileState", "Set")],
                ("readFileState", "WeakMap") => &[("readFileState", "WeakMap")],
                ("readFileState", "Date") => &[("readFileState", "Date")],
                ("readFileState", _) => &[("readFileState", "function")],
                (_, "Set") => &[("invokedSkills", "Set")],
                (_, "WeakMap") => &[("invokedSkills", "WeakMap")],
                (_, "Date") => &[("invokedSkills", "Date")],
                _ => &[("invokedSkills", "function")],
            };
            let c = Builtin(json!({"model": "claude-opus-4-6", field: {}}), None, kinds);
            let (code, message) = code(context(&c));
            assert_eq!(code, ErrorCode::InvalidArgument);
            assert_eq!(
                message,
                format!(
                    "context.{field} must be a Map, an object or an array, not {}",
                    with_article(kind)
                )
            );
        }
        // A Map is read through its entries.
        let c = Builtin(
            json!({"model": "claude-opus-4-6", field: {"a.rs": "x"}}),
            None,
            if field == "readFileState" {
                &[("readFileState", "Map")]
            } else {
                &[("invokedSkills", "Map")]
            },
        );
        assert!(context(&c).is_ok());
    }
}

#[test]
fn preemptive_is_a_boolean_or_an_object_never_an_array() {
    let read = |v: Value| {
        preemptive(
            &json!({ "preemptive": v }),
            "claude-opus-4-6",
            &Config::default(),
        )
    };
    assert!(read(json!(true)).unwrap().is_some());
    assert!(read(json!(false)).unwrap().is_none());
    assert!(read(json!({})).unwrap().is_some());
    for bad in [json!([]), json!([{"earlyLine": 5}]), json!("yes"), json!(1)] {
        let e = read(bad.clone()).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad}");
        assert!(e.message.contains("options.preemptive"), "{}", e.message);
    }
}

/// An SDK's usage of a response its provider reported no counts for is no usage (every count
/// 0), not an error; a usage with no count's name at all still is one.
#[test]
fn usage_of_a_provider_that_reported_none_is_zero_not_an_error() {
    for u in [
        json!({"inputTokens": null, "outputTokens": null, "totalTokens": null}),
        json!({"prompt_tokens": 0, "completion_tokens": 0}),
    ] {
        let counts = usage_counts(&u, "usage").unwrap();
        assert!(counts.is_zero(), "{u}");
        let (o, _) = should_auto_compact_options(&json!({ "usage": u })).unwrap();
        assert!(o.given_usage.is_none(), "{u}: no usage is given");
    }
    let (c, m) = code(usage_counts(&json!({"tokens": 3}), "usage"));
    assert_eq!(c, ErrorCode::InvalidArgument);
    assert!(m.contains("no input or output token count"), "{m}");
    let (o, _) = should_auto_compact_options(&json!({"usage": {"inputTokens": 5}})).unwrap();
    assert_eq!(o.given_usage.unwrap().usage.input_tokens, 5);
}

/// A wrong `tools` (read where `discoveredTools` is absent) is named as the caller gave it.
#[test]
fn a_wrong_tools_list_is_named_tools() {
    let (c, m) = code(context(&json!({"model": "m", "tools": 5})));
    assert_eq!(c, ErrorCode::InvalidArgument);
    assert!(m.contains("context.tools"), "{m}");
    let (_, m) = code(context(
        &json!({"model": "m", "discoveredTools": 5, "tools": []}),
    ));
    assert!(m.contains("context.discoveredTools"), "{m}");
}
