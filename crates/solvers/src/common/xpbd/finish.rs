//! Steps 4–5 of the rigid position-level step ([`super`]): the velocities from the corrections,
//! the velocity pass over the contacts that pushed, the forces of the step; and the common
//! violation at the current poses.

use solverlab_core::rigid::{ContactForce, JointForce, RigidState};
use solverlab_core::{Scene, Vec3};

use super::RigidXpbd;

/// Gauss-Seidel passes of the velocity pass over the contacts.
const VELOCITY_PASSES: usize = 10;

impl RigidXpbd {
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
