//! Rendering the offline summary: the sections of SPEC §14, one function each
//! ([`render`]), with the detail one of the [`LEVELS`] allows; the summarizer tries them from
//! the most detailed to the least until the text fits its budget.

use std::fmt::Write as _;

use crate::model::order;
use crate::summarize::facts::{
    command_family, cut_inline, file_name, one_line, CommandFacts, ConversationFacts, FileFacts,
    Outcome, Resolution, TodoItem,
};
use crate::summarize::summary::{cut_middle, extract_summary};

/// The limits of one rendering: how much detail it keeps. [`LEVELS`] go from most to least:
/// tool details go first (notes, other calls, code of the last changes, successful commands,
/// the earlier summary), then long user messages are cut shorter and shorter in the middle.
#[derive(Clone, Copy, Debug)]
pub(super) struct RenderLimits {
    /// Characters kept of each user message (cut in the middle).
    user_cap: usize,
    /// Characters of the first/latest request quoted in section 1.
    intent_cap: usize,
    /// Characters kept of each file's last change (0: none).
    snippet_cap: usize,
    /// At most this many files (the most recently changed) show their last change.
    snippet_files: usize,
    /// List successful commands (else only failed ones, and a count).
    ok_commands: bool,
    /// At most this many distinct successful commands (the latest).
    ok_commands_max: usize,
    /// Characters of each command line.
    command_cap: usize,
    /// Characters of each error excerpt.
    excerpt_cap: usize,
    /// The assistant's latest notes shown.
    notes: usize,
    /// Characters of each note.
    note_cap: usize,
    /// Other tool calls shown (the latest).
    other_calls: usize,
    /// Characters of the earlier summaries.
    earlier_cap: usize,
    /// Characters of the assistant's last text.
    current_cap: usize,
    /// Show languages, programs and tool counts.
    concepts: bool,
}

pub(super) const LEVELS: &[RenderLimits] = &[
    RenderLimits {
        user_cap: 4_000,
        intent_cap: 400,
        snippet_cap: 700,
        snippet_files: 12,
        ok_commands: true,
        ok_commands_max: 40,
        command_cap: 160,
        excerpt_cap: 200,
        notes: 16,
        note_cap: 220,
        other_calls: 12,
        earlier_cap: 12_000,
        current_cap: 1_200,
        concepts: true,
    },
    RenderLimits {
        user_cap: 4_000,
        intent_cap: 300,
        snippet_cap: 400,
        snippet_files: 8,
        ok_commands: true,
        ok_commands_max: 25,
        command_cap: 120,
        excerpt_cap: 200,
        notes: 8,
        note_cap: 160,
        other_calls: 6,
        earlier_cap: 8_000,
        current_cap: 800,
        concepts: true,
    },
    RenderLimits {
        user_cap: 4_000,
        intent_cap: 240,
        snippet_cap: 240,
        snippet_files: 5,
        ok_commands: true,
        ok_commands_max: 10,
        command_cap: 100,
        excerpt_cap: 160,
        notes: 3,
        note_cap: 140,
        other_calls: 0,
        earlier_cap: 5_000,
        current_cap: 600,
        concepts: true,
    },
    RenderLimits {
        user_cap: 4_000,
        intent_cap: 200,
        snippet_cap: 0,
        snippet_files: 0,
        ok_commands: false,
        ok_commands_max: 0,
        command_cap: 100,
        excerpt_cap: 140,
        notes: 0,
        note_cap: 0,
        other_calls: 0,
        earlier_cap: 3_000,
        current_cap: 400,
        concepts: true,
    },
    RenderLimits {
        user_cap: 2_000,
        intent_cap: 160,
        snippet_cap: 0,
        snippet_files: 0,
        ok_commands: false,
        ok_commands_max: 0,
        command_cap: 80,
        excerpt_cap: 120,
        notes: 0,
        note_cap: 0,
        other_calls: 0,
        earlier_cap: 1_500,
        current_cap: 300,
        concepts: false,
    },
    RenderLimits {
        user_cap: 1_000,
        intent_cap: 120,
        snippet_cap: 0,
        snippet_files: 0,
        ok_commands: false,
        ok_commands_max: 0,
        command_cap: 60,
        excerpt_cap: 100,
        notes: 0,
        note_cap: 0,
        other_calls: 0,
        earlier_cap: 600,
        current_cap: 200,
        concepts: false,
    },
    RenderLimits {
        user_cap: 500,
        intent_cap: 0,
        snippet_cap: 0,
        snippet_files: 0,
        ok_commands: false,
        ok_commands_max: 0,
        command_cap: 60,
        excerpt_cap: 80,
        notes: 0,
        note_cap: 0,
        other_calls: 0,
        earlier_cap: 300,
        current_cap: 160,
        concepts: false,
    },
    RenderLimits {
        user_cap: 240,
        intent_cap: 0,
        snippet_cap: 0,
        snippet_files: 0,
        ok_commands: false,
        ok_commands_max: 0,
        command_cap: 40,
        excerpt_cap: 60,
        notes: 0,
        note_cap: 0,
        other_calls: 0,
        earlier_cap: 0,
        current_cap: 0,
        concepts: false,
    },
    RenderLimits {
        user_cap: 120,
        intent_cap: 0,
        snippet_cap: 0,
        snippet_files: 0,
        ok_commands: false,
        ok_commands_max: 0,
        command_cap: 40,
        excerpt_cap: 60,
        notes: 0,
        note_cap: 0,
        other_calls: 0,
        earlier_cap: 0,
        current_cap: 0,
        concepts: false,
    },
];

/// The languages of file extensions named in section 2.
const LANGUAGES: &[(&str, &str)] = &[
    ("rs", "Rust"),
    ("ex", "Elixir"),
    ("exs", "Elixir"),
    ("heex", "Elixir"),
    ("js", "JavaScript"),
    ("mjs", "JavaScript"),
    ("cjs", "JavaScript"),
    ("jsx", "JavaScript"),
    ("ts", "TypeScript"),
    ("tsx", "TypeScript"),
    ("mts", "TypeScript"),
    ("py", "Python"),
    ("go", "Go"),
    ("java", "Java"),
    ("kt", "Kotlin"),
    ("rb", "Ruby"),
    ("php", "PHP"),
    ("c", "C"),
    ("h", "C"),
    ("cc", "C++"),
    ("cpp", "C++"),
    ("hpp", "C++"),
    ("cs", "C#"),
    ("swift", "Swift"),
    ("scala", "Scala"),
    ("sh", "shell"),
    ("bash", "shell"),
    ("sql", "SQL"),
    ("html", "HTML"),
    ("css", "CSS"),
    ("scss", "CSS"),
    ("vue", "Vue"),
    ("svelte", "Svelte"),
    ("md", "Markdown"),
    ("json", "JSON"),
    ("yaml", "YAML"),
    ("yml", "YAML"),
    ("toml", "TOML"),
    ("ipynb", "Jupyter notebook"),
];

/// The directory shared by every path (at least two components), when there are two paths
/// or more.
fn common_root(paths: &[&str]) -> Option<String> {
    if paths.len() < 2 || !paths.iter().all(|p| p.starts_with('/')) {
        return None;
    }
    let split: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| {
            let mut parts: Vec<&str> = p.split('/').collect();
            parts.pop(); // the file name
            parts
        })
        .collect();
    let mut n = 0;
    while split.iter().all(|s| s.len() > n && s[n] == split[0][n]) {
        n += 1;
    }
    let root = split[0][..n].join("/");
    (root.matches('/').count() >= 2).then_some(root)
}

fn quote_block(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str(line.trim_end());
    }
    out
}

fn resolution_text(r: &Resolution) -> String {
    match r {
        Resolution::Fixed(why) => format!("fixed: {why}"),
        Resolution::Likely(why) => format!("probably fixed: {why}"),
        Resolution::Open => "not fixed yet (nothing later shows it fixed)".to_string(),
    }
}

fn outcome_text(o: &Outcome, cap: usize) -> String {
    match o {
        Outcome::Ok => "ok".to_string(),
        Outcome::Failed(e) => format!("FAILED: {}", cut_inline(e, cap)),
        Outcome::ErrorOutput(e) => format!("reported an error: {}", cut_inline(e, cap)),
        Outcome::Rejected => "rejected by the user".to_string(),
        Outcome::NoResult => "no result seen".to_string(),
    }
}

/// How the summary names paths: relative to the directory every file shares, when there is
/// one (section 3 names it).
struct PathStyle {
    /// The shared directory ([`common_root`]), without a trailing `/`.
    root: Option<String>,
}

impl PathStyle {
    fn new(facts: &ConversationFacts) -> PathStyle {
        let paths: Vec<&str> = facts.files.iter().map(|f| f.path.as_str()).collect();
        PathStyle {
            root: common_root(&paths),
        }
    }

    /// A file path as the list of files shows it.
    fn show(&self, p: &str) -> String {
        match &self.root {
            Some(r) => p
                .strip_prefix(r.as_str())
                .and_then(|x| x.strip_prefix('/'))
                .unwrap_or(p)
                .to_string(),
            None => p.to_string(),
        }
    }

    /// A call description (last actions, open calls, errors) naming paths as the list of
    /// files does; shell commands (in backticks) stay verbatim.
    fn relative(&self, a: &str) -> String {
        match &self.root {
            Some(r) if !a.contains('`') => a.replace(&format!(" {r}/"), " "),
            _ => a.to_string(),
        }
    }
}

/// A name and how many times it was counted (languages of files, programs run).
struct Tally {
    name: String,
    count: usize,
}

impl Tally {
    /// Counts `name` once more in `tallies` (a new name goes last).
    fn add(tallies: &mut Vec<Tally>, name: &str) {
        match tallies.iter_mut().find(|t| t.name == name) {
            Some(t) => t.count += 1,
            None => tallies.push(Tally {
                name: name.to_string(),
                count: 1,
            }),
        }
    }
}

/// One distinct command line: its last run and how many times it ran.
struct CommandRuns<'a> {
    last: &'a CommandFacts,
    runs: usize,
}

/// The items of the latest todo / task list still to be done.
fn open_todos(facts: &ConversationFacts) -> Vec<&TodoItem> {
    facts.todos.iter().filter(|t| t.is_open()).collect()
}

/// The summary text of `facts` with the detail `limits` allows: the sections of SPEC §14 in
/// order, inside `<summary>…</summary>`.
pub(super) fn render(
    facts: &ConversationFacts,
    instructions: &[String],
    limits: &RenderLimits,
) -> String {
    let paths = PathStyle::new(facts);
    let mut s = String::from("<summary>\n");
    primary_request(&mut s, facts, instructions, limits);
    technical_concepts(&mut s, facts, limits);
    files_and_code(&mut s, facts, limits, &paths);
    errors_and_fixes(&mut s, facts, limits, &paths);
    problem_solving(&mut s, facts, limits, &paths);
    all_user_messages(&mut s, facts, limits);
    pending_tasks(&mut s, facts);
    current_work(&mut s, facts, limits, &paths);
    next_step(&mut s, facts);
    s.push_str("</summary>");
    s
}

/// Section 1: what the summary was asked to keep, the first and latest requests, and the
/// earlier summaries.
fn primary_request(
    s: &mut String,
    facts: &ConversationFacts,
    instructions: &[String],
    limits: &RenderLimits,
) {
    let users = &facts.user_messages;
    s.push_str("1. Primary request and intent:\n");
    if !instructions.is_empty() {
        let _ = writeln!(
            s,
            "   Asked of this summary: {}",
            one_line(&instructions.join(" "), 300)
        );
    }
    match (users.first(), users.last()) {
        (None, _) | (_, None) => s.push_str("   No message from the user in this part.\n"),
        (Some(first), Some(last)) => {
            if limits.intent_cap > 0 {
                let _ = writeln!(
                    s,
                    "   First request: \"{}\"",
                    one_line(&first.text, limits.intent_cap)
                );
                if users.len() > 1 {
                    let _ = writeln!(
                        s,
                        "   Latest request: \"{}\"",
                        one_line(&last.text, limits.intent_cap)
                    );
                }
            }
            let _ = writeln!(
                s,
                "   The user wrote {} message{} (all in section 6).",
                users.len(),
                if users.len() == 1 { "" } else { "s" }
            );
        }
    }
    if limits.earlier_cap > 0 {
        for e in &facts.earlier_summaries {
            let body = extract_summary(e);
            let _ = writeln!(
                s,
                "   Before this part (from the summary of an earlier compaction):\n     {}",
                quote_block(&condense_earlier(body.trim(), limits.earlier_cap), "     ")
            );
        }
    } else if !facts.earlier_summaries.is_empty() {
        s.push_str("   An earlier compaction summarized what came before.\n");
    }
}

/// Sections of an earlier summary kept when it must be condensed: what the conversation
/// asked, the files, the errors, the user's messages and the pending tasks. Concepts,
/// problem solving, current work and next step are superseded by the part that follows.
const EARLIER_KEPT_SECTIONS: &[&str] = &["1", "3", "4", "6", "7"];

/// The number of a section header line (`3. Files and code sections:`, indented when it is
/// quoted from an earlier summary), if it is one.
fn section_number(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && line[digits..].starts_with(". ") && line.trim_end().ends_with(':'))
        .then(|| &line[..digits])
}

/// An earlier summary within `cap` characters: whole when it fits; else condensed — only the
/// sections that carry facts ([`EARLIER_KEPT_SECTIONS`], at every level of quoting, when it
/// has numbered sections), code blocks left out, each line cut to its head — so every list
/// item it carries (a file, a user message) keeps its head, as the summary of this part
/// keeps them; cut in the middle only when even that is too long.
fn condense_earlier(body: &str, cap: usize) -> String {
    if body.chars().count() <= cap {
        return body.to_string();
    }
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut last = String::new();
    for head in [240usize, 160, 100] {
        let mut out = String::new();
        let mut in_code = false;
        // The section headers whose scope the line is in: (indent, kept).
        let mut scopes: Vec<(usize, bool)> = Vec::new();
        for line in body.lines() {
            let t = line.trim_start();
            if t.starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if in_code || t.is_empty() {
                continue;
            }
            let at = indent(line);
            while scopes.last().is_some_and(|&(d, _)| d >= at) {
                scopes.pop();
            }
            if let Some(n) = section_number(line) {
                scopes.push((at, EARLIER_KEPT_SECTIONS.contains(&n)));
            }
            if scopes.iter().any(|&(_, kept)| !kept) {
                continue;
            }
            if line.chars().count() > head {
                out.extend(line.chars().take(head));
                out.push('…');
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        if out.chars().count() <= cap {
            return out;
        }
        last = out;
    }
    cut_middle(&last, cap)
}

/// Section 2: the languages of the files, the programs run and the tools called.
fn technical_concepts(s: &mut String, facts: &ConversationFacts, limits: &RenderLimits) {
    s.push_str("\n2. Key technical concepts:\n");
    if !limits.concepts {
        s.push_str("   (left out to stay within the summary's size)\n");
        return;
    }
    let mut langs: Vec<Tally> = Vec::new();
    for f in &facts.files {
        let name = file_name(&f.path);
        let Some((_, ext)) = name.rsplit_once('.') else {
            continue;
        };
        let ext = ext.to_ascii_lowercase();
        if let Some((_, lang)) = LANGUAGES.iter().find(|(e, _)| *e == ext) {
            Tally::add(&mut langs, lang);
        }
    }
    if !langs.is_empty() {
        let list: Vec<String> = langs
            .iter()
            .map(|Tally { name, count }| {
                format!(
                    "{name} ({count} file{})",
                    if *count == 1 { "" } else { "s" }
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "   - Languages of the files touched: {}",
            list.join(", ")
        );
    }
    let mut programs: Vec<Tally> = Vec::new();
    for c in &facts.commands {
        let fam = command_family(&c.command);
        if fam.is_empty() {
            continue;
        }
        Tally::add(&mut programs, &fam);
    }
    if !programs.is_empty() {
        order::sort_by(&mut programs, &|a, b| {
            b.count.cmp(&a.count).then(a.name.cmp(&b.name))
        });
        let list: Vec<String> = programs
            .iter()
            .take(12)
            .map(|Tally { name, count }| format!("`{name}` ×{count}"))
            .collect();
        let _ = writeln!(s, "   - Commands used: {}", list.join(", "));
    }
    if !facts.tool_counts.is_empty() {
        let list: Vec<String> = facts
            .tool_counts
            .iter()
            .map(|(t, n)| format!("{t} ×{n}"))
            .collect();
        let _ = writeln!(s, "   - Tool calls: {}", list.join(", "));
    }
}

/// Section 3: every file, what was done to it, and the new text of the latest changes.
fn files_and_code(
    s: &mut String,
    facts: &ConversationFacts,
    limits: &RenderLimits,
    paths: &PathStyle,
) {
    s.push_str("\n3. Files and code sections");
    match &paths.root {
        Some(r) => {
            let _ = writeln!(s, " (paths relative to {r}/):");
        }
        None => s.push_str(":\n"),
    }
    if facts.files.is_empty() {
        s.push_str("   No file was read or changed.\n");
    }
    let mut changed: Vec<&FileFacts> = facts.files.iter().filter(|f| f.changed()).collect();
    order::sort_by(&mut changed, &|a, b| {
        b.last_change_at.cmp(&a.last_change_at)
    });
    let with_snippet: Vec<&str> = changed
        .iter()
        .take(limits.snippet_files)
        .map(|f| f.path.as_str())
        .collect();
    for f in &facts.files {
        let mut what: Vec<String> = Vec::new();
        if f.created {
            what.push("created".into());
        }
        let writes = f.writes - usize::from(f.created);
        if writes > 0 {
            what.push(format!("written ×{writes}"));
        }
        if f.edits > 0 {
            what.push(format!("edited ×{}", f.edits));
        }
        if f.reads > 0 {
            what.push(format!("read ×{}", f.reads));
        }
        if f.failures > 0 {
            what.push(format!("{} failed call(s)", f.failures));
        }
        if f.unanswered > 0 {
            what.push(format!("{} call(s) without a result", f.unanswered));
        }
        let _ = writeln!(s, "   - {} — {}", paths.show(&f.path), what.join(", "));
        if limits.snippet_cap > 0 && with_snippet.contains(&f.path.as_str()) {
            if let Some(text) = &f.last_change {
                let t = cut_middle(text.trim_matches('\n'), limits.snippet_cap);
                let _ = writeln!(
                    s,
                    "     New text of the last change:\n     ```\n     {}\n     ```",
                    quote_block(&t, "     ")
                );
            }
        }
    }
}

/// Section 4: every error, and whether a later step fixed it.
fn errors_and_fixes(
    s: &mut String,
    facts: &ConversationFacts,
    limits: &RenderLimits,
    paths: &PathStyle,
) {
    s.push_str("\n4. Errors and fixes:\n");
    if facts.errors.is_empty() {
        s.push_str("   No failed command or tool call was seen.\n");
    }
    for e in &facts.errors {
        if e.rejected {
            let _ = writeln!(
                s,
                "   - {}: rejected by the user.",
                paths.relative(&e.source)
            );
        } else {
            let _ = writeln!(
                s,
                "   - {}: {} — {}",
                paths.relative(&e.source),
                cut_inline(&e.excerpt, limits.excerpt_cap),
                resolution_text(&e.resolution)
            );
        }
    }
}

/// Section 5: the commands run and how they ended, the other tool calls, the assistant's
/// notes.
fn problem_solving(
    s: &mut String,
    facts: &ConversationFacts,
    limits: &RenderLimits,
    paths: &PathStyle,
) {
    s.push_str("\n5. Problem solving:\n");
    let failed = facts
        .commands
        .iter()
        .filter(|c| !matches!(c.outcome, Outcome::Ok))
        .count();
    let _ = writeln!(
        s,
        "   Commands run: {} ({} without a clean result).",
        facts.commands.len(),
        failed
    );
    // Distinct commands, in order of their last run.
    let mut distinct: Vec<CommandRuns> = Vec::new();
    for c in &facts.commands {
        match distinct.iter().position(|d| d.last.command == c.command) {
            Some(p) => {
                let runs = distinct[p].runs + 1;
                distinct.remove(p);
                distinct.push(CommandRuns { last: c, runs });
            }
            None => distinct.push(CommandRuns { last: c, runs: 1 }),
        }
    }
    let ok_count = distinct
        .iter()
        .filter(|d| d.last.outcome == Outcome::Ok)
        .count();
    let skip_ok = ok_count.saturating_sub(limits.ok_commands_max);
    let mut ok_seen = 0usize;
    for CommandRuns { last: c, runs: n } in &distinct {
        if c.outcome == Outcome::Ok {
            ok_seen += 1;
            if !limits.ok_commands || ok_seen <= skip_ok {
                continue;
            }
        }
        let times = if *n > 1 {
            format!("run {n}×, last: ")
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "   - `{}` — {}{}",
            one_line(&c.command, limits.command_cap),
            times,
            outcome_text(&c.outcome, limits.excerpt_cap)
        );
    }
    let hidden = if limits.ok_commands {
        skip_ok
    } else {
        ok_count
    };
    if hidden > 0 {
        let _ = writeln!(s, "   ({hidden} other successful commands not listed)");
    }
    if limits.other_calls > 0 && !facts.other_calls.is_empty() {
        let n = facts.other_calls.len();
        let shown = &facts.other_calls[n.saturating_sub(limits.other_calls)..];
        let _ = writeln!(s, "   Other tool calls ({n}, latest {}):", shown.len());
        for c in shown {
            let _ = writeln!(s, "   - {}", paths.relative(c));
        }
    }
    if limits.notes > 0 && !facts.notes.is_empty() {
        let n = facts.notes.len();
        let shown = &facts.notes[n.saturating_sub(limits.notes)..];
        let _ = writeln!(
            s,
            "   The assistant's latest notes ({} of {n}):",
            shown.len()
        );
        for note in shown {
            let _ = writeln!(s, "   - {}", cut_inline(note, limits.note_cap));
        }
    }
}

/// Section 6: every message the user wrote, long ones cut in the middle.
fn all_user_messages(s: &mut String, facts: &ConversationFacts, limits: &RenderLimits) {
    let users = &facts.user_messages;
    let _ = writeln!(
        s,
        "\n6. All user messages ({}, in order, verbatim{}):",
        users.len(),
        if users
            .iter()
            .any(|u| u.text.chars().count() > limits.user_cap)
        {
            "; long ones cut in the middle"
        } else {
            ""
        }
    );
    if users.is_empty() {
        s.push_str("   (none in this part of the conversation)\n");
    }
    for u in users {
        let media = if u.media > 0 && u.text != "[image]" {
            format!(
                " (with {} attached image{} or document{})",
                u.media,
                if u.media == 1 { "" } else { "s" },
                if u.media == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "   - \"{}\"{media}",
            quote_block(&cut_middle(&u.text, limits.user_cap), "     ")
        );
    }
}

/// Section 7: the open items of the latest task list.
fn pending_tasks(s: &mut String, facts: &ConversationFacts) {
    s.push_str("\n7. Pending tasks:\n");
    let open = open_todos(facts);
    if facts.todos.is_empty() {
        s.push_str("   No task list was kept; what the user asked for is in sections 1 and 6.\n");
    } else if open.is_empty() {
        let _ = writeln!(
            s,
            "   Every item of the latest task list ({}) is completed.",
            facts.todos.len()
        );
    } else {
        let done = facts.todos.len() - open.len();
        for t in &open {
            let _ = writeln!(s, "   - [{}] {}", t.status, one_line(&t.content, 200));
        }
        if done > 0 {
            let _ = writeln!(s, "   ({done} item(s) of the list completed)");
        }
    }
}

/// Section 8: the assistant's last message, its last actions and the calls still waiting
/// for a result.
fn current_work(
    s: &mut String,
    facts: &ConversationFacts,
    limits: &RenderLimits,
    paths: &PathStyle,
) {
    s.push_str("\n8. Current work:\n");
    if limits.current_cap > 0 {
        if let Some(t) = &facts.last_assistant_text {
            let _ = writeln!(
                s,
                "   The assistant's last message: \"{}\"",
                quote_block(&cut_middle(t.trim(), limits.current_cap), "     ")
            );
        }
    }
    if !facts.last_actions.is_empty() {
        let _ = writeln!(
            s,
            "   Last actions: {}",
            facts
                .last_actions
                .iter()
                .map(|a| one_line(&paths.relative(a), limits.command_cap.max(60) + 40))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if !facts.open_calls.is_empty() {
        let _ = writeln!(
            s,
            "   Tool calls still without a result: {}",
            facts
                .open_calls
                .iter()
                .map(|a| paths.relative(a))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if facts.interrupted {
        s.push_str("   The user interrupted the assistant after this.\n");
    }
    if facts.last_assistant_text.is_none() && facts.last_actions.is_empty() {
        s.push_str("   Nothing was under way.\n");
    }
}

/// Section 9 (only when there is one): the open task in progress, else the first open task,
/// else a look at the calls without a result.
fn next_step(s: &mut String, facts: &ConversationFacts) {
    let open = open_todos(facts);
    let in_progress = open
        .iter()
        .find(|t| t.status == "in_progress")
        .or(open.first());
    if let Some(t) = in_progress {
        let _ = writeln!(
            s,
            "\n9. Optional next step:\n   Go on with the open task \"{}\".",
            one_line(&t.content, 200)
        );
    } else if !facts.open_calls.is_empty() {
        s.push_str("\n9. Optional next step:\n   Check what the calls without a result did before going on.\n");
    }
}

#[cfg(test)]
mod condense_tests {
    use super::*;

    #[test]
    fn a_long_earlier_summary_keeps_the_heads_of_its_fact_sections() {
        let mut body =
            String::from("1. Primary request and intent:\n   First request: \"fix it\"\n");
        body.push_str("   Before this part (from the summary of an earlier compaction):\n");
        body.push_str("     3. Files and code sections:\n        - deep/old.rs — read ×1\n");
        body.push_str("     5. Problem solving:\n        - a nested note\n");
        body.push_str("2. Key technical concepts:\n   - Rust\n");
        body.push_str("3. Files and code sections:\n");
        for i in 0..40 {
            body.push_str(&format!(
                "   - src/file{i}.rs — edited ×1\n     ```\n     {}\n     ```\n",
                "x".repeat(300)
            ));
        }
        body.push_str("5. Problem solving:\n");
        body.push_str(&format!("   - {}\n", "note ".repeat(400)));
        body.push_str("6. All user messages (1, in order, verbatim):\n");
        body.push_str(&format!(
            "   - \"please keep every file {}\"\n",
            "y".repeat(500)
        ));
        body.push_str("8. Current work:\n   editing src/file39.rs\n");
        let out = condense_earlier(&body, 3_000);
        assert!(out.chars().count() <= 3_000, "{}", out.len());
        for i in 0..40 {
            assert!(out.contains(&format!("src/file{i}.rs")), "file{i}: {out}");
        }
        assert!(out.contains("deep/old.rs"));
        assert!(out.contains("please keep every file"));
        assert!(!out.contains("xxxx"), "code blocks are left out");
        assert!(!out.contains("Key technical") && !out.contains("note note"));
        assert!(!out.contains("a nested note") && !out.contains("Current work"));
        // Short enough: whole.
        assert_eq!(condense_earlier("1. A:\n   b\n", 100), "1. A:\n   b\n");
        // Without numbered sections: line heads, then cut in the middle.
        let plain = "word ".repeat(2_000);
        assert!(condense_earlier(&plain, 500).chars().count() <= 600);
    }
}
