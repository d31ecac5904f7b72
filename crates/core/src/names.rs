//! "Did you mean …" for names typed by hand: scenes, presets, `--set` keys, experiment keys and
//! columns. A near miss is a case-insensitive edit distance (Levenshtein, with a swap of two
//! neighbours counted as one edit) of at most a third of the longer name, and at least one.

/// The candidate closest to `typed`, if one is a near miss; ties go to the first candidate.
pub fn closest<'a, I>(typed: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let typed_lower = typed.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        let d = distance(&typed_lower, &c.to_lowercase());
        let limit = (typed.chars().count().max(c.chars().count()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `" (did you mean `x`?)"` for the closest near miss, or an empty string.
pub fn did_you_mean<'a, I>(typed: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(typed, candidates).map(|c| format!(" (did you mean `{c}`?)")).unwrap_or_default()
}

/// Adds "did you mean …" to serde's `unknown field `x`, expected one of `a`, `b`, …` (or
/// `expected `a` or `b``, `unknown variant …`) messages; any other message comes back unchanged.
pub fn annotate_unknown(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `"))
    else {
        return message.to_string();
    };
    let Some((typed, tail)) = rest.split_once('`') else {
        return message.to_string();
    };
    let Some((_, expected)) = tail.split_once("expected") else {
        return message.to_string();
    };
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match closest(typed, names) {
        Some(c) => format!("{message} (did you mean `{c}`?)"),
        None => message.to_string(),
    }
}

/// `full` (an error's whole text, with its line and column) followed by the hint that
/// [`annotate_unknown`] finds in its bare `message`, if any.
pub fn with_hint(full: &str, message: &str) -> String {
    let annotated = annotate_unknown(message.trim_end());
    match annotated.strip_prefix(message.trim_end()) {
        Some(hint) if !hint.is_empty() => format!("{}{hint}", full.trim_end()),
        _ => full.trim_end().to_string(),
    }
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// neighbours, each one edit.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1).min(d[i * w + j - 1] + 1).min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_each_kind_of_edit_once() {
        assert_eq!(distance("cloth", "cloth"), 0);
        assert_eq!(distance("clth", "cloth"), 1);
        assert_eq!(distance("cltoh", "cloth"), 1);
        assert_eq!(distance("cloths", "cloth"), 1);
        assert_eq!(distance("chain", "cloth"), 4);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn near_misses_are_suggested_and_far_names_are_not() {
        let names = ["cloth", "chain", "pendulum", "box_stack", "pgs", "gs"];
        assert_eq!(closest("clth", names), Some("cloth"));
        assert_eq!(closest("PGS", names), Some("pgs"));
        assert_eq!(closest("box-stack", names), Some("box_stack"));
        assert_eq!(closest("ragdoll", names), None);
        assert_eq!(did_you_mean("nxx", ["nx", "ny"]), " (did you mean `nx`?)");
        assert_eq!(did_you_mean("zzz", ["nx", "ny"]), "");
    }

    #[test]
    fn serde_messages_get_the_suggestion() {
        let m = "unknown field `iteratons`, expected one of `iterations`, `omega`";
        assert_eq!(annotate_unknown(m), format!("{m} (did you mean `iterations`?)"));
        let m = "unknown variant `jacobbi`, expected `jacobi` or `gauss_seidel`";
        assert!(annotate_unknown(m).ends_with("(did you mean `jacobi`?)"));
        let m = "unknown field `zzzzzz`, expected one of `iterations`, `omega`";
        assert_eq!(annotate_unknown(m), m);
        assert_eq!(annotate_unknown("invalid type: string"), "invalid type: string");
    }
}
