//! Jakobsen relaxation: Verlet plus projection, in Gauss-Seidel and Jacobi form, with
//! over-relaxation, the square-root approximation, PBD stiffness and XPBD compliance.
//!
//! # Algorithm
//!
//! After the shared Verlet prediction, per step:
//!
//! 1. Reset every row's multiplier `λ = 0` (XPBD accumulates `λ` over the step; PBD does not).
//! 2. Find the step's contact candidates that are costly to find: particle pairs (uniform-grid
//!    broadphase) and box-body contacts, at the prediction, within one step's travel
//!    (`relax/contacts.rs`).
//! 3. For each iteration `1..=iterations`:
//!    1. Contacts, as in Jakobsen's stick-in-box listing (colliders first, then sticks): every
//!       movable particle below a plane, inside a sphere or a block, or outside the box is
//!       projected to the surface along the normal; then particle pairs, embedded points
//!       (`p = Σ cₖxₖ`, Jakobsen §5) and box bodies' contacts, each re-evaluated at the current
//!       positions. Each contact accumulates its push `λₙ`, and every contact that pushed in the
//!       step gets position-level Coulomb friction on its tangential displacement over the step
//!       ([`solverlab_core::constraint::coulomb_friction`]: static inside the cone `μλₙ`,
//!       dynamic beyond). Contacts are projected with ω = 1.
//!    2. Constraints (sticks, min/max sticks, pins on movable particles), each row by the update
//!       of [`solverlab_core::constraint`]:
//!       `Δλ = (−C − α̃λ)/(Σwᵢ|∇ᵢC|² + α̃)`, then `Δλ ← k·ω·Δλ`, `λ += Δλ`, `Δxᵢ = wᵢ∇ᵢC·Δλ`.
//!       * **Gauss-Seidel** applies each `Δx` at once, in the chosen [`Order`].
//!       * **Jacobi** computes every row from the positions at the start of the sweep, sums the
//!         corrections per particle, and applies `ω·Σ Δx / nᵢ`, where `nᵢ` counts the rows that
//!         acted on particle `i` in the sweep (Müller et al. 2007, §3.5 averaging). `λ` grows by
//!         `ω·Δλ / max(nₐ, n_b)`, the share that was applied. The two ends of a row are
//!         divided by different counts when their particles take part in different numbers of
//!         rows, so averaged Jacobi conserves linear momentum only where the counts are equal
//!         (a free tetrahedron, a closed ring), not in general.
//!       * **Mass splitting** (Tonge et al. 2012) fixes that: particle `i`, acted on by `nᵢ` rows
//!         (counted once per scene), is split into `nᵢ` copies of inverse mass `nᵢwᵢ`. Every row
//!         is solved from the positions at the start of the sweep against its copies,
//!         `Δλ = (−C − α̃λ)/(Σ nᵢwᵢ|∇ᵢC|² + α̃)`, and averaging the copies again applies
//!         `Δxᵢ = ω·Σ_rows wᵢ∇ᵢC·Δλ`, with `λ += ω·Δλ`. Each row's corrections are equal and
//!         opposite in momentum, so linear momentum is conserved exactly.
//!       * **Chebyshev acceleration** of either Jacobi form (Wang 2015), when `chebyshev_rho`
//!         `ρ > 0`: after the sweep gives `x̂`, the iterate becomes
//!         `x_{k+1} = ω_{k+1}(x̂ − x_{k−1}) + x_{k−1}` (particles and multipliers; rigid bodies
//!         are not extrapolated), with `ω = 1` before the delay `S`, `ω_S = 2/(2 − ρ²)` and
//!         `ω_{k+1} = 4/(4 − ρ²ω_k)`. `ρ` estimates the spectral radius of the plain
//!         iteration; too large a `ρ` or too early a start overshoots, and a chain at
//!         `ρ = 0.99, S = 1` blows up. With `chebyshev_estimate` (the `jacobi-cheb` preset) `ρ`
//!         is measured in every step, as Wang measures it on each mesh: the ratio
//!         `‖x_k − x_{k−1}‖/‖x_{k−1} − x_{k−2}‖` of the last two plain sweeps before `S` (the
//!         power iteration's estimate of the plain iteration's largest eigenvalue), at most
//!         `chebyshev_rho`, and 0 (no extrapolation) when that ratio is 1 or more (contacts
//!         switching on: the sweeps are not contracting yet). Should an extrapolated sweep
//!         still change the positions more than the one before, the step drops the
//!         extrapolation and finishes with plain sweeps. A fixed `ρ = 0.99` suits a large cloth
//!         but not a pendulum, whose plain iteration converges in one sweep: there it left a
//!         violation 200 times the plain one's, and on the hinge, the spring and the stick in a
//!         box 10 to 400 times. Measured over 120 frames of every builtin (`S = 5`, at most
//!         0.99), the estimate ends no worse than plain Jacobi on any, and on the default cloth
//!         keeps the mean violation at 0.4 of plain Jacobi's.
//!    3. Stop when the common violation (see `# Residual`) is at most `tolerance`.
//! 4. Restitution ([`solverlab_core::integrate::apply_restitution`], shared with CG and
//!    direct): a particle that hit a collider with restitution `e > 0` faster than `2|g|h` gets
//!    its normal velocity set to `−e` times its predicted approach velocity.
//!
//! 6-DoF rigid bodies ([`solverlab_core::rigid`]) get the same loop through extended
//! position-based dynamics (the shared floor's `common/xpbd/`): their contacts and joints are corrected in each
//! iteration after the particle rows, in the same Gauss-Seidel or Jacobi form (the averaged
//! Jacobi form under mass splitting too).
//!
//! Velocities are `(x − x*)/h` of the projected positions, so friction that holds a particle
//! also stops its reported velocity, and one that lets it slide reports the slide.
//!
//! Stiffness: with `xpbd = false` (PBD), each projection moves a fraction `k = stiffness` of the
//! way and constraint compliance is ignored; the stiffness then depends on the iteration count,
//! which is the point of the PBD-versus-XPBD figures. `stiffness_correction = true` uses PBD's
//! `k' = 1 − (1 − k)^(1/n)` (Müller et al. 2007, §3.3) so that the error left after `n`
//! iterations is the same as after one with `k`. With `xpbd = true`, `α̃ = α/h²` per constraint
//! and `λ` is accumulated, so the stiffness does not depend on the iteration count.
//!
//! Loops per sweep: the contact passes of `relax/contacts.rs`, one pass over constraints (Jacobi:
//! plus one pass over particles to apply the averages, and one over rows for `λ`), and, when
//! `tolerance > 0`, the stopping test (`relax/stop.rs`): the common violation visited row by row
//! only up to the first row above the tolerance, so that a step far from its tolerance pays for
//! a few rows and the sweep that meets it for one whole pass (on the fast path over the sweep's
//! own arrays, on every core from [`crate::common::PARALLEL_ROWS`] rows). An observer that asks for the
//! violation (`--violation`) gets the whole pass after every sweep. The stopping decision is the
//! exact rule's either way (`tests/stopping.rs`). Before, the whole pass over the scene's
//! constraints ran after every sweep and cost as much as the sweeps: through `simulate` on the
//! 256² cloth, coloured Gauss-Seidel at 10 sweeps took 35 ms a frame against 15 ms with
//! `tolerance = 0` (Jacobi 31 against 16 ms; fastest of 3 interleaved runs on a shared machine);
//! now the default tolerance runs at 0.97–0.98 of `tolerance = 0` (Jacobi 1.11, XPBD 1.04, one
//! thread; the performance experiment's product rows). A bound fused into the sweep (the largest
//! `|C|` a row shows when it is projected) was the alternative, measured against none: under
//! Gauss-Seidel the rows after a row move its particles, so that bound is no bound on the
//! violation after the sweep either way, could only gate the exact test, and would still leave
//! it to run in every sweep that might meet the tolerance; the cut-short test is exact and costs
//! a few rows in the sweeps that cannot.
//!
//! An iteration with a parallel pass runs, with its stopping test, on a worker of the thread pool
//! (`on_worker` in `common/mod.rs`): the command line's frame loop runs outside the pool, and each pass
//! forked from there had put the caller to sleep and woken it again (4 676 futex calls in 12
//! frames of the coloured sweep on two threads; 632 now), which took all of the second thread's
//! gain through `simulate`.
//!
//! # Residual
//!
//! Two numbers per iteration:
//!
//! * `violation`, the stopping test, the same in every family
//!   ([`solverlab_core::metrics::violation`], m): after the iteration, the largest of `|C|` over
//!   rigid equality rows, `|C + α̃λ|` over compliant rows (under XPBD; plain PBD ignores
//!   compliance, so its compliant rows keep `|α̃λ|`), and the penetration of every contact the
//!   solver tracks (every collider, and the step's pairs and body contacts);
//! * `residual`, the family's own: the largest correction any row asked for when it was visited,
//!   in metres of `C`: `max_j |Δλ_j|·(Σwᵢ|∇ᵢC_j|² + α̃_j)` before `k` and `ω` scale it, which is
//!   `|C_j + α̃_j λ_j|` for an equality row (`|C_j|` under PBD), the clamped step for an
//!   inequality row, and the penetration depth for a contact. Under Gauss-Seidel each row is
//!   measured after the rows before it in the sweep have moved.
//!
//! # References
//!
//! * T. Jakobsen, "Advanced Character Physics", GDC 2001: Verlet, projection,
//!   relaxation, the square-root approximation, soft constraints, friction.
//! * M. Müller, B. Heidelberger, M. Hennix, J. Ratcliff, "Position Based Dynamics", VRIPHYS 2006
//!   (JVCIR 2007): stiffness `k` and its iteration-count correction; Jacobi averaging.
//! * M. Macklin, M. Müller, N. Chentanez, "XPBD: Position-Based Simulation of Compliant
//!   Constrained Dynamics", MIG 2016: compliance and the accumulated multiplier.
//! * W. H. Press et al., "Numerical Recipes", §19.5: successive over-relaxation.
//! * R. Tonge, F. Benevolenski, A. Voroshilov, "Mass Splitting for Jitter-Free Parallel Rigid
//!   Body Simulation", SIGGRAPH 2012: mass splitting.
//! * H. Wang, "A Chebyshev Semi-Iterative Approach for Accelerating Projective and
//!   Position-based Dynamics", SIGGRAPH Asia 2015: the Chebyshev weights and their delay.

mod config;
mod contacts;
mod kernel;
mod stop;
mod sweeps;

pub use config::{family, Mode, RelaxConfig};

use solverlab_core::constraint::delta_lambda;
use solverlab_core::model::{Kind, Scene, Sense, State};
use solverlab_core::rng::Rng;
use solverlab_core::rows::{constraint_row_id, decode, RowRef};
use solverlab_core::solver::{Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::Vec3;

use crate::common::order::{greedy_coloring, Order, Ordering};
use crate::common::stop::{Residuals, Stopping};
use crate::common::xpbd::{RigidXpbd, Update};
use crate::ConfigError;

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
    /// The first multiplier row of each scene constraint (`u32::MAX` for pins the integrator
    /// drives). With the fast path's arrays, the sticks' rows are in its visiting order (row `k`
    /// of the arrays is `lambda[k]`), so that a parallel pass writes its rows' multipliers as
    /// slices.
    constraint_row: Vec<u32>,
    /// The number of multiplier rows of each scene constraint (1 for a stick, 3 for a pin).
    row_count: Vec<u8>,
    contacts: contacts::Contacts,
    ordering: Ordering,
    rng: Rng,
    // Jacobi scratch.
    dx: Vec<Vec3>,
    count: Vec<u32>,
    dl: Vec<f64>,
    /// Mass splitting: the number of rows acting on each particle (at least 1).
    split: Vec<f64>,
    /// Chebyshev: the positions and multipliers one iteration back, and the current ones.
    cheb_prev: (Vec<Vec3>, Vec<f64>),
    cheb_cur: (Vec<Vec3>, Vec<f64>),
    // Restitution scratch.
    predicted: Vec<Vec3>,
    /// The 6-DoF rigid bodies' rows (`common/xpbd/`).
    rigid: RigidXpbd,
    /// The fast path's arrays, when every row is an equality stick ([`kernel`]).
    soa: Option<kernel::StickSoa>,
    /// The fast path's per-row scratch.
    buf: Vec<Vec3>,
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
            constraint_row: Vec::new(),
            row_count: Vec::new(),
            contacts: contacts::Contacts::default(),
            ordering: Ordering::default(),
            rng,
            dx: Vec::new(),
            count: Vec::new(),
            dl: Vec::new(),
            split: Vec::new(),
            cheb_prev: (Vec::new(), Vec::new()),
            cheb_cur: (Vec::new(), Vec::new()),
            predicted: Vec::new(),
            rigid: RigidXpbd::default(),
            soa: None,
            buf: Vec::new(),
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

    /// The number of multiplier rows of scene constraint `j` (1 for a stick, 3 for a pin).
    fn rows_of(&self, j: usize) -> usize {
        self.row_count[j] as usize
    }

    /// The update of stick item `item` from the current positions ([`kernel::stick_step`]);
    /// under mass splitting the inverse masses in the denominator are multiplied by the row
    /// counts.
    #[inline]
    fn stick_delta(&self, x: &[Vec3], item: &Item, alpha_tilde: f64, step: u64) -> kernel::StickStep {
        let Item::Stick { a, b, rest, sense, row, .. } = *item else { unreachable!() };
        let (a, b) = (a as usize, b as usize);
        let wsum = match self.cfg.mode {
            Mode::MassSplitting => self.w[a] * self.split[a] + self.w[b] * self.split[b],
            _ => self.w[a] + self.w[b],
        };
        let lambda = if self.cfg.xpbd { self.lambda[row as usize] } else { 0.0 };
        let seed = self.cfg.seed;
        kernel::stick_step(&x[a], &x[b], rest, sense, wsum, alpha_tilde, lambda, self.cfg.sqrt_approx, || {
            kernel::dislocation(seed, row, step)
        })
    }

    fn alpha_tilde(&self, alpha: f64, h: f64) -> f64 {
        if self.cfg.xpbd {
            alpha / (h * h)
        } else {
            0.0
        }
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
            return Err(SolveError::new("relax", "more than 2³² particles or 2³⁰ constraints"));
        }
        self.items.clear();
        self.pins.clear();
        self.constraint_row.clear();
        self.row_count.clear();
        let mut rows = 0u32;
        for c in &scene.constraints {
            self.constraint_row.push(rows);
            self.row_count.push(match c.kind {
                Kind::Stick { .. } => 1,
                Kind::Pin { .. } => 3,
            });
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
                    } else {
                        *self.constraint_row.last_mut().expect("pushed above") = u32::MAX;
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
        self.split = vec![0.0; scene.particles.len()];
        for item in &self.items {
            match *item {
                Item::Stick { a, b, .. } => [a as usize, b as usize].iter().for_each(|&p| self.split[p] += 1.0),
                Item::Pin { pin, .. } => self.split[self.pins[pin as usize].a] += 1.0,
            }
        }
        self.split.iter_mut().for_each(|n| *n = n.max(1.0));
        self.soa = self.fast_arrays(&pairs, scene.particles.len());
        if let Some(soa) = &self.soa {
            // The multipliers in the fast path's visiting order, then the rows it leaves out
            // (sticks between two fixed particles) in scene order. Only where they are stored
            // changes: the same numbers are reported by the same ids.
            let mut new_row = vec![u32::MAX; rows];
            for (k, &old) in soa.row.iter().enumerate() {
                new_row[old as usize] = k as u32;
            }
            let mut next = soa.len() as u32;
            for r in new_row.iter_mut().filter(|r| **r == u32::MAX) {
                (*r, next) = (next, next + 1);
            }
            for r in self.constraint_row.iter_mut().filter(|r| **r != u32::MAX) {
                *r = new_row[*r as usize];
            }
            for item in &mut self.items {
                if let Item::Stick { row, .. } = item {
                    *row = new_row[*row as usize];
                }
            }
        }
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
        if let (Some(soa), true) = (self.soa.as_mut(), self.cfg.xpbd) {
            soa.set_step(ctx.h);
        }
        self.contacts.begin_step(scene, state, &self.w, &self.radius);
        let rigid = scene.has_rigid();
        if rigid {
            self.rigid.begin(scene, &mut state.rigid, ctx.h, state.time, self.cfg.speculative_margin);
        }
        let mut info = SolveInfo::default();
        let tolerance = (self.cfg.tolerance > 0.0).then_some(self.cfg.tolerance);
        let stop = Stopping::new(n_iter, tolerance, observer.wants_violation());
        if self.cfg.chebyshev_rho > 0.0 && self.cfg.mode != Mode::GaussSeidel {
            kernel::copy_into(&mut self.cheb_prev.0, &state.x);
            kernel::copy_into(&mut self.cheb_prev.1, &self.lambda);
        }
        let mut cheb = sweeps::Chebyshev::new(&self.cfg);
        // A sweep with a parallel pass runs, with its stopping test, on a worker thread of the
        // pool ([`crate::common::on_worker`]).
        let parallel = self.soa.as_ref().is_some_and(|s| s.parallel(self.cfg.mode != Mode::GaussSeidel));
        for it in stop.iterations() {
            let mut iteration = |solver: &mut Self, state: &mut State| {
                let residual = solver.iterate(ctx, state, it, (k, scale), &mut cheb);
                // The common violation when the observer asks for it; otherwise the stopping
                // test alone, which stops at the first row above the tolerance (`stop.rs`).
                (residual, stop.measure(|bound| solver.violation_until(scene, state, ctx.h, bound)))
            };
            let (residual, measured) = crate::common::on_worker(parallel, || iteration(self, state));
            (info.iterations, info.outer, info.residual) = (it, it, residual);
            if stop.report(observer, it, 1, Residuals::max(residual), measured) {
                info.converged = measured.met;
                break;
            }
        }
        if restitution {
            solverlab_core::integrate::apply_restitution(scene, &self.predicted, state, ctx.h);
        }
        if rigid {
            self.rigid.finish(scene, &mut state.rigid, ctx.h);
        }
        Ok(info)
    }

    fn multiplier(&self, id: u64) -> f64 {
        match decode(id) {
            RowRef::Constraint { index, axis } => match self.constraint_row.get(index) {
                Some(&row) if row != u32::MAX => self.lambda[row as usize + axis],
                _ => 0.0,
            },
            _ => self.contacts.multiplier(id),
        }
    }

    fn rigid_contacts(&self, out: &mut Vec<solverlab_core::rigid::ContactForce>) {
        out.clear();
        out.extend_from_slice(self.rigid.forces());
    }

    fn rigid_joints(&self, out: &mut Vec<solverlab_core::rigid::JointForce>) {
        self.rigid.joint_forces(out);
    }

    fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        out.clear();
        for (j, &row) in self.constraint_row.iter().enumerate().filter(|(_, r)| **r != u32::MAX) {
            for axis in 0..self.rows_of(j) {
                let l = self.lambda[row as usize + axis];
                if l != 0.0 {
                    out.push((constraint_row_id(j, axis), l));
                }
            }
        }
        self.contacts.multipliers(out);
    }
}
