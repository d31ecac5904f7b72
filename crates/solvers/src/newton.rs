//! The Gauss-Newton loop shared by the explicit-Jacobian solvers ([`crate::cg`] and
//! [`crate::direct`]); they differ only in how they solve each linear system.
//!
//! # Algorithm
//!
//! Per step, after the shared Verlet prediction, for each outer iteration `k`:
//!
//! 1. gather the active rows at the current positions: every equality row, and every inequality
//!    row (min/max sticks, collider contacts) that is violated (`C < 0`) or has pushed in this
//!    step (`λ > 0`, so that it may let go again); stop when the common violation over them
//!    (`max |C + α̃λ|` over equalities, `max(0, −C)` over inequalities; see
//!    [`solverlab_core::metrics::violation`]) is at most `tolerance` and every row that pushes
//!    touches (`|C| ≤ tolerance` where `λ > 0`: complementarity, without which a warm start that
//!    pushes a resting body clear of the floor would count as converged and lift it);
//! 2. build `J` explicitly (CSR, pattern kept while the rows do not change) and, if the linear
//!    solver wants it, `A = J W Jᵀ + diag(α̃ + ε)` with `α̃ = α/h²` and the regularisation
//!    `ε = regularization × damping × mean(diag J W Jᵀ)`;
//! 3. solve `A Δλ = b`, `b = −C − α̃λ`, to the forcing tolerance `‖b − AΔλ‖₂ ≤ max(ηₖ‖b‖₂,
//!    tolerance/2)`: inexact Newton (Eisenstat and Walker 1996, choice 2:
//!    `ηₖ = min(0.9, 0.9·(‖gₖ‖/‖gₖ₋₁‖)²)`, safeguarded by `0.9·ηₖ₋₁²` when that exceeds 0.1,
//!    `η₁ = 0.5`), so early outer iterations are solved loosely and the last tightly; the
//!    absolute floor stops a solve once its residual cannot matter at the Newton tolerance.
//!    `forcing = "fixed"` solves every system to `cg_tolerance` instead. The first outer
//!    iteration starts from the previous step's multipliers times `warm_start` (matched by row
//!    id); later ones from `Δλ = 0`, which is the current total `λ`, the best guess there is;
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
//! 5. `x += s·W Jᵀ Δλ`, `λ += s·Δλ` with the largest `s` in 1, ½, ¼, …, 1/64 that lowers the
//!    merit `Σ (C + α̃λ)²` over the active rows (backtracking: with `η < 1` the inexact step is
//!    still a descent direction); if none does, the system is solved again with `damping`
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
//! 6-DoF rigid bodies ([`crate::rigid_rows`]) join the same loop: their contact and joint rows
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
use solverlab_core::solver::{IterationReport, LinearSystem, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{Scene, State, Vec3};

use crate::jacobian::System;
use crate::rigid_rows::{is_rigid_id, RigidRows};

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

/// Settings of the Newton loop, shared by the CG and direct solvers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
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
    last_pattern: Vec<u64>,
    scratch: Vec<f64>,
    stats: NewtonStats,
    /// How far from touching an inequality row is still gathered this step (m).
    margin: f64,
    /// The contact rows with friction that pushed in the last step, with their normal
    /// multipliers (N·s²).
    contacts: Vec<(Row, f64)>,
    /// The scene's particles: the coordinates of the loop are theirs, then each rigid body's two
    /// blocks ([`crate::rigid_rows`]).
    particles: usize,
    /// The rows of the 6-DoF rigid bodies.
    rigid: RigidRows,
    /// Inequality rows the active set of this outer iteration released (step 4), with their
    /// changes `Δλ = −λ` and the displacement `W Jᵀ Δλ` those give.
    released: Released,
    /// The joints' forces of the last step.
    joint_forces: Vec<solverlab_core::rigid::JointForce>,
}

/// The rows an outer iteration's active set released, what they give back, and where that moves
/// the coordinates.
#[derive(Default)]
struct Released {
    ids: Vec<u64>,
    dl: Vec<f64>,
    dx: Vec<Vec3>,
}

/// A row's multiplier in `map` by id (0 for a row that is not there).
fn lookup(map: &RowMap) -> impl Fn(u64) -> f64 + '_ {
    |id| map.get(id)
}

/// Multipliers by row id, 0 for a row that has none: the first row of each scene constraint
/// (id `index << 2`, the only row of a stick) in a vector indexed by constraint, and every other
/// row (a pin's other axes, contacts, rigid rows) in a hash map. A large cloth looks its rows up
/// several times an outer iteration; in a hash map alone each lookup cost about 15 ns on the
/// 256² cloth, half of gathering the row.
#[derive(Debug, Default)]
struct RowMap {
    dense: Vec<f64>,
    sparse: IdMap<f64>,
}

impl RowMap {
    /// Forgets every multiplier, keeping the first rows of `constraints` constraints in the
    /// vector.
    fn reset(&mut self, constraints: usize) {
        self.dense.clear();
        self.dense.resize(constraints, 0.0);
        self.sparse.clear();
    }

    /// The slot of row `id` in the vector, if it has one.
    fn slot(&self, id: u64) -> Option<usize> {
        (id & 3 == 0 && (id >> 2) < self.dense.len() as u64).then_some((id >> 2) as usize)
    }

    fn get(&self, id: u64) -> f64 {
        match self.slot(id) {
            Some(k) => self.dense[k],
            None => self.sparse.get(&id).copied().unwrap_or(0.0),
        }
    }

    /// Adds `d` to the multiplier of row `id`.
    fn add(&mut self, id: u64, d: f64) {
        match self.slot(id) {
            Some(k) => self.dense[k] += d,
            None => *self.sparse.entry(id).or_insert(0.0) += d,
        }
    }

    /// Every multiplier that was set, with its id (the vector's first, zeros included).
    fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let dense = self.dense.iter().enumerate().map(|(k, &l)| ((k as u64) << 2, l));
        dense.chain(self.sparse.iter().map(|(&id, &l)| (id, l)))
    }
}

impl Clone for RowMap {
    fn clone(&self) -> Self {
        RowMap { dense: self.dense.clone(), sparse: self.sparse.clone() }
    }

    /// Reuses the vector and the table.
    fn clone_from(&mut self, source: &Self) {
        self.dense.clone_from(&source.dense);
        self.sparse.clone_from(&source.sparse);
    }
}

/// The forcing term for outer iteration with Newton residual norm `f`, given the previous
/// iteration's norm and forcing term.
fn forcing_term(forcing: Forcing, f: f64, previous: Option<(f64, f64)>) -> f64 {
    match forcing {
        Forcing::Fixed(t) => t,
        Forcing::EisenstatWalker => {
            const GAMMA: f64 = 0.9;
            const ETA_MAX: f64 = 0.9;
            let eta = match previous {
                None => 0.5,
                Some((f_prev, eta_prev)) => {
                    let eta = GAMMA * (f / f_prev).powi(2);
                    let guard = GAMMA * eta_prev * eta_prev;
                    if guard > 0.1 {
                        eta.max(guard)
                    } else {
                        eta
                    }
                }
            };
            eta.min(ETA_MAX)
        }
    }
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
            last_pattern: Vec::new(),
            scratch: Vec::new(),
            stats: NewtonStats::default(),
            margin: 0.0,
            contacts: Vec::new(),
            particles: 0,
            rigid: RigidRows::default(),
            released: Released::default(),
            joint_forces: Vec::new(),
        }
    }

    /// What the last step did beyond its [`SolveInfo`].
    pub fn stats(&self) -> NewtonStats {
        self.stats
    }

    /// The linear solver.
    pub fn linear(&self) -> &L {
        &self.linear
    }

    /// Gathers the active rows at `x` into `rows` (step 1) and returns the merit `Σ gᵢ²` of the
    /// Newton residual `g = C + α̃λ` and the common violation over them.
    ///
    /// Inequality rows are looked for within `self.margin` (twice the step's largest predicted
    /// travel), so that a contact that pushed and then separated is still seen. The stopping
    /// measure is the common violation plus complementarity: a contact that pushes (`λ > 0`)
    /// must touch, `|C| ≤ tolerance`, or it would inject energy.
    fn gather(&self, scene: &Scene, x: &[Vec3], t: f64, h: f64, rows: &mut RowSet) -> (f64, f64) {
        let n = self.particles;
        gather_row_set(scene, &x[..n], t, self.margin, |_| self.margin, rows);
        if scene.has_rigid() {
            self.rigid.gather(scene, &x[n..], rows);
        }
        let current = &self.current;
        // One pass: drop the inactive contacts, and sum the merit over the rows kept.
        let (mut merit, mut worst) = (0.0, 0.0f64);
        rows.retain(|r| {
            let lambda = current.get(r.id);
            let equality = r.kind == RowKind::Equality;
            if !(equality || r.c < 0.0 || lambda > 0.0) {
                return false;
            }
            let at = r.compliance / (h * h);
            let g = r.c + at * lambda;
            merit += g * g;
            let v = if !equality && lambda > 0.0 { g.abs() } else { row_violation(r.c, at, lambda, equality) };
            worst = worst.max(v);
            true
        });
        (merit, worst)
    }

    /// Solves one outer iteration's system with the active-set loop (steps 2–4); returns `Δλ` for
    /// the rows left in `self.rows`.
    #[allow(clippy::too_many_arguments)]
    fn solve_active_set(
        &mut self,
        ctx: &StepContext,
        state: &State,
        x: &[Vec3],
        outer: usize,
        damping: f64,
        stop: LinearStop,
        observer: &mut dyn Observer,
    ) -> Result<(Vec<f64>, LinearInfo), SolveError> {
        let h = ctx.h;
        let alpha_tilde = |compliance: f64| compliance / (h * h);
        let mut inner = 0;
        let mut previous_round: Option<IdMap<f64>> = None;
        let want_violation = observer.wants_violation();
        self.released.ids.clear();
        self.released.dl.clear();
        self.released.dx.clear();
        for round in 0..=self.settings.active_set_iterations {
            let diag_mean = if self.rows.is_empty() {
                1.0
            } else {
                self.rows.iter().map(|r| r.w_grad2(&self.w)).sum::<f64>() / self.rows.len() as f64
            };
            let eps = self.settings.regularization * damping * diag_mean;
            self.sys.set_jacobian(&self.rows, &self.w, |r: &RowView| alpha_tilde(r.compliance), eps);
            let pattern_changed = self.sys.ids != self.last_pattern;
            if pattern_changed {
                self.last_pattern.clone_from(&self.sys.ids);
            }
            if self.linear.needs_assembly() {
                self.sys.assemble(&self.rows, &self.w);
            }
            let lambda: Vec<f64> = self.rows.heads().iter().map(|r| self.current.get(r.id)).collect();
            // The rows released so far have moved the coordinates by `released.dx`: the others'
            // `C` from there.
            let moved = |r: &RowView| match self.released.dx.is_empty() {
                true => 0.0,
                false => r.particles.iter().zip(r.grad).map(|(&i, g)| g.dot(&self.released.dx[i as usize])).sum(),
            };
            let b: Vec<f64> =
                self.rows.iter().zip(&lambda).map(|(r, l)| -r.c - moved(&r) - alpha_tilde(r.compliance) * l).collect();
            let mut dl: Vec<f64> = match &previous_round {
                // A later round starts from the last round's solution on the rows that stayed.
                Some(last) => self.rows.heads().iter().map(|r| last.get(&r.id).copied().unwrap_or(0.0)).collect(),
                None if outer == 1 && self.settings.warm_start > 0.0 => {
                    // The previous step's multipliers, kept only where they leave a smaller
                    // residual than a cold start (as MuJoCo does): on redundant rows the
                    // multipliers are not unique, and a warm start can carry a large part in
                    // the null space of Jᵀ that moves nothing but costs CG iterations.
                    let guess: Vec<f64> = self
                        .rows
                        .iter()
                        .map(|r| {
                            let l = self.previous.get(r.id) * self.settings.warm_start;
                            if r.kind == RowKind::Inequality {
                                l.max(0.0)
                            } else {
                                l
                            }
                        })
                        .collect();
                    let mut q = vec![0.0; b.len()];
                    self.sys.apply(&guess, &mut q, &mut self.scratch);
                    let warm: f64 = b.iter().zip(&q).map(|(b, q)| (b - q).powi(2)).sum();
                    let cold: f64 = b.iter().map(|b| b * b).sum();
                    if warm < cold {
                        guess
                    } else {
                        self.stats.warm_rejected = true;
                        vec![0.0; self.rows.len()]
                    }
                }
                None => vec![0.0; self.rows.len()],
            };
            let guess = dl.clone();
            let info = {
                let Self { linear, sys, rows, current, rigid, particles, .. } = self;
                let (sys, rows, current, rigid): (&System, &RowSet, &RowMap, &RigidRows) = (sys, rows, current, rigid);
                let n = *particles;
                let row_of: IdMap<usize> = if want_violation {
                    rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect()
                } else {
                    IdMap::default()
                };
                let mut scratch = Vec::new();
                let mut monitor = |iteration: usize, residual: f64, dl: &[f64]| {
                    let violation = want_violation.then(|| {
                        let mut x = x.to_vec();
                        sys.add_w_jt(dl, &mut x, &mut scratch);
                        let lambda = |j: usize, axis: usize| {
                            let id = constraint_row_id(j, axis);
                            current.get(id) + row_of.get(&id).map_or(0.0, |&i| dl[i])
                        };
                        let v = violation(ctx.scene, &x[..n], state.time, h, &lambda);
                        match ctx.scene.has_rigid() {
                            true => {
                                // The relaxation family's measure on the same poses.
                                let mut poses = state.rigid.clone();
                                rigid.write_poses(&x[n..], &mut poses);
                                v.max(rigid.xpbd.violation(ctx.scene, &poses))
                            }
                            false => v,
                        }
                    });
                    observer.iteration(&IterationReport {
                        iteration,
                        outer,
                        residual,
                        violation,
                        ..Default::default()
                    });
                };
                linear.solve(sys, &b, &mut dl, pattern_changed, stop, &mut monitor)?
            };
            inner += info.iterations;
            self.stats.breakdowns += info.breakdown as usize;
            let total = LinearInfo { iterations: inner, ..info };
            if self.capture == Some(outer) && round == 0 && self.captured.is_none() {
                self.captured = Some(self.snapshot(&b, &guess, &dl, outer, damping, eps));
            }
            let pulling: Vec<bool> = self
                .rows
                .iter()
                .zip(&lambda)
                .zip(&dl)
                .map(|((r, l), d)| r.kind == RowKind::Inequality && l + d < 0.0)
                .collect();
            if !pulling.contains(&true) {
                return Ok((dl, total));
            }
            if round == self.settings.active_set_iterations {
                // Cap reached: never pull.
                for ((d, l), p) in dl.iter_mut().zip(&lambda).zip(&pulling) {
                    if *p {
                        *d = -l;
                    }
                }
                return Ok((dl, total));
            }
            previous_round = Some(self.rows.heads().iter().zip(&dl).map(|(r, d)| (r.id, *d)).collect());
            // A pulling row leaves. One that has separated gives back what it pushed,
            // `Δλ = −λ`, and the others are solved again from where that leaves the
            // coordinates; one that still touches keeps its push (see the module docs).
            if self.released.dx.is_empty() {
                self.released.dx.resize(x.len(), Vec3::zeros());
            }
            let separated = |r: &RowView| r.c > 0.0;
            for ((r, l), _) in self.rows.iter().zip(&lambda).zip(&pulling).filter(|((r, _), p)| **p && separated(r)) {
                self.released.ids.push(r.id);
                self.released.dl.push(-l);
                for (&i, g) in r.particles.iter().zip(r.grad) {
                    self.released.dx[i as usize] -= g * (self.w[i as usize] * l);
                }
            }
            let mut keep = pulling.iter().map(|p| !p);
            self.rows.retain(|_| keep.next().expect("one flag per row"));
        }
        unreachable!("the loop returns at its last round")
    }

    /// Step 6: Coulomb friction on the prediction, for every contact in `self.contacts`,
    /// limited by its normal multiplier.
    fn apply_friction(&mut self, state: &mut State) {
        self.friction.clear();
        for (r, lambda_n) in &self.contacts {
            let Some(info) = r.contact else { continue };
            let coeffs: Vec<f64> = (0..r.n).map(|k| r.grad[k].dot(&info.normal)).collect();
            let (x, x_start) = (&mut state.x, &state.x_prev);
            let particles = &r.particles[..r.n];
            let lt = coulomb_friction(
                x,
                x_start,
                &self.w,
                particles,
                &coeffs,
                &info.normal,
                *lambda_n,
                info.friction,
                Vec3::zeros(),
            );
            self.friction.insert(r.id, (info.normal, lt));
        }
    }

    /// Steps 1–5 from the coordinates `x` (the particles', then the rigid bodies'), outer
    /// iterations counted from `first_outer`; returns the stopping measure at the end.
    #[allow(clippy::too_many_arguments)]
    fn newton_loop(
        &mut self,
        ctx: &StepContext,
        state: &State,
        x: &mut Vec<Vec3>,
        observer: &mut dyn Observer,
        info: &mut SolveInfo,
        first_outer: usize,
    ) -> Result<f64, SolveError> {
        let scene = ctx.scene;
        let h = ctx.h;
        self.current.reset(self.dense_rows);
        let mut rows = std::mem::take(&mut self.rows);
        let (mut merit, mut worst) = self.gather(scene, x, state.time, h, &mut rows);
        self.rows = rows;
        let tolerance = self.settings.tolerance;
        let mut trial_rows = std::mem::take(&mut self.trial_rows);
        let mut trial_x = x.clone();
        let mut dx = vec![Vec3::zeros(); x.len()];
        let mut damping = 1.0;
        let mut last: Option<(f64, f64)> = None;
        for outer in first_outer..=self.settings.outer_iterations {
            if worst <= tolerance || self.rows.is_empty() {
                break;
            }
            let f = merit.sqrt();
            let eta = forcing_term(self.settings.forcing, f, last);
            last = Some((f, eta));
            let budget = self.settings.inner_budget;
            if budget > 0 && info.iterations >= budget {
                break;
            }
            let max_iterations = if budget > 0 { budget - info.iterations } else { 0 };
            let stop = LinearStop { relative: eta, absolute: 0.5 * tolerance, max_iterations };
            self.stats.outer = outer;
            // Globalisation: backtracking along the Gauss-Newton direction (an inexact solve
            // with η < 1 still gives a descent direction for the merit Σ (C + α̃λ)²); if even a
            // step of 1/64 does not lower the merit, Levenberg-Marquardt: solve again with
            // 100× the damping. An accepted full step divides the damping by 10.
            let committed = std::mem::take(&mut self.current);
            let accepted = 'solve: loop {
                self.current.clone_from(&committed);
                let (dl, linear) = self.solve_active_set(ctx, state, x, outer, damping, stop, observer)?;
                info.iterations += linear.iterations;
                info.residual = linear.residual;
                dx.iter_mut().for_each(|d| *d = Vec3::zeros());
                self.sys.add_w_jt(&dl, &mut dx, &mut self.scratch);
                if !self.released.dx.is_empty() {
                    dx.iter_mut().zip(&self.released.dx).for_each(|(d, r)| *d += r);
                }
                // A rigid body turns at most `MAX_TURN` per outer iteration (a trust region
                // on the rotations; see `RigidRows::step_limit`).
                let first = match scene.has_rigid() {
                    true => self.rigid.step_limit(&dx[self.particles..]),
                    false => 1.0,
                };
                let mut step = first;
                while step >= first / 64.0 {
                    self.current.clone_from(&committed);
                    for (r, d) in self.rows.heads().iter().zip(&dl) {
                        self.current.add(r.id, step * d);
                    }
                    for (&id, d) in self.released.ids.iter().zip(&self.released.dl) {
                        self.current.add(id, step * d);
                    }
                    for ((xt, x), d) in trial_x.iter_mut().zip(x.iter()).zip(&dx) {
                        *xt = x + d * step;
                    }
                    let (m, w) = self.gather(scene, &trial_x, state.time, h, &mut trial_rows);
                    if m < merit {
                        (merit, worst) = (m, w);
                        if step == first {
                            damping = (damping / 10.0).max(1.0);
                        }
                        break 'solve true;
                    }
                    self.stats.rejected += 1;
                    step /= 2.0;
                }
                damping *= 100.0;
                if damping > 1e12 {
                    break false;
                }
            };
            if !accepted {
                self.current = committed;
                self.stats.stalled = true;
                break;
            }
            x.clone_from(&trial_x);
            std::mem::swap(&mut self.rows, &mut trial_rows);
        }
        self.trial_rows = trial_rows;
        Ok(worst)
    }

    /// Why a step ended above its tolerance (see [`SolveInfo::note`]).
    fn diagnose(&self) -> &'static str {
        // The movable particles the rows touch, counted without sorting (this runs after every
        // step that ends above its tolerance).
        let mut seen = vec![false; self.w.len()];
        let mut movable = 0usize;
        for i in self.rows.all_particles().iter().map(|&i| i as usize) {
            if self.w[i] > 0.0 && !seen[i] {
                seen[i] = true;
                movable += 1;
            }
        }
        if self.rows.len() > 3 * movable {
            "the active rows outnumber the movable degrees of freedom: J W Jᵀ is singular (redundant \
             constraints) and Gauss-Newton converges only linearly"
        } else if self.stats.stalled {
            "no step lowered the merit, even with the largest damping (a singular or degenerate \
             linearisation, such as a taut line between fixed particles)"
        } else {
            "the outer-iteration cap was reached"
        }
    }

    fn snapshot(
        &self,
        b: &[f64],
        guess: &[f64],
        solution: &[f64],
        outer: usize,
        damping: f64,
        eps: f64,
    ) -> LinearSystem {
        let j = self.sys.j.as_ref().expect("jacobian set");
        LinearSystem {
            ids: self.sys.ids.clone(),
            inequality: self.rows.heads().iter().map(|r| r.kind == RowKind::Inequality).collect(),
            columns: j.ncols(),
            jacobian: j.triplet_iter().map(|(i, c, v)| (i, c, *v)).collect(),
            inverse_mass: self.sys.w3.clone(),
            diagonal_shift: self.sys.diag_shift.clone(),
            rhs: b.to_vec(),
            warm_start: guess.to_vec(),
            solution: solution.to_vec(),
            outer,
            regularization: eps,
            damping,
        }
    }
}

impl<L: Linear> Solver for Newton<L> {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        self.w = scene.inverse_masses();
        self.particles = self.w.len();
        self.rigid = RigidRows::default();
        self.dense_rows = scene.constraints.len();
        self.previous.reset(self.dense_rows);
        self.previous_friction.clear();
        self.contacts.clear();
        self.sys = System::default();
        self.last_pattern.clear();
        Ok(())
    }

    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let scene = ctx.scene;
        let h = ctx.h;
        if self.particles != scene.particles.len() {
            self.prepare(scene)?;
        }
        self.stats = NewtonStats::default();
        let travel = state.x.iter().zip(&state.x_prev).map(|(x, p)| (x - p).norm_squared()).fold(0.0, f64::max);
        self.margin = 2.0 * travel.sqrt();
        let restitution = solverlab_core::integrate::has_restitution(scene);
        self.predicted.clone_from(&state.x);
        self.friction.clear();
        // The loop's coordinates: the particles, then each rigid body's two blocks.
        let n = self.particles;
        let rigid = scene.has_rigid();
        let mut x = state.x.clone();
        self.w.truncate(n);
        if rigid {
            self.rigid.begin(scene, &mut state.rigid, h, n, state.time);
            self.rigid.push_inverse_masses(scene, &mut self.w);
            self.rigid.push_predicted(&mut x);
        }
        let mut info = SolveInfo::default();
        let mut worst = self.newton_loop(ctx, state, &mut x, observer, &mut info, 1)?;
        // Friction (step 6): the contacts that pushed, with their normal multipliers.
        self.contacts.clear();
        for r in self.rows.iter().filter(|r| r.contact.is_some_and(|c| c.friction > 0.0)) {
            let lambda_n = self.current.get(r.id);
            if lambda_n > 0.0 {
                self.contacts.push((r.to_row(), lambda_n));
            }
        }
        if rigid {
            self.rigid.set_normal_multipliers(&lookup(&self.current));
        }
        let rigid_friction = rigid && self.rigid.needs_friction();
        // Only from converged normal multipliers: an unconverged pass (a dense pile that hit the
        // cap) can hold multipliers far from the contact forces, and friction scaled by them
        // would hold the particles where they started.
        if (!self.contacts.is_empty() || rigid_friction) && worst <= self.settings.tolerance {
            // Rigid contacts whose static friction rows ask for more than their cone are
            // released to slide, and the pass runs again (at most `FRICTION_ROUNDS` times).
            for _ in 0..FRICTION_ROUNDS {
                state.x.clone_from(&self.predicted);
                self.apply_friction(state);
                x.truncate(n);
                x.copy_from_slice(&state.x);
                if rigid {
                    // The rigid bodies' friction, from their predicted poses (as the particles').
                    self.rigid.push_predicted(&mut x);
                    self.rigid.write_poses(&x[n..], &mut state.rigid);
                    self.rigid.friction(&mut state.rigid);
                    self.rigid.read_poses(&state.rigid, &mut x[n..]);
                }
                // Start the second pass from the first pass's multipliers.
                self.previous = std::mem::take(&mut self.current);
                let next = self.stats.outer + 1;
                worst = self.newton_loop(ctx, state, &mut x, observer, &mut info, next)?;
                if !rigid || !self.rigid.settle_friction(lookup(&self.current)) || worst > self.settings.tolerance {
                    break;
                }
            }
        }
        state.x.copy_from_slice(&x[..n]);
        if rigid {
            self.rigid.joint_forces(scene, &x[n..], lookup(&self.current), h, &mut self.joint_forces);
            self.rigid.write_poses(&x[n..], &mut state.rigid);
            self.rigid.set_normal_multipliers(&lookup(&self.current));
            self.rigid.xpbd.finish(scene, &mut state.rigid, h);
        }
        info.converged = worst <= self.settings.tolerance;
        info.outer = self.stats.outer;
        if !info.converged {
            info.note = Some(self.diagnose());
        } else if self.stats.breakdowns > 0 {
            // A breakdown ends a linear solve early; the Newton loop may still converge, but the
            // run's meta.json should say that the matrix was not positive definite.
            info.note = Some(
                "a CG solve broke down (pᵀAp ≤ 0: J W Jᵀ is not positive definite along some direction, \
                 as with redundant rows and no regularisation); the Newton loop still converged",
            );
        }
        if restitution {
            solverlab_core::integrate::apply_restitution(scene, &self.predicted, state, h);
        }
        std::mem::swap(&mut self.previous, &mut self.current);
        std::mem::swap(&mut self.previous_friction, &mut self.friction);
        Ok(info)
    }

    fn capture_system(&mut self, outer: Option<usize>) -> bool {
        self.capture = outer;
        self.captured = None;
        true
    }

    fn captured_system(&self) -> Option<&LinearSystem> {
        self.captured.as_ref()
    }

    fn rigid_contacts(&self, out: &mut Vec<solverlab_core::rigid::ContactForce>) {
        out.clear();
        out.extend_from_slice(self.rigid.xpbd.forces());
    }

    fn rigid_joints(&self, out: &mut Vec<solverlab_core::rigid::JointForce>) {
        out.clear();
        out.extend_from_slice(&self.joint_forces);
    }

    fn multiplier(&self, id: u64) -> f64 {
        let dir = match decode(id) {
            RowRef::Contact { dir, .. } | RowRef::Body { dir, .. } | RowRef::Embedded { dir, .. } => dir,
            _ => 0,
        };
        match (dir, self.previous_friction.get(&(id & !3))) {
            (1 | 2, Some((n, lt))) => {
                let (t1, t2) = tangents(n);
                lt.dot(if dir == 1 { &t1 } else { &t2 })
            }
            _ => self.previous.get(id),
        }
    }

    fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        out.clear();
        // The rigid rows' multipliers reach the tables as contact forces (`rigid_contacts`).
        out.extend(self.previous.iter().filter(|&(id, l)| l != 0.0 && !is_rigid_id(id)));
        for (id, (n, lt)) in &self.previous_friction {
            let (t1, t2) = tangents(n);
            out.extend([(id | 1, lt.dot(&t1)), (id | 2, lt.dot(&t2))]);
        }
        out.sort_unstable_by_key(|e| e.0);
    }
}

#[cfg(test)]
mod tests {
    use super::RowMap;
    use solverlab_core::rows::{constraint_row_id, contact_row_id};

    /// The split map reads like one map by id: sticks' rows in the vector, a pin's other axes,
    /// contacts and constraints beyond the vector in the table, everything else 0.
    #[test]
    fn row_map_reads_like_one_map_by_id() {
        let mut m = RowMap::default();
        m.reset(3);
        let ids = [
            constraint_row_id(0, 0),
            constraint_row_id(2, 0),
            constraint_row_id(2, 1),
            constraint_row_id(7, 0),
            contact_row_id(5, solverlab_core::constraint::ColliderRef::Plane(0), 0),
        ];
        for (k, &id) in ids.iter().enumerate() {
            m.add(id, k as f64 + 0.5);
            m.add(id, 1.0);
        }
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(m.get(id), k as f64 + 1.5, "row {id:x}");
        }
        assert_eq!(m.get(constraint_row_id(1, 0)), 0.0);
        assert_eq!(m.get(constraint_row_id(1, 2)), 0.0);
        let mut set: Vec<(u64, f64)> = m.iter().filter(|e| e.1 != 0.0).collect();
        set.sort_unstable_by_key(|e| e.0);
        let mut expected: Vec<(u64, f64)> = ids.iter().enumerate().map(|(k, &id)| (id, k as f64 + 1.5)).collect();
        expected.sort_unstable_by_key(|e| e.0);
        assert_eq!(set, expected);
        let mut copy = RowMap::default();
        copy.clone_from(&m);
        assert!(ids.iter().all(|&id| copy.get(id) == m.get(id)));
        m.reset(3);
        assert!(ids.iter().all(|&id| m.get(id) == 0.0));
    }
}
