//! Running one resolved run: the frame loop, what is recorded on the way, and the frozen-state
//! convergence study.
//!
//! [`execute`] drives a [`Simulation`] and hands everything it records to a [`Sink`] as it
//! happens (the results writer is the only one); it keeps in memory only the per-frame reports
//! that the run's summary statistics need. It never touches a file itself.

use std::time::Instant;

use solverlab_core::hash::{hex, state_hash};
use solverlab_core::metrics::violation;
use solverlab_core::rigid::{ContactForce, RigidState};
use solverlab_core::rows::constraint_row_id;
use solverlab_core::sim::{FrameReport, Simulation};
use solverlab_core::solver::{IterationReport, Observer};
use solverlab_core::{NullObserver, Scene, State, StepContext, Vec3};
use solverlab_solvers::SolverConfig;

use crate::spec::{ConvergenceSpec, RunConfig};
use crate::tables::RunStatus;
use crate::INTERRUPTED;

/// What a run records besides its frame reports.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Record every inner iteration (trace.csv).
    pub trace: bool,
    /// Keep only the first this many iterations of each (outer) solve.
    pub trace_iterations: Option<usize>,
    /// Compute the common violation after every iteration (trace column `violation`).
    pub violation: bool,
    /// Frames whose positions (with bodies and rigid contacts) are recorded.
    pub positions: Frames,
    /// Record the rigid contacts (contacts.csv) at the position frames.
    pub contacts: bool,
    /// Record the constraint forces every this many frames.
    pub forces_every: Option<u64>,
    /// Write every this many frames' steps.csv row (and the last one's); default 1.
    pub steps_every: Option<u64>,
}

/// A set of frames.
#[derive(Clone, Debug, Default)]
pub enum Frames {
    /// None.
    #[default]
    None,
    /// Every this many frames, from frame 0.
    Every(u64),
    /// These frames.
    At(Vec<u64>),
}

impl Frames {
    /// Whether `frame` is in the set.
    pub fn contains(&self, frame: u64) -> bool {
        match self {
            Frames::None => false,
            Frames::Every(n) => *n > 0 && frame.is_multiple_of(*n),
            Frames::At(list) => list.contains(&frame),
        }
    }
}

/// Where a run's records go, as they happen. A failed write stops the run.
pub trait Sink {
    /// One inner iteration of the (sub)step `substep` of `frame`.
    fn trace(&mut self, frame: u64, substep: u32, r: &IterationReport) -> std::io::Result<()>;
    /// One frame's report for steps.csv (frame 0 is the initial state).
    fn step(&mut self, r: &FrameReport) -> std::io::Result<()>;
    /// The particles and rigid bodies at a recorded frame.
    fn positions(&mut self, frame: u64, x: &[Vec3], rigid: &[RigidState]) -> std::io::Result<()>;
    /// The rigid contacts with their forces at a recorded frame.
    fn contacts(&mut self, frame: u64, contacts: &[ContactForce]) -> std::io::Result<()>;
    /// The multipliers `(row id, λ)` and the joints' forces of a recorded frame, with the
    /// (sub)step `h`.
    fn forces(
        &mut self,
        frame: u64,
        multipliers: &[(u64, f64)],
        joints: &[solverlab_core::rigid::JointForce],
        h: f64,
    ) -> std::io::Result<()>;
}

/// How a run ended, with what its summary needs.
pub struct RunSummary {
    /// How it ended.
    pub status: RunStatus,
    /// Why it diverged, tore or failed.
    pub error: String,
    /// Hash of the final state.
    pub hash: String,
    /// Every frame's report, frame 0 first.
    pub steps: Vec<FrameReport>,
    /// The frozen-state study.
    pub convergence: Vec<ConvergenceRow>,
    /// Iterations of the frozen step with the solver's own settings, with the violation.
    pub frozen_trace: Vec<IterationReport>,
    /// How well the frozen-state study's reference solved its step (with a study).
    pub reference: Option<ReferenceCheck>,
}

/// How the reference solver ended on the frozen step: the yardstick of every `error_*` in
/// convergence.csv, so meta.json says whether it converged.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReferenceCheck {
    /// Whether it met its own tolerance.
    pub converged: bool,
    /// Its outer (Newton) iterations, or iterations for a one-level solver.
    pub iterations: usize,
    /// The common violation of its answer (m).
    pub violation: f64,
    /// Its own note on why it stopped, if it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Keeps a frame's iterations for the sink, which the runner writes after the frame: the
/// trace's CSV rows are formatted outside the solve's timed span (formatted as the solver
/// reported them, they took 1.6 % of `solve_seconds` on the 55-box pyramid).
struct TraceTo<'a> {
    rows: &'a mut Vec<(u64, u32, IterationReport)>,
    keep: bool,
    limit: usize,
    violation: bool,
    frame: u64,
    substep: u32,
}

impl Observer for TraceTo<'_> {
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

/// Collects the iterations of one solve (the frozen-state study's trace).
#[derive(Default)]
struct Collect {
    rows: Vec<IterationReport>,
}

impl Observer for Collect {
    fn wants_violation(&self) -> bool {
        true
    }
    fn iteration(&mut self, r: &IterationReport) {
        self.rows.push(*r);
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

/// The Verlet prediction of one step of length `h` from `state`.
fn predicted(scene: &Scene, state: &State, h: f64) -> State {
    let mut s = state.clone();
    solverlab_core::integrate::predict(scene, &solverlab_core::integrate::kinematic_pins(scene), &mut s, h);
    s
}

/// The reference trajectory's states at the start of frames F−1 and F, the reference
/// solver's answer for the first step of frame F from that state, and how that solve ended.
fn reference_states(
    run: &RunConfig,
    spec: &ConvergenceSpec,
) -> Result<(State, State, State, ReferenceCheck), StudyError> {
    let reference = spec.resolved.as_ref().expect("resolved by Experiment::load");
    let mut solver = reference.build("reference")?;
    let mut sim = Simulation::new(&run.scene, solver.as_mut(), run.scene.dt, run.substeps)?;
    for _ in 1..spec.frame - 1 {
        stop_if_interrupted()?;
        sim.step_frame(&mut NullObserver)?;
    }
    let before = sim.state.clone();
    sim.step_frame(&mut NullObserver)?;
    let at = sim.state.clone();
    let h = sim.h();
    drop(sim);
    let mut exact = predicted(&run.scene, &at, h);
    let mut exact_solver = reference.build("reference")?;
    exact_solver.prepare(&run.scene)?;
    let info = exact_solver.solve(&StepContext::new(&run.scene, h), &mut exact, &mut NullObserver)?;
    let lambda = |j: usize, axis: usize| exact_solver.multiplier(constraint_row_id(j, axis));
    let v = violation(&run.scene, &exact.x, exact.time, h, &lambda).max(solverlab_core::metrics::rigid_violation(
        &run.scene,
        &exact.rigid,
        exact.time,
    ));
    let check = ReferenceCheck {
        converged: info.converged,
        iterations: if info.outer > 0 { info.outer } else { info.iterations },
        violation: v,
        note: info.note.map(str::to_string),
    };
    Ok((before, at, exact, check))
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

/// Why a frozen-state study stopped before its last solve.
#[derive(Debug)]
enum StudyError {
    /// Ctrl-C or SIGTERM, between two solves.
    Interrupted,
    /// A solver could not be built for the study.
    Config(solverlab_solvers::ConfigError),
    /// The reference trajectory diverged or its solver failed.
    Sim(solverlab_core::sim::SimError),
    /// A solver could not prepare the scene or failed in a solve.
    Solve(solverlab_core::solver::SolveError),
}

impl std::fmt::Display for StudyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StudyError::Interrupted => f.write_str("interrupted"),
            StudyError::Config(e) => e.fmt(f),
            StudyError::Sim(e) => e.fmt(f),
            StudyError::Solve(e) => e.fmt(f),
        }
    }
}

impl From<solverlab_solvers::ConfigError> for StudyError {
    fn from(e: solverlab_solvers::ConfigError) -> Self {
        StudyError::Config(e)
    }
}

impl From<solverlab_core::sim::SimError> for StudyError {
    fn from(e: solverlab_core::sim::SimError) -> Self {
        StudyError::Sim(e)
    }
}

impl From<solverlab_core::solver::SolveError> for StudyError {
    fn from(e: solverlab_core::solver::SolveError) -> Self {
        StudyError::Solve(e)
    }
}

/// Stops the frozen-state study between two solves (or two frames of its reference
/// trajectory) on Ctrl-C: one study can take many solves.
fn stop_if_interrupted() -> Result<(), StudyError> {
    match INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
        true => Err(StudyError::Interrupted),
        false => Ok(()),
    }
}

/// The frozen-state study of one run: prime on the step from `before`, then solve the step from
/// `at`, once per cap and once with the solver's own settings (traced); `progress` is called after
/// each solve.
fn convergence(
    run: &RunConfig,
    spec: &ConvergenceSpec,
    progress: &(dyn Fn() + Sync),
) -> Result<(Vec<ConvergenceRow>, Vec<IterationReport>, ReferenceCheck), StudyError> {
    let (before, at, reference, check) = reference_states(run, spec)?;
    let h = run.scene.dt / run.substeps as f64;
    let ctx = StepContext::new(&run.scene, h);
    let caps = study_caps(spec);
    let solve =
        |config: &SolverConfig, observer: &mut dyn Observer| -> Result<(State, usize, f64, f64), StudyError> {
            let mut solver = solverlab_solvers::build(config, &run.label)?;
            solver.prepare(&run.scene)?;
            let mut prime = predicted(&run.scene, &before, h);
            solver.solve(&ctx, &mut prime, &mut NullObserver)?;
            let mut state = predicted(&run.scene, &at, h);
            let t = Instant::now();
            let info = solver.solve(&ctx, &mut state, observer)?;
            let seconds = t.elapsed().as_secs_f64();
            let lambda = |j: usize, axis: usize| solver.multiplier(constraint_row_id(j, axis));
            let v = violation(&run.scene, &state.x, state.time, h, &lambda)
                .max(solverlab_core::metrics::rigid_violation(&run.scene, &state.rigid, state.time));
            Ok((state, info.iterations, seconds, v))
        };
    let mut rows = Vec::new();
    for &cap in &caps {
        stop_if_interrupted()?;
        let (state, iterations, seconds, violation) = solve(&run.solver.capped(cap), &mut NullObserver)?;
        progress();
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
    let mut recorder = Collect::default();
    stop_if_interrupted()?;
    solve(&run.solver, &mut recorder)?;
    progress();
    Ok((rows, recorder.rows, check))
}

/// The iteration caps of a frozen-state study (default 1, 2, 4, …, 256).
fn study_caps(spec: &ConvergenceSpec) -> Vec<u64> {
    spec.caps.clone().unwrap_or_else(|| (0..=8).map(|p| 1u64 << p).collect())
}

/// The solves a run's frozen-state study makes, one per cap and one traced: the progress units
/// it adds to the run's frames.
pub fn study_solves(spec: Option<&ConvergenceSpec>) -> u64 {
    spec.map_or(0, |s| study_caps(s).len() as u64 + 1)
}

/// Runs one configuration to the end (or to a divergence or an interruption), handing what
/// `recording` asks for to `sink` and calling `progress` after every frame. Only a failed write
/// to the sink is an error; a divergence is the summary's status. `alone`: the run has its
/// thread pool to itself, and the pool's other threads spin through each frame
/// ([`Simulation::keep_workers_awake`]; the same results).
pub fn execute(
    run: &RunConfig,
    recording: &Recording,
    study: Option<&ConvergenceSpec>,
    sink: &mut dyn Sink,
    progress: &(dyn Fn() + Sync),
    alone: bool,
) -> std::io::Result<RunSummary> {
    let mut out = RunSummary {
        status: RunStatus::Ok,
        error: String::new(),
        hash: String::new(),
        steps: Vec::new(),
        convergence: Vec::new(),
        frozen_trace: Vec::new(),
        reference: None,
    };
    let mut solver = match solverlab_solvers::build(&run.solver, &run.label) {
        Ok(s) => s,
        Err(e) => {
            out.status = RunStatus::Failed;
            out.error = e.to_string();
            return Ok(out);
        }
    };
    let scene = &run.scene;
    let mut sim = match Simulation::new(scene, solver.as_mut(), scene.dt, run.substeps) {
        Ok(s) => s,
        Err(e) => {
            out.status = RunStatus::Failed;
            out.error = e.to_string();
            return Ok(out);
        }
    };
    sim.keep_workers_awake(alone);
    let steps_every = recording.steps_every.unwrap_or(1).max(1);
    let first = sim.report_now();
    sink.step(&first)?;
    out.steps.push(first);
    if recording.positions.contains(0) {
        sink.positions(0, &sim.state.x, &sim.state.rigid)?;
    }
    let mut contacts = Vec::new();
    let mut multipliers = Vec::new();
    let mut joints = Vec::new();
    let mut trace = Vec::new();
    for _ in 0..run.frames {
        if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            out.status = RunStatus::Interrupted;
            break;
        }
        let mut observer = TraceTo {
            rows: &mut trace,
            keep: recording.trace,
            limit: recording.trace_iterations.unwrap_or(usize::MAX),
            violation: recording.violation,
            frame: 0,
            substep: 0,
        };
        let result = sim.step_frame(&mut observer);
        // (The frame's iterations, also those before a divergence.)
        for (frame, substep, r) in trace.drain(..) {
            sink.trace(frame, substep, &r)?;
        }
        match result {
            Ok(r) => {
                if let (Some(what), true) = (sim.tear(&r.metrics), out.error.is_empty()) {
                    out.error = format!("the run tore in frame {} under solver `{}`: {what}", r.frame, run.label);
                }
                if r.frame % steps_every == 0 {
                    sink.step(&r)?;
                }
                if recording.positions.contains(r.frame) {
                    sink.positions(r.frame, &sim.state.x, &sim.state.rigid)?;
                    if scene.has_rigid() && recording.contacts {
                        sim.solver().rigid_contacts(&mut contacts);
                        sink.contacts(r.frame, &contacts)?;
                    }
                }
                if recording.forces_every.is_some_and(|n| r.frame % n == 0) {
                    sim.solver().multipliers(&mut multipliers);
                    sim.solver().rigid_joints(&mut joints);
                    sink.forces(r.frame, &multipliers, &joints, sim.h())?;
                }
                out.steps.push(r);
                progress();
            }
            Err(e) => {
                out.status = RunStatus::Diverged;
                out.error = e.to_string();
                break;
            }
        }
    }
    // A run that tore and went on to the end ends torn (a divergence or an interruption says
    // more).
    if out.status == RunStatus::Ok && !out.error.is_empty() {
        out.status = RunStatus::Torn;
    }
    // The last frame's row is always written.
    if let Some(last) = out.steps.last().filter(|r| r.frame % steps_every != 0) {
        sink.step(last)?;
    }
    out.hash = hex(state_hash(&sim.state));
    drop(sim);
    if let Some(spec) = study.filter(|_| out.status.completed()) {
        match convergence(run, spec, progress) {
            Ok((rows, trace, check)) => (out.convergence, out.frozen_trace, out.reference) = (rows, trace, Some(check)),
            Err(_) if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) => out.status = RunStatus::Interrupted,
            Err(e) => {
                out.status = RunStatus::Diverged;
                out.error = format!("convergence study: {e}");
            }
        }
    }
    Ok(out)
}
