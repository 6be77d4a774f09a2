use super::request::conversation_from_request;
use super::*;
use crate::summarize::facts::{
    clean_user_text, command_family, command_key, command_outcome, is_error_line, CallResult,
    Outcome, Resolution,
};
use crate::summarize::loss::{file_mentioned, text_mentioned, SummaryIndex};
use crate::summarize::summary::{build_summary_request, extract_summary};
use serde_json::json;

fn msgs(v: Value) -> Vec<Message> {
    Message::parse_all(v).unwrap()
}

fn request_value(m: &[Message], instructions: &[String]) -> Value {
    serde_json::to_value(build_summary_request("claude-opus-4-6", m, instructions)).unwrap()
}

fn session() -> Vec<Message> {
    msgs(json!([
        {"role": "user", "content": "Add a --verbose flag to the CLI in src/main.rs and make the tests pass."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "I'll look at the CLI first."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/repo/src/main.rs"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "     1→fn main() {}\n"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "TodoWrite", "input": {"todos": [
                {"content": "Add the flag", "status": "in_progress", "activeForm": "Adding the flag"},
                {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}]}},
            {"type": "tool_use", "id": "t3", "name": "Edit", "input": {"file_path": "/repo/src/main.rs",
                "old_string": "fn main() {}", "new_string": "fn main() { let verbose = true; }"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "Todos have been modified successfully."},
            {"type": "tool_result", "tool_use_id": "t3", "content": "The file /repo/src/main.rs has been updated."}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t4", "name": "Bash", "input": {"command": "cargo test 2>&1 | tail -20", "description": "Run tests"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t4", "is_error": true,
            "content": "Exit code 101\nerror[E0599]: no method named `verbose` found\nerror: could not compile `cli`"}]},
        {"role": "user", "content": "<system-reminder>\nThe TodoWrite tool hasn't been used recently.\n</system-reminder>"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t5", "name": "Write", "input": {"file_path": "/repo/src/cli.rs", "content": "pub struct Cli { pub verbose: bool }\n"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t5", "content": "File created successfully at: /repo/src/cli.rs"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t6", "name": "Bash", "input": {"command": "cargo test"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t6", "content": "test result: ok. 4 passed; 0 failed"}]},
        {"role": "user", "content": "Also print the version with -V please"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Adding -V now."},
            {"type": "tool_use", "id": "t7", "name": "Edit", "input": {"file_path": "/repo/src/cli.rs",
                "old_string": "verbose: bool", "new_string": "verbose: bool, pub version: bool"}}]}
    ]))
}

#[test]
fn facts_of_a_session() {
    let f = extract_facts(&session());
    let users: Vec<&str> = f.user_messages.iter().map(|u| u.text.as_str()).collect();
    assert_eq!(
        users,
        vec![
            "Add a --verbose flag to the CLI in src/main.rs and make the tests pass.",
            "Also print the version with -V please"
        ]
    );
    assert_eq!(f.files.len(), 2);
    let main = &f.files[0];
    assert_eq!((main.reads, main.edits, main.writes), (1, 1, 0));
    assert_eq!(
        main.last_change.as_deref(),
        Some("fn main() { let verbose = true; }")
    );
    let cli = &f.files[1];
    assert!(cli.created);
    // The last edit of cli.rs got no result: not counted as done, but an open call.
    assert_eq!(cli.edits, 0);
    assert_eq!(f.open_calls, vec!["Edit /repo/src/cli.rs"]);
    assert_eq!(f.commands.len(), 2);
    assert!(matches!(&f.commands[0].outcome, Outcome::Failed(e) if e.starts_with("error[E0599]")));
    assert_eq!(f.commands[1].outcome, Outcome::Ok);
    assert_eq!(f.errors.len(), 1);
    assert_eq!(
        f.errors[0].resolution,
        Resolution::Fixed("a later run of the same command succeeded".into())
    );
    assert_eq!(f.todos.len(), 2);
    assert_eq!(f.last_assistant_text.as_deref(), Some("Adding -V now."));
    assert_eq!(
        f.tool_counts[0..2],
        [("Bash".to_string(), 2), ("Edit".to_string(), 2)]
    );
}

#[test]
fn summary_has_the_sections_and_the_facts() {
    let s = summarize_messages(&session(), DEFAULT_BUDGET_TOKENS);
    assert!(s.starts_with("<summary>\n") && s.ends_with("</summary>"));
    for n in 1..=9 {
        assert!(s.contains(&format!("\n{n}. ")), "section {n} in\n{s}");
    }
    assert!(
        s.contains("\"Add a --verbose flag to the CLI in src/main.rs and make the tests pass.\"")
    );
    assert!(s.contains("\"Also print the version with -V please\""));
    assert!(s.contains("(paths relative to /repo/src/)"));
    assert!(s.contains("   - main.rs — edited ×1, read ×1"));
    assert!(s.contains("   - cli.rs — created"));
    assert!(s.contains("fn main() { let verbose = true; }"));
    assert!(s.contains("error[E0599]: no method named `verbose` found — fixed: a later run of the same command succeeded"));
    assert!(s.contains("[in_progress] Add the flag"));
    assert!(s.contains("[pending] Run the tests"));
    assert!(s.contains("Tool calls still without a result: Edit cli.rs"));
    assert!(s.contains("Go on with the open task \"Add the flag\"."));
    assert!(
        !s.contains("TodoWrite tool hasn't been used"),
        "reminders are not user messages"
    );
    assert!(s.contains("Languages of the files touched: Rust (2 files)"));
}

#[test]
fn same_input_same_output_and_request_path_agrees() {
    let m = session();
    let a = summarize_messages(&m, 0);
    assert_eq!(a, summarize_messages(&m, 0));
    let req = request_value(&m, &[]);
    let b = summarize_request(&req, 0);
    assert_eq!(b, summarize_request(&req, 0));
    assert_eq!(a, b);
    assert_eq!(extract_summary(&b), extract_summary(&a));
}

#[test]
fn request_round_trip_rebuilds_calls_results_and_markers() {
    let m = msgs(json!([
        {"type": "user", "message": {"role": "user", "content": "Caveat: The messages below were generated by the user while running local commands."}, "isMeta": true},
        {"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "Earlier: the user wanted X."}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "[image]"}, {"type": "text", "text": "what is in this picture?"}]}},
        {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": [
            {"type": "tool_use", "id": "t", "name": "Write", "input": {"file_path": "/x/big.txt", "content": "z".repeat(100_000)}}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}}
    ]));
    let req = request_value(&m, &["focus on the picture".to_string()]);
    let conv = conversation_from_request(&req);
    assert_eq!(conv.instructions, vec!["focus on the picture"]);
    let f = extract_facts(&conv.messages);
    assert_eq!(f.user_messages.len(), 1);
    assert_eq!(f.user_messages[0].text, "what is in this picture?");
    assert_eq!(f.user_messages[0].media, 1);
    assert_eq!(f.earlier_summaries, vec!["Earlier: the user wanted X."]);
    assert_eq!(f.files.len(), 1);
    assert_eq!(f.files[0].writes, 1);
    // The huge input was cut inside its string, so the JSON stayed readable.
    let change = f.files[0].last_change.as_deref().unwrap();
    assert!(change.contains("characters left out"));
    let s = summarize_request(&req, 0);
    assert!(s.contains("Asked of this summary: focus on the picture"));
    assert!(s.contains("\"what is in this picture?\" (with 1 attached image or document)"));
    assert!(s.contains("Earlier: the user wanted X."));
    assert!(!s.contains("Caveat"));
}

#[test]
fn user_text_cleaning() {
    let mut removed = Vec::new();
    assert_eq!(
        clean_user_text(
            "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args>keep tests</command-args>",
            &mut removed
        ),
        Some("/compact keep tests".to_string())
    );
    assert_eq!(
        clean_user_text("<bash-input>ls -la</bash-input>", &mut removed),
        Some("! ls -la".to_string())
    );
    assert_eq!(
        clean_user_text("[Request interrupted by user for tool use]", &mut removed),
        None
    );
    assert_eq!(
        clean_user_text(
            "<ide_opened_file>The user opened x.js</ide_opened_file>Fix the bug",
            &mut removed
        ),
        Some("Fix the bug".to_string())
    );
    assert_eq!(
        clean_user_text(
            "<local-command-stdout>done</local-command-stdout>",
            &mut removed
        ),
        None
    );
    assert!(removed.iter().any(|r| r == "The user opened x.js"));
    assert_eq!(
        clean_user_text(
            "<task-notification>\n<task-id>b1</task-id>\n</task-notification>\nRead the output file to retrieve the result: /tmp/b1.output",
            &mut removed
        ),
        None
    );
}

#[test]
fn error_detection_rules() {
    assert!(is_error_line(
        "error: cannot invoke remote function Access.get/2 inside a guard"
    ));
    assert!(is_error_line("     error: cannot invoke remote function"));
    assert!(is_error_line("src/a.c:3:1: error: expected ';'"));
    assert!(is_error_line("15 tests, 2 failures"));
    assert!(!is_error_line("15 tests, 0 failures"));
    assert!(!is_error_line("test result: ok. 4 passed; 0 failed"));
    assert!(!is_error_line("warning: unused variable"));
    // Only the first 160 characters are read, ASCII or not; case does not matter.
    let (pad, wide) = ("x".repeat(148), "é".repeat(148));
    assert!(is_error_line(&format!("{pad} PANICKED AT")));
    assert!(!is_error_line(&format!("{pad}xx panicked at")));
    assert!(is_error_line(&format!("{wide} Panicked At")));
    assert!(!is_error_line(&format!("{wide}éé panicked at")));
    assert!(is_error_line("ERROR: ÜBER"));
    for l in [
        "Segmentation Fault (core dumped)",
        "BUILD FAILED in 3s",
        "bash: /x: Permission Denied",
        "** (CompileError) lib/a.ex:1",
        "Traceback (most recent call last):",
        "Error: Cannot find module 'x'",
        "npm ERR! code 1",
        "Uncaught TypeError: x is undefined",
        "found 3 Errors",
        "zsh: command NOT FOUND: foo",
        "ls: x: No Such File Or Directory",
        "thread 'main' Panicked At src/main.rs",
        "FATAL: bad",
        "Unhandled rejection",
        "Exception: boom",
    ] {
        assert!(is_error_line(l), "{l}");
    }
    for l in [
        "all good",
        "3 passed",
        "erudite",
        "0 errors",
        "fail2ban is a program",
    ] {
        assert!(!is_error_line(l), "{l}");
    }
    // Viewer output is not scanned: a source file may contain `error:` lines.
    let o = command_outcome(
        "cat src/lib.rs",
        Some(&CallResult {
            text: "error: String,".into(),
            is_error: false,
        }),
    );
    assert_eq!(o, Outcome::Ok);
    let o = command_outcome(
        "mix compile 2>&1 | head",
        Some(&CallResult {
            text: "== Compilation error in file x.ex ==\n** (CompileError) x.ex: cannot compile"
                .into(),
            is_error: false,
        }),
    );
    assert!(matches!(o, Outcome::ErrorOutput(e) if e.starts_with("** (CompileError)")));
    assert_eq!(
        command_key("cd /repo && RUST_LOG=1 cargo test -q 2>&1 | tail -5"),
        "cargo test -q"
    );
    assert_eq!(command_family("cd /repo && cargo test -q"), "cargo test");
    assert_eq!(command_family("python3 script.py"), "python3");
}

#[test]
fn failed_edit_fixed_by_a_later_edit_and_hook_errors() {
    let m = msgs(json!([
        {"role": "user", "content": "rename foo to bar in lib.ex"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Edit", "input": {"file_path": "/p/lib.ex", "old_string": "fooo", "new_string": "bar"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": "<tool_use_error>String to replace not found in file.</tool_use_error>"}]},
        {"type": "user", "isMeta": true, "message": {"role": "user", "content": "<system-reminder>\nPostToolUse hook: [COMPILE ERROR]\n  error: undefined function baz/0 (lib.ex:3)\n</system-reminder>"}},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "Edit", "input": {"file_path": "/p/lib.ex", "old_string": "foo", "new_string": "bar"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "updated"}]}
    ]));
    let f = extract_facts(&m);
    assert_eq!(f.errors.len(), 2, "{:?}", f.errors);
    assert_eq!(f.errors[0].source, "Edit /p/lib.ex");
    assert_eq!(
        f.errors[0].resolution,
        Resolution::Fixed("a later Edit of the same file succeeded".into())
    );
    assert_eq!(
        f.errors[1].excerpt,
        "error: undefined function baz/0 (lib.ex:3)"
    );
    assert_eq!(
        f.errors[1].resolution,
        Resolution::Likely("lib.ex was changed afterwards".into())
    );
    assert_eq!(f.user_messages.len(), 1, "meta lines are not user messages");
}

#[test]
fn task_tools_and_rejections() {
    let m = msgs(json!([
        {"role": "user", "content": "plan the work"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "c1", "name": "TaskCreate", "input": {"subject": "Write the parser"}},
            {"type": "tool_use", "id": "c2", "name": "TaskCreate", "input": {"subject": "Write the docs"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "Task #1 created successfully: Write the parser"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "Task #2 created successfully: Write the docs"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "u", "name": "TaskUpdate", "input": {"taskId": "1", "status": "completed"}},
            {"type": "tool_use", "id": "x", "name": "Bash", "input": {"command": "rm -rf build"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "u", "content": "Updated task #1 status"},
            {"type": "tool_result", "tool_use_id": "x", "is_error": true, "content": "The user doesn't want to proceed with this tool use. The tool use was rejected."}]},
        {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}]}
    ]));
    let f = extract_facts(&m);
    assert_eq!(f.todos[0].status, "completed");
    assert_eq!(f.todos[1].status, "pending");
    assert_eq!(f.commands[0].outcome, Outcome::Rejected);
    assert!(f.errors[0].rejected);
    assert_eq!(f.user_messages.len(), 1);
    let s = summarize_messages(&m, 0);
    assert!(s.contains("`rm -rf build`: rejected by the user."));
    assert!(s.contains("[pending] Write the docs"));
    assert!(!s.contains("[completed] Write the parser"));
    assert!(s.contains("Go on with the open task \"Write the docs\"."));
}

#[test]
fn budget_trims_details_first_but_keeps_every_user_message_and_path() {
    let mut v = Vec::new();
    for i in 0..60 {
        v.push(json!({"role": "user", "content": format!("request number {i}: {}", "please do this and that ".repeat(40))}));
        v.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Working on {i}. {}", "Some explanation. ".repeat(30))},
            {"type": "tool_use", "id": format!("e{i}"), "name": "Edit", "input": {
                "file_path": format!("/work/project/src/module_{i}.rs"), "old_string": "a", "new_string": "fn x() {}\n".repeat(200)}},
            {"type": "tool_use", "id": format!("b{i}"), "name": "Bash", "input": {"command": format!("cargo test --test t{i}")}}]}));
        v.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("e{i}"), "content": "ok"},
            {"type": "tool_result", "tool_use_id": format!("b{i}"), "content": "test result: ok"}]}));
    }
    let m = msgs(Value::Array(v));
    let full = summarize_messages(&m, 1_000_000);
    let small = summarize_messages(&m, 4_000);
    assert!(text_tokens(&full) > 4_000);
    assert!(text_tokens(&small) <= 4_000, "{}", text_tokens(&small));
    let idx = SummaryIndex::new(&small);
    for i in 0..60 {
        assert!(small.contains(&format!("module_{i}.rs")));
        assert!(text_mentioned(
            &idx,
            &format!(
                "request number {i}: {}",
                "please do this and that ".repeat(40)
            )
        ));
    }
    assert!(small.contains("characters left out"));
    assert!(!small.contains("The assistant's latest notes"));
    // A budget below what user messages and paths need: still all there, over budget.
    let tiny = summarize_messages(&m, 100);
    for i in 0..60 {
        assert!(tiny.contains(&format!("module_{i}.rs")));
        assert!(tiny.contains(&format!("\"request number {i}: please")));
    }
}

#[test]
fn request_budget_is_capped_by_max_tokens() {
    let mut req = request_value(&session(), &[]);
    req["max_tokens"] = json!(50);
    let s = summarize_request(&req, 8_000);
    assert_eq!(s, summarize_facts(&extract_facts(&session()), &[], 50));
}

#[test]
fn empty_conversation() {
    let s = summarize_messages(&[], 0);
    assert!(s.contains("No message from the user"));
    assert!(s.contains("No file was read or changed."));
}

/// Coverage of a summary: (files mentioned, user messages mentioned).
fn coverage(summary: &str, files: &[String], users: &[String]) -> (usize, usize) {
    let idx = SummaryIndex::new(summary);
    (
        files.iter().filter(|f| file_mentioned(&idx, f)).count(),
        users.iter().filter(|u| text_mentioned(&idx, u)).count(),
    )
}

fn load(file: &str) -> Vec<Message> {
    let path = format!(
        "{}/../shared/transcripts/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("test transcript {path} is missing: {e}"));
    crate::transforms::transcript::parse_transcript(&text).unwrap()
}

/// Paths in Read/Write/Edit/MultiEdit/NotebookEdit inputs, and the real user text lines,
/// read from the raw lines independently of the summarizer's own reading.
fn touched_and_typed(lines: &[Message]) -> (Vec<String>, Vec<String>) {
    let mut files: Vec<String> = Vec::new();
    let mut users: Vec<String> = Vec::new();
    for l in lines {
        let v = l.to_value();
        if v["isSidechain"] == json!(true) {
            continue;
        }
        let content = &v["message"]["content"];
        match v["type"].as_str() {
            Some("assistant") => {
                for b in content.as_array().into_iter().flatten() {
                    let name = b["name"].as_str().unwrap_or("");
                    if b["type"] == "tool_use"
                        && ["Read", "Write", "Edit", "MultiEdit", "NotebookEdit"].contains(&name)
                    {
                        let p = b["input"]["file_path"]
                            .as_str()
                            .or(b["input"]["notebook_path"].as_str())
                            .unwrap()
                            .to_string();
                        if !files.contains(&p) {
                            files.push(p);
                        }
                    }
                }
            }
            Some("user") if v["isMeta"] != json!(true) && v["isCompactSummary"] != json!(true) => {
                let texts: Vec<String> = match content {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(bs) => bs
                        .iter()
                        .filter(|b| b["type"] == "text")
                        .filter_map(|b| b["text"].as_str().map(str::to_string))
                        .collect(),
                    _ => vec![],
                };
                for t in texts {
                    // Harness-added texts: tagged elements and interruption notices.
                    let t = t.trim();
                    if t.starts_with('<') || t.starts_with("[Request interrupted") || t.is_empty() {
                        continue;
                    }
                    users.push(t.to_string());
                }
            }
            _ => {}
        }
    }
    (files, users)
}

#[test]
fn real_long_transcript_before_its_compaction() {
    let all = load("cc_long_autocompact_4d5611e5.jsonl");
    let boundary = all.iter().position(Message::is_compact_boundary).unwrap();
    assert_eq!(boundary, 753);
    let before = &all[..boundary];
    let (files, users) = touched_and_typed(before);
    assert_eq!(users, vec![
        "Work on bead spotter-dov. Run bd show spotter-dov to see the issue details and bd ready to find available subtasks. Start with the first ready task.",
        "continue"
    ]);

    // Ours, through the request the pipeline would send.
    let req = request_value(before, &[]);
    let reply = summarize_request(&req, DEFAULT_BUDGET_TOKENS);
    assert_eq!(
        reply,
        summarize_request(&req, DEFAULT_BUDGET_TOKENS),
        "deterministic"
    );
    let ours = extract_summary(&reply);
    let ours_tokens = text_tokens(&reply);
    let (of, ou) = coverage(&ours, &files, &users);

    // Claude Code's real summary, written right after the boundary.
    let real = all[boundary + 1].to_value()["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let real_tokens = text_tokens(&real);
    let real_summary = real.split("\nSummary:\n").nth(1).unwrap_or(&real);
    let (rf, ru) = coverage(real_summary, &files, &users);

    println!("--- offline summary ---\n{reply}\n---");
    println!(
        "files touched: {}, user messages: {}\n\
         offline summary: {of}/{} files, {ou}/{} user messages, {ours_tokens} tokens\n\
         Claude Code's summary: {rf}/{} files, {ru}/{} user messages, {real_tokens} tokens (whole message)",
        files.len(),
        users.len(),
        files.len(),
        users.len(),
        files.len(),
        users.len()
    );
    assert_eq!(of, files.len(), "every file");
    assert_eq!(ou, users.len(), "every user message");
    assert!(rf < files.len(), "the real summary misses files");
    assert!(ours_tokens <= real_tokens, "{ours_tokens} > {real_tokens}");
    // The typed path reads the same conversation.
    let typed = summarize_messages(before, DEFAULT_BUDGET_TOKENS);
    let (tf, tu) = coverage(&typed, &files, &users);
    assert_eq!((tf, tu), (files.len(), users.len()));
    // Counting the file searched with Grep too (the 13 files).
    let mut with_grep = files.clone();
    with_grep.push(
        "/home/USER/projects/spotter-worktrees/spotter-dov/priv/static/assets/spotter.css".into(),
    );
    let (of13, _) = coverage(&ours, &with_grep, &users);
    let (rf13, _) = coverage(real_summary, &with_grep, &users);
    println!("with the grepped file: offline {of13}/13, Claude Code {rf13}/13");
    println!(
        "Claude Code's <summary> part alone: {} tokens",
        text_tokens(real_summary)
    );
    assert_eq!((of13, rf13), (13, 10));
    // The loss report of the real summary names the files it left out.
    let real_report = crate::summarize::loss::loss_report(before, real_summary);
    println!("left out by Claude Code's summary: {:?}", real_report.files);
    assert_eq!(real_report.files.len(), files.len() - rf);
    // Nothing the loss report would flag in ours.
    let report = crate::summarize::loss::loss_report(before, &ours);
    assert!(
        report.files.is_empty() && report.user_messages.is_empty(),
        "{report:?}"
    );
}

#[test]
fn real_image_transcript_whole() {
    let all = load("cc_image_9e953218.jsonl");
    let (files, users) = touched_and_typed(&all);
    let req = request_value(&all, &[]);
    let reply = summarize_request(&req, DEFAULT_BUDGET_TOKENS);
    let tokens = text_tokens(&reply);
    let (of, ou) = coverage(&reply, &files, &users);
    println!(
        "cc_image: offline summary {of}/{} files, {ou}/{} user messages, {tokens} tokens",
        files.len(),
        users.len()
    );
    assert!(tokens <= DEFAULT_BUDGET_TOKENS);
    assert_eq!(of, files.len());
    assert_eq!(ou, users.len());
    let small = summarize_messages(&all, 0);
    let report = crate::summarize::loss::loss_report(&all, &small);
    assert!(
        report.files.is_empty() && report.user_messages.is_empty(),
        "{report:?}"
    );
}

#[test]
fn real_short_transcript() {
    let all = load("cc_small_short.jsonl");
    let s = summarize_messages(&all, 0);
    assert!(s.contains("\"mix phx.server doesnt seem to start\""));
    assert!(s.contains("`mix phx.server 2>&1 | head -80`: rejected by the user."));
    assert!(s.contains("Glob \"mix.exs\" in /home/marco/projects/spotter: rejected by the user."));
    assert!(
        !s.contains("/model"),
        "local command lines are system lines"
    );
    assert!(s.contains("The user interrupted the assistant after this."));
}

#[test]
fn rejection_feedback_is_a_user_message() {
    let m = msgs(json!([
        {"role": "user", "content": "clean up the build dir"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "Bash", "input": {"command": "rm -rf build"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "is_error": true,
            "content": "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nonly remove build/tmp, keep the rest"}]}
    ]));
    let f = extract_facts(&m);
    let users: Vec<&str> = f.user_messages.iter().map(|u| u.text.as_str()).collect();
    assert_eq!(
        users,
        vec![
            "clean up the build dir",
            "only remove build/tmp, keep the rest"
        ]
    );
    assert_eq!(f.commands[0].outcome, Outcome::Rejected);
}

#[test]
fn request_and_typed_paths_agree_on_real_transcripts() {
    for file in [
        "cc_small_short.jsonl",
        "cc_image_9e953218.jsonl",
        "cc_long_autocompact_4d5611e5.jsonl",
    ] {
        let all = load(file);
        let start = crate::measure::tokens::active_start(all.as_slice()).unwrap();
        let part = &all[start..];
        let typed = summarize_messages(part, 0);
        let via_request = summarize_request(&request_value(part, &[]), 0);
        if typed != via_request {
            let a: Vec<&str> = typed.lines().collect();
            let b: Vec<&str> = via_request.lines().collect();
            for (x, y) in a.iter().zip(b.iter()) {
                if x != y {
                    println!("{file}\n typed:   {x}\n request: {y}");
                }
            }
        }
        assert_eq!(typed, via_request, "{file}");
    }
}

/// The loss report's reading ([`crate::summarize::facts::extract_loss_facts`]) gives the same
/// files, user messages and errors (but for the resolutions, which it does not read) as the
/// full reading, on the test session and on every shared transcript.
#[test]
fn the_loss_reading_has_the_files_messages_and_errors_of_the_full_reading() {
    let mut conversations = vec![session()];
    for file in [
        "cc_small_short.jsonl",
        "cc_image_9e953218.jsonl",
        "cc_long_autocompact_4d5611e5.jsonl",
        "cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl",
    ] {
        conversations.push(load(file));
    }
    let mut read = [0; 3];
    for c in &conversations {
        let full = extract_facts(c);
        let loss = crate::summarize::facts::extract_loss_facts(c);
        let paths = |f: &crate::summarize::facts::ConversationFacts| {
            f.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>()
        };
        let errors = |f: &crate::summarize::facts::ConversationFacts| {
            f.errors
                .iter()
                .map(|e| (e.source.clone(), e.excerpt.clone(), e.rejected, e.order))
                .collect::<Vec<_>>()
        };
        assert_eq!(paths(&loss), paths(&full));
        assert_eq!(loss.user_messages, full.user_messages);
        assert_eq!(errors(&loss), errors(&full));
        read[0] += full.files.len();
        read[1] += full.user_messages.len();
        read[2] += full.errors.len();
    }
    assert!(read.iter().all(|&n| n > 10), "{read:?}");
}
