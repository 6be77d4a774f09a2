//! The architecture, checked: `src/` is layered (see the crate docs), each layer uses only the
//! layers below it, no two modules import each other (directly or through others), and only
//! `bindings/` knows about JavaScript.
//!
//! The check reads the sources: every `crate::<layer>::<module>` path in a module's non-test
//! code is an import of that module. Test code (`#[cfg(test)]` modules and `tests.rs` files) may
//! reach anywhere, as tests build whole conversations.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first; a module may import modules of its own layer or of lower ones.
const LAYERS: &[&str] = &[
    "model",
    "measure",
    "transforms",
    "summarize",
    "drive",
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

/// `src/drive/options/tests.rs` → None (test code); `src/drive/pipeline.rs` →
/// ("drive", "drive::pipeline"); `src/drive/mod.rs` → ("drive", "drive").
fn module_of(src: &Path, file: &Path) -> Option<(String, String)> {
    let rel = file.strip_prefix(src).unwrap();
    let parts: Vec<String> = rel
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
    let layer = parts[0].clone();
    // A module's own sub-files (`offline/render.rs`) belong to it: the module is the first two
    // path parts, `layer::module`.
    let module = if parts[1] == "mod" {
        layer.clone()
    } else {
        format!("{}::{}", parts[0], parts[1])
    };
    Some((layer, module))
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

/// Every `crate::layer::module` named in `code`.
fn imports(code: &str) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let path: Vec<&str> = rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap_or("")
            .split("::")
            .collect();
        if rank(path[0]).is_some() {
            let module = match path.get(1) {
                Some(m) if !m.is_empty() && m.chars().next().unwrap().is_lowercase() => {
                    format!("{}::{}", path[0], m)
                }
                _ => path[0].to_string(),
            };
            found.insert((path[0].to_string(), module));
        }
    }
    found
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
        let Some((layer, module)) = module_of(&src, &file) else {
            continue;
        };
        let code = without_tests(&std::fs::read_to_string(&file).unwrap());
        let entry = g
            .edges
            .entry(module.clone())
            .or_insert_with(|| (layer, BTreeSet::new()));
        entry.1.extend(imports(&code));
        g.code.entry(module).or_default().push_str(&code);
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

/// The checker itself: it must see an upward import and a cycle when there is one.
#[test]
fn the_checker_sees_what_it_checks() {
    let code = "use crate::drive::pipeline::x;\n#[cfg(test)]\nmod tests {\n use crate::bindings::y;\n}\n// crate::summarize::loss\nfn f() { crate::measure::tokens::count(); }\n";
    let found = imports(&without_tests(code));
    let names: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(names, vec!["drive::pipeline", "measure::tokens"]);
}
