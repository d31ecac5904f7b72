//! The Gauss-Newton loop shared by the explicit-Jacobian solvers ([`crate::newton::cg`] and
//! [`crate::newton::direct`]); they differ only in how they solve each linear system.
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
//! 6-DoF rigid bodies (`newton/rigid_rows.rs`) join the same loop: their contact and joint rows
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

pub mod cg;
pub mod direct;
pub mod jacobian;
pub(crate) mod rigid_rows;
mod steps;

use jacobian::System;
use rigid_rows::{is_rigid_id, RigidRows};

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
    /// blocks (`newton/rigid_rows.rs`).
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
