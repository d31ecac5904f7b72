//! Writing an experiment's results: tidy CSVs (one row per frame, iteration, run, …, with the
//! run's scene, solver label and sweep values as columns), `meta.json`, and a copy of the
//! experiment file, each written atomically.

use std::path::Path;

use serde::Serialize;
use solverlab_core::Kind;

use crate::experiment::{Experiment, RunOutput};
use crate::output::{num, write_atomic, CsvOut};
use crate::simulate::step_fields;
use crate::CliError;

/// Columns every table starts with; then one per sweep key.
pub const RUN_COLUMNS: [&str; 4] = ["run", "scene", "label", "family"];

/// The rest of runs.csv: one row per run, timing statistics after the warm-up frames.
/// `unconverged_frames` counts frames that ended above the solver's tolerance (their reasons are
/// in meta.json); `final_violation` and `peak_violation` are the common violation at the last
/// frame and its largest value over the run (m); `final_support_force` is the world colliders'
/// total normal force at the last frame (N). Stack columns (see `solverlab_core::metrics`):
/// `jitter` is the RMS of `rms_speed` over the settled window, the second half of the completed
/// frames (m/s); `max_body_drift` and `max_top_drift` are the largest drifts over the run (m);
/// `stood` is 1 if every body stayed in place in every frame, 0 if not, empty for scenes without
/// bodies.
#[rustfmt::skip]
pub const RUNS_COLUMNS: [&str; 22] = [
    "status", "particles", "constraints", "frames_completed", "unconverged_frames", "mean_iterations",
    "mean_outer_iterations", "step_ms_median", "step_ms_p25", "step_ms_p75", "final_violation", "peak_violation",
    "final_max_stretch", "max_penetration", "final_support_force", "jitter", "max_body_drift", "max_top_drift",
    "stood", "final_state_hash", "solve_ms_median", "step_ms_mean",
];

/// Jitter: the RMS of the per-frame RMS particle speed over the second half of `steps` (frame 0
/// excluded), in m/s.
pub fn jitter(steps: &[solverlab_core::sim::FrameReport]) -> f64 {
    let done = steps.len().saturating_sub(1);
    let window = &steps[steps.len() - done / 2..];
    if window.is_empty() {
        return 0.0;
    }
    (window.iter().map(|r| r.metrics.rms_speed.powi(2)).sum::<f64>() / window.len() as f64).sqrt()
}

/// The rest of convergence.csv.
pub const CONVERGENCE_COLUMNS: [&str; 6] = ["cap", "iterations", "error_rms", "error_max", "violation", "seconds"];

/// The rest of frozen_trace.csv.
pub const FROZEN_COLUMNS: [&str; 5] = ["outer", "iteration", "residual", "residual_rms", "violation"];

/// The per-run columns of run `i`.
fn run_fields(exp: &Experiment, i: usize) -> Vec<String> {
    let r = &exp.runs[i];
    let mut v = vec![i.to_string(), r.scene_label.clone(), r.label.clone(), r.solver.kind().to_string()];
    v.extend(r.params.iter().map(|(_, value)| value.clone()));
    v
}

fn header(exp: &Experiment, rest: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = RUN_COLUMNS.iter().map(|s| s.to_string()).collect();
    h.extend(crate::experiment::sweep_columns(&exp.file));
    h.extend(rest.iter().map(|s| s.to_string()));
    h
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn machine() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock (civil-from-days, H. Hinnant).
fn today() -> String {
    let days =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[derive(Serialize)]
struct Meta<'a> {
    experiment: &'a str,
    solverlab_version: &'static str,
    commit: &'static str,
    rustc: &'static str,
    cpu: String,
    date: String,
    runs: Vec<RunMeta>,
}

#[derive(Serialize)]
struct RunMeta {
    run: usize,
    scene: String,
    label: String,
    sweep: Vec<(String, String)>,
    substeps: u32,
    dt: f64,
    frames: u64,
    status: String,
    error: String,
    unconverged_frames: u64,
    notes: Vec<crate::simulate::Note>,
    final_state_hash: String,
    solver: serde_json::Value,
}

/// Writes every table of an experiment into `out`.
pub fn write(exp: &Experiment, outputs: &[RunOutput], out: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(out).map_err(|e| CliError::Io(format!("{}: {e}", out.display())))?;
    let io = |e: std::io::Error| CliError::Io(format!("{}: {e}", out.display()));
    let create = |name: &str, rest: &[&str]| -> Result<CsvOut, CliError> {
        let cols = header(exp, rest);
        CsvOut::create(&out.join(name), &cols.iter().map(String::as_str).collect::<Vec<_>>()).map_err(io)
    };
    let mut steps = create("steps.csv", &crate::simulate::STEP_COLUMNS)?;
    let mut trace = create("trace.csv", &crate::simulate::TRACE_COLUMNS)?;
    let mut runs = create("runs.csv", &RUNS_COLUMNS)?;
    let mut conv = create("convergence.csv", &CONVERGENCE_COLUMNS)?;
    let mut frozen = create("frozen_trace.csv", &FROZEN_COLUMNS)?;
    let mut positions = create("positions.csv", &["frame", "particle", "x", "y", "z"])?;
    let mut sticks = CsvOut::create(&out.join("sticks.csv"), &["run", "a", "b", "rest"]).map_err(io)?;
    let mut forces = match exp.file.forces_every {
        Some(_) => Some(create("forces.csv", &crate::simulate::FORCE_COLUMNS)?),
        None => None,
    };
    let with_bodies = outputs
        .iter()
        .zip(&exp.runs)
        .any(|(o, r)| !o.positions.is_empty() && (!r.scene.bodies.is_empty() || r.scene.has_rigid()));
    let mut bodies = if with_bodies { Some(create("bodies.csv", &crate::simulate::BODY_COLUMNS[..])?) } else { None };
    let with_contacts = outputs.iter().any(|o| !o.contacts.is_empty());
    let mut contacts =
        if with_contacts { Some(create("contacts.csv", &crate::simulate::CONTACT_COLUMNS[..])?) } else { None };

    let opt = |x: Option<f64>| x.map(num).unwrap_or_default();
    for (i, o) in outputs.iter().enumerate() {
        let base = run_fields(exp, i);
        let row = |rest: Vec<String>| base.iter().cloned().chain(rest).collect::<Vec<String>>();
        let every = exp.file.record_every.unwrap_or(1);
        let last = o.steps.last().map_or(0, |r| r.frame);
        for r in o.steps.iter().filter(|r| r.frame % every == 0 || r.frame == last) {
            steps.row(row(step_fields(r))).map_err(io)?;
        }
        for (frame, substep, r) in &o.trace {
            let f = vec![
                frame.to_string(),
                substep.to_string(),
                r.outer.to_string(),
                r.iteration.to_string(),
                num(r.residual),
                opt(r.residual_rms),
                opt(r.delta_lambda),
                opt(r.violation),
            ];
            trace.row(row(f)).map_err(io)?;
        }
        let warm = exp.file.warmup as usize;
        let mut ms: Vec<f64> =
            o.steps.iter().skip(1 + warm).map(|r| (r.solve_seconds + r.integrate_seconds) * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let mut solve_ms: Vec<f64> = o.steps.iter().skip(1 + warm).map(|r| r.solve_seconds * 1e3).collect();
        solve_ms.sort_by(f64::total_cmp);
        let done = o.steps.len().saturating_sub(1);
        let mean = |f: &dyn Fn(&solverlab_core::sim::FrameReport) -> f64| {
            o.steps.iter().skip(1).map(f).sum::<f64>() / done.max(1) as f64
        };
        let mean_iterations = mean(&|r| r.iterations as f64);
        let mean_outer = mean(&|r| r.outer_iterations as f64);
        let (unconverged, _) = crate::simulate::convergence_notes(o.steps.iter().skip(1));
        let last = o.steps.last().map(|r| r.metrics).unwrap_or_default();
        let support = o.steps.last().map_or(0.0, |r| r.support_force);
        let worst = o.steps.iter().map(|r| r.metrics.violation).fold(0.0, f64::max);
        let pen = o.steps.iter().map(|r| r.metrics.max_penetration).fold(0.0, f64::max);
        let body_drift = o.steps.iter().map(|r| r.metrics.body_drift).fold(0.0, f64::max);
        let top_drift = o.steps.iter().map(|r| r.metrics.top_drift).fold(0.0, f64::max);
        let stood = if exp.runs[i].scene.bodies.is_empty() && !exp.runs[i].scene.has_rigid() {
            String::new()
        } else {
            (o.steps.iter().all(|r| r.metrics.in_place) as u8).to_string()
        };
        runs.row(row(vec![
            o.status.clone(),
            exp.runs[i].scene.particles.len().to_string(),
            exp.runs[i].scene.constraints.len().to_string(),
            done.to_string(),
            unconverged.to_string(),
            num(mean_iterations),
            num(mean_outer),
            num(quantile(&ms, 0.5)),
            num(quantile(&ms, 0.25)),
            num(quantile(&ms, 0.75)),
            num(last.violation),
            num(worst),
            num(last.max_stretch),
            num(pen),
            num(support),
            num(jitter(&o.steps)),
            num(body_drift),
            num(top_drift),
            stood,
            o.hash.clone(),
            num(quantile(&solve_ms, 0.5)),
            num(ms.iter().sum::<f64>() / ms.len().max(1) as f64),
        ]))
        .map_err(io)?;
        for c in &o.convergence {
            conv.row(row(vec![
                c.cap.to_string(),
                c.iterations.to_string(),
                num(c.error_rms),
                num(c.error_max),
                num(c.violation),
                num(c.seconds),
            ]))
            .map_err(io)?;
        }
        for r in &o.frozen_trace {
            frozen
                .row(row(vec![
                    r.outer.to_string(),
                    r.iteration.to_string(),
                    num(r.residual),
                    opt(r.residual_rms),
                    opt(r.violation),
                ]))
                .map_err(io)?;
        }
        for (frame, x, rigid) in &o.positions {
            for (p, v) in x.iter().enumerate() {
                positions.row(row(vec![frame.to_string(), p.to_string(), num(v.x), num(v.y), num(v.z)])).map_err(io)?;
            }
            if let Some(out) = bodies.as_mut() {
                for r in crate::simulate::body_rows(&exp.runs[i].scene, *frame, x, rigid) {
                    out.row(row(r)).map_err(io)?;
                }
            }
        }
        if let Some(table) = contacts.as_mut() {
            for (frame, c) in &o.contacts {
                for r in crate::simulate::contact_rows(&exp.runs[i].scene, *frame, c) {
                    table.row(row(r)).map_err(io)?;
                }
            }
        }
        if let Some(table) = forces.as_mut() {
            let h = exp.runs[i].scene.dt / exp.runs[i].substeps as f64;
            for (frame, m) in &o.forces {
                for f in crate::simulate::force_rows(&exp.runs[i].scene, *frame, m, h) {
                    table.row(row(f.to_vec())).map_err(io)?;
                }
            }
        }
        if !o.positions.is_empty() {
            for c in &exp.runs[i].scene.constraints {
                if let Kind::Stick { a, b, rest, .. } = c.kind {
                    sticks.row([i.to_string(), a.to_string(), b.to_string(), num(rest)]).map_err(io)?;
                }
            }
        }
    }
    for table in
        [steps, trace, runs, conv, frozen, positions, sticks].into_iter().chain(bodies).chain(contacts).chain(forces)
    {
        table.commit().map_err(io)?;
    }
    let meta = Meta {
        experiment: &exp.file.name,
        solverlab_version: env!("CARGO_PKG_VERSION"),
        commit: env!("SOLVERLAB_COMMIT"),
        rustc: env!("SOLVERLAB_RUSTC"),
        cpu: machine(),
        date: today(),
        runs: exp
            .runs
            .iter()
            .zip(outputs)
            .map(|(r, o)| {
                let (unconverged_frames, notes) = crate::simulate::convergence_notes(o.steps.iter().skip(1));
                RunMeta {
                    run: r.index,
                    scene: r.scene_label.clone(),
                    label: r.label.clone(),
                    sweep: r.params.clone(),
                    substeps: r.substeps,
                    dt: r.scene.dt,
                    frames: r.frames,
                    status: o.status.clone(),
                    error: o.error.clone(),
                    unconverged_frames,
                    notes,
                    final_state_hash: o.hash.clone(),
                    solver: serde_json::to_value(&r.solver).expect("serialises"),
                }
            })
            .collect(),
    };
    write_atomic(&out.join("meta.json"), &(serde_json::to_string_pretty(&meta).expect("serialises") + "\n"))
        .map_err(io)?;
    write_atomic(&out.join("experiment.toml"), &exp.text).map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Committed results never go stale in their columns: for every experiment file whose
    /// results are committed, the header of `steps.csv` and of `runs.csv` is exactly what the code
    /// writes now. A column added to the code without re-running the experiments fails here; the
    /// fix is `solverlab run experiments/NAME.toml`.
    #[test]
    fn committed_results_have_the_current_columns() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut checked = 0;
        for entry in std::fs::read_dir(root.join("experiments")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let exp = Experiment::load(&path).unwrap();
            let dir = root.join("results").join(&exp.file.name);
            for (name, rest) in [("steps.csv", &crate::simulate::STEP_COLUMNS[..]), ("runs.csv", &RUNS_COLUMNS[..])] {
                let Ok(text) = std::fs::read_to_string(dir.join(name)) else { continue };
                let committed = text.lines().next().unwrap_or_default();
                assert_eq!(committed, header(&exp, rest).join(","), "{}: {name} is stale", exp.file.name);
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} committed tables were found");
    }
}
