//! The one trait every solver family implements, and the observer it reports to.
//!
//! A step is split the same way for every solver: [`crate::integrate::predict`] moves the
//! particles by Verlet; then [`Solver::solve`] moves them again so that the constraints hold. The
//! solver reports every inner iteration to an [`Observer`], never prints and never touches files;
//! [`crate::sim::Simulation`] times it and the runner records what it reports.

use crate::model::{Scene, State};

/// What a solver sees of the step it solves.
#[derive(Clone, Copy, Debug)]
pub struct StepContext<'a> {
    /// The scene (constraints, colliders, inverse masses).
    pub scene: &'a Scene,
    /// Step length (s): the frame `dt` divided by the number of substeps.
    pub h: f64,
    /// Which substep of its frame this step is, from 1 to `substeps`.
    pub substep: u32,
    /// The frame's number of substeps. A solver may do per-frame work (finding contacts) in
    /// the first substep and carry it through the others, as engines with substeps do.
    pub substeps: u32,
}

impl<'a> StepContext<'a> {
    /// A step of `h` seconds that is a whole frame (substep 1 of 1).
    pub fn new(scene: &'a Scene, h: f64) -> Self {
        Self { scene, h, substep: 1, substeps: 1 }
    }
}

/// What a solver did in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolveInfo {
    /// Inner iterations performed (for nested solvers, the innermost count summed).
    pub iterations: usize,
    /// Outer (Newton) iterations for nested solvers; equal to `iterations` for single-loop ones.
    pub outer: usize,
    /// When the step ended without meeting its tolerance and the solver knows why, the reason
    /// (for example redundant rows that make `J W Jᵀ` singular); or something that went wrong
    /// on the way although the step converged (a CG breakdown).
    pub note: Option<&'static str>,
    /// The solver's own residual after its last iteration (each solver documents which).
    pub residual: f64,
    /// Whether it met its tolerance on the common violation (every family stops on
    /// `violation ≤ tolerance` or on its iteration cap; see each solver's `# Residual`).
    pub converged: bool,
}

/// One inner iteration, as reported to an [`Observer`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IterationReport {
    /// 1-based iteration index within the (outer iteration of the) step.
    pub iteration: usize,
    /// 1-based outer iteration index for nested solvers; 1 for single-loop solvers.
    pub outer: usize,
    /// The solver's residual after this iteration (documented per solver; a maximum over rows).
    pub residual: f64,
    /// The root mean square of the same per-row residuals, where the solver has them.
    pub residual_rms: Option<f64>,
    /// `‖Δλ‖₂` over the iteration, where the solver has multipliers.
    pub delta_lambda: Option<f64>,
    /// The common position-level violation ([`crate::metrics::violation`], m) after this
    /// iteration: the same quantity in every family. Computed when [`Observer::wants_violation`]
    /// says so. A solver may leave it `None` otherwise even when its stopping rule tests the
    /// violation: a test that stops at the first row above the tolerance
    /// ([`crate::metrics::constraint_violation_until`]) does not compute the number.
    pub violation: Option<f64>,
}

/// Receives reports during a step. All hooks default to doing nothing.
pub trait Observer {
    /// Whether the solver should compute the (costly) common violation after each iteration.
    fn wants_violation(&self) -> bool {
        false
    }
    /// Called by the simulation before each (sub)step.
    fn begin_step(&mut self, _frame: u64, _substep: u32) {}
    /// Called by the solver after each inner iteration.
    fn iteration(&mut self, _report: &IterationReport) {}
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NullObserver;

impl Observer for NullObserver {}

/// A failure inside a solve that is not a divergence (those are caught by the simulation):
/// which solver family or stage (`cg`, `direct`, `relax`, …) and what went wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveError {
    /// The solver family or stage at fault.
    pub stage: &'static str,
    /// What went wrong, and where it helps, what to change.
    pub problem: String,
}

impl SolveError {
    /// An error of `stage`.
    pub fn new(stage: &'static str, problem: impl Into<String>) -> Self {
        Self { stage, problem: problem.into() }
    }
}

impl std::fmt::Display for SolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.stage, self.problem)
    }
}

impl std::error::Error for SolveError {}

/// The linearised system a Jacobian-based solver solved in one Newton iteration of a step:
/// `(J W Jᵀ + diag(shift)) Δλ = rhs`, with bounds on `λ` and the initial guess it began from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinearSystem {
    /// Stable row ids.
    pub ids: Vec<u64>,
    /// Whether each row is an inequality (`λ ≥ 0`) rather than an equality.
    pub inequality: Vec<bool>,
    /// Number of columns of `J` (3 × particles).
    pub columns: usize,
    /// `J` as `(row, column, value)` triplets, row-major.
    pub jacobian: Vec<(usize, usize, f64)>,
    /// `W`, the inverse masses per column (1/kg).
    pub inverse_mass: Vec<f64>,
    /// `α/h² + ε` per row: compliance and regularisation on the diagonal of `A` (1/kg).
    pub diagonal_shift: Vec<f64>,
    /// The right-hand side `−C − α̃λ` (m).
    pub rhs: Vec<f64>,
    /// The initial guess: the previous frame's multipliers times the warm-start factor (N·s²).
    pub warm_start: Vec<f64>,
    /// The solution the solver found for this system.
    pub solution: Vec<f64>,
    /// The outer (Newton) iteration it belongs to (1-based).
    pub outer: usize,
    /// The regularisation `ε` included in `diagonal_shift` (1/kg): `regularization × damping ×
    /// mean(diag J W Jᵀ)`.
    pub regularization: f64,
    /// The Levenberg-Marquardt damping multiplier in force for this solve (1 when undamped).
    pub damping: f64,
}

/// A constraint solver.
pub trait Solver {
    /// A short label, used in messages and CSVs (`relax`, `cg`, …).
    fn name(&self) -> &str;

    /// Called once with the scene before the first step: precompute orderings, colourings,
    /// sparsity patterns. Called again if the scene changes.
    fn prepare(&mut self, _scene: &Scene) -> Result<(), SolveError> {
        Ok(())
    }

    /// Moves `state.x` (the Verlet prediction; `state.x_prev` holds the positions at the start of
    /// the step) so that the constraints hold, reporting each inner iteration to `observer`.
    /// It may also change `state.x_prev` (friction, restitution) but never `state.time`.
    /// Rigid bodies ([`crate::rigid`]) arrive in `state.rigid` with the shared prediction applied
    /// to their velocities and their poses at the start of the step; a solver that simulates
    /// them moves the poses itself, and one that does not refuses them in
    /// [`Solver::prepare`].
    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError>;

    /// Asks the solver to keep a copy of the linear system of outer iteration `outer` (1-based;
    /// the first attempt, before any Levenberg-Marquardt retry or active-set re-solve) of the next
    /// step, or to stop keeping one (`None`); returns `false` if the solver builds no explicit
    /// system.
    fn capture_system(&mut self, _outer: Option<usize>) -> bool {
        false
    }

    /// The system kept by [`Solver::capture_system`], once a step has run.
    fn captured_system(&self) -> Option<&LinearSystem> {
        None
    }

    /// The position-level multiplier `λ` (N·s² = kg·m) the last (sub)step applied through row
    /// `id` ([`crate::rows`] names the ids), or 0 when the row was not active. Its force is
    /// `λ/h²` (N) along `∇C`. Velocity-level solvers report their impulse times `h`.
    fn multiplier(&self, _id: u64) -> f64 {
        0.0
    }

    /// The rigid-body contacts of the last (sub)step with the forces applied through them
    /// (N), into `out` (cleared first); empty for solvers and scenes without rigid bodies.
    fn rigid_contacts(&self, out: &mut Vec<crate::rigid::ContactForce>) {
        out.clear();
    }

    /// The force and torque each joint that holds applied in the last (sub)step
    /// ([`crate::rigid::JointForce`]), into `out` (cleared first) in joint order; empty for
    /// solvers and scenes without joints.
    fn rigid_joints(&self, out: &mut Vec<crate::rigid::JointForce>) {
        out.clear();
    }

    /// Every nonzero multiplier of the last (sub)step as `(row id, λ)` pairs (N·s²), into `out`
    /// (cleared first), for the forces table.
    fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        out.clear();
    }
}
