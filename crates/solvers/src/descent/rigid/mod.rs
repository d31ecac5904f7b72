//! Block descent on 6-DoF rigid bodies: AVBD as the authors' 2-D demo implements it, in 3-D,
//! one 6 × 6 Newton step per body.
//!
//! # Algorithm
//!
//! A step minimises, over the poses, `Σ_bodies ½‖p − y‖²_M/h² + Σ_rows Eᵣ` with `M = diag(m·I,
//! I_world)`, a body's pose `p = (x, q)` moved by a rotation vector applied on the left
//! (`q ← exp(θ)·q`), and per row `Eᵣ = ½kᵣCᵣ² + λᵣCᵣ` with the force `Fᵣ = clamp(kᵣCᵣ + sᵣλᵣ,
//! fmin, fmax)` along `∇Cᵣ` (`s = 1` but under the compliant augmented Lagrangian, see
//! [`crate::descent::alm`]). Signs: a row's force on the bodies is `−F·∇C`; a contact's `C` is
//! its separation, so it pushes with `F ≤ 0` (`fmin = −∞`, `fmax = 0`), and the forces table
//! and `contacts.csv` report `−F ≥ 0`.
//!
//! 1. **Inertial target.** The shared prediction has set `v ← v + g·h`; from the pose `p⁻` at
//!    the start of the step, `y = (x⁻ + h·v, q_y)` with `q_y` the torque-free drift of `(q⁻, ω)`
//!    over `h` ([`solverlab_core::rigid::torque_free_drift`]: the gyroscopic term), which also
//!    gives the drift's angular velocity `ω_y`.
//! 2. **Contacts** at `p⁻` within 1 cm plus twice the step's fastest point travel
//!    ([`solverlab_core::rigid::rigid_contacts_with`], the narrow phase's stable feature ids);
//!    with `speculative_margin = "relative"`, each pair's own closing speed's travel instead
//!    ([`crate::SpeculativeMargin`]).
//! 3. **Rows** (`descent/rigid/gather.rs`), gathered once per step at `p⁻`:
//!    * per contact, its normal `C = c⁰ + J_a·Δp_a + J_b·Δp_b` linearised at `p⁻` (`Δp` a body's
//!      motion since the start: `(x − x⁻, log(q·q⁻⁻¹))`, `J = (n, r×n)` and `(−n, −r_b×n)`),
//!      and with friction two tangent rows of the same form whose forces are projected
//!      together on the disk `μ|λₙ|` (Coulomb's cone) — the cone of the normal force the sweep
//!      started with, in the primal and in the dual step, as in the demo (the cone of the force
//!      just updated let a box on a 20° slope rock and blow up); the normal row is at the
//!      narrow phase's surface points; the friction rows too, unless the contact's feature pair
//!      stuck in the last step (its friction force inside the cone, its anchors less than 1 cm
//!      apart along the surface), when they hold the anchors where it stuck, so that static
//!      friction keeps it there, while each anchor stays within 1 cm of its fresh point (the
//!      demo keeps the anchors for the normal row too: a rolling sphere, whose old anchor rises
//!      away from the ground, then sank 3 cm);
//!    * per joint three anchor rows `C = e·(p_a − p_b)` along the world axes; a revolute joint's
//!      two axis rows `C = ℓ·(R_a u)·(R_b w)` (`u` the reference and `axis × reference` of
//!      `a`, `w` the axis of `b`) and one inequality row per finite limit on the hinge angle,
//!      `C = ℓ(θ − lower) ≥ 0` or `ℓ(upper − θ) ≥ 0`; a fixed joint's three twist rows
//!      `C = ℓ·e·log(q_b·(q_a·q_rel)⁻¹)`; `ℓ` is the sum of the bodies' bounding radii (m),
//!      so every row is in metres (`descent/rigid/rows.rs`);
//!    * warm start (AVBD Eq. 19): a hard row that was in the last step (matched by id: the
//!      contact's pair and feature, the joint's row) starts from `λ ← αγλ`,
//!      `k ← clamp(γk, k_start, k_max)`, a new one from `λ = 0`, `k = k_start`; a contact's
//!      friction force is kept as a world vector and read on the step's tangent directions,
//!      which are chosen afresh from the normal and may turn (kept per direction, the warm
//!      forces of a leaning 10-box stack turned by 90° and it fell);
//!    * error regularisation (AVBD §3.6): `C(x) = C*(x) − α·C*(x⁻)`; for contacts and limits
//!      only the overlap counts as error (`min(C*(x⁻), 0)`): a gap is kept whole;
//!    * under `penalty = "compliant_alm"`, each hard row's `(k_eff, s)` from its effective
//!      inertia at `p⁻`, `λ ← γλ`, and no ramp ([`crate::descent::alm`]).
//! 4. **Iterations**, `1..=iterations`, each:
//!    - the friction bounds `±μ|λₙ|` from each contact's normal row;
//!    - *primal*: for each movable body in index order (Gauss-Seidel), or with
//!      `order = "colored"` colour by colour (bodies that share no row, stepped on every core
//!      from the same poses: the same numbers for any thread count), the 6 × 6 system
//!      `LHS = M/h² + Σᵣ (kᵣJᵣJᵣᵀ + Gᵣ)`, `RHS = M/h²·(p − y) + Σᵣ JᵣFᵣ` over its rows (the
//!      penalty term while the force is within its bounds, ends included, so that a contact
//!      that just touches resists; a sliding friction pair adds none; `Gᵣ` the diagonal of the
//!      column norms of the row's angular Hessian times `|Fᵣ|`, AVBD §3.5, which keeps `LHS`
//!      positive definite), solved by Cholesky, and `x −= sΔ_lin`, `q ← exp(−sΔ_ang)·q` with
//!      `s` the first of 1, ½, …, 1/128 that does not raise the body's own energy (the
//!      particles' line search, which the papers leave out: with penalties of 10⁶ N/m full
//!      steps threw a sliding box off the floor) (`descent/rigid/block.rs`); the first sweep starts from the initial guess: VBD §3.7's adaptive
//!      `x⁰ = y − g·h²(1 − w)`, `w` the last step's measured acceleration along gravity over
//!      `|g|` clamped to `[0, 1]`, `q⁰ = q_y` (or `inertia`: `y`; `previous`: `p⁻`);
//!    - *dual* (hard rows): `λ ← F(C)` (`clamp(kC + λ, fmin, fmax)`, AVBD Eq. 11; friction
//!      pairs projected on their disk) and, while `λ` is inside its bounds and the penalty
//!      ramps, `k ← min(k + β|C|, k_max)` (Eq. 16);
//!    - stop when the common violation is at most `tolerance`.
//! 5. **Velocities**: `v = (x − x⁻)/h`, `ω = ω_y + log(q·q_y⁻¹)/h` (a free body keeps the drift's
//!    exact `ω`).
//! 6. **Post-stabilisation** (`post_stabilize`, augmented rows only): one more primal sweep with
//!    `α = 0` (every row's whole error), whose dual updates are dropped: it moves the poses, not
//!    the velocities (the authors' demo, `postStabilize`).
//! 7. The forces of the step (the rows' `F` after the last dual update: contacts' normal and
//!    friction forces, each joint's force and its angular rows' torque on its body `a`), the
//!    multipliers and penalties of the hard rows and the anchors of the contacts that stuck
//!    for the next step, and each body's acceleration for the next initial guess.
//!
//! Fixed, sleeping and removed (parked) bodies are not stepped; a joint leaves with its body.
//! Restitution is not modelled (AVBD's position-level steps have none). Scenes that mix
//! particles with rigid bodies are refused in `prepare`.
//!
//! # Residual
//!
//! The largest block step of a body in the sweep, `max(|Δ_lin|, |Δ_ang|)` (m or rad). The
//! stopping test is the relaxation family's rigid measure: the largest penetration of the step's
//! contacts, their surface points carried by the bodies along the contact's normal, and the
//! joints' anchor gaps and angular errors ([`solverlab_core::metrics::joint_violation`]). The
//! observer gets one report per iteration; the step's `converged` is the measure after the
//! post-stabilisation sweep.
//!
//! # Cost
//!
//! Per iteration, every row evaluated once from each movable body it touches (its value,
//! gradient and lumped curvature), one 6 × 6 Cholesky per movable body, one pass over the hard
//! rows for the dual update, and the violation over the contacts and joints. Contacts are found
//! once per step.
//!
//! # References
//!
//! * C. Giles, E. Diaz, C. Yuksel, "Augmented Vertex Block Descent", ACM TOG 44(4) (SIGGRAPH
//!   2025), and the authors' 2-D demo `avbd-demo2d` (its `solver.cpp`, `manifold.cpp`,
//!   `joint.cpp`): the per-body block step, the force bounds, friction with sticking anchors,
//!   the ramp, the warm start, the regularisation and the post-stabilisation.
//! * A. H. Chen, Z. Liu, Y. Yang, C. Yuksel, "Vertex Block Descent", ACM TOG 43(4) (SIGGRAPH
//!   2024): the adaptive initial guess.
//! * M. Müller, M. Macklin, N. Chentanez, S. Jeschke, T.-Y. Kim, "Detailed Rigid Body Simulation
//!   with Extended Position Based Dynamics", SCA 2020: the joints' rows and the angular velocity
//!   read off the orientation change.

mod block;
mod gather;
mod rows;

use solverlab_core::metrics::joint_violation;
use solverlab_core::rigid::{
    rigid_contacts_with, torque_free_drift, ContactForce, ContactScratch, JointForce, JointFrame, RigidContact,
};
use solverlab_core::solver::{Observer, SolveInfo};
use solverlab_core::{Scene, State, Vec3};

use super::{DescentConfig, Guess, Penalty, Rows, Sweep};
use crate::common::stop::{Residuals, Stopping};
use block::{apply, block_step, colour_bodies, Inertia};
use gather::{Contact, Warm};
use rows::{friction_forces, Poses, Row, Vec6};

/// A colour with at least this many bodies is stepped on every core.
const PARALLEL_BODIES: usize = 64;

/// The rigid part of the block-descent solver.
#[derive(Default)]
pub(super) struct RigidDescent {
    frames: Vec<JointFrame>,
    warm: Warm,
    /// Each body's acceleration in the last step (m/s²), for the adaptive initial guess.
    accel: Vec<Vec3>,
    found: Vec<RigidContact>,
    /// The contact search's buffers, kept from step to step as the other families keep theirs.
    contact_scratch: ContactScratch,
    contacts: Vec<Contact>,
    forces: Vec<ContactForce>,
    joint_forces: Vec<JointForce>,
}

/// The step's fixed data: each body's inertia, inertial target and pose at the start, which
/// bodies move.
struct Start {
    target: Vec<Inertia>,
    /// The torque-free drift's angular velocity over the step.
    w_drift: Vec<Vec3>,
    movable: Vec<bool>,
}

impl RigidDescent {
    /// Frames and state for `scene`.
    pub(super) fn prepare(&mut self, scene: &Scene) {
        self.frames = scene.joints.iter().map(|j| JointFrame::new(j, &scene.rigid)).collect();
        self.warm = Warm::default();
        self.accel = vec![Vec3::zeros(); scene.rigid.len()];
    }

    /// The contacts of the last step with their forces.
    pub(super) fn contact_forces(&self) -> &[ContactForce] {
        &self.forces
    }

    /// The joints' forces of the last step.
    pub(super) fn joint_forces(&self) -> &[JointForce] {
        &self.joint_forces
    }

    /// Step 1 and the initial guess: the poses of the start, the inertial targets, which bodies
    /// move; the poses move to the initial guess.
    fn begin(&self, cfg: &DescentConfig, scene: &Scene, state: &mut State, h: f64) -> Start {
        let g = scene.gravity;
        let g2 = g.norm_squared();
        let st = &mut state.rigid;
        let n = scene.rigid.len();
        let mut start = Start {
            target: Vec::with_capacity(n),
            w_drift: Vec::with_capacity(n),
            movable: scene.rigid.iter().zip(st.iter()).map(|(b, s)| !b.is_fixed() && !s.asleep).collect(),
        };
        for (k, (b, s)) in scene.rigid.iter().zip(st.iter_mut()).enumerate() {
            let (q_y, w_y) = if start.movable[k] { torque_free_drift(b, &s.q, &s.w, h) } else { (s.q, s.w) };
            let x_y = s.x + s.v * h;
            let tensor = b.inertia_world(&q_y);
            start.target.push(Inertia { mass: b.mass(), tensor, x: x_y, q: q_y, x0: s.x, q0: s.q });
            start.w_drift.push(w_y);
            if !start.movable[k] {
                continue;
            }
            let weight = if g2 > 0.0 { (self.accel[k].dot(&g) / g2).clamp(0.0, 1.0) } else { 0.0 };
            (s.x, s.q) = match cfg.initial_guess {
                Guess::Adaptive => (x_y - g * (h * h * (1.0 - weight)), q_y),
                Guess::Inertia => (x_y, q_y),
                Guess::Previous => (s.x, s.q),
            };
        }
        start
    }

    /// Steps 2–3: the contacts and every row, at the poses of the start.
    fn gather(&mut self, cfg: &DescentConfig, scene: &Scene, state: &State, h: f64) -> Vec<Row> {
        let st = &state.rigid;
        let (base, reach) = (0.01, 2.0 * h);
        let margin = cfg.speculative_margin.search(&scene.rigid, st, base, reach);
        rigid_contacts_with(scene, st, margin, &mut self.found, &mut self.contact_scratch);
        cfg.speculative_margin.keep(std::slice::from_mut(&mut self.found), &scene.rigid, st, base, reach);
        let mut rows = Vec::new();
        gather::contacts(cfg, &self.warm, &self.found, st, &mut rows, &mut self.contacts);
        gather::joints(cfg, &self.warm, scene, &self.frames, state.time, &mut rows);
        let still = vec![Vec6::zeros(); st.len()];
        let p = Poses::new(st, &self.frames, &still);
        if cfg.rows == Rows::Augmented {
            gather::regularise(cfg, &mut rows, &p);
            if cfg.penalty == Penalty::CompliantAlm {
                let body = |k: usize| {
                    let b = &scene.rigid[k];
                    (!b.is_fixed() && !st[k].asleep).then(|| (b.mass(), b.inertia_world(&st[k].q)))
                };
                gather::alm_rows(cfg, scene, &mut rows, &p, h, &body);
            }
        }
        rows
    }

    /// One step of the rigid bodies (see the module docs).
    pub(super) fn solve(
        &mut self,
        cfg: &DescentConfig,
        scene: &Scene,
        state: &mut State,
        h: f64,
        observer: &mut dyn Observer,
    ) -> SolveInfo {
        if self.frames.len() != scene.joints.len() || self.accel.len() != scene.rigid.len() {
            self.prepare(scene);
        }
        let n = scene.rigid.len();
        let mut rows = self.gather(cfg, scene, state, h);
        let start = self.begin(cfg, scene, state, h);
        let mut touching: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (r, row) in rows.iter().enumerate() {
            for body in [Some(row.a), row.b].into_iter().flatten().filter(|&k| start.movable[k]) {
                touching[body].push(r);
            }
        }
        let mut dp: Vec<Vec6> = (0..n).map(|k| start.target[k].motion(&state.rigid[k].x, &state.rigid[k].q)).collect();
        let colours = (cfg.order == Sweep::Colored).then(|| colour_bodies(&start.movable, &rows));
        let mut info = SolveInfo::default();
        // Step 4: the iterations, each reporting the violation (computed in full: the rigid rows
        // have no test cut short), until it is at most the tolerance.
        let stop = Stopping::new(cfg.iterations as usize, Some(cfg.tolerance), true);
        for it in stop.iterations() {
            self.friction_bounds(&mut rows, &state.rigid, &dp);
            let residual = self.sweep(&rows, &touching, &start, colours.as_deref(), state, &mut dp, h);
            if cfg.rows == Rows::Augmented {
                let p = Poses::new(&state.rigid, &self.frames, &dp);
                dual(cfg, &mut rows, &p);
            }
            let measured = stop.measure(|_| self.violation(scene, state));
            (info.iterations, info.outer, info.residual) = (it, it, residual);
            if stop.report(observer, it, 1, Residuals::max(residual), measured) {
                break;
            }
        }
        // Step 5: the velocities.
        for k in (0..n).filter(|&k| start.movable[k]) {
            let s = &mut state.rigid[k];
            s.v = (s.x - start.target[k].x0) / h;
            s.w = start.w_drift[k] + (s.q * start.target[k].q.inverse()).scaled_axis() / h;
        }
        // Step 7's forces and warm start are those of the iterations.
        self.record(scene, &rows, &state.rigid, &dp, state.time);
        self.remember(&rows);
        // Step 6: post-stabilisation, positions only.
        if cfg.rows == Rows::Augmented && cfg.post_stabilize {
            for row in rows.iter_mut() {
                row.offset = 0.0;
            }
            self.friction_bounds(&mut rows, &state.rigid, &dp);
            self.sweep(&rows, &touching, &start, colours.as_deref(), state, &mut dp, h);
        }
        info.converged = self.violation(scene, state) <= cfg.tolerance;
        // Step 7: each body's acceleration over the step (the velocity it came in with had gravity
        // added by the prediction).
        let g = scene.gravity;
        for k in (0..n).filter(|&k| start.movable[k]) {
            let before = (start.target[k].x - start.target[k].x0) / h - g * h;
            self.accel[k] = (state.rigid[k].v - before) / h;
        }
        info
    }

    /// One primal sweep (step 4); returns the largest block step (m or rad).
    #[allow(clippy::too_many_arguments)]
    fn sweep(
        &self,
        rows: &[Row],
        touching: &[Vec<usize>],
        start: &Start,
        colours: Option<&[Vec<usize>]>,
        state: &mut State,
        dp: &mut [Vec6],
        h: f64,
    ) -> f64 {
        let mut residual = 0.0f64;
        let mut take = |state: &mut State, dp: &mut [Vec6], k: usize, delta: &Vec6| {
            let s = &mut state.rigid[k];
            apply(&mut s.x, &mut s.q, delta);
            dp[k] = start.target[k].motion(&s.x, &s.q);
            let size = delta.fixed_rows::<3>(0).norm().max(delta.fixed_rows::<3>(3).norm());
            residual = crate::common::larger(residual, size);
        };
        let step = |st: &[solverlab_core::rigid::RigidState], dp: &[Vec6], k: usize| {
            let p = Poses::new(st, &self.frames, dp);
            block_step(rows, &touching[k], &p, k, &start.target[k], h)
        };
        match colours {
            None => {
                for k in (0..start.movable.len()).filter(|&k| start.movable[k]) {
                    let delta = step(&state.rigid, dp, k);
                    take(state, dp, k, &delta);
                }
            }
            Some(colours) => {
                // The bodies of a colour share no row: their steps read the same poses.
                for colour in colours {
                    let steps: Vec<Vec6> = if colour.len() >= PARALLEL_BODIES {
                        use rayon::prelude::*;
                        let (st, dp) = (&state.rigid, &*dp);
                        colour.par_iter().map(|&k| step(st, dp, k)).collect()
                    } else {
                        colour.iter().map(|&k| step(&state.rigid, dp, k)).collect()
                    };
                    for (&k, delta) in colour.iter().zip(&steps) {
                        take(state, dp, k, delta);
                    }
                }
            }
        }
        residual
    }

    /// The friction bounds `±μ|Fₙ|` of every friction row from its normal row (its multiplier,
    /// or a spring's force at the current poses).
    fn friction_bounds(&self, rows: &mut [Row], st: &[solverlab_core::rigid::RigidState], dp: &[Vec6]) {
        let p = Poses::new(st, &self.frames, dp);
        for r in 0..rows.len() {
            if let Some(f) = rows[r].friction {
                let normal = &rows[f.normal];
                let push = if normal.hard { normal.lambda } else { normal.force(normal.value(&p)) };
                let bound = f.mu * push.abs();
                (rows[r].fmin, rows[r].fmax) = (-bound, bound);
            }
        }
    }

    /// The common violation at the current poses: the step's contacts' penetration (surface
    /// points carried by the bodies) and the joints' errors.
    fn violation(&self, scene: &Scene, state: &State) -> f64 {
        let st = &state.rigid;
        let mut v = joint_violation(scene, st, state.time);
        for c in &self.contacts {
            let pa = st[c.a].x + st[c.a].q * c.la;
            let pb = c.b.map_or(c.lb, |k| st[k].x + st[k].q * c.lb);
            v = v.max(-(pa - pb).dot(&c.n));
        }
        v
    }

    /// The forces of the step (step 7): each contact's normal and friction force, each active
    /// joint's force and torque on its body `a`.
    fn record(
        &mut self,
        scene: &Scene,
        rows: &[Row],
        st: &[solverlab_core::rigid::RigidState],
        dp: &[Vec6],
        time: f64,
    ) {
        let p = Poses::new(st, &self.frames, dp);
        let force = |row: &Row| if row.hard { row.lambda } else { row.force(row.value(&p)) };
        self.forces.clear();
        for (found, c) in self.found.iter().zip(&self.contacts) {
            let normal = force(&rows[c.normal]);
            let tangent = match rows.get(c.normal + 1) {
                Some(first) if first.friction.is_some() => {
                    let second = &rows[c.normal + 2];
                    if first.hard {
                        first.lambda.hypot(second.lambda)
                    } else {
                        let (f1, f2, _) = friction_forces(first, second, first.value(&p), second.value(&p));
                        f1.hypot(f2)
                    }
                }
                _ => 0.0,
            };
            self.forces.push(ContactForce { contact: *found, normal_force: -normal, tangent_force: tangent });
        }
        self.joint_forces.clear();
        for j in (0..scene.joints.len()).filter(|&j| scene.joint_active(j, time)) {
            self.joint_forces.push(JointForce { joint: j, force: Vec3::zeros(), torque: Vec3::zeros() });
        }
        for row in rows {
            if let Some((j, angular)) = row.joint() {
                let Some(out) = self.joint_forces.iter_mut().find(|f| f.joint == j) else { continue };
                let grad = row.eval(&p, Some(row.a)).1;
                let f = force(row);
                if angular {
                    out.torque -= grad.fixed_rows::<3>(3) * f;
                } else {
                    out.force -= grad.fixed_rows::<3>(0) * f;
                }
            }
        }
    }

    /// What the next step starts from (step 7): the hard rows' multipliers and penalties, and
    /// the anchors of the contacts whose friction held inside the cone without drifting.
    fn remember(&mut self, rows: &[Row]) {
        self.warm.rows.clear();
        self.warm.rows.extend(rows.iter().filter(|r| r.hard).map(|r| (r.id, (r.lambda, r.k))));
        self.warm.anchors.clear();
        self.warm.friction.clear();
        for c in &self.contacts {
            if let Some(first) = rows.get(c.normal + 1).filter(|r| r.friction.is_some() && r.hard) {
                let second = &rows[c.normal + 2];
                self.warm.friction.insert(rows[c.normal].id, c.t[0] * first.lambda + c.t[1] * second.lambda);
                if first.lambda.hypot(second.lambda) < first.fmax && c.drift < gather::STICK_DRIFT {
                    self.warm.anchors.insert(rows[c.normal].id, c.anchors);
                }
            }
        }
    }
}

/// The dual update of the hard rows (step 4): `λ ← F(C)`, a friction pair's projected on its
/// disk together, and the penalty ramp `k ← min(k + β|C|, k_max)` while `λ` is inside its
/// bounds (not under the compliant augmented Lagrangian).
fn dual(cfg: &DescentConfig, rows: &mut [Row], p: &Poses) {
    let ramp = cfg.penalty == Penalty::Ramp;
    let grow = |row: &mut Row, c: f64| row.k = (row.k + cfg.beta * c.abs()).min(cfg.k_max);
    for r in 0..rows.len() {
        if !rows[r].hard {
            continue;
        }
        match rows[r].friction {
            Some(f) if f.second => continue,
            Some(_) => {
                // The cone is the one the sweep started with (its normal force before this
                // update), as in the authors' demo: the cone of the force just updated let a box
                // on a 20° slope rock and blow up in two steps.
                let (c1, c2) = (rows[r].value(p), rows[r + 1].value(p));
                let (f1, f2, inside) = friction_forces(&rows[r], &rows[r + 1], c1, c2);
                (rows[r].lambda, rows[r + 1].lambda) = (f1, f2);
                if ramp && inside {
                    grow(&mut rows[r], c1);
                    grow(&mut rows[r + 1], c2);
                }
            }
            None => {
                let c = rows[r].value(p);
                let row = &mut rows[r];
                row.lambda = row.force(c);
                if ramp && row.lambda > row.fmin && row.lambda < row.fmax {
                    grow(row, c);
                }
            }
        }
    }
}
