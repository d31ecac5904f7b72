//! `solverlab run EXPERIMENT.toml`: scenes × solvers × sweeps, run in parallel, written as tidy
//! CSVs, then drawn.
//!
//! Data flow: the file is parsed and every run is resolved and validated before anything runs
//! ([`Experiment::load`]); the runs execute on all cores ([`run_all`]), each one a
//! [`Simulation`] whose results stay in memory; the CSVs are then written in run order, so they
//! are identical from one run of the experiment to the next apart from the timing columns;
//! finally [`crate::figures`] draws every figure from the CSVs alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::Deserialize;
use solverlab_core::hash::{hex, state_hash};
use solverlab_core::metrics::violation;
use solverlab_core::rows::constraint_row_id;
use solverlab_core::sim::{FrameReport, Simulation};
use solverlab_core::solver::{IterationReport, Observer};
use solverlab_core::{NullObserver, Scene, State, StepContext, Vec3};
use solverlab_solvers::SolverConfig;

use crate::figures::FigureSpec;
use crate::CliError;

/// Set by the Ctrl-C handler; runs stop at the next frame and nothing is written.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn yes() -> bool {
    true
}

/// The experiment file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    /// Name; results go to `results/NAME/`.
    pub name: String,
    /// Frames per run.
    pub frames: u64,
    /// Frame step (s); default each scene's own.
    pub dt: Option<f64>,
    /// Substeps per frame; default each solver's own (1, or 4 for soft-step).
    pub substeps: Option<u32>,
    /// Write every inner iteration to trace.csv (default true).
    #[serde(default = "yes")]
    pub trace: bool,
    /// Write every Nth frame's row to steps.csv (and the last); runs.csv statistics still use
    /// every frame (default 1).
    pub record_every: Option<u64>,
    /// Keep only the first N iterations of each (outer) solve in trace.csv (default: all).
    pub trace_iterations: Option<usize>,
    /// Write every Nth frame's constraint forces to forces.csv (default: none).
    pub forces_every: Option<u64>,
    /// Frames at the start of each run left out of the timing statistics (default 0).
    #[serde(default)]
    pub warmup: u64,
    /// Frozen-state convergence study.
    pub convergence: Option<ConvergenceSpec>,
    /// Scenes.
    #[serde(rename = "scene")]
    pub scenes: Vec<SceneSpec>,
    /// Solvers.
    #[serde(rename = "solver")]
    pub solvers: Vec<SolverSpec>,
    /// Cartesian sweeps: `solver.KEY`, `scene.KEY`, `substeps`, `dt`, `frames`.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
    /// Figures.
    #[serde(default, rename = "figure")]
    pub figures: Vec<FigureSpec>,
}

/// One `[[scene]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSpec {
    /// Builtin name or scene file.
    pub name: String,
    /// Parameters (`--set`).
    #[serde(default)]
    pub set: toml::Table,
    /// Label in CSVs and legends (default: the name).
    pub label: Option<String>,
}

/// One `[[solver]]`: a preset, or a full table, plus overrides.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// Label in CSVs and legends.
    pub label: String,
    /// A preset name.
    pub preset: Option<String>,
    /// A full solver table (`kind = …`).
    pub config: Option<toml::Table>,
    /// Overrides merged into the preset or table.
    #[serde(default)]
    pub set: toml::Table,
    /// Sweeps of this solver only, with the same keys as the global `[sweep]`; they multiply
    /// with it. Two solvers with their own sweeps compare, for example, iterations against
    /// substeps at equal counts.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
}

/// `[convergence]`: every solver starts from the identical frozen state of a reference run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvergenceSpec {
    /// The frame F whose step is studied: the reference solver runs frames 1..F−1, every solver
    /// primes its warm start on frame F−1's step from that trajectory, then solves frame F from
    /// the identical state.
    pub frame: u64,
    /// The preset giving the trajectory and the exact answer `x_ref` (default `direct`).
    #[serde(default = "direct")]
    pub reference: String,
    /// Iteration caps at which the error `‖x − x_ref‖` is measured (default 1, 2, 4, …, 256).
    pub caps: Option<Vec<u64>>,
}

fn direct() -> String {
    "direct".into()
}

/// One fully resolved run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Position in run order.
    pub index: usize,
    /// Scene label.
    pub scene_label: String,
    /// Solver label.
    pub label: String,
    /// The scene.
    pub scene: Scene,
    /// The solver.
    pub solver: SolverConfig,
    /// Frames.
    pub frames: u64,
    /// Substeps.
    pub substeps: u32,
    /// Sweep values, by sweep key, as written in the CSVs.
    pub params: Vec<(String, String)>,
}

/// A parsed and fully validated experiment.
pub struct Experiment {
    /// The file as written.
    pub file: ExperimentFile,
    /// The text of the file (copied into the results).
    pub text: String,
    /// Every run, in order.
    pub runs: Vec<RunConfig>,
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn solver_table(spec: &SolverSpec) -> Result<toml::Table, String> {
    let mut table = match (&spec.preset, &spec.config) {
        (Some(p), None) => {
            let preset = solverlab_solvers::preset(p).ok_or_else(|| {
                let names: Vec<&str> = solverlab_solvers::presets().iter().map(|p| p.name).collect();
                format!("preset: unknown solver `{p}` (presets: {})", names.join(", "))
            })?;
            toml::Table::try_from(&preset.config).expect("configs serialise")
        }
        (None, Some(t)) => t.clone(),
        _ => return Err("give exactly one of preset or config".into()),
    };
    for (k, v) in &spec.set {
        table.insert(k.clone(), v.clone());
    }
    Ok(table)
}

fn parse_solver(table: toml::Table) -> Result<SolverConfig, String> {
    let config = solver_from_table(table)?;
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

/// A solver configuration from a TOML table (an experiment's `[[solver]]`, a solver file or an
/// inline `--solver` table). The counts ([`solverlab_solvers::COUNT_FIELDS`]) are unsigned; one
/// that is negative, fractional or too large gets a message naming its field (serde's own names
/// only the type it expected).
pub fn solver_from_table(table: toml::Table) -> Result<SolverConfig, String> {
    for key in solverlab_solvers::COUNT_FIELDS {
        if let Some(v) = table.get(key) {
            if !v.as_integer().is_some_and(|i| (0..=i64::from(u32::MAX)).contains(&i)) {
                return Err(format!("{key}: {v} must be a whole number from 0 to {}", u32::MAX));
            }
        }
    }
    table.try_into().map_err(|e: toml::de::Error| e.message().trim_end().to_string())
}

impl Experiment {
    /// Reads, expands and validates `path`; every error names the file and the field.
    pub fn load(path: &Path) -> Result<Experiment, CliError> {
        let source = path.display().to_string();
        let bad = |field: &str, problem: String| CliError::Input(format!("{source}: {field}: {problem}"));
        let text = std::fs::read_to_string(path).map_err(|e| CliError::Input(format!("{source}: cannot read: {e}")))?;
        let file: ExperimentFile =
            toml::from_str(&text).map_err(|e| CliError::Input(format!("{source}: {}", e.to_string().trim_end())))?;
        if file.frames == 0 {
            return Err(bad("frames", "must be at least 1".into()));
        }
        if file.record_every == Some(0) {
            return Err(bad("record_every", "must be at least 1".into()));
        }
        if file.forces_every == Some(0) {
            return Err(bad("forces_every", "must be at least 1 (leave it out for no forces.csv)".into()));
        }
        if file.scenes.is_empty() {
            return Err(bad("scene", "at least one [[scene]] is needed".into()));
        }
        if file.solvers.is_empty() {
            return Err(bad("solver", "at least one [[solver]] is needed".into()));
        }
        let sweeps = std::iter::once(("sweep".to_string(), &file.sweep))
            .chain(file.solvers.iter().enumerate().map(|(i, s)| (format!("solver[{i}].sweep"), &s.sweep)));
        for (place, sweep) in sweeps {
            for (key, values) in sweep {
                if values.is_empty() {
                    return Err(bad(&format!("{place}.\"{key}\""), "an empty sweep runs nothing".into()));
                }
                let known = key.starts_with("solver.")
                    || key.starts_with("scene.")
                    || ["substeps", "dt", "frames"].contains(&key.as_str());
                if !known {
                    return Err(bad(
                        &format!("{place}.\"{key}\""),
                        "sweep keys are solver.KEY, scene.KEY, substeps, dt or frames".into(),
                    ));
                }
            }
        }
        let sweep_keys = sweep_columns(&file);
        let mut runs = Vec::new();
        for (si, scene) in file.scenes.iter().enumerate() {
            for (vi, solver) in file.solvers.iter().enumerate() {
                let base = solver_table(solver).map_err(|p| bad(&format!("solver[{vi}] ({})", solver.label), p))?;
                let mut merged = file.sweep.clone();
                merged.extend(solver.sweep.iter().map(|(k, v)| (k.clone(), v.clone())));
                for combo in &product(&merged) {
                    let mut table = base.clone();
                    let mut sets: Vec<String> = scene.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    let (mut frames, mut dt, mut substeps) = (file.frames, file.dt, file.substeps);
                    for (key, value) in combo {
                        if let Some(k) = key.strip_prefix("solver.") {
                            table.insert(k.to_string(), value.clone());
                        } else if let Some(k) = key.strip_prefix("scene.") {
                            sets.retain(|s| !s.starts_with(&format!("{k}=")));
                            sets.push(format!("{k}={value}"));
                        } else {
                            let x = value.as_float().or(value.as_integer().map(|i| i as f64));
                            let x =
                                x.ok_or_else(|| bad(&format!("sweep.\"{key}\""), format!("{value} is not a number")))?;
                            match key.as_str() {
                                "frames" => frames = x as u64,
                                "dt" => dt = Some(x),
                                _ => substeps = Some(x as u32),
                            }
                        }
                    }
                    let field = format!("solver[{vi}] ({}) with {}", solver.label, describe(combo));
                    let config = parse_solver(table).map_err(|p| bad(&field, p))?;
                    let mut resolved = solverlab_scenes::resolve(&scene.name, &sets)
                        .map_err(|e| bad(&format!("scene[{si}] with {}", describe(combo)), e.to_string()))?;
                    if let Some(dt) = dt {
                        if !(dt > 0.0 && dt.is_finite()) {
                            return Err(bad("dt", format!("{dt} must be a positive number of seconds")));
                        }
                        resolved.dt = dt;
                    }
                    let substeps = substeps.unwrap_or(config.default_substeps());
                    if substeps == 0 || frames == 0 {
                        return Err(bad(&field, "substeps and frames must be at least 1".into()));
                    }
                    runs.push(RunConfig {
                        index: runs.len(),
                        scene_label: scene.label.clone().unwrap_or_else(|| scene.name.clone()),
                        label: solver.label.clone(),
                        scene: resolved,
                        solver: config,
                        frames,
                        substeps,
                        params: sweep_keys
                            .iter()
                            .map(|k| {
                                let v = combo
                                    .iter()
                                    .find(|(ck, _)| ck == k)
                                    .map(|(_, v)| value_text(v))
                                    .unwrap_or_default();
                                (k.clone(), v)
                            })
                            .collect(),
                    });
                }
            }
        }
        if let Some(c) = &file.convergence {
            if c.frame < 2 || c.frame > file.frames {
                return Err(bad("convergence.frame", format!("{} must be in 2..={}", c.frame, file.frames)));
            }
            if solverlab_solvers::preset(&c.reference).is_none() {
                return Err(bad("convergence.reference", format!("unknown preset `{}`", c.reference)));
            }
            if c.caps.as_ref().is_some_and(|caps| caps.is_empty() || caps.contains(&0)) {
                return Err(bad("convergence.caps", "needs iteration caps of at least 1".into()));
            }
        }
        for (k, f) in file.figures.iter().enumerate() {
            f.validate(&file).map_err(|p| bad(&format!("figure[{k}] ({})", f.name), p))?;
        }
        Ok(Experiment { file, text, runs })
    }
}

/// The Cartesian product of the sweeps, in key order.
fn product(sweep: &BTreeMap<String, Vec<toml::Value>>) -> Vec<Vec<(String, toml::Value)>> {
    let mut combos: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
    for (key, values) in sweep {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((key.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    combos
}

/// Every sweep key of the experiment, global and per solver, in order: one CSV column each.
pub fn sweep_columns(file: &ExperimentFile) -> Vec<String> {
    let mut keys: std::collections::BTreeSet<String> = file.sweep.keys().cloned().collect();
    for s in &file.solvers {
        keys.extend(s.sweep.keys().cloned());
    }
    keys.into_iter().collect()
}

fn describe(combo: &[(String, toml::Value)]) -> String {
    if combo.is_empty() {
        "no sweep".into()
    } else {
        combo.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
    }
}

/// One trace row: frame, substep, the iteration report.
pub type TraceRow = (u64, u32, IterationReport);

/// Records every iteration of every step.
struct TraceRecorder {
    keep: bool,
    limit: usize,
    violation: bool,
    frame: u64,
    substep: u32,
    rows: Vec<TraceRow>,
}

impl Observer for TraceRecorder {
    fn wants_violation(&self) -> bool {
        self.violation
    }
    fn begin_step(&mut self, frame: u64, substep: u32) {
        (self.frame, self.substep) = (frame, substep);
    }
    fn iteration(&mut self, r: &IterationReport) {
        if self.keep && r.iteration <= self.limit {
            self.rows.push((self.frame, self.substep, *r));
        }
    }
}

/// One row of convergence.csv.
#[derive(Clone, Debug)]
pub struct ConvergenceRow {
    /// Iteration cap.
    pub cap: u64,
    /// Iterations the solver reported.
    pub iterations: usize,
    /// RMS over particles of `|x − x_ref|` (m).
    pub error_rms: f64,
    /// Max over particles of `|x − x_ref|` (m).
    pub error_max: f64,
    /// The common position violation after the step (m).
    pub violation: f64,
    /// Wall time of the measured solve (s).
    pub seconds: f64,
}

/// What one run produced.
pub struct RunOutput {
    /// Frame reports, frame 0 first.
    pub steps: Vec<FrameReport>,
    /// Iteration reports.
    pub trace: Vec<TraceRow>,
    /// Positions and rigid-body states at the requested frames.
    pub positions: Vec<(u64, Vec<Vec3>, Vec<solverlab_core::rigid::RigidState>)>,
    /// Rigid-body contacts with their forces at the requested frames (scenes with rigid bodies).
    pub contacts: Vec<(u64, Vec<solverlab_core::rigid::ContactForce>)>,
    /// `ok`, `diverged` or `interrupted`.
    pub status: String,
    /// The divergence message.
    pub error: String,
    /// Hash of the final state.
    pub hash: String,
    /// The frozen-state study.
    pub convergence: Vec<ConvergenceRow>,
    /// Iterations of the frozen step with the solver's own settings, with the violation.
    pub frozen_trace: Vec<IterationReport>,
    /// Multipliers `(row id, λ)` at the recorded frames, with the step `h`.
    pub forces: Vec<(u64, Vec<(u64, f64)>)>,
}

/// A cap as a configuration's count (caps beyond `u32::MAX` saturate).
fn cap32(k: u64) -> u32 {
    u32::try_from(k).unwrap_or(u32::MAX)
}

/// Caps a solver's iteration count at `k` and turns its tolerance off, so that it runs exactly
/// the cap: relax and PGS sweeps; CG iterations summed over the step's Newton iterations (a
/// budget); the direct solver ignores caps.
pub fn with_cap(config: &SolverConfig, k: u64) -> SolverConfig {
    let mut c = config.clone();
    match &mut c {
        SolverConfig::Relax(r) => {
            r.iterations = cap32(k);
            r.tolerance = 0.0;
        }
        SolverConfig::Pgs(p) => {
            p.iterations = cap32(k);
            p.tolerance = 0.0;
        }
        SolverConfig::Cg(g) => {
            g.cg_budget = cap32(k);
            g.tolerance = 0.0;
            g.outer_iterations = g.outer_iterations.max(cap32(k));
        }
        SolverConfig::Direct(_) => {}
    }
    c
}

fn predicted(scene: &Scene, state: &State, h: f64) -> State {
    let mut s = state.clone();
    solverlab_core::integrate::predict(scene, &solverlab_core::integrate::kinematic_pins(scene), &mut s, h);
    s
}

/// The reference trajectory's states at the start of frames F−1 and F, and the reference
/// solver's answer for the first step of frame F from that state.
fn reference_states(run: &RunConfig, spec: &ConvergenceSpec) -> Result<(State, State, State), String> {
    let preset = solverlab_solvers::preset(&spec.reference).expect("validated");
    let mut solver = solverlab_solvers::build(&preset.config, "reference").map_err(|e| e.to_string())?;
    let mut sim =
        Simulation::new(&run.scene, solver.as_mut(), run.scene.dt, run.substeps).map_err(|e| e.to_string())?;
    for _ in 1..spec.frame - 1 {
        sim.step_frame(&mut NullObserver).map_err(|e| e.to_string())?;
    }
    let before = sim.state.clone();
    sim.step_frame(&mut NullObserver).map_err(|e| e.to_string())?;
    let at = sim.state.clone();
    let h = sim.h();
    drop(sim);
    let mut exact = predicted(&run.scene, &at, h);
    let mut reference = solverlab_solvers::build(&preset.config, "reference").map_err(|e| e.to_string())?;
    reference.prepare(&run.scene).map_err(|e| e.to_string())?;
    reference.solve(&StepContext { scene: &run.scene, h }, &mut exact, &mut NullObserver).map_err(|e| e.to_string())?;
    Ok((before, at, exact))
}

/// How far `state` is from the reference answer, one distance per particle and per rigid body
/// (m): a particle's displacement; a body's centre displacement plus its bounding radius times
/// the angle between the two orientations (a bound on how far any point of it is off).
fn errors(scene: &Scene, state: &State, reference: &State) -> Vec<f64> {
    let particles = state.x.iter().zip(&reference.x).map(|(a, b)| (a - b).norm());
    let bodies = scene
        .rigid
        .iter()
        .zip(state.rigid.iter().zip(&reference.rigid))
        .map(|(body, (a, b))| (a.x - b.x).norm() + body.shape.bounding_radius() * (a.q.inverse() * b.q).angle());
    particles.chain(bodies).collect()
}

/// The frozen-state study of one run: prime on the step from `before`, then solve the step from
/// `at`, once per cap and once with the solver's own settings (traced).
fn convergence(run: &RunConfig, spec: &ConvergenceSpec) -> Result<(Vec<ConvergenceRow>, Vec<IterationReport>), String> {
    let (before, at, reference) = reference_states(run, spec)?;
    let h = run.scene.dt / run.substeps as f64;
    let ctx = StepContext { scene: &run.scene, h };
    let caps: Vec<u64> = spec.caps.clone().unwrap_or_else(|| (0..=8).map(|p| 1u64 << p).collect());
    let solve = |config: &SolverConfig, observer: &mut dyn Observer| -> Result<(State, usize, f64, f64), String> {
        let mut solver = solverlab_solvers::build(config, &run.label).map_err(|e| e.to_string())?;
        solver.prepare(&run.scene).map_err(|e| e.to_string())?;
        let mut prime = predicted(&run.scene, &before, h);
        solver.solve(&ctx, &mut prime, &mut NullObserver).map_err(|e| e.to_string())?;
        let mut state = predicted(&run.scene, &at, h);
        let t = Instant::now();
        let info = solver.solve(&ctx, &mut state, observer).map_err(|e| e.to_string())?;
        let seconds = t.elapsed().as_secs_f64();
        let lambda = |j: usize, axis: usize| solver.multiplier(constraint_row_id(j, axis));
        let v = violation(&run.scene, &state.x, state.time, h, &lambda)
            .max(solverlab_core::metrics::rigid_violation(&run.scene, &state.rigid));
        Ok((state, info.iterations, seconds, v))
    };
    let mut rows = Vec::new();
    for &cap in &caps {
        let (state, iterations, seconds, violation) = solve(&with_cap(&run.solver, cap), &mut NullObserver)?;
        let d = errors(&run.scene, &state, &reference);
        rows.push(ConvergenceRow {
            cap,
            iterations,
            error_rms: (d.iter().map(|x| x * x).sum::<f64>() / d.len().max(1) as f64).sqrt(),
            error_max: d.iter().copied().fold(0.0, f64::max),
            violation,
            seconds,
        });
    }
    let mut recorder = TraceRecorder {
        keep: true,
        limit: usize::MAX,
        violation: true,
        frame: spec.frame,
        substep: 1,
        rows: Vec::new(),
    };
    solve(&run.solver, &mut recorder)?;
    Ok((rows, recorder.rows.into_iter().map(|(_, _, r)| r).collect()))
}

/// Runs one configuration to the end (or to a divergence or an interruption).
pub fn execute(
    run: &RunConfig,
    exp: &ExperimentFile,
    position_frames: &[u64],
    bar: &indicatif::ProgressBar,
) -> RunOutput {
    let mut solver = match solverlab_solvers::build(&run.solver, &run.label) {
        Ok(s) => s,
        Err(e) => unreachable!("validated before running: {e}"),
    };
    let scene = &run.scene;
    let mut recorder = TraceRecorder {
        keep: exp.trace,
        limit: exp.trace_iterations.unwrap_or(usize::MAX),
        violation: false,
        frame: 0,
        substep: 0,
        rows: Vec::new(),
    };
    let mut out = RunOutput {
        steps: Vec::new(),
        trace: Vec::new(),
        positions: Vec::new(),
        status: "ok".into(),
        error: String::new(),
        hash: String::new(),
        convergence: Vec::new(),
        frozen_trace: Vec::new(),
        forces: Vec::new(),
        contacts: Vec::new(),
    };
    let mut sim = match Simulation::new(scene, solver.as_mut(), scene.dt, run.substeps) {
        Ok(s) => s,
        Err(e) => {
            out.status = "failed".into();
            out.error = e.to_string();
            return out;
        }
    };
    out.steps.push(sim.report_now());
    if position_frames.contains(&0) {
        out.positions.push((0, sim.state.x.clone(), sim.state.rigid.clone()));
    }
    for _ in 0..run.frames {
        if INTERRUPTED.load(Ordering::Relaxed) {
            out.status = "interrupted".into();
            break;
        }
        match sim.step_frame(&mut recorder) {
            Ok(r) => {
                if position_frames.contains(&r.frame) {
                    out.positions.push((r.frame, sim.state.x.clone(), sim.state.rigid.clone()));
                    if scene.has_rigid() {
                        let mut c = Vec::new();
                        sim.solver().rigid_contacts(&mut c);
                        out.contacts.push((r.frame, c));
                    }
                }
                if exp.forces_every.is_some_and(|n| r.frame % n == 0) {
                    let mut m = Vec::new();
                    sim.solver().multipliers(&mut m);
                    out.forces.push((r.frame, m));
                }
                out.steps.push(r);
                bar.inc(1);
            }
            Err(e) => {
                out.status = "diverged".into();
                out.error = e.to_string();
                break;
            }
        }
    }
    out.hash = hex(state_hash(&sim.state));
    drop(sim);
    out.trace = recorder.rows;
    if let (Some(spec), "ok") = (&exp.convergence, out.status.as_str()) {
        match convergence(run, spec) {
            Ok((rows, trace)) => (out.convergence, out.frozen_trace) = (rows, trace),
            Err(e) => {
                out.status = "diverged".into();
                out.error = format!("convergence study: {e}");
            }
        }
    }
    out
}

/// Runs every configuration on all cores, in a deterministic order of results.
pub fn run_all(exp: &Experiment, position_frames: &[u64]) -> Vec<RunOutput> {
    let total: u64 = exp.runs.iter().map(|r| r.frames).sum();
    let bar = crate::progress_bar(total, &format!("{} ({} runs)", exp.file.name, exp.runs.len()));
    let outputs: Vec<RunOutput> =
        exp.runs.par_iter().map(|run| execute(run, &exp.file, position_frames, &bar)).collect();
    bar.finish_and_clear();
    outputs
}

/// The results directory of an experiment.
pub fn default_out(name: &str) -> PathBuf {
    PathBuf::from("results").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The experiment format's half of the fuzz test (the scene format's is
    /// `crates/solvers/tests/fuzz.rs`): every committed experiment file, mutated 100 times
    /// (seeded; deleted, duplicated and retyped keys, NaN, infinities, huge and negative
    /// numbers), loads as a valid experiment or is refused with an error naming the file, and
    /// never panics.
    #[test]
    fn mutated_experiment_files_load_or_are_refused_and_never_panic() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let dir = std::env::temp_dir().join(format!("solverlab-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = solverlab_core::rng::Rng::new(20261123);
        let (mut loaded, mut refused) = (0, 0);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
            let text = std::fs::read_to_string(file).unwrap();
            for m in 0..100 {
                let mutant = solverlab_scenes::mutate::mutate(&text, &mut rng);
                let path = dir.join("mutant.toml");
                std::fs::write(&path, &mutant).unwrap();
                match std::panic::catch_unwind(|| Experiment::load(&path)) {
                    Ok(Ok(_)) => loaded += 1,
                    Ok(Err(CliError::Input(e))) => {
                        assert!(e.contains("mutant.toml"), "{}: the error names the file: {e}", file.display());
                        refused += 1;
                    }
                    Ok(Err(e)) => panic!("{}, mutant {m}: not an input error: {e:?}", file.display()),
                    Err(_) => panic!("{}, mutant {m}: loading panicked on\n{mutant}", file.display()),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(loaded > 0 && refused > 0, "{loaded} loaded, {refused} refused");
    }
}
