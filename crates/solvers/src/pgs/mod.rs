//! Sequential impulses / projected Gauss-Seidel at the velocity level, with warm starting,
//! Baumgarte or soft (frequency, damping ratio) position feedback, an optional unbiased relax
//! pass, Coulomb friction and restitution.
//!
//! # Algorithm
//!
//! After the shared Verlet prediction `x̂` (so `x*` holds the start-of-step positions), per step:
//!
//! 1. Velocities `v = (x̂ − x*)/h`, which is `(1 − damping)(x − x*)/h + a·h` of the issue.
//! 2. Rows at the start-of-step positions `x*` ([`solverlab_core::rows::gather_row_set`]): sticks,
//!    pins, and speculative contacts (a contact is included while its gap is below
//!    `h·|v| + slop`). A contact with friction μ > 0 adds two tangent rows.
//! 3. Per row, from `K = J W Jᵀ`, the update `Δλ = −m·s_m·(J v + b) − s_i·λ`:
//!    * compliant rows (`α > 0`): the implicit spring `m = 1/(K + γ)`, `γ = α/h²`, `b = C/h`,
//!      `s_m = 1`, `s_i = γ·m` (Catto 2011, "Soft constraints"; the velocity form of XPBD);
//!    * `baumgarte`: `m = 1/K`, `b = β·C/h` for equalities; for contacts `b = C/h` while
//!      separated (speculative) and `b = max(β·(C + slop)/h, −max_push)` when penetrating.
//!      With `split_impulse` (the default) the position part is not in the velocity rows but in
//!      split rows on pseudo velocities `v_p` (step 5); with `position_iterations` it is in
//!      neither, but in the position sweeps of step 6;
//!    * `soft`: with `ω = 2πf`, `a₁ = 2ζ + hω`, `a₂ = hω·a₁`: `b = (ω/a₁)·C`,
//!      `s_m = a₂/(1 + a₂)`, `s_i = 1/(1 + a₂)` (Catto, Solver2D 2024; Box2D v3), with joint
//!      (`joint_hertz`, `joint_damping_ratio`) and contact (`contact_hertz`, …) settings;
//!    * moving pin targets add `∂C/∂t` to `b`.
//! 4. Warm start: `λ = warm_start · λ_previous` matched by row id (by position while the set of
//!    rows stays the same), applied as `v += W Jᵀ λ`.
//! 5. `iterations` sweeps in the chosen [`crate::common::order::Order`]: each row's `Δλ` (scaled by SOR `ω`) is added
//!    to the accumulated `λ`, which is clamped (`λₙ ≥ 0`; the tangent pair to the disk
//!    `|λₜ| ≤ μ·λₙ`); the clamped change is applied, `v += W Jᵀ Δλ`. Friction rows of a contact are
//!    visited just after its normal row (Box2D visits them before; after, the first sweep's
//!    friction limit is already the normal impulse of that sweep); `friction_pass` says whether
//!    these sweeps solve friction rows (`both`, `biased`) or leave them to step 7 (`relax`). With split impulses each
//!    iteration also sweeps the split rows on pseudo velocities that never enter the momentum
//!    (Catto 2006; Bullet's split impulse): contacts and pins `J v_p + β·C/h = 0` (contacts: `≥`),
//!    linearised at the start of the step; a rigid stick is corrected fully and with its
//!    curvature, `C(x* + h(v + v_p)) − h·J·v = 0` at the end-of-step positions (see "Why" below).
//!    Pins start every step from their last pseudo impulses times `warm_start`, sticks and
//!    contacts from zero. Stop when the common violation at `x* + h·(v + v_p)` is at most
//!    `tolerance`, or the own residual at most `velocity_tolerance`. Coloured sweeps of at least
//!    [`crate::common::PARALLEL_ROWS`] rows without friction pairs store their rows in colour order,
//!    within a colour by block of particles, once the rows have stayed the same for a step; each
//!    colour then runs its blocks on every core (a block's rows touch only its particles) and the
//!    rows that straddle two blocks on one, with the same numbers for any thread count.
//! 6. Positions: `x = x̂ + h·(v − v₀ + v_p)`, which is `x* + h·(v + v_p)`; unconstrained particles
//!    keep `x̂` exactly, so without constraints the trajectory is the relax solver's. Then
//!    `position_iterations` nonlinear Gauss-Seidel sweeps over the positions (Box2D v2.4's
//!    position solver): sticks evaluated where they are and corrected fully, contacts pushed out
//!    by `β·(C + slop)`, at most 0.2 m per row and sweep; velocities are left as the sweeps of
//!    step 5 made them.
//! 7. `relax_iterations` relax sweeps (friction rows with `friction_pass` `both` or `relax`;
//!    rigid rows unbiased, `b` = speculative part only,
//!    `s_m = 1`, `s_i = 0`; compliant rows keep their spring, which is physics, not
//!    stabilisation) and one restitution sweep (normal rows with `e > 0` that approached faster
//!    than `restitution_threshold` and pushed in this step target `J v = −e·(J v)₀`) change
//!    velocities only: `x*` is moved to `x − h·v`, so the Verlet state carries the new velocity
//!    (and not the pseudo velocity) into the next step.
//! 8. The accumulated `λ` are kept by row id for the next step's warm start.
//!
//! Why split impulses: with Baumgarte feedback in the velocity rows, the accumulated impulse that
//! is warm-started carries last step's position correction, and an unconverged sweep (10
//! iterations on a 20-link chain) turns that into a growing oscillation. A chain hanging at rest
//! under textbook sequential impulses (β = 0.2, warm start 1.0, 10 iterations) reaches 380 J of
//! kinetic energy in one second; an independent 30-line model of the same method does the same
//! to the last digit, so it is the method, not this code (`tests/pgs.rs` asserts both). Bullet's
//! warm-start factor 0.85 and split impulses each remove it; `split_impulse = false` keeps the
//! textbook form for ablations.
//!
//! Why sticks carry their curvature: velocity rows linearised at the start of the step keep a
//! link's length only to first order; a link that turns by `θ` in one step ends about `L·θ²/2`
//! longer. The `chain` scene (20 links of 0.1 m released horizontally) turns its links by up to
//! 1.05 rad a step at the bottom of the swing. Split rows linearised at the start of the step
//! then push along each link's old direction: they tore that chain to 12.7 times its length
//! (more iterations made it worse: 14.5 at 100), and an independent model of textbook split
//! impulses does the same (`tests/pgs.rs`). With the curvature in the split rows of sticks,
//! solved fully, the chain peaks at 11 % stretch in the whip and holds within 4.2 % after 5 s
//! (30 iterations: 3.2 % and 1.2 %; 100: 0.8 % and 0.2 %); Box2D 2.3 (8 velocity
//! and 3 position iterations, rigid distance joints between small circles) peaks at 16 % and
//! holds within 7.6 % on the same chain, and `pgs-ngs` at 18 % and 7.4 %. Full correction,
//! rather than β = 0.2, because an unconverged velocity solve leaves sag every step that a fifth
//! of does not remove: without warm start the chain then hangs at 4.6 times its length (1.9
//! with full correction). The quickstart's 12 × 12 cloth stays within 4.4 mm (0.14 m before).
//!
//! Loops per step: one pass over constraints and particles × colliders to gather rows, one over
//! rows to prepare and warm start, `iterations` (× 2 with split impulses) `+ relax_iterations
//! (+1)` sweeps over rows, one pass over particles to integrate; with a tolerance, per iteration
//! one pass over particles for the end-of-step positions and the stopping test, which stops at
//! the first row above the tolerance (the whole pass over constraints and contact rows only in
//! the iteration that meets it, or for an observer that asks for the violation).
//!
//! Rigid bodies (`scene.rigid`, with their joints) are solved by the same options on 6-DoF
//! rows after the particle rows of the step, in `pgs/rigid.rs` and `pgs/joints.rs` (contact manifolds,
//! friction at each manifold's centre, joint blocks, islands, sleeping, and the
//! `position_iterations` pass of `pgs-ngs`); the two sets share no body.
//!
//! # Residual
//!
//! Two numbers per iteration:
//!
//! * `violation`, the stopping test, the same in every family
//!   ([`solverlab_core::metrics::violation`], m): at the positions the step would end at if it
//!   stopped there, `x* + h·(v + v_p)`, exactly for constraints (with `|C + α̃λ|`, `λ` the impulse
//!   times `h`, for compliant rows) and linearised for contacts (`C + h·J(v + v_p)`);
//! * `residual`, the family's own: the natural (projected) velocity residual of each row when
//!   the sweep visits it, before its update: `|Δλ|/(m·s_m)` with `Δλ` the clamped, unrelaxed
//!   change (m/s). For an unclamped row this is `|J v + b + (s_i/(m·s_m))·λ|`; for a row at its
//!   bound it is the part of the violation the bound cannot absorb. The reported `residual` is
//!   the maximum over rows (velocity and split); `residual_rms` is the root mean square, and
//!   `delta_lambda` is `‖Δλ‖₂` of the applied changes (N·s).
//!
//! # References
//!
//! * E. Catto, "Iterative Dynamics with Temporal Coherence", GDC 2005: sequential impulses,
//!   accumulated clamped impulses, warm starting.
//! * E. Catto, "Soft Constraints", GDC 2011; "Solver2D" (2024) and Box2D v3: soft step, relax
//!   iterations, frequency and damping ratio.
//! * E. Catto, "Fast and Simple Physics using Sequential Impulses", GDC 2006: split impulses
//!   (pseudo velocities for position correction).
//! * Bullet Physics `btSequentialImpulseConstraintSolver`: warm-start factor 0.85, ERP 0.2,
//!   split impulse.
//! * Video Game Physics Tutorial, Part III: Constrained Rigid Body Simulation (Toptal): PGS
//!   equals sequential impulses.

use rayon::prelude::*;
use solverlab_core::rows::IdMap;

mod config;
pub(crate) mod joints;
mod rigid;
mod rows;

pub use config::{family, Feedback, FrictionCone, FrictionPass, PgsConfig, RelaxSeparation, Rotation, StaticColors};

use solverlab_core::metrics::constraint_violation_until;
use solverlab_core::rng::Rng;
use solverlab_core::rows::{constraint_row_id, gather_row_set, RowSet};
use solverlab_core::solver::{NullObserver, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{Scene, State, Vec3};

use rows::{Item, Pass, Rows, Warm};

use crate::common::order::{block_of, group_by_block, Ordering};
use crate::common::stop::{Measured, Residuals, Stopping};
use crate::ConfigError;

/// The residuals of a sweep from its statistics `(max, Σ r², rows, Σ Δλ²)` (see `# Residual`).
fn sweep_residuals((max, sum2, count, dl2): (f64, f64, usize, f64)) -> Residuals {
    Residuals {
        residual: max,
        residual_rms: Some(if count > 0 { (sum2 / count as f64).sqrt() } else { 0.0 }),
        delta_lambda: Some(dl2.sqrt()),
    }
}

/// The PGS solver. Build it with [`PgsSolver::new`].
pub struct PgsSolver {
    cfg: PgsConfig,
    label: String,
    w: Vec<f64>,
    rows: RowSet,
    prepared: Rows,
    /// The ids of the last step's rows, in prepared order.
    item_ids: Vec<u64>,
    /// Coloured order over at least `PARALLEL_ROWS` rows without friction pairs: the gathered
    /// rows' indices in colour order, within a colour by particle block (`Rows::layout`), and the
    /// gathered ids it was made for. While the rows stay the same they are prepared in this
    /// order, so that a sweep reads them one after the other instead of a colour's every few rows
    /// (about three times faster on a large cloth), and runs the blocks of a colour on every
    /// core. Greedy colouring of rows sorted by their colours gives the same colours, and rows of
    /// one colour are independent, so the sweeps compute the same impulses; the warm start and
    /// restitution apply theirs in the new order, which moves the velocities by rounding.
    colour_order: Vec<u32>,
    colour_order_ids: Vec<u64>,
    /// Prepared row index of each id of `item_ids`, rebuilt when the ids change.
    row_index: IdMap<usize>,
    ordering: Ordering,
    rng: Rng,
    v0: Vec<Vec3>,
    x_end: Vec<Vec3>,
    /// The impulses of the last step's rows (N·s), in the order of `item_ids`.
    warm: Vec<f64>,
    /// The split (pseudo) impulses of the last step's rows (N·s), NaN for rows without one.
    warm_split: Vec<f64>,
    /// Scratch: the speculative reach of each particle, and the velocities before relaxation.
    speeds: Vec<f64>,
    v_solved: Vec<Vec3>,
    h: f64,
    rigid: rigid::RigidSi,
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
            rows: RowSet::default(),
            prepared: Rows::default(),
            item_ids: Vec::new(),
            colour_order: Vec::new(),
            colour_order_ids: Vec::new(),
            row_index: IdMap::default(),
            ordering: Ordering::default(),
            rng,
            v0: Vec::new(),
            x_end: Vec::new(),
            warm: Vec::new(),
            warm_split: Vec::new(),
            speeds: Vec::new(),
            v_solved: Vec::new(),
            h: 1.0,
            rigid: rigid::RigidSi::default(),
        })
    }

    /// The common violation if the step ended now (see `# Residual`) when it is at most `bound`
    /// (m); otherwise a number above `bound`, without the rows after the first one above it
    /// ([`constraint_violation_until`]). `bound = ∞` gives the common violation.
    fn violation_until(&mut self, scene: &Scene, state: &State, h: f64, bound: f64) -> f64 {
        let p = &self.prepared;
        self.x_end.clear();
        self.x_end.extend((0..state.x.len()).map(|i| state.x[i] + (p.v[i] - self.v0[i] + p.vp[i]) * h));
        let (vrows, index) = (&p.vrows, &self.row_index);
        let lambda =
            |j: usize, axis: usize| index.get(&constraint_row_id(j, axis)).map_or(0.0, |&r| vrows[r].lambda * h);
        let mut worst = constraint_violation_until(scene, &self.x_end, state.time, h, &lambda, bound);
        if worst > bound {
            // Not a pass over the rows for nothing: the contact rows are found among all of them.
            return worst;
        }
        for r in p.vrows.iter().filter(|r| r.lo == 0.0 && r.id >> 63 == 1) {
            if worst > bound {
                break;
            }
            // Contact normal rows (ids with the top bit; tangent rows are unbounded), linearised from the start of the step: C + h·J(v + v_p).
            let travel: f64 = p.parts.of(r).map(|(i, j)| j.dot(&(p.v[i] + p.vp[i]))).sum::<f64>() * h;
            worst = worst.max(-(r.c + travel));
        }
        worst
    }
}

impl Solver for PgsSolver {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        if scene.particles.len() > u32::MAX as usize {
            return Err(SolveError::new("pgs", "more than 2³² particles"));
        }
        self.w = scene.inverse_masses();
        self.prepared.v = vec![Vec3::zeros(); scene.particles.len()];
        self.warm.clear();
        self.warm_split.clear();
        self.item_ids.clear();
        self.row_index.clear();
        self.colour_order.clear();
        self.colour_order_ids.clear();
        self.rng = Rng::new(self.cfg.seed);
        self.rigid.reset();
        Ok(())
    }

    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let scene = ctx.scene;
        let particles = !scene.particles.is_empty() || !scene.has_rigid();
        let mut info = match particles {
            true => self.solve_particles(ctx, state, observer)?,
            false => SolveInfo { converged: true, ..SolveInfo::default() },
        };
        if scene.has_rigid() {
            self.h = ctx.h;
            let r = self.solve_rigid(ctx, state, observer, !particles);
            info.iterations = info.iterations.max(r.iterations);
            info.outer = info.outer.max(r.outer);
            info.residual = info.residual.max(r.residual);
            info.converged &= r.converged;
        }
        Ok(info)
    }

    fn multiplier(&self, id: u64) -> f64 {
        self.row_index.get(&id).and_then(|&k| self.warm.get(k)).map_or(0.0, |l| l * self.h)
    }

    fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        out.clear();
        let pairs = self.item_ids.iter().zip(&self.warm);
        out.extend(pairs.filter(|(_, l)| **l != 0.0).map(|(id, l)| (*id, l * self.h)));
        out.sort_unstable_by_key(|e| e.0);
    }

    fn rigid_contacts(&self, out: &mut Vec<solverlab_core::rigid::ContactForce>) {
        self.rigid.forces(out);
    }

    fn rigid_joints(&self, out: &mut Vec<solverlab_core::rigid::JointForce>) {
        self.rigid.joint_forces(out);
    }
}

impl PgsSolver {
    /// The rigid-body part of a step ([`rigid`]); reports its iterations to `observer` when
    /// `report` (the scene has no particles whose sweeps already reported).
    fn solve_rigid(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
        report: bool,
    ) -> SolveInfo {
        let (scene, h) = (ctx.scene, ctx.h);
        let time = state.time;
        let st = &mut state.rigid;
        let cfg = &self.cfg;
        let (substep, substeps) = (ctx.substep, ctx.substeps);
        if cfg.rotation != Rotation::Rk4 {
            // Rapier's or Box3D's gyroscopic update, with the forces, before the solve.
            let implicit = cfg.rotation == Rotation::Implicit;
            st.par_iter_mut().zip(scene.rigid.par_iter()).with_min_len(rigid::par_min() / 4).for_each(|(s, b)| {
                if !b.is_fixed() && !s.asleep {
                    s.w = if implicit {
                        solverlab_core::rigid::gyroscopic_implicit(b, &s.q, &s.w, h)
                    } else {
                        solverlab_core::rigid::gyroscopic_explicit(b, &s.q, &s.w, h)
                    };
                }
            });
        }
        self.rigid.last_substep = substep >= substeps;
        if cfg.contacts_per_frame && substep > 1 && self.rigid.carried(substeps) {
            self.rigid.advance(scene, st, cfg, h, time);
        } else {
            self.rigid.prepare(scene, st, cfg, h, time, if cfg.contacts_per_frame { substeps } else { 1 });
        }
        self.rigid.frame_h = h * substeps as f64;
        let mut info = SolveInfo::default();
        // Each island group stops on its own test whenever there is a tolerance; the violation is
        // computed in full only when the observer asks for it, and otherwise up to the first
        // joint above the tolerance (the contacts' term always in full: the relax pass reuses it).
        let tolerance = (cfg.tolerance > 0.0).then_some(cfg.tolerance);
        let wants = report && observer.wants_violation();
        let stop = Stopping::new(cfg.iterations as usize, tolerance, wants);
        let mut quiet = NullObserver;
        let observer: &mut dyn Observer = if report { observer } else { &mut quiet };
        let split = cfg.split_impulse && cfg.feedback == Feedback::Baumgarte;
        let groups = self.rigid.group_count();
        let friction = cfg.friction_pass.sweeps(cfg.relax_iterations).0;
        info.converged = groups == 0;
        // With the relax sweeps at the poses, the test after the last iteration a step allows
        // takes the contacts' violation from them, after `finish`, unless it is reported: the
        // joints' is taken here (up to the first joint above the tolerance).
        let at_poses = cfg.relax_separation == RelaxSeparation::Poses && cfg.relax_iterations > 0;
        let defer = at_poses && !wants;
        let mut deferred: Option<f64> = None;
        for it in stop.iterations() {
            let (mut max, mut sum2, mut count, mut dl2) = (0.0_f64, 0.0, 0usize, 0.0);
            for g in 0..groups {
                if self.rigid.group_done(g) {
                    continue;
                }
                let (m, s, c, d) = self.rigid.sweep(g, st, cfg.omega, Pass::Biased, friction);
                (max, sum2, count, dl2) = (max.max(m), sum2 + s, count + c, dl2 + d);
                if split {
                    let (m, s, c, d) = self.rigid.sweep(g, st, cfg.omega, Pass::Split, false);
                    (max, sum2, count, dl2) = (max.max(m), sum2 + s, count + c, dl2 + d);
                }
                let measured = match tolerance {
                    Some(t) if defer && it == stop.cap() => {
                        let joints = self.rigid.joint_violation(g, st, h, t);
                        deferred = Some(deferred.unwrap_or(0.0).max(joints));
                        Measured { violation: None, met: false }
                    }
                    _ => stop.measure(|bound| self.rigid.violation(g, st, h, bound)),
                };
                if measured.met || (cfg.velocity_tolerance > 0.0 && m <= cfg.velocity_tolerance) {
                    self.rigid.set_group_done(g);
                }
            }
            (info.iterations, info.outer, info.residual) = (it, it, max);
            let violation = wants.then(|| self.rigid.worst_violation());
            let measured = Measured { violation, met: (0..groups).all(|g| self.rigid.group_done(g)) };
            if stop.report(observer, it, 1, sweep_residuals((max, sum2, count, dl2)), measured) {
                info.converged = measured.met;
                break;
            }
        }
        self.rigid.finish(scene, st, cfg, h);
        if let (Some(joints), Some(t)) = (deferred, tolerance) {
            let met = (0..groups).all(|g| self.rigid.group_done(g));
            info.converged = met || (joints <= t && !self.rigid.end_penetration_above(t));
        }
        info
    }

    /// The particle part of a step (steps 1–8 of the module docs).
    fn solve_particles(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let scene = ctx.scene;
        let h = ctx.h;
        self.h = h;
        if self.w.len() != scene.particles.len() {
            self.prepare(scene)?;
        }
        // 1. Velocities.
        let n = state.x.len();
        for ((v, x), xp) in self.prepared.v.iter_mut().zip(&state.x).zip(&state.x_prev) {
            *v = (x - xp) / h;
        }
        self.v0.clone_from(&self.prepared.v);
        self.prepared.vp.clear();
        self.prepared.vp.resize(n, Vec3::zeros());
        // 2–3. Rows at the start-of-step positions, with speculative margins.
        let slop = self.cfg.slop;
        self.speeds.clear();
        self.speeds.extend(self.prepared.v.iter().map(|v| v.norm() * h + slop));
        let max_speed = self.speeds.iter().copied().fold(slop, f64::max);
        let mut rows = std::mem::take(&mut self.rows);
        let speeds = &self.speeds;
        gather_row_set(scene, &state.x_prev, state.time - h, 2.0 * max_speed, |i| speeds[i], &mut rows);
        self.rows = rows;
        // 4. The warm start, row by row as they are prepared.
        let warm = Warm {
            ids: &self.item_ids,
            index: &self.row_index,
            lambda: &self.warm,
            split: &self.warm_split,
            factor: self.cfg.warm_start,
        };
        let warm = (self.cfg.warm_start > 0.0).then_some(&warm);
        // Large coloured sweeps visit the rows stored in colour order (see `colour_order`), when
        // the gathered rows are those it was made for.
        let sorted = !self.colour_order.is_empty()
            && self.rows.len() == self.colour_order_ids.len()
            && self.rows.heads().iter().zip(&self.colour_order_ids).all(|(r, id)| r.id == *id);
        let order = sorted.then_some(self.colour_order.as_slice());
        self.prepared.prepare(scene, &self.rows, order, &self.w, &self.cfg, h, &self.v0, warm);
        // (Still one prepared row per gathered row: a contact that gained friction rows since
        // the layout was made sends the step through the one-by-one sweep.)
        self.prepared.in_layout = sorted && self.prepared.vrows.len() == self.rows.len();
        // The order is rebuilt only when the set of rows changes; so is the index by which the
        // next warm start finds these rows' impulses (the same rows: by position).
        if self.prepared.ids != self.item_ids {
            let pairs: Vec<[usize; 2]> = self
                .prepared
                .items
                .iter()
                .map(|it| match *it {
                    Item::Single(r) | Item::Friction { normal: r, .. } => {
                        let row = &self.prepared.vrows[r];
                        let mut p = self.prepared.parts.of(row).map(|(i, _)| i);
                        let a = p.next().unwrap_or(0);
                        [a, if row.n == 2 { p.next().unwrap_or(a) } else { a }]
                    }
                })
                .collect();
            self.ordering = Ordering::new(self.cfg.order, &pairs, scene.particles.len());
            self.row_index = self.prepared.ids.iter().enumerate().map(|(k, id)| (*id, k)).collect();
            self.item_ids.clone_from(&self.prepared.ids);
            if !sorted {
                // One prepared row per gathered row (no friction pairs): the colour order of the
                // prepared rows is that of the gathered ones.
                let one_to_one = self.prepared.items.len() == self.rows.len();
                self.colour_order.clear();
                self.colour_order_ids.clear();
                self.prepared.layout.clear();
                if self.ordering.colors() > 0 && one_to_one && self.rows.len() >= crate::common::PARALLEL_ROWS {
                    // Within each colour, the rows of each particle block, then those that
                    // straddle two (stable: in the colour's order within a block).
                    let n = self.prepared.v.len();
                    let forward = self.ordering.forward();
                    for range in self.ordering.color_ranges() {
                        let rows = &self.rows;
                        let block = |&k: &u32| {
                            let particles: Vec<usize> =
                                rows.get(k as usize).particles.iter().map(|&p| p as usize).collect();
                            block_of(&particles, rows::BLOCKS, n)
                        };
                        let mut in_colour: Vec<u32> = forward[range].iter().map(|&k| k as u32).collect();
                        let start = self.colour_order.len();
                        let mut parts = group_by_block(&mut in_colour, rows::BLOCKS, start, block);
                        parts.push(start + in_colour.len());
                        self.prepared.layout.push(parts);
                        self.colour_order.extend(in_colour);
                    }
                    self.colour_order_ids.extend(self.rows.heads().iter().map(|r| r.id));
                }
            }
        }
        // 5. Biased (and split) sweeps.
        let mut info = SolveInfo::default();
        let split = self.prepared.any_split;
        let omega = self.cfg.omega;
        let tolerance = (self.cfg.tolerance > 0.0).then_some(self.cfg.tolerance);
        let stop = Stopping::new(self.cfg.iterations as usize, tolerance, observer.wants_violation());
        // Sweeps with parallel passes (the coloured layout) run, with the stopping test, on a
        // worker thread of the pool ([`crate::common::on_worker`]).
        let parallel = self.prepared.in_layout && self.prepared.vrows.len() >= crate::common::PARALLEL_ROWS;
        let friction = self.cfg.friction_pass.sweeps(self.cfg.relax_iterations);
        for it in stop.iterations() {
            let iteration = |solver: &mut Self, state: &State| {
                let (w, x0, p) = (&solver.w, &state.x_prev, &mut solver.prepared);
                let (mut max, mut sum2, mut count, mut dl2) =
                    p.sweep(Pass::Biased, friction.0, w, x0, omega, &mut solver.ordering, &mut solver.rng);
                if split {
                    let (m, s, c, d) = p.sweep(Pass::Split, false, w, x0, omega, &mut solver.ordering, &mut solver.rng);
                    (max, sum2, count, dl2) = (max.max(m), sum2 + s, count + c, dl2 + d);
                }
                // The common violation when the observer asks for it; otherwise the stopping
                // test alone, which stops at the first row above the tolerance.
                ((max, sum2, count, dl2), stop.measure(|bound| solver.violation_until(scene, state, h, bound)))
            };
            let (stats, measured) = crate::common::on_worker(parallel, || iteration(self, state));
            let max = stats.0;
            (info.iterations, info.outer, info.residual) = (it, it, max);
            // Or the own residual at most `velocity_tolerance`.
            let cfg = &self.cfg;
            let met = measured.met || (cfg.velocity_tolerance > 0.0 && max <= cfg.velocity_tolerance);
            if stop.report(observer, it, 1, sweep_residuals(stats), Measured { met, ..measured }) {
                info.converged = met;
                break;
            }
        }
        // 6. Positions, then the nonlinear Gauss-Seidel position sweeps.
        let p = &mut self.prepared;
        for i in 0..n {
            state.x[i] += (p.v[i] - self.v0[i] + p.vp[i]) * h;
        }
        if self.cfg.feedback == Feedback::Baumgarte {
            for _ in 0..self.cfg.position_iterations {
                p.position_sweep(&mut state.x, &state.x_prev, &self.w, &self.cfg);
            }
        }
        // 7. Relax and restitution change velocities only.
        self.v_solved.clone_from(&p.v);
        let v_solved = &self.v_solved;
        for _ in 0..self.cfg.relax_iterations {
            p.sweep(Pass::Relax, friction.1, &self.w, &state.x_prev, omega, &mut self.ordering, &mut self.rng);
        }
        for k in 0..p.bouncy.len() {
            let r = p.bouncy[k];
            let row = p.vrows[r];
            let approached = row.vn0 < -self.cfg.restitution_threshold;
            if row.restitution > 0.0 && row.m > 0.0 && approached && row.lambda > 0.0 {
                let new = (row.lambda - row.m * (p.jv(r) + row.restitution * row.vn0)).max(0.0);
                p.vrows[r].lambda = new;
                p.apply(&self.w, r, new - row.lambda);
            }
        }
        for (((xp, v), vs), vp) in state.x_prev.iter_mut().zip(&p.v).zip(v_solved).zip(&p.vp) {
            *xp += (vs - v + vp) * h;
        }
        // 8. Keep the impulses for the next warm start, in the order of `item_ids` (this step's
        // ids), both in one pass over the rows.
        self.warm.clear();
        self.warm_split.clear();
        for r in &p.vrows {
            self.warm.push(r.lambda);
            self.warm_split.push(if r.split { r.split_lambda } else { f64::NAN });
        }
        Ok(info)
    }
}
