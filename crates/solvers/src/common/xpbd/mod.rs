//! Extended position-based dynamics on 6-DoF rigid bodies, after Müller, Macklin, Chentanez,
//! Jeschke and Kim, "Detailed Rigid Body Simulation with Extended Position Based Dynamics" (SCA
//! 2020): the relaxation family's whole rigid step, and the prediction, contacts, friction passes,
//! velocities and forces of the Newton family's (which solves the normal and joint rows itself,
//! `newton/rigid_rows/`). Cut along its steps: 1–2 here ([`RigidXpbd::begin`]), 3 in `sweep.rs`,
//! 4–5 and the common violation in `finish.rs`.
//!
//! Per (sub)step, after the shared prediction `v ← v + g·h`:
//!
//! 1. Predict the poses: `x ← x + h·v`, and `q`, `ω` by the torque-free drift of `ω` (the
//!    gyroscopic term, [`solverlab_core::rigid::torque_free_drift`]); keep the predicted poses.
//! 2. Contacts once, at the predicted poses, within `2·h·(|v| + |ω|·r)` plus 1 cm
//!    ([`rigid_contacts_with`]; with `speculative_margin = "relative"`, each pair's own
//!    closing speed instead of the fastest point's, [`crate::SpeculativeMargin`]); each keeps its normal `n` (from b to a) and its two surface points
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

use crate::common::SpeculativeMargin;
use nalgebra::{Matrix3, UnitQuaternion};
use solverlab_core::rigid::{
    rigid_contacts_with, rotate, torque_free_drift, ContactForce, ContactScratch, JointFrame, Other, RigidContact,
    RigidState,
};
use solverlab_core::{Scene, Vec3};

mod finish;
mod sweep;

/// The fastest an overlap is pushed out (m/s), the impulse family's default `max_push`.
const MAX_PUSH: f64 = 3.0;

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
    /// The contact search's buffers, kept from step to step as the other families keep theirs.
    contact_scratch: ContactScratch,
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
    /// How the current sweep applies its rows.
    update: Update,
    forces: Vec<ContactForce>,
    /// Per joint, whether it holds this step (a joint leaves with a removed body).
    active: Vec<bool>,
    /// Per joint, the position impulses of this step on its body `a`: the anchors' push (kg·m)
    /// and the angular rows' turn (kg·m²·rad).
    joint_push: Vec<(Vec3, Vec3)>,
    /// The step (s).
    h: f64,
}

/// How a sweep ([`RigidXpbd::sweep`]) applies its rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Update {
    /// Each row at the poses the rows before it left, its correction applied at once.
    #[default]
    GaussSeidel,
    /// Every row at the poses of the sweep's start; the corrections averaged per body and applied
    /// at the sweep's end.
    Jacobi,
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
        self.update = Update::GaussSeidel;
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
    pub(crate) fn begin(&mut self, scene: &Scene, st: &mut [RigidState], h: f64, time: f64, rule: SpeculativeMargin) {
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
        // (The relative rule at the predicted velocities, which its contacts' filter reads.)
        let (base, reach) = (0.01, 2.0 * h);
        let margin = match rule {
            SpeculativeMargin::Fastest => base + reach * speed,
            SpeculativeMargin::Relative | SpeculativeMargin::Fixed => rule.search(&scene.rigid, st, base, reach),
        };
        rigid_contacts_with(scene, st, margin, &mut found, &mut self.contact_scratch);
        rule.keep(std::slice::from_mut(&mut found), &scene.rigid, st, base, reach);
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
}
