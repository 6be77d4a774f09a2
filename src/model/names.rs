//! Which known name a misspelt one most likely meant, so that an error about an unknown option
//! key or value can suggest it (`querySorce` → `querySource`, `sessionMemory` →
//! `session_memory`).

/// `name` in a comparable form: lower case, without `_` and `-`.
fn folded(name: &str) -> Vec<char> {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The number of edits (insert, delete or replace one character, swap two neighbours) that
/// turn `a` into `b` (the optimal string alignment distance).
fn distance(a: &[char], b: &[char]) -> usize {
    let w = b.len() + 1;
    let mut d: Vec<usize> = vec![0; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The name of `known` that `name` most likely misspells, or `None` when `name` is one of
/// them or is nothing like any of them.
///
/// A misspelling is the same name but for case, `_` and `-` (`DisableCompact`,
/// `session-memory`), or, ignoring those, one edit away when both names have at least 6
/// characters (`querySorce`), or two edits away when both have at least 12. Shorter names are
/// too close to each other to tell a typo from another word (`mode` is not `model`).
pub fn likely_meant<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    if known.contains(&name) {
        return None;
    }
    let n = folded(name);
    known
        .iter()
        .filter_map(|k| {
            let f = folded(k);
            let shortest = n.len().min(f.len());
            let allowed = match shortest {
                0..=5 => 0,
                6..=11 => 1,
                _ => 2,
            };
            let d = distance(&n, &f);
            (d <= allowed).then_some((d, *k))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &[
        "model",
        "querySource",
        "summarize",
        "summaryTimeoutMs",
        "keepLastUserMessage",
        "agents",
        "tools",
    ];

    #[test]
    fn misspellings_are_recognized() {
        for (typo, meant) in [
            ("querySorce", "querySource"),
            ("qeurySource", "querySource"),
            ("QuerySource", "querySource"),
            ("query_source", "querySource"),
            ("sumarize", "summarize"),
            ("summaryTimeoutMS", "summaryTimeoutMs"),
            ("summaryTimoutMs", "summaryTimeoutMs"),
            ("keepLastUserMesage", "keepLastUserMessage"),
            ("keepLastUsrMesage", "keepLastUserMessage"),
            ("Model", "model"),
        ] {
            assert_eq!(likely_meant(typo, KEYS), Some(meant), "{typo}");
        }
        assert_eq!(
            likely_meant("sessionMemory", &["compact", "session_memory"]),
            Some("session_memory")
        );
        assert_eq!(
            likely_meant("compct", &["compact", "session_memory"]),
            Some("compact")
        );
    }

    #[test]
    fn other_names_are_not_taken_for_misspellings() {
        for other in [
            "model",
            "mode",
            "models",
            "agentId",
            "tool",
            "agent",
            "messages",
            "mine",
            "options",
            "abortController",
            "",
        ] {
            assert_eq!(likely_meant(other, KEYS), None, "{other}");
        }
        assert_eq!(likely_meant("repl_main_thread", &["compact"]), None);
        assert_eq!(likely_meant("agent:custom", &["compact"]), None);
    }

    #[test]
    fn distances() {
        let d = |a: &str, b: &str| distance(&folded(a), &folded(b));
        assert_eq!(d("abc", "abc"), 0);
        assert_eq!(d("abc", "acb"), 1);
        assert_eq!(d("abc", "ab"), 1);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("kitten", "sitting"), 3);
    }
}
