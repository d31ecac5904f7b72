//! Seeded mutations of TOML text, for the fuzz tests of the scene and experiment formats
//! (`crates/solvers/tests/fuzz.rs`, `crates/cli/src/spec/tests.rs`): one to three edits per
//! mutant, each deleting a line, duplicating it, or replacing the value of a `key = value` line by
//! NaN, an infinity, a huge, tiny, zero or negative number, a string, a boolean or an array.

use solverlab_core::rng::Rng;

/// The values a retyped key gets.
pub const VALUES: [&str; 12] =
    ["nan", "inf", "-inf", "1e308", "-1e308", "0", "-1", "-0.5", "1e-320", "\"x\"", "true", "[1.0, 2.0]"];

/// A mutant of `text` (see the module docs), drawn from `rng`.
pub fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let edits = 1 + rng.below(3);
    for _ in 0..edits {
        if lines.is_empty() {
            break;
        }
        let k = rng.below(lines.len());
        match rng.below(4) {
            0 => {
                lines.remove(k);
            }
            1 => {
                let line = lines[k].clone();
                lines.insert(k, line);
            }
            _ => {
                if let Some((key, _)) = lines[k].split_once(" = ") {
                    let value = VALUES[rng.below(VALUES.len())];
                    let value = if rng.below(2) == 0 { format!("[{value}, 0.0, 0.0]") } else { value.to_string() };
                    lines[k] = format!("{key} = {value}");
                }
            }
        }
    }
    lines.join("\n") + "\n"
}
