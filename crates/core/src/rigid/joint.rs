//! Joints between rigid bodies: what each holds ([`JointKind`]), the joint itself and its
//! position error at a state ([`Joint::error`], the common violation's joint term), and the force
//! a solver reports for it ([`JointForce`]). A joint's frames in its bodies are in
//! [`super::frame`], its rows as pure functions of the poses in [`super::joint_rows`].

use nalgebra::UnitQuaternion;

use super::{RigidBody, RigidState};
use crate::Vec3;

/// What a joint holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    /// The anchor points of both bodies coincide (3 rows).
    Ball,
    /// A ball joint whose bodies also keep a common axis (2 more rows), with optional limits on
    /// the angle about it (rad; infinite for none). The angle is 0 at the start.
    Revolute {
        /// The axis in the world at the start (normalised by the solver).
        axis: Vec3,
        /// Lower limit (rad).
        lower: f64,
        /// Upper limit (rad).
        upper: f64,
    },
    /// A ball joint that also keeps the relative orientation of the start (3 more rows).
    Fixed,
}

impl JointKind {
    /// The name in scene files.
    pub fn name(&self) -> &'static str {
        match self {
            JointKind::Ball => "ball",
            JointKind::Revolute { .. } => "revolute",
            JointKind::Fixed => "fixed",
        }
    }
}

/// A joint between rigid body `a` and rigid body `b`, or the world when `b` is `None`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Joint {
    /// What it holds.
    pub kind: JointKind,
    /// The first body.
    pub a: usize,
    /// The second body, or the world.
    pub b: Option<usize>,
    /// The anchor, a world point at the start (m); each body carries it from there.
    pub anchor: Vec3,
    /// Where `b` (or the world) holds the anchor at the start, when it is not `anchor` (m): a
    /// joint that starts stretched, with a gap of `anchor_b − anchor` to close (Solver2D's
    /// stretched chain). `None`: both bodies hold `anchor`.
    pub anchor_b: Option<Vec3>,
    /// Compliance of the anchor rows (m/N); 0 is rigid.
    pub compliance: f64,
}

impl Joint {
    /// Where `b` (or the world) holds the anchor at the start (m): `anchor_b`, or `anchor`.
    pub fn anchor_b(&self) -> Vec3 {
        self.anchor_b.unwrap_or(self.anchor)
    }

    /// The joint's position error at `states` (the scene's initial poses define where each body
    /// carries the anchor, the axis and the relative orientation): the anchor gap (m) and the
    /// angular error (rad): the angle between the axes a revolute joint's bodies carry, the
    /// rotation of a fixed joint's relative orientation away from the start's, and how far a
    /// revolute angle is past its limits.
    pub fn error(&self, bodies: &[RigidBody], states: &[RigidState]) -> (f64, f64) {
        let a0 = &bodies[self.a];
        let sa = &states[self.a];
        let (xb0, qb0, xb, qb) = match self.b {
            Some(k) => (bodies[k].x, bodies[k].q, states[k].x, states[k].q),
            None => (Vec3::zeros(), UnitQuaternion::identity(), Vec3::zeros(), UnitQuaternion::identity()),
        };
        // Each body carries the anchor rigidly from the start.
        let pa = sa.x + sa.q * (a0.q.inverse() * (self.anchor - a0.x));
        let pb = xb + qb * (qb0.inverse() * (self.anchor_b() - xb0));
        let gap = (pb - pa).norm();
        let angle = match self.kind {
            JointKind::Ball => 0.0,
            JointKind::Revolute { axis, lower, upper } => {
                let axis = axis.normalize();
                let axis_a = sa.q * (a0.q.inverse() * axis);
                let axis_b = qb * (qb0.inverse() * axis);
                let tilt = axis_a.cross(&axis_b).norm().atan2(axis_a.dot(&axis_b));
                let reference =
                    if axis.x.abs() < 0.57 { axis.cross(&Vec3::x()) } else { axis.cross(&Vec3::y()) }.normalize();
                let ref_a = sa.q * (a0.q.inverse() * reference);
                let ref_b = qb * (qb0.inverse() * reference);
                let theta = super::joint_rows::hinge_angle(&ref_a, &ref_b, &axis_a);
                tilt.max(lower - theta).max(theta - upper)
            }
            JointKind::Fixed => {
                let relative0 = a0.q.inverse() * qb0;
                (qb * (sa.q * relative0).inverse()).angle()
            }
        };
        (gap, angle.max(0.0))
    }
}

/// Whether rigid bodies `a` and `b` are joined (joined bodies do not collide with each other,
/// as in Box2D's default).
pub fn joined(joints: &[Joint], a: usize, b: usize) -> bool {
    joints.iter().any(|j| j.b.is_some_and(|jb| (j.a == a && jb == b) || (j.a == b && jb == a)))
}

/// The force a joint applied in the last (sub)step, on its body `a` (its body `b`, or the world,
/// feels the opposite), in the world frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointForce {
    /// Index into [`crate::Scene::joints`].
    pub joint: usize,
    /// The force on `a` (N).
    pub force: Vec3,
    /// The torque on `a` about the joint's anchor (N·m): what the joint's angular rows (and a
    /// limit) hold, zero for a ball joint.
    pub torque: Vec3,
}
