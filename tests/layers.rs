//! The architecture, checked: `src/` is layered (see the crate docs), each layer uses only the
//! layers below it, no two modules import each other (directly or through others), and only
//! `bindings/` knows about JavaScript.
//!
//! The check reads the sources: every path in a module's non-test code that starts at `crate::`
//! or `super::` (chains of `super::` included, `{…}` groups expanded at any depth) is resolved
//! to the `<layer>::<module>` it names, and that is an import of it. `use crate as …` and
//! `super` outside a path are refused, so no import can hide behind another name. Test code
//! (`#[cfg(test)]` modules and `tests.rs` files) may reach anywhere, as tests build whole
//! conversations. `lib.rs` only declares the layers and re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first; a module may import modules of its own layer or of lower ones.
const LAYERS: &[&str] = &[
    "model",
    "measure",
    "transforms",
    "summarize",
    "drive",
    "simulate",
    "bindings",
];

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Where a file sits: its layer, the module it belongs to (`layer::module`: a module's own
/// sub-files, `offline/render.rs`, belong to it) and its own module path, which `super::` is
/// relative to. `src/drive/options/tests.rs` → None (test code); `src/drive/pipeline.rs` →
/// ("drive", "drive::pipeline", [drive, pipeline]); `src/drive/mod.rs` → ("drive", "drive",
/// [drive]).
struct Place {
    layer: String,
    module: String,
    path: Vec<String>,
}

fn module_of(src: &Path, file: &Path) -> Option<Place> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.len() < 2
        || parts
            .last()
            .is_some_and(|p| p == "tests" || p == "wasm_tests")
    {
        return None;
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    let layer = parts[0].clone();
    let module = match parts.get(1) {
        Some(m) => format!("{layer}::{m}"),
        None => layer.clone(),
    };
    Some(Place {
        layer,
        module,
        path: parts,
    })
}

/// The source without its `#[cfg(test)]` items: everything from a `#[cfg(test)]` line to the
/// end of the item that follows (a `mod … { … }` block or a single `mod …;`).
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                opened |= l.contains('{');
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        // Comments and doc links name modules without importing them.
        let code = line.split("//").next().unwrap_or("");
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads a use-tree at the start of `text` (`a::b`, `a::{b, c::{self, D}}`, `a::*`): every
/// path it names, each a list of segments (`self` segments dropped).
fn use_tree(text: &str) -> Vec<Vec<String>> {
    fn tree(t: &[char], i: &mut usize, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        loop {
            while *i < t.len() && t[*i].is_whitespace() {
                *i += 1;
            }
            if *i < t.len() && t[*i] == '{' {
                *i += 1;
                loop {
                    let mut p = prefix.clone();
                    tree(t, i, &mut p, out);
                    while *i < t.len() && t[*i].is_whitespace() {
                        *i += 1;
                    }
                    match t.get(*i) {
                        Some(',') => *i += 1,
                        Some('}') => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                    while *i < t.len() && t[*i].is_whitespace() {
                        *i += 1;
                    }
                    if t.get(*i) == Some(&'}') {
                        *i += 1;
                        return;
                    }
                }
            }
            if t.get(*i) == Some(&'*') {
                *i += 1;
                out.push(prefix.clone());
                return;
            }
            let start = *i;
            while *i < t.len() && is_ident(t[*i]) {
                *i += 1;
            }
            let seg: String = t[start..*i].iter().collect();
            if !seg.is_empty() && seg != "self" {
                prefix.push(seg);
            }
            if t.get(*i) == Some(&':') && t.get(*i + 1) == Some(&':') {
                *i += 2;
                continue;
            }
            out.push(prefix.clone());
            // `path as name`: the alias names the same thing.
            let mut j = *i;
            while j < t.len() && t[j].is_whitespace() {
                j += 1;
            }
            if t[j..].starts_with(&['a', 's']) && t.get(j + 2).is_some_and(|c| c.is_whitespace()) {
                j += 2;
                while j < t.len() && t[j].is_whitespace() {
                    j += 1;
                }
                while j < t.len() && is_ident(t[j]) {
                    j += 1;
                }
                *i = j;
            }
            return;
        }
    }
    let t: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    tree(&t, &mut 0, &mut Vec::new(), &mut out);
    out
}

/// Every `layer::module` that `code` (the non-test code of the file at `here`, its module path)
/// names through `crate::` or `super::` paths. Errors name what the checker refuses to guess.
fn imports(code: &str, here: &[String]) -> Result<BTreeSet<(String, String)>, String> {
    let mut found = BTreeSet::new();
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    for (k, &(at, _)) in chars.iter().enumerate() {
        let word_start = k == 0 || !is_ident(chars[k - 1].1);
        if !word_start {
            continue;
        }
        let rest = &code[at..];
        let (mut base, mut tail) = if let Some(t) = rest.strip_prefix("crate::") {
            (Vec::new(), t)
        } else if rest.starts_with("super::") {
            (here.to_vec(), rest)
        } else {
            if rest.starts_with("crate as ") {
                return Err(format!("`use crate as …` hides imports: {}", line_of(rest)));
            }
            continue;
        };
        if rest.starts_with("super::") {
            // Only a path that starts with `super` is resolved here; `super::super::x` is
            // met again at its second `super`, which is not at a path start.
            if k >= 2 && code[..at].trim_end().ends_with("::") {
                continue;
            }
            while let Some(t) = tail.strip_prefix("super::") {
                if base.pop().is_none() {
                    return Err(format!("`super` above the crate: {}", line_of(rest)));
                }
                tail = t;
            }
        }
        for path in use_tree(tail) {
            let mut full = base.clone();
            full.extend(path);
            if full.first().and_then(|l| rank(l)).is_none() {
                continue;
            }
            let module = match full.get(1) {
                Some(m) if m.chars().next().is_some_and(|c| c.is_lowercase()) => {
                    format!("{}::{}", full[0], m)
                }
                _ => full[0].clone(),
            };
            found.insert((full[0].clone(), module));
        }
    }
    Ok(found)
}

fn line_of(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

struct Graph {
    /// module → (its layer, the modules it imports)
    edges: BTreeMap<String, (String, BTreeSet<(String, String)>)>,
    /// module → the text of its non-test code
    code: BTreeMap<String, String>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g = Graph {
        edges: BTreeMap::new(),
        code: BTreeMap::new(),
    };
    for file in files {
        let Some(place) = module_of(&src, &file) else {
            continue;
        };
        let code = without_tests(&std::fs::read_to_string(&file).unwrap());
        let found =
            imports(&code, &place.path).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let entry = g
            .edges
            .entry(place.module.clone())
            .or_insert_with(|| (place.layer, BTreeSet::new()));
        entry.1.extend(found);
        g.code.entry(place.module).or_default().push_str(&code);
    }
    g
}

#[test]
fn every_core_file_is_in_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        if rel == Path::new("lib.rs") {
            continue;
        }
        let layer = rel.iter().next().unwrap().to_string_lossy().to_string();
        assert!(
            rank(&layer).is_some(),
            "{} is outside the layers {LAYERS:?}",
            rel.display()
        );
    }
}

#[test]
fn layers_import_only_lower_layers() {
    let g = graph();
    assert!(
        g.edges.len() > 20,
        "too few modules found: {:?}",
        g.edges.keys()
    );
    let mut wrong = Vec::new();
    for (module, (layer, deps)) in &g.edges {
        for (dep_layer, dep) in deps {
            if rank(dep_layer) > rank(layer) {
                wrong.push(format!("{module} ({layer}) imports {dep} ({dep_layer})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_import_cycle_between_modules() {
    let g = graph();
    // Depth-first search with colours; a grey node met again closes a cycle.
    fn visit(
        g: &Graph,
        m: &str,
        colour: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
        cycles: &mut Vec<String>,
    ) {
        colour.insert(m.to_string(), 1);
        stack.push(m.to_string());
        if let Some((_, deps)) = g.edges.get(m) {
            for (_, d) in deps {
                if d == m || !g.edges.contains_key(d) {
                    continue;
                }
                match colour.get(d).copied().unwrap_or(0) {
                    0 => visit(g, d, colour, stack, cycles),
                    1 => {
                        let from = stack.iter().position(|s| s == d).unwrap();
                        cycles.push(format!("{} → {d}", stack[from..].join(" → ")));
                    }
                    _ => {}
                }
            }
        }
        stack.pop();
        colour.insert(m.to_string(), 2);
    }
    let mut colour = BTreeMap::new();
    let mut cycles = Vec::new();
    for m in g.edges.keys() {
        if colour.get(m).copied().unwrap_or(0) == 0 {
            visit(&g, m, &mut colour, &mut Vec::new(), &mut cycles);
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn only_the_bindings_know_javascript() {
    let g = graph();
    for (module, (layer, _)) in &g.edges {
        if layer == "bindings" {
            continue;
        }
        let code = &g.code[module];
        for js in ["wasm_bindgen", "js_sys", "web_sys", "JsValue"] {
            assert!(!code.contains(js), "{module} ({layer}) uses {js}");
        }
    }
}

/// The shipped `.wasm` is built with `-Z fmt-debug=shallow` (scripts/toolchain.sh): a derived
/// `Debug` writes only the type's name there, so a message formatted with `Debug` could lose
/// its text in the package while reading well in native tests. No non-test code formats with
/// `Debug` (a caller's text is quoted with `model::view::quoted`).
#[test]
fn no_message_is_written_with_debug() {
    let g = graph();
    for (module, code) in &g.code {
        for (n, line) in code.lines().enumerate() {
            assert!(
                !formats_with_debug(line),
                "{module}, line {} of its non-test code, formats with Debug: {}",
                n + 1,
                line.trim()
            );
        }
    }
}

/// Whether `line` holds a `Debug` format spec: `{…:…?}` with no brace inside (`{:?}`,
/// `{x:?}`, `{:#?}`, `{0:x?}`, `{v:>5?}`), or calls `Debug::fmt`.
fn formats_with_debug(line: &str) -> bool {
    line.contains("Debug::fmt")
        || line.match_indices('{').any(|(at, _)| {
            let rest = &line[at + 1..];
            rest.find(['{', '}'])
                .filter(|&end| rest[end..].starts_with('}'))
                .is_some_and(|end| rest[..end].contains(':') && rest[..end].ends_with('?'))
        })
}

#[test]
fn the_debug_check_sees_every_form() {
    for debug in [
        r#"format!("{:?}", x)"#,
        r#"format!("{x:?}")"#,
        r#"format!("{:#?}", x)"#,
        r#"format!("{0:x?}", x)"#,
        r#"format!("{v:>5?}")"#,
        "std::fmt::Debug::fmt(&x, f)",
    ] {
        assert!(formats_with_debug(debug), "{debug}");
    }
    for fine in [
        r#"format!("{x} {y:>5} {{not?}}")"#,
        "let v = f(a)?;",
        "Foo { a: b, c: d }",
        r#"write!(f, "{:.1}", x)"#,
    ] {
        assert!(!formats_with_debug(fine), "{fine}");
    }
}

/// `lib.rs` declares the layers and re-exports from them; code there would sit above every
/// layer, unchecked.
#[test]
fn lib_rs_only_declares_and_reexports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let text = std::fs::read_to_string(src).unwrap();
    for line in text.lines().map(str::trim) {
        let declaration = |kw: &str| line.starts_with(kw) && line.ends_with(';');
        let ok = line.is_empty()
            || line.starts_with("//")
            || line.starts_with("#[")
            || line.starts_with("#![")
            || declaration("pub mod ")
            || declaration("mod ")
            || declaration("pub use ");
        assert!(ok, "lib.rs holds more than declarations: {line:?}");
    }
}

fn names(found: &BTreeSet<(String, String)>) -> Vec<&str> {
    found.iter().map(|(_, m)| m.as_str()).collect()
}

fn here(path: &str) -> Vec<String> {
    path.split("::").map(String::from).collect()
}

/// The checker itself: it must see an upward import and a cycle when there is one, however
/// the path is written.
#[test]
fn the_checker_sees_what_it_checks() {
    let code = "use crate::drive::pipeline::x;\n#[cfg(test)]\nmod tests {\n use crate::bindings::y;\n}\n// crate::summarize::loss\nfn f() { crate::measure::tokens::count(); }\n";
    let found = imports(&without_tests(code), &here("model::view")).unwrap();
    assert_eq!(names(&found), vec!["drive::pipeline", "measure::tokens"]);
    // Groups, nested groups, `self`, globs and line breaks.
    let code = "use crate::{\n    drive::{autocompact::{self, SkipReason as Why}, options},\n    model::view::*,\n    summarize,\n};\n";
    let found = imports(code, &here("transforms::strip")).unwrap();
    assert_eq!(
        names(&found),
        vec![
            "drive::autocompact",
            "drive::options",
            "model::view",
            "summarize"
        ]
    );
    // `super` chains, relative to the file's own module path.
    let found = imports(
        "use super::super::loss::x; use super::facts; fn f() { super::render::g() }",
        &here("summarize::offline::request"),
    )
    .unwrap();
    assert_eq!(names(&found), vec!["summarize::loss", "summarize::offline"]);
    let found = imports(
        "use super::{env::JsEnv, convert::*};",
        &here("bindings::exports"),
    )
    .unwrap();
    assert_eq!(names(&found), vec!["bindings::convert", "bindings::env"]);
    let found = imports(
        "use super::super::drive::pipeline;",
        &here("transforms::ptl"),
    )
    .unwrap();
    assert_eq!(names(&found), vec!["drive::pipeline"]);
    // What would hide an import is refused.
    assert!(imports("use crate as c; c::drive::x();", &here("model::view")).is_err());
    assert!(imports("use super::super::super::x;", &here("model::view")).is_err());
    // A two-module cycle written with `super` is a cycle.
    let a = imports("use super::b::f;", &here("bindings::a")).unwrap();
    let b = imports("use super::{a::g};", &here("bindings::b")).unwrap();
    assert!(a.contains(&("bindings".into(), "bindings::b".into())));
    assert!(b.contains(&("bindings".into(), "bindings::a".into())));
}
