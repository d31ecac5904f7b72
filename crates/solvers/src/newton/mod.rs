//! The Newton loop shared by the explicit-Jacobian solvers ([`crate::newton::cg`] and
//! [`crate::newton::direct`]); they differ only in how they solve each linear system.
//!
//! # The step it solves
//!
//! The implicit-Euler step with constraints: from the shared Verlet prediction `x̃`,
//!
//! ```text
//! minimise ½ (x − x̃)ᵀ M (x − x̃)   subject to   C(x) + α̃λ = 0  (equalities),  C(x) ≥ 0 ⊥ λ ≥ 0
//! KKT:     M(x − x̃) = J(x)ᵀλ,      C(x) + α̃λ = 0                  (α̃ = α/h², λ in N·s²)
//! ```
//!
//! `newton` chooses what each outer iteration solves ([`Method`]):
//!
//! * `projection`, the fast projection (Goldenthal et al. 2007): `Δλ` from
//!   `J W Jᵀ Δλ = −(C + α̃λ)` and `x += W JᵀΔλ`, with `J` taken where it was solved. Quadratic on
//!   the constraints, but the point it lands on depends on the path and is not the step above
//!   (it never enforces `M(x − x̃) = J(x)ᵀλ`): on the quickstart's 12 × 12 cloth, 1.6e-4 m RMS
//!   away from it; on a swinging chain `|x − x̃ − W Jᵀλ|` stays at 1.7e-3 m (`tests/newton.rs`).
//! * `gauss_newton`: sequential quadratic programming on the KKT conditions with the Hessian of
//!   the Lagrangian approximated by `M`. With the stationarity displacement
//!   `s = x − x̃ − W Jᵀλ`, each outer iteration solves `(J W Jᵀ + α̃) Δλ = −(C + α̃λ) + J s` and
//!   steps `Δx = W JᵀΔλ − s`: the same matrix as the projection, a right-hand side with one more
//!   term, and a fixed point that is the step. It converges linearly, at a rate set by the
//!   tension's curvature against the mass (about 0.9 per outer iteration on a loaded cloth).
//! * `full` (the default): the Hessian `M − Σ λᵢ∇²Cᵢ`, the geometric stiffness of the rows. A
//!   stick in tension (and a rope held taut) adds `Γ Σₜ eₜeₜᵀ` with `Γ = −λκ > 0` along its two
//!   tangents, which is what two rows across the stick with `C = 0` and compliance `1/Γ` add
//!   once their multipliers are eliminated (Woodbury); a rigid joint's anchor rows add the
//!   positive part of their 3 × 3 term on each body's rotation the same way
//!   (`RigidRows::curvature_rows`). So the system keeps the form `J W Jᵀ + diag` over more rows,
//!   stays positive definite, and CG and the sparse Cholesky solve it unchanged. Terms that
//!   would make it indefinite (compressed sticks, contacts pushing on curved surfaces, revolute
//!   axes) are left out: the step is Gauss-Newton along them. Quadratic where the step has
//!   unique finite multipliers (the chain with a 100× end, the 12 × 12 cloth pinned along its
//!   top edge, a rigid chain: 3 outer iterations a frame to 1e-10 m, `tests/newton.rs`).
//!
//! Where the multipliers are not unique (redundant rows: shear sticks, braced figures) their
//! part in the null space of `Jᵀ` moves nothing but enters the geometric stiffness as a
//! self-stress; the solvers take it out ([`Linear::project_range`]: `direct` after every solve,
//! CG from its warm start every 16th step), which made the ragdoll and the top-pinned cloth with
//! shear sticks converge. Where the step has no finite multipliers at all (a taut line between
//! fixed particles, as the top row of a cloth pinned at two corners; a flat cloth with shear
//! sticks, whose every cell is a rigid planar square that can carry no load across its plane),
//! no Newton method converges quadratically: an SQP pass that ends above the tolerance goes on
//! with the projection from where it stopped, so that the step still ends on the constraints
//! (`NewtonStats::fell_back`; the step's note says so).
//!
//! # Algorithm
//!
//! Per step, after the shared Verlet prediction, for each outer iteration `k`:
//!
//! 1. gather the active rows at the current positions: every equality row, and every inequality
//!    row (min/max sticks, collider contacts) that is violated (`C < 0`) or has pushed in this
//!    step (`λ > 0`, so that it may let go again); stop when (under the SQP methods, also the
//!    stationarity `max |s|`, each coordinate block's displacement in metres, and) the common violation over them
//!    (`max |C + α̃λ|` over equalities, `max(0, −C)` over inequalities; see
//!    [`solverlab_core::metrics::violation`]) is at most `tolerance` and every row that pushes
//!    touches (`|C| ≤ tolerance` where `λ > 0`: complementarity, without which a warm start that
//!    pushes a resting body clear of the floor would count as converged and lift it);
//! 2. build `J` explicitly (CSR, pattern kept while the rows do not change) and, if the linear
//!    solver wants it, `A = J W Jᵀ + diag(α̃ + ε)` with `α̃ = α/h²` and the regularisation
//!    `ε = regularization × damping × mean(diag J W Jᵀ)`;
//! 3. solve `A Δλ = b`, `b = −C − α̃λ` (`+ J s` under the SQP methods, with the full method's
//!    curvature rows in `A` after the scene's), to the forcing tolerance `‖b − AΔλ‖₂ ≤ max(ηₖ‖b‖₂,
//!    tolerance/2)`: inexact Newton (Eisenstat and Walker 1996, choice 2:
//!    `ηₖ = min(0.9, 0.9·(‖gₖ‖/‖gₖ₋₁‖)²)`, safeguarded by `0.9·ηₖ₋₁²` when that exceeds 0.1,
//!    `η₁ = 0.5`), so early outer iterations are solved loosely and the last tightly; the
//!    absolute floor stops a solve once its residual cannot matter at the Newton tolerance.
//!    `forcing = "fixed"` solves every system to `cg_tolerance` instead. The projection's first
//!    outer iteration starts its solve from the previous step's multipliers times `warm_start`
//!    (matched by row id); later ones from `Δλ = 0`, which is the current total `λ`, the best
//!    guess there is. The SQP methods start the step's multipliers themselves there (they are
//!    the iterate: the Hessian and `s` use them), and every solve from `Δλ = 0`;
//! 4. active set: an inequality row whose accumulated `λ + Δλ` would be negative (it would pull)
//!    leaves, and the remaining rows are solved again from the last solution, up to
//!    `active_set_iterations` times; after the cap any remaining negative change is clamped to
//!    zero, so contacts never pull. A row that leaves while it still touches (`C ≤ 0`) keeps
//!    what it pushed so far: on redundant contact sets the minimum-norm solution asks spurious
//!    rows to pull, and letting them go drops a stack. A row that leaves separated (`C > 0`)
//!    gives back what it pushed, `Δλ = −λ` (its displacement `W Jᵀ Δλ` joins the step, and the
//!    others' `C` are taken from where it leaves the coordinates): kept, its push would hold it
//!    active with `λ > 0` while it separates, the merit could not fall, and a box released on a
//!    35° slope with μ = 0.5 rocked in a three-frame cycle under `cg` (80 of 120 frames
//!    unconverged) instead of sliding;
//! 5. `x += s·W Jᵀ Δλ` (`s·(W JᵀΔλ − s)` under the SQP methods), `λ += s·Δλ` with the largest
//!    `s` in 1, ½, ¼, …, 1/64 that lowers the merit `Σ (C + α̃λ)²` over the active rows (plus
//!    `Σ |s|²` in metres under the SQP methods: the KKT residual; backtracking: with `η < 1`
//!    the inexact Newton step is still a descent direction); if none does, the system is solved again with `damping`
//!    multiplied by 100 (Levenberg-Marquardt); an accepted full step divides it by 10, down to 1.
//!    Redundant rows (a cloth with shear sticks) and taut lines between fixed particles (a cloth
//!    pinned at two corners) make `J W Jᵀ` singular or nearly so, and an undamped step then
//!    overshoots. If even `damping = 10¹²` gives no decrease the loop ends unconverged;
//! 6. friction, a second pass: if any contact with `μ > 0` pushed, the positions go back to the
//!    prediction, each such contact gets position-level Coulomb friction on the prediction's
//!    tangential displacement, limited by `μλₙ` with the normal multiplier the first pass found
//!    ([`coulomb_friction`]: the whole displacement is cancelled while it fits in the cone,
//!    static friction; beyond it the correction is `μλₙ`, dynamic), and steps 1–5 run again
//!    from there, starting from the first pass's multipliers. (Only when the first pass met its
//!    tolerance: unconverged multipliers can be far from the contact forces.) Friction is then fixed while the
//!    constraints converge, so it never fights them. Applied inside the outer loop instead, it
//!    moves positions the Newton steps have just fixed, and on a pile of balls or a stack it
//!    never settles; applied with the last step's `λₙ`, it lags a step, and a block released on
//!    an incline slides 1.8 mm before it holds.
//!
//! 6-DoF rigid bodies (`newton/rigid_rows/`) join the same loop: their contact and joint rows
//! are position-level rows over two coordinate blocks per body (position, and a scaled rotation
//! vector in which `M⁻¹` is diagonal), appended after the particles'; their friction runs in up
//! to `FRICTION_ROUNDS` rounds with static-friction rows per manifold, and each outer step turns
//! no body by more than 0.25 rad. Velocities, restitution and the contact forces then come from
//! the relaxation family's rigid code (`v = Δx/h` from the prediction).
//!
//! A step that ends at the outer cap (or on an LM failure) with the violation above `tolerance`
//! reports `converged = false`. Restitution is applied as in the relax solver.
//!
//! Loops per outer iteration: one gather of the rows (constraints, and particles × colliders),
//! one fill of `J` and (assembled) of `A`, the linear solve, one `W Jᵀ Δλ`, one gather per trial
//! step; with friction, the whole loop twice, the second from the first's multipliers.
//!
//! # Residual
//!
//! Per inner iteration the linear solver's relative residual `‖b − AΔλ‖₂/‖b‖₂`; `violation`
//! (when asked) is the common violation at `x + W Jᵀ Δλ` with `λ + Δλ`. The step's `residual` is
//! the last solve's; its stopping test is the common violation of step 1.
//!
//! # References
//!
//! * R. Goldenthal, D. Harmon, R. Fattal, M. Bercovier, E. Grinspun, "Efficient Simulation of
//!   Inextensible Cloth", SIGGRAPH 2007: the fast projection.
//! * M. Tournier, M. Nesme, B. Gilles, F. Faure, "Stable Constrained Dynamics", SIGGRAPH 2015,
//!   and S. Andrews, M. Teichmann, P. G. Kry, "Geometric Stiffness for Real-time Constrained
//!   Multibody Dynamics", Eurographics 2017: the geometric stiffness of constraints in the
//!   implicit step.
//! * J. Nocedal, S. J. Wright, "Numerical Optimization", 2nd ed., 2006, §18 (sequential
//!   quadratic programming) and §16.2 (the Woodbury identity in KKT systems).
//! * S. C. Eisenstat, H. F. Walker, "Choosing the Forcing Terms in an Inexact Newton Method",
//!   SIAM J. Sci. Comput. 17(1), 1996: the forcing terms.
//! * J. Nocedal, S. J. Wright, "Numerical Optimization", 2nd ed., 2006, §10.3: Gauss-Newton and
//!   Levenberg-Marquardt.
//! * M. Macklin, M. Müller, N. Chentanez, "XPBD", 2016: compliance `α̃ = α/h²` and the
//!   multiplier's force `λ/h²`.

use solverlab_core::rows::IdMap;

use solverlab_core::constraint::coulomb_friction;
use solverlab_core::metrics::{row_violation, violation};
use solverlab_core::rows::{
    constraint_row_id, decode, gather_row_set, tangents, Row, RowKind, RowRef, RowSet, RowView,
};
use solverlab_core::solver::{LinearSystem, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{Scene, State, Vec3};

pub mod cg;
pub mod direct;
pub mod jacobian;
mod maps;
pub mod pattern;
pub(crate) mod rigid_rows;
mod solver;
mod steps;

use maps::{forcing_term, lookup, Released, RowMap, Start, Work};

use crate::common::stop::{Residuals, Stopping};

use jacobian::System;
use rigid_rows::{is_rigid_id, RigidRows};

/// The top bits of the full method's curvature rows' ids (bit 62 alone: no scene row has it
/// without bit 63, and rigid rows have every one of the top four).
const CURVATURE_TAG: u64 = 1 << 62;

/// The id of curvature row `k` (1 or 2, one per tangent) of scene constraint `index`.
fn curvature_row_id(index: usize, k: u64) -> u64 {
    CURVATURE_TAG | ((index as u64) << 2) | k
}

/// Whether `id` is a curvature row's (a stick's, or a rigid joint's): it has no multiplier of
/// its own to keep.
fn is_curvature_id(id: u64) -> bool {
    id >> 60 == CURVATURE_TAG >> 60 || rigid_rows::is_joint_curvature_id(id)
}

/// At most this many friction rounds per step (step 6; only rigid contacts take more than one).
/// A manifold released in the last round keeps what its rows applied: it sticks a little harder
/// than its cone allows for that step.
const FRICTION_ROUNDS: usize = 4;

/// When a linear solve may stop: `‖b − Ax‖₂ ≤ max(relative·‖b‖₂, absolute)`, or after
/// `max_iterations`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearStop {
    /// Relative tolerance (the forcing term η).
    pub relative: f64,
    /// Absolute tolerance (m, the unit of `b`).
    pub absolute: f64,
    /// At most this many inner iterations (0: the linear solver's own cap).
    pub max_iterations: usize,
}

/// What a linear solve reports back.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinearInfo {
    /// Inner iterations (CG iterations; 1 for a direct solve).
    pub iterations: usize,
    /// Final relative residual `‖b − AΔλ‖/‖b‖`.
    pub residual: f64,
    /// Whether the stop test was met.
    pub converged: bool,
    /// CG met a direction of non-positive curvature (`pᵀAp ≤ 0`): `A` is not positive definite
    /// there, and the solve stopped.
    pub breakdown: bool,
}

/// A linear solver for `A Δλ = b`.
pub trait Linear {
    /// Whether `A` must be assembled before [`Linear::solve`].
    fn needs_assembly(&self) -> bool;

    /// Replaces `v` by its part in the range of `K = A − εI` (`A` of the last solve), removing
    /// its part in the null space of `J W Jᵀ + diag(α̃)`: multipliers that move nothing. Called
    /// after each solve of an SQP pass, `first` for the pass's first solve (the one that starts
    /// from the warm start); a solver may skip the others. Returns the inner iterations it
    /// spent, or `None` if it left `v` as it is.
    fn project_range(&mut self, _sys: &System, _v: &mut [f64], _first: bool) -> Option<usize> {
        None
    }

    /// Solves `A x = b` with `x` holding the initial guess, until `stop` holds or the solver's
    /// cap. `pattern_changed` says whether the sparsity of `A` differs from the last call.
    /// `monitor(iteration, relative residual, x)` is called after every inner iteration.
    fn solve(
        &mut self,
        sys: &System,
        b: &[f64],
        x: &mut [f64],
        pattern_changed: bool,
        stop: LinearStop,
        monitor: &mut dyn FnMut(usize, f64, &[f64]),
    ) -> Result<LinearInfo, SolveError>;
}

/// How tightly each outer iteration's linear system is solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Forcing {
    /// Eisenstat-Walker choice 2 (see the module docs).
    EisenstatWalker,
    /// Every system to this relative tolerance.
    Fixed(f64),
}

/// What each outer iteration of the Newton loop solves (the setting `newton` of `cg` and
/// `direct`; see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The fast projection: `x = x̃ + W Σₖ Jₖᵀ Δλₖ` with each `J` taken where it was solved, until
    /// `C(x) = 0`. Quadratic on the constraints, but the point it lands on depends on the path
    /// and is not the implicit-Euler step (it drops the stationarity `M(x − x̃) = J(x)ᵀλ`).
    Projection,
    /// Sequential quadratic programming with the Gauss-Newton Hessian `M`: converges to the
    /// implicit-Euler step, linearly, at a rate set by the constraint forces' curvature.
    GaussNewton,
    /// Sequential quadratic programming with the full Hessian of the Lagrangian, `M − Σ λᵢ∇²Cᵢ`:
    /// the geometric stiffness of every stick in tension (and rope held taut) joins as two
    /// compliant rows across the stick; quadratic near the solution.
    #[default]
    Full,
}

impl Method {
    /// Whether the loop solves for the implicit-Euler step (stationarity included).
    pub fn is_sqp(self) -> bool {
        self != Method::Projection
    }
}

/// Settings of the Newton loop, shared by the CG and direct solvers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// What each outer iteration solves.
    pub method: Method,
    /// Maximum outer (Gauss-Newton) iterations per step.
    pub outer_iterations: usize,
    /// Stop when the common violation is at most this (m); 0 runs every outer iteration.
    pub tolerance: f64,
    /// Fraction of the previous step's multipliers used as the first initial guess, in [0, 1].
    pub warm_start: f64,
    /// Maximum re-solves per outer iteration while inequality rows leave the active set.
    pub active_set_iterations: usize,
    /// `ε` relative to the mean diagonal of `J W Jᵀ`.
    pub regularization: f64,
    /// The forcing terms of the inexact Newton method.
    pub forcing: Forcing,
    /// A budget of inner (linear) iterations for the whole step, over all outer iterations
    /// (0: none). With it, the step ends when the budget is spent: the work-precision studies
    /// give every family the same kind of iteration cap.
    pub inner_budget: usize,
    /// Which speculative contacts the rigid step keeps ([`crate::SpeculativeMargin`]).
    pub speculative_margin: crate::common::SpeculativeMargin,
}

/// What one step of the Newton loop did, beyond [`SolveInfo`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NewtonStats {
    /// Outer iterations that solved a system.
    pub outer: usize,
    /// Linear solves that stopped on a breakdown.
    pub breakdowns: usize,
    /// Trial steps rejected by the merit test (line-search halvings and Levenberg-Marquardt
    /// retries).
    pub rejected: usize,
    /// Whether the loop ended because even the largest damping gave no decrease.
    pub stalled: bool,
    /// Whether the warm start was dropped because it left a larger residual than zero.
    pub warm_rejected: bool,
    /// The SQP methods' stationarity `max |x − x̃ − W Jᵀλ|` at the end of the step (m; 0 for the
    /// projection).
    pub stationarity: f64,
    /// Whether an SQP pass ended above the tolerance and the projection finished the step.
    pub fell_back: bool,
}

/// A solver made of the Newton loop and a linear solver.
pub struct Newton<L: Linear> {
    settings: NewtonSettings,
    linear: L,
    label: String,
    w: Vec<f64>,
    /// The active rows at the current point, compact ([`RowSet`]).
    rows: RowSet,
    /// Scratch of the line search: the rows at a trial point, kept between steps so that a large
    /// scene does not map (and fault in) fresh memory every step.
    trial_rows: RowSet,
    sys: System,
    /// Multipliers of the previous step, by row id.
    previous: RowMap,
    /// Multipliers accumulated in this step, by row id.
    current: RowMap,
    /// The scene's constraints, whose first rows the multiplier maps keep in a vector.
    dense_rows: usize,
    /// Friction of this step's contacts, by normal row id: (normal, tangential multiplier).
    friction: IdMap<(Vec3, Vec3)>,
    previous_friction: IdMap<(Vec3, Vec3)>,
    predicted: Vec<Vec3>,
    capture: Option<usize>,
    captured: Option<LinearSystem>,
    scratch: Vec<f64>,
    stats: NewtonStats,
    /// How far from touching an inequality row is still gathered this step (m).
    margin: f64,
    /// The contact rows with friction that pushed in the last step, with their normal
    /// multipliers (N·s²).
    contacts: Vec<(Row, f64)>,
    /// The scene's particles: the coordinates of the loop are theirs, then each rigid body's two
    /// blocks (`newton/rigid_rows/`).
    particles: usize,
    /// The rows of the 6-DoF rigid bodies.
    rigid: RigidRows,
    /// Inequality rows the active set of this outer iteration released (step 4), with their
    /// changes `Δλ = −λ` and the displacement `W Jᵀ Δλ` those give.
    released: Released,
    /// The joints' forces of the last step.
    joint_forces: Vec<solverlab_core::rigid::JointForce>,
    /// The loop's starting coordinates `x̃` of the current pass (the prediction, or the
    /// friction-corrected prediction), for the stationarity of the SQP methods.
    start: Vec<Vec3>,
    /// The stationarity displacement `s = x − x̃ − W Jᵀλ` at the current point, and at a trial
    /// point of the line search.
    stationarity: Vec<Vec3>,
    trial_stationarity: Vec<Vec3>,
    /// Metres per unit of each coordinate block's displacement (1 for particles and rigid
    /// positions; a rotation block's largest turn per unit times the body's bounding radius).
    coordinate_scale: Vec<f64>,
    /// Rows of `rows` that are the scene's (the rest are the full method's curvature rows).
    real_rows: usize,
    /// The method of the running pass (the settings' own, or the projection of a step that
    /// falls back).
    method: Method,
    /// The first outer iteration of the running pass.
    first_outer: usize,
    /// The loop's buffers (the loop allocates nothing while it iterates).
    work: Work,
}

impl<L: Linear> Newton<L> {
    /// A solver from settings and a linear solver.
    pub fn new(settings: NewtonSettings, linear: L, label: impl Into<String>) -> Self {
        Self {
            settings,
            linear,
            label: label.into(),
            w: Vec::new(),
            rows: RowSet::default(),
            trial_rows: RowSet::default(),
            sys: System::default(),
            previous: RowMap::default(),
            current: RowMap::default(),
            dense_rows: 0,
            friction: IdMap::default(),
            previous_friction: IdMap::default(),
            predicted: Vec::new(),
            capture: None,
            captured: None,
            scratch: Vec::new(),
            stats: NewtonStats::default(),
            margin: 0.0,
            contacts: Vec::new(),
            particles: 0,
            rigid: RigidRows::default(),
            released: Released::default(),
            joint_forces: Vec::new(),
            start: Vec::new(),
            stationarity: Vec::new(),
            trial_stationarity: Vec::new(),
            coordinate_scale: Vec::new(),
            real_rows: 0,
            method: Method::Full,
            first_outer: 1,
            work: Work::default(),
        }
    }

    /// One pass of the loop (steps 1–5) from `x`: the first of the step (`first`), or the
    /// friction pass from the first pass's multipliers. Under the SQP methods a pass that ends
    /// above the tolerance (an implicit-Euler step without finite multipliers, such as a taut
    /// line between fixed particles) goes on with the projection from where it stopped, for
    /// at most as many outer iterations again, so that the step still ends on the
    /// constraints; [`NewtonStats::fell_back`] says so.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &mut self,
        ctx: &StepContext,
        state: &State,
        x: &mut Vec<Vec3>,
        observer: &mut dyn Observer,
        info: &mut SolveInfo,
        first: bool,
    ) -> Result<f64, SolveError> {
        let method = self.settings.method;
        let cap = self.settings.outer_iterations;
        let from = if first { 1 } else { self.stats.outer + 1 };
        let start = match (method.is_sqp(), first) {
            (true, true) => Start::Previous(self.settings.warm_start),
            (true, false) => Start::Previous(1.0),
            (false, _) => Start::Zero,
        };
        let mut worst = self.newton_loop(ctx, state, x, observer, info, method, from..=cap.max(from), start)?;
        let budget_left = self.settings.inner_budget == 0 || info.iterations < self.settings.inner_budget;
        if method.is_sqp() && worst > self.settings.tolerance && budget_left {
            self.stats.fell_back = true;
            let from = self.stats.outer + 1;
            worst = self.newton_loop(
                ctx,
                state,
                x,
                observer,
                info,
                Method::Projection,
                from..=from + cap - 1,
                Start::Keep,
            )?;
        }
        Ok(worst)
    }

    /// What the last step did beyond its [`SolveInfo`].
    pub fn stats(&self) -> NewtonStats {
        self.stats
    }

    /// The linear solver.
    pub fn linear(&self) -> &L {
        &self.linear
    }
}
