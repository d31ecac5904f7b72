//! Sequential impulses / projected Gauss-Seidel at the velocity level, with warm starting,
//! Baumgarte or soft (frequency, damping ratio) position feedback, an optional unbiased relax
//! pass, Coulomb friction and restitution.
//!
//! # Algorithm
//!
//! After the shared Verlet prediction `x̂` (so `x*` holds the start-of-step positions), per step:
//!
//! 1. Velocities `v = (x̂ − x*)/h`, which is `(1 − damping)(x − x*)/h + a·h` of the issue.
//! 2. Rows at the start-of-step positions `x*` ([`solverlab_core::rows::gather_rows`]): sticks,
//!    pins, and speculative contacts (a contact is included while its gap is below
//!    `h·|v| + slop`). A contact with friction μ > 0 adds two tangent rows.
//! 3. Per row, from `K = J W Jᵀ`, the update `Δλ = −m·s_m·(J v + b) − s_i·λ`:
//!    * compliant rows (`α > 0`): the implicit spring `m = 1/(K + γ)`, `γ = α/h²`, `b = C/h`,
//!      `s_m = 1`, `s_i = γ·m` (Catto 2011, "Soft constraints"; the velocity form of XPBD);
//!    * `baumgarte`: `m = 1/K`, `b = β·C/h` for equalities; for contacts `b = C/h` while
//!      separated (speculative) and `b = max(β·(C + slop)/h, −max_push)` when penetrating;
//!    * `soft`: with `ω = 2πf`, `a₁ = 2ζ + hω`, `a₂ = hω·a₁`: `b = (ω/a₁)·C`,
//!      `s_m = a₂/(1 + a₂)`, `s_i = 1/(1 + a₂)` (Catto, Solver2D 2024; Box2D v3), with joint
//!      (`joint_hertz`, `joint_damping_ratio`) and contact (`contact_hertz`, …) settings;
//!    * moving pin targets add `∂C/∂t` to `b`.
//! 4. Warm start: `λ = warm_start · λ_previous` matched by row id, applied as `v += W Jᵀ λ`.
//! 5. `iterations` sweeps in the chosen [`Order`]: each row's `Δλ` (scaled by SOR `ω`) is added
//!    to the accumulated `λ`, which is clamped (`λₙ ≥ 0`; the tangent pair to the disk
//!    `|λₜ| ≤ μ·λₙ`); the clamped change is applied, `v += W Jᵀ Δλ`. Friction rows of a contact are
//!    visited just before its normal row.
//! 6. Positions: `x = x̂ + h·(v − v₀)`, which is `x* + h·v`; unconstrained particles keep `x̂`
//!    exactly, so without constraints the trajectory is the relax solver's.
//! 7. `relax_iterations` unbiased sweeps (`b` = speculative part only, `s_m = 1`, `s_i = 0`) and
//!    one restitution sweep (normal rows with `e > 0` that approached faster than
//!    `restitution_threshold` target `J v = −e·(J v)₀`) change velocities only: `x*` is moved to
//!    `x − h·v`, so the Verlet state carries the new velocity into the next step.
//! 8. The accumulated `λ` are kept by row id for the next step's warm start.
//!
//! Loops per step: one pass over constraints and particles × colliders to gather rows, one over
//! rows to prepare and warm start, `iterations + relax_iterations (+1)` sweeps over rows, one
//! pass over particles to integrate.
//!
//! # Residual
//!
//! The natural (projected) velocity residual of each row when the sweep visits it, before its
//! update: `|Δλ|/(m·s_m)` with `Δλ` the clamped, unrelaxed change (m/s). For an unclamped
//! row this is `|J v + b + (s_i/(m·s_m))·λ|`; for a row at its bound it is the part of the
//! violation the bound cannot absorb. The reported `residual` is the maximum over rows;
//! `residual_rms` is the root mean square, and `delta_lambda` is `‖Δλ‖₂` of the applied changes
//! (N·s). With `violation` requested, the position violation the step would leave if it ended
//! at that iteration (`x* + h·v`).
//!
//! # References
//!
//! * E. Catto, "Iterative Dynamics with Temporal Coherence", GDC 2005: sequential impulses,
//!   accumulated clamped impulses, warm starting.
//! * E. Catto, "Soft Constraints", GDC 2011; "Solver2D" (2024) and Box2D v3: soft step, relax
//!   iterations, frequency and damping ratio.
//! * Bullet Physics `btSequentialImpulseConstraintSolver`: warm-start factor 0.85, ERP 0.2.
//! * Constraint tutorial (seed 004 in `shared/seeds/`): PGS equals sequential impulses.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use solverlab_core::metrics::max_violation;
use solverlab_core::rng::Rng;
use solverlab_core::rows::{gather_rows, tangents, Row, RowKind, ROW_PARTICLES};
use solverlab_core::solver::{IterationReport, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{Scene, State, Vec3};

use crate::order::{Order, Ordering};
use crate::ConfigError;

/// How position error feeds back into the velocity solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    /// Baumgarte: a fraction `β` of the error per step, as a velocity bias.
    Baumgarte,
    /// Soft constraints given as a frequency and a damping ratio (Box2D v3, Rapier).
    Soft,
}

/// Settings of the PGS solver; every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PgsConfig {
    /// Biased sweeps per step, at least 1 (default: 10).
    pub iterations: i64,
    /// Unbiased relax sweeps after the position update, Box2D's soft step (default: 0).
    pub relax_iterations: i64,
    /// Stop the biased sweeps when the residual is at most this (m/s); 0 disables (default: 0).
    pub tolerance: f64,
    /// SOR factor ω in (0, 2) applied to each impulse change (default: 1).
    pub omega: f64,
    /// Visiting order (default: `natural`).
    pub order: Order,
    /// Seed of the `shuffled` order (default: 0).
    pub seed: u64,
    /// Fraction in [0, 1] of the previous step's impulses to start from (default: 1; Bullet 0.85).
    pub warm_start: f64,
    /// `baumgarte` or `soft` (default: `baumgarte`).
    pub feedback: Feedback,
    /// Baumgarte factor β in [0, 1]: the fraction of the position error removed per step
    /// (default: 0.2, Bullet's ERP).
    pub baumgarte: f64,
    /// Penetration allowed without correction (m) (default: 0.005).
    pub slop: f64,
    /// Soft contacts: stiffness frequency (Hz) (default: 30).
    pub contact_hertz: f64,
    /// Soft contacts: damping ratio (default: 10).
    pub contact_damping_ratio: f64,
    /// Soft joints (equality rows): stiffness frequency (Hz) (default: 60).
    pub joint_hertz: f64,
    /// Soft joints: damping ratio (default: 2).
    pub joint_damping_ratio: f64,
    /// Largest speed at which penetration is pushed out (m/s) (default: 3).
    pub max_push: f64,
    /// Contacts approaching slower than this (m/s) do not bounce (default: 1).
    pub restitution_threshold: f64,
    /// Substeps the runner uses when none are given on the command line (default: 1).
    pub substeps: i64,
}

impl Default for PgsConfig {
    fn default() -> Self {
        Self {
            iterations: 10,
            relax_iterations: 0,
            tolerance: 0.0,
            omega: 1.0,
            order: Order::Natural,
            seed: 0,
            warm_start: 1.0,
            feedback: Feedback::Baumgarte,
            baumgarte: 0.2,
            slop: 0.005,
            contact_hertz: 30.0,
            contact_damping_ratio: 10.0,
            joint_hertz: 60.0,
            joint_damping_ratio: 2.0,
            max_push: 3.0,
            restitution_threshold: 1.0,
            substeps: 1,
        }
    }
}

impl PgsConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |f: &str, p: String| Err(ConfigError::new(f, p));
        if self.iterations < 1 {
            return err("iterations", format!("{} must be at least 1", self.iterations));
        }
        if self.relax_iterations < 0 {
            return err("relax_iterations", format!("{} must be ≥ 0", self.relax_iterations));
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return err("tolerance", format!("{} must be a finite number ≥ 0 (m/s)", self.tolerance));
        }
        if !(self.omega > 0.0 && self.omega < 2.0) {
            return err("omega", format!("{} is outside (0, 2)", self.omega));
        }
        if !(0.0..=1.0).contains(&self.warm_start) {
            return err("warm_start", format!("{} is outside [0, 1]", self.warm_start));
        }
        if !(0.0..=1.0).contains(&self.baumgarte) {
            return err("baumgarte", format!("{} is outside [0, 1]", self.baumgarte));
        }
        for (f, v) in [
            ("slop", self.slop),
            ("contact_hertz", self.contact_hertz),
            ("contact_damping_ratio", self.contact_damping_ratio),
            ("joint_hertz", self.joint_hertz),
            ("joint_damping_ratio", self.joint_damping_ratio),
            ("max_push", self.max_push),
            ("restitution_threshold", self.restitution_threshold),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return err(f, format!("{v} must be a finite number ≥ 0"));
            }
        }
        if self.feedback == Feedback::Soft && (self.contact_hertz == 0.0 || self.joint_hertz == 0.0) {
            return err("contact_hertz", "soft feedback needs positive frequencies".into());
        }
        if self.substeps < 1 {
            return err("substeps", format!("{} must be at least 1", self.substeps));
        }
        Ok(())
    }
}

/// One prepared velocity row.
#[derive(Clone, Copy, Debug)]
struct VRow {
    id: u64,
    n: usize,
    p: [usize; ROW_PARTICLES],
    j: [Vec3; ROW_PARTICLES],
    /// Effective mass `1/(K + γ)`; 0 when nothing can move.
    m: f64,
    mass_scale: f64,
    impulse_scale: f64,
    bias: f64,
    /// Bias used by relax sweeps (speculative part and `∂C/∂t` only).
    relax_bias: f64,
    lo: f64,
    hi: f64,
    lambda: f64,
    /// `J v` before warm starting, for restitution.
    vn0: f64,
    restitution: f64,
}

/// What a sweep visits: one row, or the two tangent rows of a contact (`t1`, `t1 + 1`) limited by
/// its normal row.
#[derive(Clone, Copy, Debug)]
enum Item {
    Single(usize),
    Friction { t1: usize, normal: usize, mu: f64 },
}

/// Soft-constraint coefficients `(bias_rate, mass_scale, impulse_scale)` for frequency `hz`,
/// damping ratio `zeta` and step `h`.
fn soft(hz: f64, zeta: f64, h: f64) -> (f64, f64, f64) {
    let omega = std::f64::consts::TAU * hz;
    let a1 = 2.0 * zeta + h * omega;
    let a2 = h * omega * a1;
    (omega / a1, a2 / (1.0 + a2), 1.0 / (1.0 + a2))
}

/// The PGS solver. Build it with [`PgsSolver::new`].
pub struct PgsSolver {
    cfg: PgsConfig,
    label: String,
    w: Vec<f64>,
    rows: Vec<Row>,
    vrows: Vec<VRow>,
    items: Vec<Item>,
    item_ids: Vec<u64>,
    ordering: Ordering,
    rng: Rng,
    v: Vec<Vec3>,
    v0: Vec<Vec3>,
    warm: HashMap<u64, f64>,
}

impl PgsSolver {
    /// A solver with validated settings, labelled `label` in outputs.
    pub fn new(cfg: PgsConfig, label: impl Into<String>) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let rng = Rng::new(cfg.seed);
        Ok(Self {
            cfg,
            label: label.into(),
            w: Vec::new(),
            rows: Vec::new(),
            vrows: Vec::new(),
            items: Vec::new(),
            item_ids: Vec::new(),
            ordering: Ordering::default(),
            rng,
            v: Vec::new(),
            v0: Vec::new(),
            warm: HashMap::new(),
        })
    }

    fn apply(&mut self, r: usize, dl: f64) {
        let row = &self.vrows[r];
        for k in 0..row.n {
            let i = row.p[k];
            self.v[i] += row.j[k] * (self.w[i] * dl);
        }
    }

    fn jv(&self, r: usize) -> f64 {
        let row = &self.vrows[r];
        (0..row.n).map(|k| row.j[k].dot(&self.v[row.p[k]])).sum()
    }

    /// Builds the velocity rows of this step from the gathered position rows.
    fn prepare_rows(&mut self, h: f64) {
        let cfg = &self.cfg;
        self.vrows.clear();
        self.items.clear();
        let (joint_rate, joint_ms, joint_is) = soft(cfg.joint_hertz.max(1e-12), cfg.joint_damping_ratio, h);
        let (contact_rate, contact_ms, contact_is) = soft(cfg.contact_hertz.max(1e-12), cfg.contact_damping_ratio, h);
        for row in &self.rows {
            let k = row.w_grad2(&self.w);
            let mut vr = VRow {
                id: row.id,
                n: row.n,
                p: row.particles,
                j: row.grad,
                m: 0.0,
                mass_scale: 1.0,
                impulse_scale: 0.0,
                bias: 0.0,
                relax_bias: row.dc_dt,
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
                lambda: 0.0,
                vn0: 0.0,
                restitution: 0.0,
            };
            let c = row.c;
            if row.compliance > 0.0 {
                let gamma = row.compliance / (h * h);
                vr.m = 1.0 / (k + gamma);
                vr.impulse_scale = gamma * vr.m;
                vr.bias = c / h + row.dc_dt;
                vr.relax_bias = vr.bias;
            } else if k > 0.0 {
                vr.m = 1.0 / k;
                match (row.kind, cfg.feedback) {
                    (RowKind::Equality, Feedback::Baumgarte) => vr.bias = cfg.baumgarte * c / h + row.dc_dt,
                    (RowKind::Equality, Feedback::Soft) => {
                        vr.bias = joint_rate * c + row.dc_dt;
                        vr.mass_scale = joint_ms;
                        vr.impulse_scale = joint_is;
                    }
                    (RowKind::Inequality, _) if c > 0.0 => {
                        vr.bias = c / h;
                        vr.relax_bias = c / h;
                    }
                    (RowKind::Inequality, Feedback::Baumgarte) => {
                        vr.bias = (cfg.baumgarte * (c + cfg.slop).min(0.0) / h).max(-cfg.max_push)
                    }
                    (RowKind::Inequality, Feedback::Soft) => {
                        vr.bias = (contact_rate * (c + cfg.slop).min(0.0)).max(-cfg.max_push);
                        vr.mass_scale = contact_ms;
                        vr.impulse_scale = contact_is;
                    }
                }
            }
            if row.kind == RowKind::Inequality {
                vr.lo = 0.0;
            }
            let normal = self.vrows.len();
            match row.contact {
                Some(info) if info.friction > 0.0 && vr.m > 0.0 => {
                    // Two tangent rows first, then the normal row. The row's gradient on
                    // particle k is cₖ·n (cₖ = 1 for a particle, the weight for an embedded
                    // point), so the tangent rows are cₖ·t.
                    let (t1, t2) = tangents(&info.normal);
                    for (dir, t) in [(1u64, t1), (2, t2)] {
                        let mut j = [Vec3::zeros(); ROW_PARTICLES];
                        let mut k_t = 0.0;
                        for (k, jk) in j.iter_mut().enumerate().take(row.n) {
                            *jk = t * row.grad[k].dot(&info.normal);
                            k_t += self.w[row.particles[k]] * jk.norm_squared();
                        }
                        self.vrows.push(VRow {
                            id: row.id + dir,
                            j,
                            m: if k_t > 0.0 { 1.0 / k_t } else { 0.0 },
                            mass_scale: 1.0,
                            impulse_scale: 0.0,
                            bias: 0.0,
                            relax_bias: 0.0,
                            lo: f64::NEG_INFINITY,
                            hi: f64::INFINITY,
                            restitution: 0.0,
                            ..vr
                        });
                    }
                    vr.restitution = info.restitution;
                    self.vrows.push(vr);
                    self.items.push(Item::Friction { t1: normal, normal: normal + 2, mu: info.friction });
                    self.items.push(Item::Single(normal + 2));
                }
                _ => {
                    vr.restitution = row.contact.map_or(0.0, |i| i.restitution);
                    self.vrows.push(vr);
                    self.items.push(Item::Single(normal));
                }
            }
        }
    }

    /// One sweep; `relax` uses the unbiased coefficients. Returns (max, sum of squares, count,
    /// Σ Δλ²) of the residuals.
    fn sweep(&mut self, relax: bool) -> (f64, f64, usize, f64) {
        let omega = self.cfg.omega;
        let (mut max, mut sum2, mut count, mut dl2) = (0.0f64, 0.0, 0usize, 0.0);
        let mut ordering = std::mem::take(&mut self.ordering);
        for pass in ordering.passes(&mut self.rng) {
            for &it in pass {
                match self.items[it] {
                    Item::Single(r) => {
                        let row = self.vrows[r];
                        if row.m == 0.0 {
                            continue;
                        }
                        let (bias, ms, is) = if relax {
                            (row.relax_bias, 1.0, 0.0)
                        } else {
                            (row.bias, row.mass_scale, row.impulse_scale)
                        };
                        let raw = -row.m * ms * (self.jv(r) + bias) - is * row.lambda;
                        let target = (row.lambda + raw).clamp(row.lo, row.hi);
                        let res = (target - row.lambda).abs() / (row.m * ms);
                        let new = (row.lambda + omega * (target - row.lambda)).clamp(row.lo, row.hi);
                        let dl = new - row.lambda;
                        self.vrows[r].lambda = new;
                        self.apply(r, dl);
                        max = max.max(res);
                        sum2 += res * res;
                        count += 1;
                        dl2 += dl * dl;
                    }
                    Item::Friction { t1, normal, mu } => {
                        let limit = mu * self.vrows[normal].lambda;
                        let (a, b) = (self.vrows[t1], self.vrows[t1 + 1]);
                        let old = [a.lambda, b.lambda];
                        let raw = [old[0] - a.m * self.jv(t1), old[1] - b.m * self.jv(t1 + 1)];
                        let clamp = |l: [f64; 2]| {
                            let norm = (l[0] * l[0] + l[1] * l[1]).sqrt();
                            if norm > limit {
                                let s = if norm > 0.0 { limit / norm } else { 0.0 };
                                [l[0] * s, l[1] * s]
                            } else {
                                l
                            }
                        };
                        let target = clamp(raw);
                        let res = ((target[0] - old[0]).powi(2) + (target[1] - old[1]).powi(2)).sqrt() / a.m;
                        let new = clamp([old[0] + omega * (target[0] - old[0]), old[1] + omega * (target[1] - old[1])]);
                        for (k, r) in [t1, t1 + 1].into_iter().enumerate() {
                            let dl = new[k] - old[k];
                            self.vrows[r].lambda = new[k];
                            self.apply(r, dl);
                            dl2 += dl * dl;
                        }
                        max = max.max(res);
                        sum2 += res * res;
                        count += 1;
                    }
                }
            }
        }
        self.ordering = ordering;
        (max, sum2, count, dl2)
    }
}

impl Solver for PgsSolver {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        self.w = scene.inverse_masses();
        self.v = vec![Vec3::zeros(); scene.particles.len()];
        self.warm.clear();
        self.item_ids.clear();
        self.rng = Rng::new(self.cfg.seed);
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
        if self.w.len() != scene.particles.len() {
            self.prepare(scene)?;
        }
        // 1. Velocities.
        for ((v, x), xp) in self.v.iter_mut().zip(&state.x).zip(&state.x_prev) {
            *v = (x - xp) / h;
        }
        self.v0.clone_from(&self.v);
        // 2–3. Rows at the start-of-step positions, with speculative margins.
        let slop = self.cfg.slop;
        let speeds: Vec<f64> = self.v.iter().map(|v| v.norm() * h + slop).collect();
        let max_speed = speeds.iter().copied().fold(slop, f64::max);
        let mut rows = std::mem::take(&mut self.rows);
        gather_rows(scene, &state.x_prev, state.time - h, 2.0 * max_speed, |i| speeds[i], &mut rows);
        self.rows = rows;
        self.prepare_rows(h);
        for r in 0..self.vrows.len() {
            self.vrows[r].vn0 = self.jv(r);
        }
        // The order is rebuilt only when the set of rows changes.
        let ids: Vec<u64> = self.vrows.iter().map(|r| r.id).collect();
        if ids != self.item_ids {
            let pairs: Vec<[usize; 2]> = self
                .items
                .iter()
                .map(|it| match *it {
                    Item::Single(r) | Item::Friction { normal: r, .. } => {
                        let row = &self.vrows[r];
                        [row.p[0], row.p[if row.n == 2 { 1 } else { 0 }]]
                    }
                })
                .collect();
            self.ordering = Ordering::new(self.cfg.order, &pairs, scene.particles.len());
            self.item_ids = ids;
        }
        // 4. Warm start.
        if self.cfg.warm_start > 0.0 {
            for r in 0..self.vrows.len() {
                if let Some(&l) = self.warm.get(&self.vrows[r].id) {
                    let l = l * self.cfg.warm_start;
                    self.vrows[r].lambda = l;
                    self.apply(r, l);
                }
            }
        }
        // 5. Biased sweeps.
        let mut info = SolveInfo::default();
        let want_violation = observer.wants_violation();
        let n_iter = self.cfg.iterations as usize;
        for it in 1..=n_iter {
            let (max, sum2, count, dl2) = self.sweep(false);
            info.iterations = it;
            info.residual = max;
            let violation = want_violation.then(|| {
                let x: Vec<Vec3> = (0..state.x.len()).map(|i| state.x[i] + (self.v[i] - self.v0[i]) * h).collect();
                max_violation(scene, &x, state.time)
            });
            observer.iteration(&IterationReport {
                iteration: it,
                outer: 1,
                residual: max,
                residual_rms: Some(if count > 0 { (sum2 / count as f64).sqrt() } else { 0.0 }),
                delta_lambda: Some(dl2.sqrt()),
                violation,
            });
            if self.cfg.tolerance > 0.0 && max <= self.cfg.tolerance {
                info.converged = true;
                break;
            }
        }
        // 6. Positions.
        for i in 0..state.x.len() {
            state.x[i] += (self.v[i] - self.v0[i]) * h;
        }
        // 7. Relax and restitution change velocities only.
        let v_solved = self.v.clone();
        for _ in 0..self.cfg.relax_iterations {
            self.sweep(true);
        }
        for r in 0..self.vrows.len() {
            let row = self.vrows[r];
            if row.restitution > 0.0 && row.m > 0.0 && row.vn0 < -self.cfg.restitution_threshold {
                let new = (row.lambda - row.m * (self.jv(r) + row.restitution * row.vn0)).max(0.0);
                self.vrows[r].lambda = new;
                self.apply(r, new - row.lambda);
            }
        }
        for ((xp, v), vs) in state.x_prev.iter_mut().zip(&self.v).zip(&v_solved) {
            *xp -= (v - vs) * h;
        }
        // 8. Keep the impulses for the next warm start.
        self.warm.clear();
        self.warm.extend(self.vrows.iter().map(|r| (r.id, r.lambda)));
        Ok(info)
    }
}
