//! Jakobsen relaxation: Verlet plus projection, in Gauss-Seidel and Jacobi form, with
//! over-relaxation, the square-root approximation, PBD stiffness and XPBD compliance.
//!
//! # Algorithm
//!
//! After the shared Verlet prediction, per step:
//!
//! 1. Reset every row's multiplier `λ = 0` (XPBD accumulates `λ` over the step; PBD does not).
//! 2. For each iteration `1..=iterations`:
//!    1. Colliders, as in the seed's stick-in-box listing (box first, then sticks): every movable
//!       particle below a plane, inside a sphere or a block, or outside the box is projected to the surface
//!       along the normal, and Jakobsen's friction shrinks its tangential displacement by
//!       `μ·depth` without reversing it ([`seed_friction`]). Then particle-particle contacts
//!       (particles with a radius, pairs found once per step by the uniform-grid broadphase):
//!       overlapping pairs are pushed apart, mass-weighted, Gauss-Seidel in pair order. Then
//!       embedded points (`p = Σ cₖxₖ`, Jakobsen §5) are pushed out of the colliders by moving
//!       their particles in proportion to `wₖcₖ`, and box bodies' vertex-face contacts
//!       ([`solverlab_core::bodies`]) push corner and face apart, each re-evaluated at the
//!       current positions, with the seed's friction on the two bodies' relative tangential
//!       motion ([`row_friction`]).
//!    2. Constraints (sticks, min/max sticks, pins on movable particles), each row by the update
//!       of [`solverlab_core::constraint`]:
//!       `Δλ = (−C − α̃λ)/(Σwᵢ|∇ᵢC|² + α̃)`, then `Δλ ← k·ω·Δλ`, `λ += Δλ`, `Δxᵢ = wᵢ∇ᵢC·Δλ`.
//!       * **Gauss-Seidel** applies each `Δx` at once, in the chosen [`Order`].
//!       * **Jacobi** computes every row from the positions at the start of the sweep, sums the
//!         corrections per particle, and applies `ω·Σ Δx / nᵢ`, where `nᵢ` counts the rows that
//!         acted on particle `i` in the sweep (Müller et al. 2007, §3.5 averaging). XPBD's `λ`
//!         grows by `ω·Δλ / max(nₐ, n_b)`, the share that was applied. The two ends of a row are
//!         divided by different counts when their particles take part in different numbers of
//!         rows, so averaged Jacobi conserves linear momentum only where the counts are equal
//!         (a free tetrahedron, a closed ring), not in general; mass splitting (Tonge 2012)
//!         would fix that and is not implemented.
//!    3. Stop early when the iteration's residual is at most `tolerance`.
//! 3. Restitution ([`solverlab_core::integrate::apply_restitution`], shared with CG and
//!    direct): a particle that hit a collider with restitution `e > 0` faster than `2|g|h` gets
//!    its normal velocity set to `−e` times its predicted approach velocity.
//!
//! Stiffness: with `xpbd = false` (PBD), each projection moves a fraction `k = stiffness` of the
//! way and constraint compliance is ignored; the stiffness then depends on the iteration count,
//! which is the point of the PBD-versus-XPBD figures. `stiffness_correction = true` uses PBD's
//! `k' = 1 − (1 − k)^(1/n)` (Müller et al. 2007, §3.3) so that the error left after `n`
//! iterations is the same as after one with `k`. With `xpbd = true`, `α̃ = α/h²` per constraint
//! and `λ` is accumulated, so the stiffness does not depend on the iteration count.
//!
//! Loops per iteration: one pass over movable particles × colliders, one pass over constraints
//! (Jacobi: plus one pass over particles to apply the averages, and one over rows for `λ`).
//!
//! # Residual
//!
//! The residual of an iteration is the largest correction any row asked for when it was visited,
//! in metres of `C`: `max_j |Δλ_j|·(Σwᵢ|∇ᵢC_j|² + α̃_j)` before `k` and `ω` scale it, which is
//! `|C_j + α̃_j λ_j|` for an equality row (`|C_j|` under PBD), the clamped step for an inequality
//! row (the penetration `max(0, −C_j)` under PBD), and the penetration depth for a collider. Rows
//! whose particles are all immovable cannot move and are left out. Under Gauss-Seidel each row
//! is measured after the rows before it in the sweep have moved, so a residual below `tolerance`
//! means every row was within it when visited.
//!
//! # References
//!
//! * T. Jakobsen, "Advanced Character Physics", GDC 2001 (the seed article): Verlet, projection,
//!   relaxation, the square-root approximation, soft constraints, friction.
//! * M. Müller, B. Heidelberger, M. Hennix, J. Ratcliff, "Position Based Dynamics", VRIPHYS 2006
//!   (JVCIR 2007): stiffness `k` and its iteration-count correction; Jacobi averaging.
//! * M. Macklin, M. Müller, N. Chentanez, "XPBD: Position-Based Simulation of Compliant
//!   Constrained Dynamics", MIG 2016: compliance and the accumulated multiplier.
//! * W. H. Press et al., "Numerical Recipes", §19.5: successive over-relaxation.

use serde::{Deserialize, Serialize};
use solverlab_core::constraint::{delta_lambda, for_each_contact, row_friction, seed_friction, stick_row};
use solverlab_core::metrics::max_violation;
use solverlab_core::model::{Kind, Scene, Sense, State};
use solverlab_core::rng::Rng;
use solverlab_core::solver::{IterationReport, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::Vec3;

use crate::order::{Order, Ordering};
use crate::ConfigError;

/// Gauss-Seidel (in place) or Jacobi (simultaneous, averaged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Each projection sees the ones before it.
    GaussSeidel,
    /// Every projection sees the positions at the start of the sweep.
    Jacobi,
}

/// Settings of the relaxation solver. Every field has a default, so a TOML table may name only
/// what it changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RelaxConfig {
    /// `gauss_seidel` or `jacobi` (default: `gauss_seidel`).
    pub mode: Mode,
    /// Maximum sweeps per step, at least 1 (default: 10). Symmetric order counts a forward and a
    /// backward sweep as one iteration.
    pub iterations: i64,
    /// Stop when the residual (see the module docs) is at most this, in metres; 0 turns the
    /// early exit off (default: 0).
    pub tolerance: f64,
    /// Relaxation factor ω in (0, 2): below 1 under-relaxes, above 1 over-relaxes (SOR)
    /// (default: 1). Colliders are always projected with ω = 1, so that SOR never pushes a
    /// particle out past a surface.
    pub omega: f64,
    /// Gauss-Seidel visiting order (default: `natural`); ignored by Jacobi.
    pub order: Order,
    /// Seed of the `shuffled` order and of the dislocation of coinciding particles (default: 0).
    pub seed: u64,
    /// Jakobsen's square-root approximation `ℓ ≈ (rest² + d·d)/(2·rest)` (default: false).
    pub sqrt_approx: bool,
    /// PBD stiffness `k` in (0, 1]: the fraction of each correction applied (default: 1).
    pub stiffness: f64,
    /// Use `k' = 1 − (1 − k)^(1/n)` so that `n` iterations act like one with `k` (default: false).
    pub stiffness_correction: bool,
    /// XPBD: use each constraint's compliance and accumulate `λ` over the step (default: false).
    pub xpbd: bool,
}

impl Default for RelaxConfig {
    fn default() -> Self {
        Self {
            mode: Mode::GaussSeidel,
            iterations: 10,
            tolerance: 0.0,
            omega: 1.0,
            order: Order::Natural,
            seed: 0,
            sqrt_approx: false,
            stiffness: 1.0,
            stiffness_correction: false,
            xpbd: false,
        }
    }
}

impl RelaxConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.iterations < 1 {
            return Err(ConfigError::new("iterations", format!("{} must be at least 1", self.iterations)));
        }
        if !(self.omega > 0.0 && self.omega < 2.0) {
            return Err(ConfigError::new(
                "omega",
                format!("{} is outside (0, 2), where relaxation can converge", self.omega),
            ));
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(ConfigError::new("tolerance", format!("{} must be a finite number ≥ 0 (m)", self.tolerance)));
        }
        if !(self.stiffness > 0.0 && self.stiffness <= 1.0) {
            return Err(ConfigError::new("stiffness", format!("{} is outside (0, 1]", self.stiffness)));
        }
        Ok(())
    }
}

/// One row group the sweep visits: a stick (one row) or a pin on a movable particle (three).
///
/// Kept small (32 bytes) because a sweep streams through all of them: pin data lives out of line
/// in [`PinData`], and indices are `u32`.
#[derive(Clone, Copy, Debug)]
enum Item {
    Stick { a: u32, b: u32, row: u32, sense: Sense, rest: f64, alpha: f64 },
    Pin { pin: u32, row: u32 },
}

const _: () = assert!(std::mem::size_of::<Item>() <= 32, "a sweep streams through every Item");

/// A pin on a movable particle.
#[derive(Clone, Copy, Debug)]
struct PinData {
    a: usize,
    target: Vec3,
    velocity: Vec3,
    alpha: f64,
}

/// The relaxation solver. Build it with [`RelaxSolver::new`].
pub struct RelaxSolver {
    cfg: RelaxConfig,
    label: String,
    items: Vec<Item>,
    pins: Vec<PinData>,
    w: Vec<f64>,
    radius: Vec<f64>,
    lambda: Vec<f64>,
    ordering: Ordering,
    rng: Rng,
    // Jacobi scratch.
    dx: Vec<Vec3>,
    count: Vec<u32>,
    dl: Vec<f64>,
    // Restitution scratch.
    predicted: Vec<Vec3>,
}

impl RelaxSolver {
    /// A solver with validated settings, labelled `label` in outputs.
    pub fn new(cfg: RelaxConfig, label: impl Into<String>) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let rng = Rng::new(cfg.seed);
        Ok(Self {
            cfg,
            label: label.into(),
            items: Vec::new(),
            pins: Vec::new(),
            w: Vec::new(),
            radius: Vec::new(),
            lambda: Vec::new(),
            ordering: Ordering::default(),
            rng,
            dx: Vec::new(),
            count: Vec::new(),
            dl: Vec::new(),
            predicted: Vec::new(),
        })
    }

    fn particles_of(&self, item: &Item) -> [usize; 2] {
        match *item {
            Item::Stick { a, b, .. } => [a as usize, b as usize],
            Item::Pin { pin, .. } => [self.pins[pin as usize].a; 2],
        }
    }

    /// The settings.
    pub fn config(&self) -> &RelaxConfig {
        &self.cfg
    }

    /// Projects every particle-particle contact of `pairs` once, Gauss-Seidel, mass-weighted:
    /// `C = |xⱼ − xᵢ| − (rᵢ + rⱼ) ≥ 0`, like a min-distance stick. Returns the deepest overlap.
    fn project_pairs(&self, state: &mut State, pairs: &[(usize, usize)]) -> f64 {
        let mut worst: f64 = 0.0;
        for &(i, j) in pairs {
            let rest = self.radius[i] + self.radius[j];
            let r = stick_row(&state.x[i], &state.x[j], rest, Sense::AtLeast, false, Vec3::y);
            let dl = delta_lambda(r.c, self.w[i] + self.w[j], 0.0, 0.0, true);
            if dl > 0.0 {
                worst = worst.max(-r.c);
                state.x[i] -= r.normal * (self.w[i] * dl);
                state.x[j] += r.normal * (self.w[j] * dl);
            }
        }
        worst
    }

    /// Projects every embedded point against the colliders once: for `p = Σ cₖxₖ` and a face with
    /// normal `n` and `C = n·p − … < 0`,
    ///
    /// ```text
    /// Δλ = −C / Σ wₖcₖ²,    xₖ += wₖ cₖ n Δλ     ⇒   p moves by −C·n exactly
    /// ```
    ///
    /// (the seed's §5 correction `λ = 1/Σcᵢ²`, mass-weighted), then Jakobsen's friction on each
    /// particle with the depth times its weight. Returns the deepest penetration.
    fn project_embedded(&self, scene: &Scene, state: &mut State) -> f64 {
        let mut worst: f64 = 0.0;
        for e in &scene.embedded {
            let denom: f64 = (0..e.count).map(|k| self.w[e.particles[k]] * e.weights[k] * e.weights[k]).sum();
            if denom == 0.0 {
                continue;
            }
            let p = e.position(&state.x);
            for_each_contact(scene, &p, 0.0, 0.0, |c| {
                // Re-evaluated at the moving point: an earlier face may already have pushed it.
                let depth = -c.normal.dot(&(e.position(&state.x) - p)) - c.c;
                if depth <= 0.0 {
                    return;
                }
                worst = worst.max(depth);
                let dl = depth / denom;
                for k in 0..e.count {
                    let i = e.particles[k];
                    state.x[i] += c.normal * (self.w[i] * e.weights[k] * dl);
                    let share = depth * e.weights[k].max(0.0);
                    state.x_prev[i] = seed_friction(&state.x[i], &state.x_prev[i], &c.normal, share, c.friction);
                }
            });
        }
        worst
    }

    /// Projects every vertex-face contact between box bodies once ([`solverlab_core::bodies`]):
    /// `Δλ = −C / (Σ wᴬcᴬ² + Σ wᴮcᴮ²)`, the corner's particles move by `wcn·Δλ` and the face's by
    /// `−wcn·Δλ`, so `p` and `q` meet (the seed's §5, both bodies moving). Returns the deepest
    /// penetration.
    fn project_bodies(&self, scene: &Scene, state: &mut State) -> f64 {
        let mut worst: f64 = 0.0;
        for k in solverlab_core::bodies::contacts(&scene.bodies, &state.x, 0.0) {
            let (pa, pb) = (scene.bodies[k.a].particles, scene.bodies[k.b].particles);
            let denom: f64 =
                (0..4).map(|m| self.w[pa[m]] * k.weights_a[m].powi(2) + self.w[pb[m]] * k.weights_b[m].powi(2)).sum();
            // C at the current positions: an earlier row of this sweep (often the same contact
            // seen from the other body) may already have separated them.
            let p: Vec3 = (0..4).map(|m| state.x[pa[m]] * k.weights_a[m]).sum();
            let q: Vec3 = (0..4).map(|m| state.x[pb[m]] * k.weights_b[m]).sum();
            let c = k.normal.dot(&(p - q));
            if c >= 0.0 || denom == 0.0 {
                continue;
            }
            worst = worst.max(-c);
            let dl = -c / denom;
            for m in 0..4 {
                state.x[pa[m]] += k.normal * (self.w[pa[m]] * k.weights_a[m] * dl);
                state.x[pb[m]] -= k.normal * (self.w[pb[m]] * k.weights_b[m] * dl);
            }
            let mu = scene.bodies[k.a].friction.min(scene.bodies[k.b].friction);
            let particles = [pa, pb].concat();
            let coeffs = [k.weights_a, k.weights_b.map(|c| -c)].concat();
            row_friction(&state.x, &mut state.x_prev, &self.w, &particles, &coeffs, &k.normal, -c, mu);
        }
        worst
    }

    /// Projects every collider once (step 2.1). Returns the deepest penetration found.
    fn project_colliders(&self, scene: &Scene, state: &mut State) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..state.x.len() {
            if self.w[i] == 0.0 {
                continue;
            }
            let mut x = state.x[i];
            let mut x_prev = state.x_prev[i];
            for_each_contact(scene, &state.x[i], self.radius[i], 0.0, |c| {
                // Re-evaluate at the moving x: an earlier face may already have pushed it out.
                let depth = -(c.c + c.normal.dot(&(x - state.x[i])));
                if depth > 0.0 {
                    x += c.normal * depth;
                    x_prev = seed_friction(&x, &x_prev, &c.normal, depth, c.friction);
                    worst = worst.max(depth);
                }
            });
            state.x[i] = x;
            state.x_prev[i] = x_prev;
        }
        worst
    }

    /// Computes `Δλ` of one row and its residual contribution, from the current positions.
    #[inline]
    fn stick_delta(&self, x: &[Vec3], item: &Item, alpha_tilde: f64, step: u64) -> (Vec3, f64, f64) {
        let Item::Stick { a, b, rest, sense, row, .. } = *item else { unreachable!() };
        let (a, b, row) = (a as usize, b as usize, row as usize);
        let seed = self.cfg.seed;
        let r = stick_row(&x[a], &x[b], rest, sense, self.cfg.sqrt_approx, || {
            Rng::new(seed ^ ((row as u64) << 24) ^ step.rotate_left(48)).unit_vector()
        });
        let denom = self.w[a] + self.w[b] + alpha_tilde;
        let lambda = if self.cfg.xpbd { self.lambda[row] } else { 0.0 };
        let dl = delta_lambda(r.c, self.w[a] + self.w[b], alpha_tilde, lambda, sense != Sense::Equal);
        (r.normal, dl, (dl * denom).abs())
    }

    fn alpha_tilde(&self, alpha: f64, h: f64) -> f64 {
        if self.cfg.xpbd {
            alpha / (h * h)
        } else {
            0.0
        }
    }

    /// The three rows of pin `pin` (starting at multiplier `row`): `C_k = x_k − goal_k`, `∇C = e_k`.
    /// Returns the residual; adds `w·Δλ·scale` to `out` for each axis and stores `Δλ·scale`.
    fn pin_rows(&mut self, x: &Vec3, pin: u32, row: u32, time: f64, h: f64, scale: f64) -> (Vec3, f64) {
        let PinData { a, target, velocity, alpha } = self.pins[pin as usize];
        let row = row as usize;
        let at = self.alpha_tilde(alpha, h);
        let goal = target + velocity * time;
        let mut dx = Vec3::zeros();
        let mut residual: f64 = 0.0;
        for k in 0..3 {
            let lambda = if self.cfg.xpbd { self.lambda[row + k] } else { 0.0 };
            let dl = delta_lambda(x[k] - goal[k], self.w[a], at, lambda, false);
            residual = residual.max((dl * (self.w[a] + at)).abs());
            self.dl[row + k] = dl * scale;
            dx[k] = self.w[a] * dl * scale;
        }
        (dx, residual)
    }

    /// One Gauss-Seidel sweep over the items in `order`; returns the residual.
    fn gauss_seidel_sweep(&mut self, state: &mut State, order: &[usize], h: f64, scale: f64) -> f64 {
        let mut residual: f64 = 0.0;
        let time = state.time;
        for &j in order {
            let item = self.items[j];
            match item {
                Item::Stick { a, b, alpha, row, .. } => {
                    let (a, b) = (a as usize, b as usize);
                    if self.w[a] + self.w[b] == 0.0 {
                        continue;
                    }
                    let at = self.alpha_tilde(alpha, h);
                    let (n, dl, res) = self.stick_delta(&state.x, &item, at, state.step);
                    residual = residual.max(res);
                    let dl = dl * scale;
                    self.lambda[row as usize] += dl;
                    state.x[a] -= n * (self.w[a] * dl);
                    state.x[b] += n * (self.w[b] * dl);
                }
                Item::Pin { pin, row } => {
                    let a = self.pins[pin as usize].a;
                    let (dx, res) = self.pin_rows(&state.x[a], pin, row, time, h, scale);
                    residual = residual.max(res);
                    for k in 0..3 {
                        self.lambda[row as usize + k] += self.dl[row as usize + k];
                    }
                    state.x[a] += dx;
                }
            }
        }
        residual
    }

    /// One Jacobi sweep with stiffness `scale` (ω is applied in the averaging); returns the
    /// residual.
    fn jacobi_sweep(&mut self, state: &mut State, h: f64, scale: f64) -> f64 {
        let mut residual: f64 = 0.0;
        let time = state.time;
        self.dx.iter_mut().for_each(|d| *d = Vec3::zeros());
        self.count.iter_mut().for_each(|c| *c = 0);
        for j in 0..self.items.len() {
            let item = self.items[j];
            match item {
                Item::Stick { a, b, alpha, row, sense, .. } => {
                    let (a, b) = (a as usize, b as usize);
                    self.dl[row as usize] = 0.0;
                    if self.w[a] + self.w[b] == 0.0 {
                        continue;
                    }
                    let at = self.alpha_tilde(alpha, h);
                    let (n, dl, res) = self.stick_delta(&state.x, &item, at, state.step);
                    if dl == 0.0 && sense != Sense::Equal {
                        continue;
                    }
                    residual = residual.max(res);
                    let dl = dl * scale;
                    self.dl[row as usize] = dl;
                    self.dx[a] -= n * (self.w[a] * dl);
                    self.dx[b] += n * (self.w[b] * dl);
                    self.count[a] += 1;
                    self.count[b] += 1;
                }
                Item::Pin { pin, row } => {
                    let a = self.pins[pin as usize].a;
                    let (dx, res) = self.pin_rows(&state.x[a], pin, row, time, h, scale);
                    residual = residual.max(res);
                    self.dx[a] += dx;
                    self.count[a] += 1;
                }
            }
        }
        let omega = self.cfg.omega;
        for i in 0..state.x.len() {
            if self.count[i] > 0 {
                state.x[i] += self.dx[i] * (omega / self.count[i] as f64);
            }
        }
        if self.cfg.xpbd {
            for item in &self.items {
                let [a, b] = self.particles_of(item);
                let share = omega / self.count[a].max(self.count[b]).max(1) as f64;
                let (row, rows) = match *item {
                    Item::Stick { row, .. } => (row as usize, 1),
                    Item::Pin { row, .. } => (row as usize, 3),
                };
                for r in row..row + rows {
                    self.lambda[r] += self.dl[r] * share;
                }
            }
        }
        residual
    }
}

impl Solver for RelaxSolver {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        self.w = scene.inverse_masses();
        self.radius = scene.particles.iter().map(|p| p.radius).collect();
        if scene.particles.len() > u32::MAX as usize || scene.constraints.len() > (u32::MAX / 3) as usize {
            return Err(SolveError("relax: more than 2³² particles or 2³⁰ constraints".into()));
        }
        self.items.clear();
        self.pins.clear();
        let mut rows = 0u32;
        for c in &scene.constraints {
            match c.kind {
                Kind::Stick { a, b, rest, sense } => {
                    self.items.push(Item::Stick {
                        a: a as u32,
                        b: b as u32,
                        rest,
                        sense,
                        alpha: c.compliance,
                        row: rows,
                    });
                    rows += 1;
                }
                Kind::Pin { a, target, velocity } => {
                    if scene.particles[a].w > 0.0 {
                        self.items.push(Item::Pin { pin: self.pins.len() as u32, row: rows });
                        self.pins.push(PinData { a, target, velocity, alpha: c.compliance });
                        rows += 3;
                    }
                }
            }
        }
        let rows = rows as usize;
        self.lambda = vec![0.0; rows];
        self.dl = vec![0.0; rows];
        self.dx = vec![Vec3::zeros(); scene.particles.len()];
        self.count = vec![0; scene.particles.len()];
        let pairs: Vec<[usize; 2]> = self.items.iter().map(|i| self.particles_of(i)).collect();
        self.ordering = Ordering::new(self.cfg.order, &pairs, scene.particles.len());
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
        if self.w.len() != scene.particles.len() {
            self.prepare(scene)?;
        }
        let n_iter = self.cfg.iterations as usize;
        let k = if self.cfg.stiffness_correction {
            1.0 - (1.0 - self.cfg.stiffness).powf(1.0 / n_iter as f64)
        } else {
            self.cfg.stiffness
        };
        let scale = k * self.cfg.omega;
        let restitution = solverlab_core::integrate::has_restitution(scene);
        if restitution {
            self.predicted.clone_from(&state.x);
        }
        self.lambda.iter_mut().for_each(|l| *l = 0.0);
        let mut info = SolveInfo::default();
        let want_violation = observer.wants_violation();
        // Particle-particle contacts: candidate pairs from the prediction, with a margin of one
        // radius so that pairs closing during the iterations are kept.
        let pairs = if self.radius.iter().any(|&r| r > 0.0) {
            let radius: Vec<f64> =
                self.radius.iter().zip(&self.w).map(|(r, w)| if *w > 0.0 { *r } else { 0.0 }).collect();
            let margin = radius.iter().copied().fold(0.0, f64::max);
            solverlab_core::broadphase::pairs(&state.x, &radius, margin, |_, _| false)
        } else {
            Vec::new()
        };
        for it in 1..=n_iter {
            let mut residual = if scene.has_colliders() { self.project_colliders(scene, state) } else { 0.0 };
            residual = residual.max(self.project_pairs(state, &pairs));
            if !scene.embedded.is_empty() {
                residual = residual.max(self.project_embedded(scene, state));
            }
            if !scene.bodies.is_empty() {
                residual = residual.max(self.project_bodies(scene, state));
            }
            residual = residual.max(match self.cfg.mode {
                Mode::GaussSeidel => {
                    let mut ordering = std::mem::take(&mut self.ordering);
                    let mut r = 0.0f64;
                    for pass in ordering.passes(&mut self.rng) {
                        r = r.max(self.gauss_seidel_sweep(state, pass, ctx.h, scale));
                    }
                    self.ordering = ordering;
                    r
                }
                Mode::Jacobi => self.jacobi_sweep(state, ctx.h, k),
            });
            info.iterations = it;
            info.residual = residual;
            observer.iteration(&IterationReport {
                iteration: it,
                outer: 1,
                residual,
                residual_rms: None,
                delta_lambda: None,
                violation: want_violation.then(|| max_violation(scene, &state.x, state.time)),
            });
            if self.cfg.tolerance > 0.0 && residual <= self.cfg.tolerance {
                info.converged = true;
                break;
            }
        }
        if restitution {
            solverlab_core::integrate::apply_restitution(scene, &self.predicted, state, ctx.h);
        }
        Ok(info)
    }
}
