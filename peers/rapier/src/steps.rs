//! `steps.csv` as solverlab writes it (`crates/cli/src/tables.rs`, `STEP_COLUMNS`): the same
//! columns in the same order, names and units, numbers in the same shortest round-trip form.
//!
//! The metrics columns are solverlab's own measurements (`solverlab_core::metrics::measure`) of
//! Rapier's state, so drift, `in_place`, penetration (solverlab's narrow phase on Rapier's
//! poses), joint errors and energies are defined exactly as for a solverlab run.
//! `support_force` is the normal impulse of Rapier's contacts with the world colliders over
//! the substep (N). The columns a Rapier run cannot fill are left empty: `iterations`,
//! `outer_iterations`, `residual` and `converged` (Rapier runs a fixed count of sweeps and
//! reports no residual). `solve_seconds` holds the wall time of the whole Rapier step (broad
//! phase, narrow phase, solver and integration: solverlab's `solve_seconds` also holds its
//! contact search, and its `integrate_seconds` the shared prediction), `integrate_seconds` 0.

use solverlab_core::metrics::StepMetrics;
use solverlab_core::sim::FrameReport;

/// The columns of solverlab's `steps.csv`, in its order.
pub use solverlab_cli::STEP_COLUMNS;

/// The columns a Rapier run leaves empty.
pub const EMPTY: [&str; 4] = ["iterations", "outer_iterations", "residual", "converged"];

/// Numbers and files as solverlab writes them: the shortest form that reads back to the same
/// `f64`, and through a temporary file and a rename.
pub use solverlab_cli::{num, write_atomic};

/// One row of `steps.csv`: solverlab's own fields of a frame report
/// ([`solverlab_cli::step_fields`]), with the columns Rapier cannot fill ([`EMPTY`]) left empty.
pub fn row(frame: u64, time: f64, m: &StepMetrics, support_force: f64, step_seconds: f64) -> Vec<String> {
    let report = FrameReport {
        frame,
        time,
        iterations: 0,
        outer_iterations: 0,
        support_force,
        note: None,
        residual: 0.0,
        converged: false,
        solve_seconds: step_seconds,
        integrate_seconds: 0.0,
        metrics: *m,
    };
    let mut fields = solverlab_cli::step_fields(&report);
    for (field, column) in fields.iter_mut().zip(STEP_COLUMNS) {
        if EMPTY.contains(&column) {
            field.clear();
        }
    }
    fields
}

/// Writes each `(name, text)` of `files` into the folder `out` (made if missing), each file
/// atomically; an error names the path.
pub fn write_files(out: &std::path::Path, files: &[(&str, &str)]) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (name, text) in files {
        let path = out.join(name);
        write_atomic(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// A CSV line: fields joined by commas (solverlab's fields hold no commas or quotes, and the
/// peer's own text fields are checked for them).
pub fn line(fields: &[String]) -> String {
    debug_assert!(fields.iter().all(|f| !f.contains([',', '"', '\n'])), "{fields:?}");
    let mut s = fields.join(",");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are solverlab's own: every column of `STEP_COLUMNS` in solverlab's
    /// `tables.rs`, in the same order.
    #[test]
    fn columns_are_solverlabs() {
        let tables = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../crates/cli/src/tables.rs"))
            .expect("solverlab's tables.rs");
        let start = tables.find("pub const STEP_COLUMNS").expect("STEP_COLUMNS");
        let block = &tables[start..start + tables[start..].find("];").expect("end of STEP_COLUMNS")];
        let names: Vec<&str> = block.split('"').skip(1).step_by(2).collect();
        assert_eq!(names, STEP_COLUMNS);
        assert!(EMPTY.iter().all(|c| STEP_COLUMNS.contains(c)));
        assert_eq!(row(1, 0.0, &StepMetrics::default(), 0.0, 0.0).len(), STEP_COLUMNS.len());
    }
}
