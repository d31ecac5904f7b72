//! A joint's frames in its bodies: the anchor, the revolute axis with a perpendicular reference,
//! and the relative orientation of the start, each carried by the body it belongs to. Every family
//! that simulates joints reads them from here (the impulse, relaxation, Newton and block-descent
//! families).

use nalgebra::UnitQuaternion;

use super::{Joint, JointKind, RigidBody};
use crate::Vec3;

/// A joint's frames in the bodies, fixed at the start (the scene's initial poses).
#[derive(Clone, Copy, Debug)]
pub struct JointFrame {
    /// The anchor in `a`'s frame (m).
    pub anchor_a: Vec3,
    /// The anchor in `b`'s frame, or the world point when `b` is the world (m).
    pub anchor_b: Vec3,
    /// The revolute axis in `a`'s frame (unit; `y` for other joints).
    pub axis_a: Vec3,
    /// The revolute axis in `b`'s frame (or the world's).
    pub axis_b: Vec3,
    /// A unit vector perpendicular to the axis ([`perpendicular`]), in `a`'s frame.
    pub ref_a: Vec3,
    /// The same vector in `b`'s frame (or the world's).
    pub ref_b: Vec3,
    /// `q_a⁻¹ q_b` at the start (fixed joints).
    pub relative: UnitQuaternion<f64>,
}

/// A unit vector perpendicular to `n` (a unit vector): `n × x` or, when `n` is near `x`, `n × y`.
pub fn perpendicular(n: &Vec3) -> Vec3 {
    if n.x.abs() < 0.57 { n.cross(&Vec3::x()) } else { n.cross(&Vec3::y()) }.normalize()
}

impl JointFrame {
    /// Joint `j`'s frames at the bodies' initial poses.
    pub fn new(j: &Joint, bodies: &[RigidBody]) -> Self {
        let a = &bodies[j.a];
        let (xb, qb) = j.b.map_or((Vec3::zeros(), UnitQuaternion::identity()), |k| (bodies[k].x, bodies[k].q));
        let axis = match j.kind {
            JointKind::Revolute { axis, .. } => axis.normalize(),
            _ => Vec3::y(),
        };
        let reference = perpendicular(&axis);
        Self {
            anchor_a: a.q.inverse_transform_vector(&(j.anchor - a.x)),
            anchor_b: qb.inverse_transform_vector(&(j.anchor_b() - xb)),
            axis_a: a.q.inverse_transform_vector(&axis),
            axis_b: qb.inverse_transform_vector(&axis),
            ref_a: a.q.inverse_transform_vector(&reference),
            ref_b: qb.inverse_transform_vector(&reference),
            relative: a.q.inverse() * qb,
        }
    }
}
