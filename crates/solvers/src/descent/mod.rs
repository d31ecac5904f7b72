//! Block descent on particles: Vertex Block Descent (VBD) and its augmented form (AVBD), one
//! particle at a time, each a 3 × 3 Newton step on the implicit-Euler energy.
//!
//! # Algorithm
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
//! defaults β = 10⁵, α = 0.99, γ = 0.99, k in [10³, 10⁹]) and `avbd-fixed` (β = 0: the penalty
//! stays at `k_start`, only `λ` carries the constraint). Particles only: scenes with box bodies,
//! embedded points or 6-DoF rigid bodies are refused in `prepare`.
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

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use solverlab_core::constraint::for_each_contact;
use solverlab_core::metrics::{violation, violation_until};
use solverlab_core::model::{Kind, Sense};
use solverlab_core::rows::{constraint_row_id, contact_row_id, pair_row_id, tangents};
use solverlab_core::solver::{IterationReport, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{FieldError, Scene, State, Vec3};

use crate::registry::{count_of, Settings, Typed};

mod block;
use block::{block_step, colour_particles, Row, Shape, PARALLEL_PARTICLES};

/// How rigid rows are held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Rows {
    /// VBD: every row is a spring (no multipliers); rigid sticks get `stiffness`, contacts
    /// `contact_stiffness`.
    Springs,
    /// AVBD: rigid rows by augmented Lagrangian (a multiplier and a penalty per row).
    #[default]
    Augmented,
}

/// The order of the block steps in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Sweep {
    /// Particle index order, one after the other.
    #[default]
    Natural,
    /// Colour by colour (greedy colouring of the particles that share rows, per step), each
    /// colour's particles on every core: the same numbers for any thread count.
    Colored,
}

/// Where a step's iterations start (VBD §3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Guess {
    /// `x⁻ + hv + h²g·w`, `w` the last step's acceleration along gravity over `|g|`, in [0, 1].
    #[default]
    Adaptive,
    /// The inertial target `y = x⁻ + hv + h²g`.
    Inertia,
    /// The positions at the start of the step, `x⁻`.
    Previous,
}

/// The family's settings; every field has a default (the `avbd` preset's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DescentConfig {
    /// `augmented` (AVBD) or `springs` (VBD).
    pub rows: Rows,
    /// Sweeps per step, at least 1 (default 10).
    pub iterations: u32,
    /// Stop when the common violation is at most this (m); 0 runs every sweep (default 1e-9).
    pub tolerance: f64,
    /// `springs`: the stiffness of a rigid stick or pin (N/m, default 10⁶).
    pub stiffness: f64,
    /// `springs`: the stiffness of a contact (N/m, default 10⁶).
    pub contact_stiffness: f64,
    /// `augmented`: penalty growth per metre of error, `k += β|C|` (N/m², default 10⁵; 0 keeps
    /// `k` at `k_start`).
    pub beta: f64,
    /// `augmented`: the smallest and starting penalty (N/m, default 10³).
    pub k_start: f64,
    /// `augmented`: the largest penalty (N/m, default 10⁹).
    pub k_max: f64,
    /// `augmented`: error regularisation α in [0, 1] (default 0.99).
    pub alpha: f64,
    /// `augmented`: warm-start decay γ in [0, 1] (default 0.99).
    pub gamma: f64,
    /// Where the iterations start: `adaptive` (default), `inertia` or `previous`.
    pub initial_guess: Guess,
    /// The order of the block steps: `natural` (default) or `colored` (parallel).
    pub order: Sweep,
}

impl Default for DescentConfig {
    fn default() -> Self {
        Self {
            rows: Rows::Augmented,
            iterations: 10,
            tolerance: 1e-9,
            stiffness: 1e6,
            contact_stiffness: 1e6,
            beta: 1e5,
            k_start: 1e3,
            k_max: 1e9,
            alpha: 0.99,
            gamma: 0.99,
            initial_guess: Guess::Adaptive,
            order: Sweep::Natural,
        }
    }
}

impl Settings for DescentConfig {
    fn validate(&self) -> Result<(), FieldError> {
        let positive = |name: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(FieldError::new(name, format!("{v} must be a positive number")))
            }
        };
        if self.iterations < 1 {
            return Err(FieldError::new("iterations", format!("{} must be at least 1", self.iterations)));
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(FieldError::new("tolerance", format!("{} must be a finite number ≥ 0 (m)", self.tolerance)));
        }
        positive("stiffness", self.stiffness)?;
        positive("contact_stiffness", self.contact_stiffness)?;
        positive("k_start", self.k_start)?;
        positive("k_max", self.k_max)?;
        if self.k_max < self.k_start {
            return Err(FieldError::new("k_max", format!("{} is below k_start = {}", self.k_max, self.k_start)));
        }
        if !(self.beta >= 0.0 && self.beta.is_finite()) {
            return Err(FieldError::new("beta", format!("{} must be a finite number ≥ 0 (N/m²)", self.beta)));
        }
        for (name, v) in [("alpha", self.alpha), ("gamma", self.gamma)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(FieldError::new(name, format!("{v} is outside [0, 1]")));
            }
        }
        Ok(())
    }
}

/// `kind = "block_descent"`: VBD and AVBD on particles.
pub fn family() -> Typed<DescentConfig> {
    Typed {
        kind: "block_descent",
        summary: "vertex block descent: per-particle 3×3 Newton steps, springs (VBD) or augmented-Lagrangian hard rows (AVBD)",
        presets: || {
            vec![
                (
                    "vbd",
                    "VBD (Chen et al. 2024): sticks and contacts as springs of 10⁶ N/m, 10 sweeps",
                    DescentConfig { rows: Rows::Springs, ..Default::default() },
                ),
                ("avbd", "AVBD (Giles et al. 2025): penalty ramp β = 10⁵, α = γ = 0.99, 10 sweeps", DescentConfig::default()),
                (
                    "avbd-fixed",
                    "AVBD with a fixed penalty of 10⁶ N/m (β = 0): the multipliers alone hold the rows",
                    DescentConfig { beta: 0.0, k_start: 1e6, ..Default::default() },
                ),
            ]
        },
        build: |c, label| {
            c.validate()?;
            Ok(Box::new(BlockDescent::new(c.clone(), label)))
        },
        cap: |c, n| {
            c.iterations = count_of(n);
            c.tolerance = 0.0;
        },
        substeps: |_| 1,
    }
}

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
}

impl BlockDescent {
    /// A solver with checked settings `cfg`, labelled `label`.
    pub fn new(cfg: DescentConfig, label: &str) -> Self {
        Self { cfg, label: label.to_string(), w: Vec::new(), warm: HashMap::new(), accel: Vec::new(), last: Vec::new() }
    }

    /// A hard row's penalty and multiplier from the last step, decayed; a new row's start.
    fn warm_start(&self, id: u64) -> (f64, f64) {
        let c = &self.cfg;
        match self.warm.get(&id) {
            Some(&(lambda, k)) => (lambda * c.alpha * c.gamma, (k * c.gamma).clamp(c.k_start, c.k_max)),
            None => (0.0, c.k_start),
        }
    }

    /// The step's rows at the initial guess `x0`.
    fn rows(&self, scene: &Scene, x0: &[Vec3], x_start: &[Vec3], time: f64) -> Vec<Row> {
        let c = &self.cfg;
        let springs = c.rows == Rows::Springs;
        let mut rows = Vec::new();
        let push = |rows: &mut Vec<Row>, id: u64, shape: Shape, compliance: f64, fmin: f64, fmax: f64| {
            let soft = springs || compliance > 0.0;
            let (lambda, k) = if soft {
                (0.0, if compliance > 0.0 { 1.0 / compliance } else { c.stiffness })
            } else {
                self.warm_start(id)
            };
            let mut row = Row { id, shape, k, lambda, fmin, fmax, hard: !soft, offset: 0.0, friction: None };
            if row.hard {
                row.offset = c.alpha * row.value(x_start, x_start);
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
                let offset_c0 = if springs { at_start } else { at_start * (1.0 - c.alpha) };
                rows.push(Row {
                    id,
                    shape: Shape::Linear { a: i, d: k.normal, c0: offset_c0 },
                    k: pen,
                    lambda,
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
                    fmin: f64::NEG_INFINITY,
                    fmax: 0.0,
                    hard: !springs,
                    offset: 0.0,
                    friction: None,
                };
                if row.hard {
                    row.offset = c.alpha * row.value(x_start, x_start).min(0.0);
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
        if scene.has_rigid() || !scene.bodies.is_empty() || !scene.embedded.is_empty() {
            return Err(SolveError::new(
                "block_descent",
                "block descent runs particles, sticks, pins, colliders and particle contacts; box bodies, embedded \
                 points and 6-DoF rigid bodies are not supported yet",
            ));
        }
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
        for it in 1..=self.cfg.iterations as usize {
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
                        residual = crate::larger(residual, moved);
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
                            residual = crate::larger(residual, moved);
                        }
                    }
                }
            }
            // Dual: multipliers and penalties of the hard rows.
            for row in rows.iter_mut().filter(|r| r.hard) {
                let c = row.value(&state.x, &x_start);
                row.lambda = (row.k * c + row.lambda).clamp(row.fmin, row.fmax);
                if row.lambda > row.fmin && row.lambda < row.fmax {
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
            let viol = observer.wants_violation().then(|| violation(scene, &state.x, state.time, h, &lambda));
            observer.iteration(&IterationReport {
                iteration: it,
                outer: 1,
                residual,
                violation: viol,
                ..Default::default()
            });
            (info.iterations, info.outer, info.residual) = (it, it, residual);
            let tolerance = self.cfg.tolerance;
            if viol.unwrap_or_else(|| violation_until(scene, &state.x, state.time, h, &lambda, tolerance)) <= tolerance
            {
                info.converged = true;
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

    fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        out.clear();
        out.extend(self.last.iter().copied());
    }
}
