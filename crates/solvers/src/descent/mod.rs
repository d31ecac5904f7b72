//! Block descent: Vertex Block Descent (VBD) and its augmented form (AVBD), one particle at a
//! time (a 3 × 3 Newton step on the implicit-Euler energy, this module) or one 6-DoF rigid body
//! at a time (a 6 × 6 step, [`rigid`]).
//!
//! # Algorithm
//!
//! Particles (rigid bodies: see [`rigid`], whose steps are numbered in its own docs).
//!
//! A step minimises `E(x) = Σᵢ mᵢ/(2h²)‖xᵢ − yᵢ‖² + Σ_rows Eᵣ(x)`, where `y` is the shared Verlet
//! prediction (the inertial target) and every row `r` (a stick, a min/max stick, a pin axis, a
//! collider contact's normal and its two friction directions, a particle pair in contact) adds
//! `Eᵣ = ½kᵣCᵣ² + λᵣCᵣ` with a force `Fᵣ = clamp(kᵣCᵣ + λᵣ, fmin, fmax)` along `∇Cᵣ` (the force on
//! the particles is `−Fᵣ∇Cᵣ`):
//!
//! 1. **Rows and warm start.** Sticks and pins are rows from the scene; contacts are found once
//!    per step at the initial guess, within a margin of 1 cm plus the step's travel, and kept for
//!    the step with `C` linearised along the collider normal, as the authors' demo does; a
//!    contact's friction rows measure the tangential travel since the start of the step and are
//!    bounded by `±μ|λₙ|` of its normal row. Hard rows (rigid sticks and pins, contacts,
//!    friction) carry `λ` and a penalty `k` from the last step, matched by row id:
//!    `λ ← αγλ`, `k ← clamp(γk, k_min, k_max)` (AVBD, Eq. 19). Soft rows (compliant sticks,
//!    every row of `vbd`) have `λ = 0` and `k` their stiffness (`1/compliance`, or `stiffness`).
//! 2. **Initial guess** (VBD §3.7, `initial_guess = "adaptive"`): `x⁰ = x⁻ + hv + h²g·w`, with
//!    `w` the previous step's acceleration along gravity as a fraction of `|g|`, clamped to
//!    `[0, 1]` (a body at rest on the floor starts where it is, a falling one where gravity takes
//!    it); or the inertial target `y` (`inertia`), or `x⁻` (`previous`).
//! 3. **Iterations**, `1..=iterations`, each:
//!    - *primal*: for each movable particle in index order (Gauss-Seidel), or with
//!      `order = "colored"` colour by colour (a greedy colouring of the particles that share
//!      rows, each colour's particles stepped on every core, the same numbers for any thread
//!      count: on a 128 × 128 cloth 24 ms a frame on two threads against 36 ms in index order),
//!      the 3 × 3 system
//!      `H = mI/h² + Σ kᵣ∇Cᵣ∇Cᵣᵀ + Gᵣ`, `f = m(x − y)/h² + Σ Fᵣ∇Cᵣ` over its rows (the term
//!      `kᵣ∇Cᵣ∇Cᵣᵀ` only while `kᵣCᵣ + λᵣ` is inside the force bounds: a sliding friction row
//!      or a separated contact adds no stiffness; with it, a `vbd` particle on a 35° slope
//!      slid 4 % of Coulomb's distance), then
//!      `x −= sH⁻¹f`, with `s` the first of 1, ½, …, 1/128 that does not raise the particle's
//!      own energy (a backtracking line search the papers leave out: without it, springs of
//!      10⁶ N/m on a spinning tetrahedron of 1 kg particles gained energy until the run blew
//!      up). `Gᵣ` keeps `H` positive definite: for a hard row the curvature of `Cᵣ`
//!      lumped on the diagonal and scaled by `|Fᵣ|` (AVBD §3.5: the column norms of `∇²Cᵣ`, for a
//!      stick `√(1 − n_k²)/ℓ`); for a soft stick the spring's exact geometric stiffness
//!      `max(0, Fᵣ/ℓ)(I − nnᵀ)`, dropped in compression (VBD's positive-definite projection);
//!    - *dual* (hard rows): `λ ← clamp(kC̃ + λ, fmin, fmax)`, and while `λ` is inside its bounds
//!      `k ← min(k + β|C̃|, k_max)` (AVBD Eqs. 11, 16), with `C̃ = C(x) − αC(x⁰)` for rigid
//!      sticks and pins (error regularisation: a fraction `1 − α` of the error at the start of
//!      the step is corrected per step) and `C̃ = C(x⁰)(1 − α) + ∇C·(x − x⁰)` for contacts;
//!    - stop when the common violation is at most `tolerance`.
//!
//! Presets: `vbd` (every stick a spring of `stiffness`, contacts penalty springs of
//! `contact_stiffness`, no duals), `avbd` (the paper's penalty ramp, with the authors' demo's
//! defaults β = 10⁵, α = 0.99, γ = 0.99, k in [10³, 10⁹]), `avbd-fixed` (β = 0: the penalty
//! stays at `k_start`, only `λ` carries the constraint) and `avbd-alm` (`penalty =
//! "compliant_alm"`: NVIDIA newton 1.6's compliant augmented Lagrangian, [`alm`]: every hard row
//! a material row of stiffness `hard_stiffness` (10⁹ N/m) or `1/compliance`, its penalty
//! `k_eff = Kρ/(K + ρ)` set each step from its effective inertia, no ramp, `λ ← γλ` with
//! γ = 0.999; on particles without the error regularisation, α = 0, as newton's default for it).
//! A scene runs either particles (sticks, pins, colliders, particle contacts) or 6-DoF rigid
//! bodies (contacts, joints); scenes with box bodies or embedded points, and scenes that mix
//! particles with rigid bodies, are refused in `prepare` with a message.
//!
//! # Residual
//!
//! The largest `|f|/(m/h²)` of a particle's block step in the sweep (m): how far the last sweep
//! moved a particle. The stopping test is the common violation
//! ([`solverlab_core::metrics::violation`]) with each row's multiplier `λ_pos = −h²F`.
//!
//! # Cost
//!
//! Per iteration, one pass over every row from each of its particles (two 3 × 3 accumulations
//! per stick), one 3 × 3 solve per particle, one pass over the hard rows for the dual update,
//! and the stopping test on the common violation, which stops at the first row above the
//! tolerance (the whole pass only in the sweep that meets it, or for an observer that asks for
//! the violation). Contacts are gathered once per step.
//!
//! # References
//!
//! * A. H. Chen, Z. Liu, Y. Yang, C. Yuksel, "Vertex Block Descent", ACM TOG 43(4) (SIGGRAPH
//!   2024): the per-vertex Newton step, the adaptive initial guess, positive-definite
//!   projection of the spring Hessian.
//! * C. Giles, E. Diaz, C. Yuksel, "Augmented Vertex Block Descent", ACM TOG 44(4) (SIGGRAPH
//!   2025): hard rows by augmented Lagrangian, the penalty ramp β, error regularisation α,
//!   warm start decay γ, force bounds for contacts and friction, the lumped geometric
//!   stiffness; defaults from the authors' 2-D demo (`avbd-demo2d`).
//! * NVIDIA et al., newton 1.6 (2026), `SolverVBD(rigid_compliant_alm=True)`: the compliant
//!   augmented Lagrangian of `avbd-alm`, a variant described in newton's documentation and
//!   changelog ([`alm`] says exactly what is implemented here).

use std::collections::HashMap;

use solverlab_core::constraint::for_each_contact;
use solverlab_core::metrics::violation_until;
use solverlab_core::model::{Kind, Sense};
use solverlab_core::rows::{constraint_row_id, contact_row_id, pair_row_id, tangents};
use solverlab_core::solver::{Observer, SolveError, SolveInfo, Solver, StepContext};

use crate::common::stop::{Residuals, Stopping};
use solverlab_core::{Scene, State, Vec3};

pub mod alm;
mod block;
mod config;
pub mod rigid;
use block::{block_step, colour_particles, Row, Shape, PARALLEL_PARTICLES};
pub use config::{family, DescentConfig, Guess, Penalty, Rows, Sweep};

/// The solver.
pub struct BlockDescent {
    cfg: DescentConfig,
    label: String,
    w: Vec<f64>,
    /// Last step's `(λ, k)` of every hard row, by row id.
    warm: HashMap<u64, (f64, f64)>,
    /// Last step's acceleration of every particle (m/s²), for the adaptive initial guess.
    accel: Vec<Vec3>,
    /// The last step's forces as position-level multipliers `(id, −h²F)`.
    last: Vec<(u64, f64)>,
    /// The 6-DoF rigid bodies' state (`descent/rigid`).
    rigid: rigid::RigidDescent,
}

impl BlockDescent {
    /// A solver with checked settings `cfg`, labelled `label`.
    pub fn new(cfg: DescentConfig, label: &str) -> Self {
        Self {
            cfg,
            label: label.to_string(),
            w: Vec::new(),
            warm: HashMap::new(),
            accel: Vec::new(),
            last: Vec::new(),
            rigid: rigid::RigidDescent::default(),
        }
    }

    /// A hard row's penalty and multiplier from the last step, decayed (`λ ← αγλ`, or `λ ← γλ`
    /// under the compliant augmented Lagrangian, whose penalty is set per step); a new row's
    /// start.
    fn warm_start(&self, id: u64) -> (f64, f64) {
        let c = &self.cfg;
        let keep = if c.penalty == Penalty::CompliantAlm { c.gamma } else { c.alpha * c.gamma };
        match self.warm.get(&id) {
            Some(&(lambda, k)) => (lambda * keep, (k * c.gamma).clamp(c.k_start, c.k_max)),
            None => (0.0, c.k_start),
        }
    }

    /// The compliant augmented Lagrangian's penalty and multiplier share of every hard row
    /// ([`alm`]): material stiffness `1/compliance` for a compliant constraint, infinite for a
    /// friction direction, `hard_stiffness` otherwise; effective inertia `1/(h²Σw)` over the
    /// row's movable particles (each gradient has unit length).
    fn alm_rows(&self, scene: &Scene, rows: &mut [Row], h: f64) {
        for row in rows.iter_mut().filter(|r| r.hard) {
            let w = match row.shape {
                Shape::Stick { a, b, .. } => self.w[a] + self.w[b],
                Shape::Linear { a, .. } => self.w[a],
            };
            let material = match solverlab_core::rows::decode(row.id) {
                _ if row.friction.is_some() => f64::INFINITY,
                solverlab_core::rows::RowRef::Constraint { index, .. } if scene.constraints[index].compliance > 0.0 => {
                    1.0 / scene.constraints[index].compliance
                }
                _ => self.cfg.hard_stiffness,
            };
            let equality = row.fmin == f64::NEG_INFINITY && row.fmax == f64::INFINITY;
            let rho = alm::rho(1.0 / (h * h * w), material, equality);
            (row.k, row.s) = alm::coefficients(material, rho);
        }
    }

    /// The step's rows at the initial guess `x0`.
    fn rows(&self, scene: &Scene, x0: &[Vec3], x_start: &[Vec3], time: f64) -> Vec<Row> {
        let c = &self.cfg;
        let springs = c.rows == Rows::Springs;
        let mut rows = Vec::new();
        let alm = c.penalty == Penalty::CompliantAlm;
        // Under the compliant augmented Lagrangian a row settles at `λ = K·C`: with the error
        // regularisation that `C` would be the change over the step, and the stretch would grow
        // to `λ/(K(1 − α))` (a chain of particles tore by 120 % at α = 0.99), so particles take
        // α = 0, newton's default for it (rigid bodies keep α: their post-stabilisation removes
        // the error left at the end of each step).
        let alpha = if alm { 0.0 } else { c.alpha };
        let push = |rows: &mut Vec<Row>, id: u64, shape: Shape, compliance: f64, fmin: f64, fmax: f64| {
            // Under the compliant augmented Lagrangian a compliant row is a material row with a
            // multiplier too.
            let soft = springs || (compliance > 0.0 && !alm);
            let (lambda, k) = if soft {
                (0.0, if compliance > 0.0 { 1.0 / compliance } else { c.stiffness })
            } else {
                self.warm_start(id)
            };
            let mut row = Row { id, shape, k, lambda, s: 1.0, fmin, fmax, hard: !soft, offset: 0.0, friction: None };
            if row.hard {
                row.offset = alpha * row.value(x_start, x_start);
            }
            rows.push(row);
        };
        for (j, con) in scene.constraints.iter().enumerate() {
            match con.kind {
                Kind::Stick { a, b, rest, sense } => {
                    if self.w[a] == 0.0 && self.w[b] == 0.0 {
                        continue;
                    }
                    let (fmin, fmax) = match sense {
                        Sense::Equal => (f64::NEG_INFINITY, f64::INFINITY),
                        Sense::AtLeast => (f64::NEG_INFINITY, 0.0),
                        Sense::AtMost => (0.0, f64::INFINITY),
                    };
                    push(&mut rows, constraint_row_id(j, 0), Shape::Stick { a, b, rest }, con.compliance, fmin, fmax);
                }
                Kind::Pin { a, target, velocity } => {
                    if self.w[a] == 0.0 {
                        continue;
                    }
                    let goal = target + velocity * time;
                    for axis in 0..3 {
                        let mut d = Vec3::zeros();
                        d[axis] = 1.0;
                        let c0 = x_start[a][axis] - goal[axis];
                        let shape = Shape::Linear { a, d, c0 };
                        push(
                            &mut rows,
                            constraint_row_id(j, axis),
                            shape,
                            con.compliance,
                            f64::NEG_INFINITY,
                            f64::INFINITY,
                        );
                    }
                }
            }
        }
        // Contacts: gathered once, within a margin of 1 cm plus the step's travel.
        for (i, p) in scene.particles.iter().enumerate().filter(|(i, _)| self.w[*i] > 0.0) {
            let margin = 0.01 + (x0[i] - x_start[i]).norm();
            let mut found = Vec::new();
            for_each_contact(scene, &x0[i], p.radius, margin, |k| found.push(k));
            for k in found {
                let normal_index = rows.len();
                let id = contact_row_id(i, k.collider, 0);
                let (lambda, pen) = if springs { (0.0, c.contact_stiffness) } else { self.warm_start(id) };
                // C at the start of the step, along the normal found at the guess; a hard
                // contact corrects a fraction 1 − α of it per step.
                let at_start = k.c - k.normal.dot(&(x0[i] - x_start[i]));
                let offset_c0 = if springs { at_start } else { at_start * (1.0 - alpha) };
                rows.push(Row {
                    id,
                    shape: Shape::Linear { a: i, d: k.normal, c0: offset_c0 },
                    k: pen,
                    lambda,
                    s: 1.0,
                    fmin: f64::NEG_INFINITY,
                    fmax: 0.0,
                    hard: !springs,
                    offset: 0.0,
                    friction: None,
                });
                if k.friction > 0.0 {
                    let (t1, t2) = tangents(&k.normal);
                    for (dir, t) in [(1usize, t1), (2, t2)] {
                        let id = contact_row_id(i, k.collider, dir);
                        let (lambda, pen) = if springs { (0.0, c.contact_stiffness) } else { self.warm_start(id) };
                        // The tangential travel since the start of the step.
                        rows.push(Row {
                            id,
                            shape: Shape::Linear { a: i, d: t, c0: 0.0 },
                            k: pen,
                            lambda,
                            s: 1.0,
                            fmin: 0.0,
                            fmax: 0.0,
                            hard: !springs,
                            offset: 0.0,
                            friction: Some((normal_index, k.friction)),
                        });
                    }
                }
            }
        }
        // Particle pairs in contact (particles with a radius).
        if scene.particles.iter().any(|p| p.radius > 0.0) {
            let radius: Vec<f64> =
                scene.particles.iter().enumerate().map(|(i, p)| if self.w[i] > 0.0 { p.radius } else { 0.0 }).collect();
            let travel = x0.iter().zip(x_start).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
            for (a, b) in solverlab_core::broadphase::pairs(x0, &radius, 0.01 + 2.0 * travel, |_, _| false) {
                let id = pair_row_id(a, b);
                let (lambda, k) = if springs { (0.0, c.contact_stiffness) } else { self.warm_start(id) };
                let shape = Shape::Stick { a, b, rest: radius[a] + radius[b] };
                let mut row = Row {
                    id,
                    shape,
                    k,
                    lambda,
                    s: 1.0,
                    fmin: f64::NEG_INFINITY,
                    fmax: 0.0,
                    hard: !springs,
                    offset: 0.0,
                    friction: None,
                };
                if row.hard {
                    row.offset = alpha * row.value(x_start, x_start).min(0.0);
                }
                rows.push(row);
            }
        }
        rows
    }
}

impl Solver for BlockDescent {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        if !scene.bodies.is_empty() || !scene.embedded.is_empty() {
            return Err(SolveError::new(
                "block_descent",
                "block descent runs particles (sticks, pins, colliders, particle contacts) or 6-DoF rigid bodies \
                 (contacts, joints); box bodies and embedded points are not supported yet",
            ));
        }
        if scene.has_rigid() && !scene.particles.is_empty() {
            return Err(SolveError::new(
                "block_descent",
                "block descent runs particles or 6-DoF rigid bodies, not both in one scene: scenes that mix them are \
                 not supported yet",
            ));
        }
        self.rigid.prepare(scene);
        self.w = scene.inverse_masses();
        self.accel = vec![Vec3::zeros(); scene.particles.len()];
        self.warm.clear();
        Ok(())
    }

    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let (scene, h) = (ctx.scene, ctx.h);
        let n = scene.particles.len();
        if self.w.len() != n {
            self.prepare(scene)?;
        }
        if scene.has_rigid() {
            return Ok(self.rigid.solve(&self.cfg, scene, state, h, observer));
        }
        let y = state.x.clone();
        let x_start = state.x_prev.clone();
        let g = scene.gravity;
        let g_norm = g.norm();
        // The velocity the prediction carries, and the adaptive initial guess.
        let mut v = vec![Vec3::zeros(); n];
        for i in (0..n).filter(|&i| self.w[i] > 0.0) {
            v[i] = (y[i] - x_start[i] - g * (h * h)) / h;
            let weight = if g_norm > 0.0 { (self.accel[i].dot(&g) / (g_norm * g_norm)).clamp(0.0, 1.0) } else { 0.0 };
            state.x[i] = match self.cfg.initial_guess {
                Guess::Adaptive => y[i] - g * (h * h * (1.0 - weight)),
                Guess::Inertia => y[i],
                Guess::Previous => x_start[i],
            };
        }
        let x0 = state.x.clone();
        let mut rows = self.rows(scene, &x0, &x_start, state.time);
        if self.cfg.penalty == Penalty::CompliantAlm && self.cfg.rows == Rows::Augmented {
            self.alm_rows(scene, &mut rows, h);
        }
        let mut touching: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (r, row) in rows.iter().enumerate() {
            match row.shape {
                Shape::Stick { a, b, .. } => {
                    touching[a].push(r);
                    touching[b].push(r);
                }
                Shape::Linear { a, .. } => touching[a].push(r),
            }
        }
        let inertia = |i: usize| 1.0 / (self.w[i] * h * h);
        // The rows of compliant constraints, `(row, constraint, axis)`, and their multipliers.
        let compliant: Vec<(usize, usize, usize)> = rows
            .iter()
            .enumerate()
            .filter_map(|(r, row)| match solverlab_core::rows::decode(row.id) {
                solverlab_core::rows::RowRef::Constraint { index, axis }
                    if scene.constraints[index].compliance > 0.0 =>
                {
                    Some((r, index, axis))
                }
                _ => None,
            })
            .collect();
        let mut by_constraint = vec![[0.0f64; 3]; scene.constraints.len()];
        let colours = (self.cfg.order == Sweep::Colored).then(|| colour_particles(n, &self.w, &rows));
        let mut info = SolveInfo::default();
        // Stops on `violation ≤ tolerance` (also at tolerance 0, once the violation is 0).
        let stop = Stopping::new(self.cfg.iterations as usize, Some(self.cfg.tolerance), observer.wants_violation());
        for it in stop.iterations() {
            let mut residual = 0.0f64;
            // Friction bounds: μ times the normal row's force (its multiplier, or a spring's
            // force at the current positions).
            for r in 0..rows.len() {
                if let Some((normal, mu)) = rows[r].friction {
                    let nrow = &rows[normal];
                    let pushing = if nrow.hard { nrow.lambda } else { nrow.force(nrow.value(&state.x, &x_start)) };
                    let bound = mu * pushing.abs();
                    (rows[r].fmin, rows[r].fmax) = (-bound, bound);
                }
            }
            // Primal: one block step per movable particle, in index order, or colour by colour
            // (the particles of a colour share no row, so their steps are independent).
            let step_of = |i: usize, x: &[Vec3]| block_step(&rows, &touching[i], x, &x_start, y[i], inertia(i), i);
            match &colours {
                None => {
                    for i in (0..n).filter(|&i| self.w[i] > 0.0) {
                        let (to, moved) = step_of(i, &state.x);
                        state.x[i] = to;
                        residual = crate::common::larger(residual, moved);
                    }
                }
                Some(colours) => {
                    for colour in colours {
                        let steps: Vec<(Vec3, f64)> = if colour.len() >= PARALLEL_PARTICLES {
                            use rayon::prelude::*;
                            let x = &state.x;
                            colour.par_iter().map(|&i| step_of(i, x)).collect()
                        } else {
                            colour.iter().map(|&i| step_of(i, &state.x)).collect()
                        };
                        for (&i, (to, moved)) in colour.iter().zip(steps) {
                            state.x[i] = to;
                            residual = crate::common::larger(residual, moved);
                        }
                    }
                }
            }
            // Dual: multipliers and penalties of the hard rows.
            let ramp = self.cfg.penalty == Penalty::Ramp;
            for row in rows.iter_mut().filter(|r| r.hard) {
                let c = row.value(&state.x, &x_start);
                row.lambda = row.force(c);
                if ramp && row.lambda > row.fmin && row.lambda < row.fmax {
                    row.k = (row.k + self.cfg.beta * c.abs()).min(self.cfg.k_max);
                }
            }
            // The multipliers the common violation reads, λ_pos = −h²F, of the compliant
            // constraints (the only rows whose violation reads a multiplier), by constraint.
            for &(r, j, axis) in &compliant {
                let row = &rows[r];
                let force = if row.hard { row.lambda } else { row.force(row.value(&state.x, &x_start)) };
                by_constraint[j][axis] = -h * h * force;
            }
            let lambda = |j: usize, axis: usize| by_constraint.get(j).map_or(0.0, |l| l[axis]);
            // The common violation when the observer asks for it; otherwise the stopping test
            // alone, which stops at the first row above the tolerance.
            let measured = stop.measure(|bound| violation_until(scene, &state.x, state.time, h, &lambda, bound));
            (info.iterations, info.outer, info.residual) = (it, it, residual);
            if stop.report(observer, it, 1, Residuals::max(residual), measured) {
                info.converged = measured.met;
                break;
            }
        }
        // The forces table's multipliers, λ_pos = −h²F, of every row that acts.
        self.last.clear();
        for row in &rows {
            let force = if row.hard { row.lambda } else { row.force(row.value(&state.x, &x_start)) };
            if force != 0.0 {
                self.last.push((row.id, -h * h * force));
            }
        }
        self.warm = rows.iter().filter(|r| r.hard).map(|r| (r.id, (r.lambda, r.k))).collect();
        for i in (0..n).filter(|&i| self.w[i] > 0.0) {
            self.accel[i] = ((state.x[i] - x_start[i]) / h - v[i]) / h;
        }
        Ok(info)
    }

    fn multiplier(&self, id: u64) -> f64 {
        self.last.iter().find(|(r, _)| *r == id).map_or(0.0, |(_, l)| *l)
    }

    fn rigid_contacts(&self, out: &mut Vec<solverlab_core::rigid::ContactForce>) {
        out.clear();
        out.extend_from_slice(self.rigid.contact_forces());
    }

    fn rigid_joints(&self, out: &mut Vec<solverlab_core::rigid::JointForce>) {
        out.clear();
        out.extend_from_slice(self.rigid.joint_forces());
    }

    fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        out.clear();
        out.extend(self.last.iter().copied());
    }
}
