//! Extended position-based dynamics on 6-DoF rigid bodies: the relaxation family's rows for
//! [`solverlab_core::rigid`] bodies, after Müller, Macklin, Chentanez, Jeschke and Kim,
//! "Detailed Rigid Body Simulation with Extended Position Based Dynamics" (SCA 2020).
//!
//! Per (sub)step, after the shared prediction `v ← v + g·h`:
//!
//! 1. Predict the poses: `x ← x + h·v`, and `q`, `ω` by the torque-free drift of `ω` (the
//!    gyroscopic term, [`solverlab_core::rigid::torque_free_drift`]); keep the predicted poses.
//! 2. Contacts once, at the predicted poses, within `2·h·(|v| + |ω|·r)` plus 1 cm
//!    ([`rigid_contacts`]); each keeps its normal `n` (from b to a) and its two surface points
//!    in the bodies' frames, `a = p + n·s/2` and `b = p − n·s/2` for the narrow phase's midpoint
//!    `p` and separation `s`.
//! 3. Each iteration (shared with the particle rows' loop), with the generalised inverse mass of
//!    a body for a push along `n` at arm `r`, `w = 1/m + (r×n)·I⁻¹(r×n)` (`I⁻¹` at the predicted
//!    orientation, one tensor per step), and a correction `Δλ` along `n` moving `x` by `Δλ·n/m`
//!    and turning `q` by the rotation vector `Δλ·I⁻¹(r×n)`, in this order:
//!    * joints (ω, XPBD compliance `α̃ = α/h²` on the anchor): the anchors together,
//!      `Δλ = (c − α̃λ)/(w_a + w_b + α̃)` along their gap; a revolute joint's axes aligned and its
//!      angle kept within its limits, a fixed joint's relative orientation restored, each an
//!      angular correction `Δλ = θ/(n·I_a⁻¹n + n·I_b⁻¹n)` about the error's axis `n`;
//!    * every contact's normal row (ω = 1, as for the particle contacts): a penetrating point,
//!      `C = (a − b)·n < 0`, gets `Δλₙ = −C/(w_a + w_b)`, except that an overlap deeper than
//!      `3 m/s·h` at the prediction is pushed out by that much per step (the impulse family's
//!      default push-out speed; a deep overlap removed in one step launches the bodies);
//!    * then every contact's friction, at the position level as for the particle rows: the
//!      correction that would cancel the points' tangential displacement since the step's start
//!      (prediction included) is added to the accumulated tangential correction, clamped to
//!      `|λₜ| ≤ μ·λₙ` (static inside the cone, sliding at the Coulomb force beyond). The friction
//!      rows come after all normal rows so that they see this iteration's normal loads:
//!      interleaved, contact by contact, they let a 10-box stack gain energy until it fell even at
//!      100 substeps.
//!
//!    Gauss-Seidel applies each correction at once; Jacobi computes every correction from the
//!    poses at the start of the sweep and applies each body's mean (times ω for joints), and each
//!    multiplier grows by the share of its change that was applied.
//! 4. Velocities from the corrections: `v ← v + Δx/h`, `ω ← ω + 2·vec(q·q̃⁻¹)/h` with `q̃` the
//!    predicted orientation (a free body keeps the drift's exact `ω`).
//! 5. Velocity pass (ten Gauss-Seidel passes) over the contacts that pushed: restitution, the
//!    normal velocity set to `−e·vₙ₀` (`vₙ₀` before the step) for points that approached faster
//!    than `2·|g|·h`; otherwise a separating speed above `2·|g|·h` (a push-out) is cut to that.
//!
//! Residual: the largest correction asked for (m or rad), and the common violation: the largest
//! penetration of the step's contacts and the joints' gaps and angular errors at the current
//! poses.

use nalgebra::{Matrix3, UnitQuaternion};
use solverlab_core::rigid::{
    rigid_contacts, rotate, torque_free_drift, ContactForce, JointForce, JointKind, Other, RigidContact, RigidState,
};
use solverlab_core::{Scene, Vec3};

use crate::pgs::joints::JointFrame;

/// The fastest an overlap is pushed out (m/s), the impulse family's default `max_push`.
const MAX_PUSH: f64 = 3.0;

/// Gauss-Seidel passes of the velocity pass over the contacts.
const VELOCITY_PASSES: usize = 10;

/// One contact of the step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Contact {
    pub(crate) a: usize,
    pub(crate) b: Option<usize>,
    pub(crate) n: Vec3,
    /// Surface points in the bodies' frames (for a world collider, `lb` is the world point).
    pub(crate) la: Vec3,
    pub(crate) lb: Vec3,
    /// Their world positions at the step's start.
    pub(crate) a0: Vec3,
    pub(crate) b0: Vec3,
    /// The penetration this step may leave (m, ≤ 0): an overlap deeper than `MAX_PUSH·h` is
    /// pushed out by that much per step.
    pub(crate) floor: f64,
    pub(crate) mu: f64,
    e: f64,
    /// Normal velocity before the step (m/s), for restitution.
    vn0: f64,
    pub(crate) ln: f64,
    pub(crate) lt: Vec3,
}

/// The rigid part of the relaxation solver.
#[derive(Default)]
pub(crate) struct RigidXpbd {
    contacts: Vec<Contact>,
    found: Vec<RigidContact>,
    frames: Vec<JointFrame>,
    joint_lambda: Vec<f64>,
    predicted: Vec<(Vec3, UnitQuaternion<f64>)>,
    inv_m: Vec<f64>,
    inv_i: Vec<Matrix3<f64>>,
    /// Jacobi scratch: summed position and rotation corrections and their count per body.
    dx: Vec<Vec3>,
    dq: Vec<Vec3>,
    count: Vec<u32>,
    /// Jacobi: this sweep's multiplier changes (joints, contact normals, contact tangents), added
    /// once the sweep knows which share of them it applied.
    pending: Vec<(Pending, f64, Vec3)>,
    /// Jacobi: the poses at the start of the sweep (kept between sweeps, so that the iteration
    /// loop allocates nothing for them).
    frozen: Vec<RigidState>,
    /// Whether the current sweep is a Jacobi sweep.
    jacobi: bool,
    forces: Vec<ContactForce>,
    /// Per joint, whether it holds this step (a joint leaves with a removed body).
    active: Vec<bool>,
    /// Per joint, the position impulses of this step on its body `a`: the anchors' push (kg·m)
    /// and the angular rows' turn (kg·m²·rad).
    joint_push: Vec<(Vec3, Vec3)>,
    /// The step (s).
    h: f64,
}

/// Which multiplier a pending Jacobi change belongs to.
#[derive(Clone, Copy, Debug)]
enum Pending {
    Joint(usize),
    JointTurn(usize),
    Normal(usize),
    Tangent(usize),
}

/// The pose changes one row asks for: up to two bodies, each `(body, Δx, rotation vector)`.
#[derive(Clone, Copy, Debug, Default)]
struct Fix {
    moves: [(usize, Vec3, Vec3); 2],
    len: usize,
}

impl Fix {
    fn add(&mut self, k: usize, dx: Vec3, dq: Vec3) {
        self.moves[self.len] = (k, dx, dq);
        self.len += 1;
    }
}

impl RigidXpbd {
    pub(crate) fn forces(&self) -> &[ContactForce] {
        &self.forces
    }

    /// The step's contacts, in the order of [`RigidXpbd::found`] (after [`RigidXpbd::begin`]).
    pub(crate) fn contacts(&self) -> &[Contact] {
        &self.contacts
    }

    /// The step's contacts, to set their multipliers (the Newton family solves them itself).
    pub(crate) fn contacts_mut(&mut self) -> &mut [Contact] {
        &mut self.contacts
    }

    /// The narrow phase's contacts of the step, one per [`Contact`].
    pub(crate) fn found(&self) -> &[RigidContact] {
        &self.found
    }

    /// The joints' frames in their bodies.
    pub(crate) fn frames(&self) -> &[JointFrame] {
        &self.frames
    }

    /// The poses the bodies were predicted to in [`RigidXpbd::begin`].
    pub(crate) fn predicted(&self) -> &[(Vec3, UnitQuaternion<f64>)] {
        &self.predicted
    }

    /// `passes` Gauss-Seidel passes over the friction rows alone, at the poses `st`, with the
    /// contacts' normal multipliers as they are: the Newton family's friction (its normal rows
    /// are solved as one system, its friction as the relaxation family's).
    pub(crate) fn friction_passes(&mut self, st: &mut [RigidState], passes: usize) {
        self.jacobi = false;
        let mut rows = Vec::with_capacity(1);
        let count = self.contacts.len();
        for c in (0..passes).flat_map(|_| 0..count) {
            rows.clear();
            self.friction(st, c, &mut rows);
            for fix in &rows {
                for &(k, dx, dq) in &fix.moves[..fix.len] {
                    st[k].x += dx;
                    st[k].q = rotate(&st[k].q, &dq, 1.0);
                }
            }
        }
    }

    /// Body `k`'s world inverse inertia, at the orientation it was predicted to (corrections
    /// within a step turn a body little, so the step keeps one tensor, as the impulse family
    /// does).
    fn inv_i(&self, k: usize) -> Matrix3<f64> {
        self.inv_i[k]
    }

    /// The generalised inverse mass of body `k` (or the world) for a push along `n` at arm `r`.
    fn w(&self, k: Option<usize>, r: &Vec3, n: &Vec3) -> f64 {
        k.map_or(0.0, |k| {
            let rn = r.cross(n);
            self.inv_m[k] + rn.dot(&(self.inv_i(k) * rn))
        })
    }

    /// The angular inverse mass of body `k` about `n`.
    fn w_rot(&self, k: Option<usize>, n: &Vec3) -> f64 {
        k.map_or(0.0, |k| n.dot(&(self.inv_i(k) * n)))
    }

    /// Steps 1–2: predicted poses and the step's contacts.
    pub(crate) fn begin(&mut self, scene: &Scene, st: &mut [RigidState], h: f64, time: f64) {
        let n = scene.rigid.len();
        self.active.clear();
        self.active.extend((0..scene.joints.len()).map(|j| scene.joint_active(j, time)));
        self.inv_m = scene.rigid.iter().map(|b| b.inv_mass).collect();
        if self.frames.len() != scene.joints.len() {
            self.frames = scene.joints.iter().map(|j| JointFrame::new(j, &scene.rigid)).collect();
        }
        self.joint_lambda.clear();
        self.joint_lambda.resize(scene.joints.len(), 0.0);
        self.h = h;
        self.joint_push.clear();
        self.joint_push.resize(scene.joints.len(), (Vec3::zeros(), Vec3::zeros()));
        let speed = solverlab_core::rigid::max_point_speed(&scene.rigid, st);
        self.predicted.clear();
        let mut before = Vec::with_capacity(n);
        let mut start = Vec::with_capacity(n);
        for (b, s) in scene.rigid.iter().zip(st.iter_mut()) {
            before.push((s.v, s.w));
            start.push((s.x, s.q));
            if !b.is_fixed() && !s.asleep {
                s.x += s.v * h;
                (s.q, s.w) = torque_free_drift(b, &s.q, &s.w, h);
            }
            self.predicted.push((s.x, s.q));
        }
        self.inv_i.clear();
        self.inv_i.extend(scene.rigid.iter().zip(st.iter()).map(|(b, s)| b.inv_inertia_world(&s.q)));
        let mut found = std::mem::take(&mut self.found);
        rigid_contacts(scene, st, 0.01 + 2.0 * h * speed, &mut found);
        self.contacts.clear();
        for c in &found {
            let b = match c.b {
                Other::Body(k) => Some(k),
                Other::Collider(_) => None,
            };
            let (n, s) = (c.point.normal, c.point.separation);
            let pa = c.point.point + n * (0.5 * s);
            let pb = c.point.point - n * (0.5 * s);
            let la = st[c.a].q.inverse_transform_vector(&(pa - st[c.a].x));
            let lb = b.map_or(pb, |k| st[k].q.inverse_transform_vector(&(pb - st[k].x)));
            let vel = |k: usize, p: &Vec3| before[k].0 + before[k].1.cross(&(p - st[k].x));
            let vn0 = n.dot(&(vel(c.a, &pa) - b.map_or(Vec3::zeros(), |k| vel(k, &pb))));
            self.contacts.push(Contact {
                a: c.a,
                b,
                n,
                la,
                lb,
                // Where the two points were at the step's start: the friction rows measure the
                // tangential slip over the whole step, prediction included.
                a0: start[c.a].0 + start[c.a].1 * la,
                b0: b.map_or(pb, |k| start[k].0 + start[k].1 * lb),
                floor: (s + MAX_PUSH * h).min(0.0),
                mu: c.friction,
                e: c.restitution,
                vn0,
                ln: 0.0,
                lt: Vec3::zeros(),
            });
        }
        self.found = found;
        self.dx.clear();
        self.dx.resize(n, Vec3::zeros());
        self.dq.clear();
        self.dq.resize(n, Vec3::zeros());
        self.count.clear();
        self.count.resize(n, 0);
    }

    fn point(st: &[RigidState], k: Option<usize>, l: &Vec3) -> Vec3 {
        k.map_or(*l, |k| st[k].x + st[k].q * l)
    }

    /// A positional correction `impulse` (kg·m) at world points `pa` (on `a`, along +) and `pb`
    /// (on `b`, along −).
    #[allow(clippy::too_many_arguments)]
    fn push_pair(
        &self,
        st: &[RigidState],
        a: Option<usize>,
        b: Option<usize>,
        pa: &Vec3,
        pb: &Vec3,
        impulse: Vec3,
    ) -> Fix {
        let mut fix = Fix::default();
        if let Some(k) = a {
            let ra = pa - st[k].x;
            fix.add(k, impulse * self.inv_m[k], self.inv_i(k) * ra.cross(&impulse));
        }
        if let Some(k) = b {
            let rb = pb - st[k].x;
            fix.add(k, -impulse * self.inv_m[k], -(self.inv_i(k) * rb.cross(&impulse)));
        }
        fix
    }

    /// An angular correction: `a` turns by `I_a⁻¹·n`, `b` by the opposite.
    fn turn_pair(&self, a: Option<usize>, b: Option<usize>, n: Vec3) -> Fix {
        let mut fix = Fix::default();
        if let Some(k) = a {
            fix.add(k, Vec3::zeros(), self.inv_i(k) * n);
        }
        if let Some(k) = b {
            fix.add(k, Vec3::zeros(), -(self.inv_i(k) * n));
        }
        fix
    }

    /// One sweep (step 3); returns the largest correction asked for (m or rad).
    pub(crate) fn sweep(&mut self, scene: &Scene, st: &mut [RigidState], jacobi: bool, omega: f64, h: f64) -> f64 {
        let mut residual = 0.0_f64;
        self.jacobi = jacobi;
        self.pending.clear();
        // Jacobi reads every row at the sweep's start: a copy of the poses, and sums per body.
        let mut frozen = std::mem::take(&mut self.frozen);
        if jacobi {
            frozen.clear();
            frozen.extend_from_slice(st);
        }
        let mut rows = Vec::with_capacity(4);
        let joints = scene.joints.len();
        for r in 0..joints + 2 * self.contacts.len() {
            rows.clear();
            {
                let read: &[RigidState] = if jacobi { &frozen } else { st };
                let e = if r < joints {
                    if !self.active[r] {
                        continue;
                    }
                    self.joint(scene, read, r, omega, h, &mut rows)
                } else if r - joints < self.contacts.len() {
                    self.contact(read, r - joints, &mut rows)
                } else {
                    self.friction(read, r - joints - self.contacts.len(), &mut rows);
                    0.0
                };
                residual = residual.max(e);
            }
            for fix in &rows {
                for &(k, dx, dq) in &fix.moves[..fix.len] {
                    if jacobi {
                        self.dx[k] += dx;
                        self.dq[k] += dq;
                        self.count[k] += 1;
                    } else {
                        st[k].x += dx;
                        st[k].q = rotate(&st[k].q, &dq, 1.0);
                    }
                }
            }
        }
        if jacobi {
            // Each row's multiplier grows by the share of its change that was applied: ω over
            // the larger count of its two bodies (as for the particle rows).
            let pending = std::mem::take(&mut self.pending);
            for &(which, dl, dt) in &pending {
                let bodies = match which {
                    Pending::Joint(j) | Pending::JointTurn(j) => (Some(scene.joints[j].a), scene.joints[j].b),
                    Pending::Normal(c) | Pending::Tangent(c) => (Some(self.contacts[c].a), self.contacts[c].b),
                };
                let n = [bodies.0, bodies.1].iter().flatten().map(|&k| self.count[k]).max().unwrap_or(1).max(1);
                let share = omega / n as f64;
                match which {
                    Pending::Joint(j) => {
                        self.joint_lambda[j] += dl * share;
                        self.joint_push[j].0 += dt * share;
                    }
                    Pending::JointTurn(j) => self.joint_push[j].1 += dt * share,
                    Pending::Normal(c) => self.contacts[c].ln += dl * share,
                    Pending::Tangent(c) => self.contacts[c].lt += dt * share,
                }
            }
            self.pending = pending;
            for (k, s) in st.iter_mut().enumerate() {
                if self.count[k] > 0 {
                    let share = omega / self.count[k] as f64;
                    s.x += self.dx[k] * share;
                    s.q = rotate(&s.q, &(self.dq[k] * share), 1.0);
                }
                (self.dx[k], self.dq[k], self.count[k]) = (Vec3::zeros(), Vec3::zeros(), 0);
            }
        }
        self.frozen = frozen;
        residual
    }

    /// Joint `j`'s corrections, every row of it computed from the poses `st` as given (the
    /// caller applies them together, after); returns its largest error (m or rad).
    fn joint(&mut self, scene: &Scene, st: &[RigidState], j: usize, omega: f64, h: f64, out: &mut Vec<Fix>) -> f64 {
        let joint = &scene.joints[j];
        let f = self.frames[j];
        let (a, b) = (Some(joint.a), joint.b);
        let mut worst = 0.0_f64;
        // The anchors.
        let pa = Self::point(st, a, &f.anchor_a);
        let pb = Self::point(st, b, &f.anchor_b);
        let gap = pb - pa;
        let c = gap.norm();
        worst = worst.max(c);
        if c > 0.0 {
            let n = gap / c;
            let alpha = joint.compliance / (h * h);
            let w = self.w(a, &(pa - st[joint.a].x), &n) + b.map_or(0.0, |k| self.w(Some(k), &(pb - st[k].x), &n));
            if w + alpha > 0.0 {
                let dl = omega * (c - alpha * self.joint_lambda[j]) / (w + alpha);
                if self.jacobi {
                    self.pending.push((Pending::Joint(j), dl, n * dl));
                } else {
                    self.joint_lambda[j] += dl;
                    self.joint_push[j].0 += n * dl;
                }
                out.push(self.push_pair(st, a, b, &pa, &pb, n * dl));
            }
        }
        // The angular rows: each a rotation vector that takes a's frame onto b's.
        let qa = st[joint.a].q;
        let qb = b.map_or(UnitQuaternion::identity(), |k| st[k].q);
        let mut errors = [Vec3::zeros(); 2];
        match joint.kind {
            JointKind::Ball => {}
            JointKind::Revolute { lower, upper, .. } => {
                let (axis_a, axis_b) = (qa * f.axis_a, qb * f.axis_b);
                errors[0] = axis_a.cross(&axis_b);
                let (ref_a, ref_b) = (qa * f.ref_a, qb * f.ref_b);
                let theta = ref_a.cross(&ref_b).dot(&axis_a).atan2(ref_a.dot(&ref_b));
                // Past a limit, a turns towards b (and b back) about the axis.
                if theta < lower {
                    errors[1] = -axis_a * (lower - theta);
                } else if theta > upper {
                    errors[1] = axis_a * (theta - upper);
                }
            }
            JointKind::Fixed => errors[0] = (qb * (qa * f.relative).inverse()).scaled_axis(),
        }
        for err in errors {
            let theta = err.norm();
            worst = worst.max(theta);
            if theta < 1e-15 {
                continue;
            }
            let n = err / theta;
            let w = self.w_rot(a, &n) + self.w_rot(b, &n);
            if w > 0.0 {
                let turn = n * (omega * theta / w);
                if self.jacobi {
                    self.pending.push((Pending::JointTurn(j), 0.0, turn));
                } else {
                    self.joint_push[j].1 += turn;
                }
                out.push(self.turn_pair(a, b, turn));
            }
        }
        worst
    }

    /// Contact `c`'s normal correction at the poses `st`; returns its penetration (m).
    fn contact(&mut self, st: &[RigidState], c: usize, out: &mut Vec<Fix>) -> f64 {
        let k = self.contacts[c];
        let (a, b) = (Some(k.a), k.b);
        let pa = Self::point(st, a, &k.la);
        let pb = Self::point(st, b, &k.lb);
        let depth = (pa - pb).dot(&k.n);
        if depth >= k.floor {
            return (-depth).max(0.0);
        }
        let w = self.w(a, &(pa - st[k.a].x), &k.n) + b.map_or(0.0, |j| self.w(Some(j), &(pb - st[j].x), &k.n));
        if w > 0.0 {
            let dl = (k.floor - depth) / w;
            if self.jacobi {
                self.pending.push((Pending::Normal(c), dl, Vec3::zeros()));
            } else {
                self.contacts[c].ln += dl;
            }
            out.push(self.push_pair(st, a, b, &pa, &pb, k.n * dl));
        }
        -depth
    }

    /// Contact `c`'s friction at the poses `st`, at the position level as for the particle rows:
    /// the correction that would cancel the points' tangential displacement since the step's
    /// start (`len/w_t` along `−t`) is added to the accumulated tangential correction `λₜ`,
    /// which is then clamped to the disk `|λₜ| ≤ μ·λₙ`; the change is applied. Inside the
    /// cone the points stick, beyond it they slide with the Coulomb force `μ·λₙ/h²`.
    fn friction(&mut self, st: &[RigidState], c: usize, out: &mut Vec<Fix>) {
        let k = self.contacts[c];
        if k.mu == 0.0 || k.ln <= 0.0 {
            return;
        }
        let (a, b) = (Some(k.a), k.b);
        let pa = Self::point(st, a, &k.la);
        let pb = Self::point(st, b, &k.lb);
        let moved = (pa - k.a0) - (pb - k.b0);
        let tangential = moved - k.n * moved.dot(&k.n);
        let len = tangential.norm();
        if len <= 1e-15 {
            return;
        }
        let t = tangential / len;
        let wt = self.w(a, &(pa - st[k.a].x), &t) + b.map_or(0.0, |j| self.w(Some(j), &(pb - st[j].x), &t));
        if wt <= 0.0 {
            return;
        }
        let mut lt = k.lt - t * (len / wt);
        let limit = k.mu * k.ln;
        if lt.norm() > limit {
            lt *= limit / lt.norm();
        }
        let change = lt - k.lt;
        if self.jacobi {
            self.pending.push((Pending::Tangent(c), 0.0, change));
        } else {
            self.contacts[c].lt = lt;
        }
        out.push(self.push_pair(st, a, b, &pa, &pb, change));
    }

    /// The common violation at the current poses: the contacts' penetration and the joints'
    /// errors ([`solverlab_core::rigid::Joint::error`]).
    pub(crate) fn violation(&self, scene: &Scene, st: &[RigidState]) -> f64 {
        let mut v = 0.0_f64;
        for k in &self.contacts {
            let pa = Self::point(st, Some(k.a), &k.la);
            let pb = Self::point(st, k.b, &k.lb);
            v = v.max(-(pa - pb).dot(&k.n));
        }
        for (j, _) in scene.joints.iter().zip(&self.active).filter(|(_, a)| **a) {
            let (gap, angle) = j.error(&scene.rigid, st);
            v = v.max(gap).max(angle);
        }
        v
    }

    /// The force and torque of every joint that held this step: its position impulses over
    /// `h²` ([`JointForce`]).
    pub(crate) fn joint_forces(&self, out: &mut Vec<JointForce>) {
        out.clear();
        let inv_h2 = 1.0 / (self.h * self.h);
        for (j, (push, turn)) in self.joint_push.iter().enumerate().filter(|(j, _)| self.active[*j]) {
            out.push(JointForce { joint: j, force: push * inv_h2, torque: turn * inv_h2 });
        }
    }

    /// Whether joint `j` holds this step (see [`solverlab_core::Scene::joint_active`]).
    pub(crate) fn joint_active(&self, j: usize) -> bool {
        self.active.get(j).copied().unwrap_or(true)
    }

    /// Steps 4–5, and the forces of the step.
    pub(crate) fn finish(&mut self, scene: &Scene, st: &mut [RigidState], h: f64) {
        for (k, (b, s)) in scene.rigid.iter().zip(st.iter_mut()).enumerate() {
            if b.is_fixed() || s.asleep {
                continue;
            }
            let (x1, q1) = self.predicted[k];
            s.v += (s.x - x1) / h;
            let turn = s.q * q1.inverse();
            let sign = if turn.w < 0.0 { -1.0 } else { 1.0 };
            s.w += turn.imag() * (2.0 * sign / h);
        }
        let g = scene.gravity.norm();
        // Each pass sets every pushing contact's normal speed to its target (see below); the
        // targets do not depend on the pass, so passes converge like Gauss-Seidel on the
        // contacts' normal velocities (a stack's push-outs add up along it).
        for c in (0..VELOCITY_PASSES).flat_map(|_| 0..self.contacts.len()) {
            let k = self.contacts[c];
            if k.ln <= 0.0 {
                continue;
            }
            let pa = Self::point(st, Some(k.a), &k.la);
            let pb = Self::point(st, k.b, &k.lb);
            let (ra, rb) = (pa - st[k.a].x, k.b.map_or(Vec3::zeros(), |j| pb - st[j].x));
            let vel = |st: &[RigidState]| {
                st[k.a].v + st[k.a].w.cross(&ra) - k.b.map_or(Vec3::zeros(), |j| st[j].v + st[j].w.cross(&rb))
            };
            let rel = vel(st);
            let vn = k.n.dot(&rel);
            let mut impulse = Vec3::zeros();
            // Restitution: a point that approached faster than `2·|g|·h` leaves at `−e·vₙ₀`.
            // Otherwise the normal velocity follows from the position correction (`v + Δx/h`:
            // a resting contact ends at rest), except that a push-out may not throw the bodies
            // apart faster than `2·|g|·h`, the speed one step of gravity gives: an overlap is
            // resolved over several steps instead of becoming a launch. (The XPBD paper zeroes
            // every pushing point's normal velocity in one pass; with velocity-level friction
            // that left a sliding box tilted and lifted, 9 % short of Coulomb's distance.)
            let fast = -k.vn0 > 2.0 * g * h;
            let target = if fast && k.e > 0.0 { Some(-k.e * k.vn0) } else { (vn > 2.0 * g * h).then_some(2.0 * g * h) };
            if let Some(target) = target {
                let wn = self.w(Some(k.a), &ra, &k.n) + k.b.map_or(0.0, |j| self.w(Some(j), &rb, &k.n));
                if wn > 0.0 {
                    impulse += k.n * ((target - vn) / wn);
                }
            }
            if impulse == Vec3::zeros() {
                continue;
            }
            let apply = |st: &mut [RigidState], j: usize, r: &Vec3, p: Vec3, inv_m: f64| {
                let ii = scene.rigid[j].inv_inertia_world(&st[j].q);
                st[j].v += p * inv_m;
                st[j].w += ii * r.cross(&p);
            };
            apply(st, k.a, &ra, impulse, self.inv_m[k.a]);
            if let Some(j) = k.b {
                apply(st, j, &rb, -impulse, self.inv_m[j]);
            }
        }
        self.forces.clear();
        for (c, k) in self.found.iter().zip(&self.contacts) {
            self.forces.push(ContactForce {
                contact: *c,
                normal_force: k.ln / (h * h),
                tangent_force: k.lt.norm() / (h * h),
            });
        }
    }
}
