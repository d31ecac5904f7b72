//! A joint's rows as pure functions of its frames ([`JointFrame`]) and its bodies' poses: every
//! family that simulates joints reads its geometry from here.
//!
//! A body's pose is `(x, q)`, or `None` for the world (whose frame is the identity: its anchor
//! and axes are world vectors). Each row is a scalar `C` with its gradient on each body as
//! `(linear, angular)`, the angular part with respect to a small world rotation `δ` of the body,
//! `q ← exp(δ)·q`, so that `C(exp(δ)q) ≈ C(q) + ∇·δ`:
//!
//! * anchors, every joint, along each world axis `e` ([`ball_rows`]): `C = e·(p_a − p_b) = 0`
//!   with `p = x + q·l`, gradients `(e, r_a×e)` on `a` and `(−e, −r_b×e)` on `b` (`r = p − x`,
//!   the arm), with the joint's compliance;
//! * a revolute joint's axes ([`revolute_rows`]): `C = s·a_b = 0` for the two directions `s`
//!   that `a` carries perpendicular to its own axis `a_a` (`ref_a` and `a_a × ref_a`), angular
//!   gradients `s×a_b` on `a` and its opposite on `b` (exact: both factors turn with their
//!   bodies);
//! * a revolute limit within `margin` of the hinge angle `θ` ([`hinge_angle`]): `C = θ − lower
//!   ≥ 0` (angular `−a_a` on `a`, `+a_a` on `b`) or `upper − θ ≥ 0` (the opposite); exact about
//!   the axis, the Gauss-Newton gradient across it;
//! * a fixed joint's orientation ([`fixed_rows`]): `C = e·φ_rel = 0` with `φ_rel =
//!   log(q_b (q_a·rel)⁻¹)` ([`relative_rotation`]), angular gradients `−J_l⁻¹(−φ_rel)ᵀ e` on `a`
//!   and `J_l⁻¹(φ_rel)ᵀ e` on `b` (exact; [`left_jacobian_inverse_transpose`]).
//!
//! [`joint_rows`] gathers a joint's rows in this order, indexed within the joint (0–2 the
//! anchors, 3–4 a revolute's axes or 3–5 a fixed joint's orientation, 5 and 6 a revolute's lower
//! and upper limit), without allocating. The Newton family solves these rows as they are. The
//! other families read the same geometry ([`anchors`], [`hinge`], [`hinge_angle`],
//! [`relative_rotation`]) and build their own rows from it: extended position-based dynamics one
//! row along the anchors' gap and the axes' error as a rotation vector, the impulse family
//! velocity rows on the arms `q·l` and the axis' own perpendicular pair, block descent rows
//! evaluated one body at a time inside its line search.
//!
//! # References
//!
//! * M. Müller, M. Macklin, N. Chentanez, S. Jeschke, T.-Y. Kim, "Detailed Rigid Body Simulation
//!   with Extended Position Based Dynamics", SCA 2020: the anchor and angular rows.
//! * T. D. Barfoot, "State Estimation for Robotics", 2017, §7.1: the left Jacobian of SO(3)
//!   and its inverse.

use nalgebra::UnitQuaternion;

use super::{Joint, JointFrame, JointKind};
use crate::rows::RowKind;
use crate::Vec3;

/// A body's pose as the rows read it: centre and orientation, or `None` for the world.
pub type BodyPose = Option<(Vec3, UnitQuaternion<f64>)>;

/// One joint row at the poses it was evaluated at: its index within the joint, `C`, its kind
/// and compliance (m/N), and its gradient on each body as `(linear, angular)` (angular: with
/// respect to a world rotation of the body).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointRow {
    /// The row's index within its joint (see the module docs).
    pub row: usize,
    /// `C` (m for the anchors, rad for the angular rows).
    pub c: f64,
    /// Equality, or a limit's inequality `C ≥ 0`.
    pub kind: RowKind,
    /// The joint's compliance on the anchors, 0 on the angular rows (m/N).
    pub compliance: f64,
    /// `∂C/∂x_a`.
    pub linear_a: Vec3,
    /// `∂C/∂δ_a`.
    pub angular_a: Vec3,
    /// `∂C/∂x_b` (ignored for the world).
    pub linear_b: Vec3,
    /// `∂C/∂δ_b` (ignored for the world).
    pub angular_b: Vec3,
}

/// Up to seven rows of one joint, held inline (no allocation); a slice through `Deref`.
#[derive(Clone, Copy, Debug)]
pub struct JointRows {
    rows: [JointRow; 7],
    len: usize,
}

impl Default for JointRows {
    fn default() -> Self {
        let empty = JointRow {
            row: 0,
            c: 0.0,
            kind: RowKind::Equality,
            compliance: 0.0,
            linear_a: Vec3::zeros(),
            angular_a: Vec3::zeros(),
            linear_b: Vec3::zeros(),
            angular_b: Vec3::zeros(),
        };
        Self { rows: [empty; 7], len: 0 }
    }
}

impl JointRows {
    /// Appends a row.
    pub fn push(&mut self, row: JointRow) {
        self.rows[self.len] = row;
        self.len += 1;
    }
}

impl std::ops::Deref for JointRows {
    type Target = [JointRow];
    fn deref(&self) -> &[JointRow] {
        &self.rows[..self.len]
    }
}

/// A joint's anchors at the poses: the world points `p = x + q·l` (the frame's world point for
/// the world) and the arms `r = p − x` from the bodies' centres (zero for the world).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Anchors {
    /// `a`'s anchor in the world (m).
    pub pa: Vec3,
    /// `b`'s anchor in the world (m).
    pub pb: Vec3,
    /// `pa − x_a` (m).
    pub ra: Vec3,
    /// `pb − x_b`, or zero for the world (m).
    pub rb: Vec3,
}

/// The anchors of frames `f` at the poses `a` and `b`.
pub fn anchors(f: &JointFrame, a: BodyPose, b: BodyPose) -> Anchors {
    let point = |p: &BodyPose, l: &Vec3| p.as_ref().map_or(*l, |(x, q)| x + q * l);
    let arm = |p: &BodyPose, at: &Vec3| p.as_ref().map_or(Vec3::zeros(), |(x, _)| at - x);
    let (pa, pb) = (point(&a, &f.anchor_a), point(&b, &f.anchor_b));
    Anchors { pa, pb, ra: arm(&a, &pa), rb: arm(&b, &pb) }
}

/// A revolute joint's frames in the world: each body's axis and reference direction, and the
/// hinge angle between the references ([`hinge_angle`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hinge {
    /// The axis `a` carries (unit).
    pub axis_a: Vec3,
    /// The axis `b` carries (unit).
    pub axis_b: Vec3,
    /// `a`'s reference direction, perpendicular to its axis (unit).
    pub ref_a: Vec3,
    /// `b`'s reference direction (unit).
    pub ref_b: Vec3,
    /// The hinge angle (rad), 0 at the start.
    pub theta: f64,
}

/// The hinge of frames `f` at the orientations `qa` and `qb` (the identity for the world).
pub fn hinge(f: &JointFrame, qa: &UnitQuaternion<f64>, qb: &UnitQuaternion<f64>) -> Hinge {
    let (axis_a, axis_b) = (qa * f.axis_a, qb * f.axis_b);
    let (ref_a, ref_b) = (qa * f.ref_a, qb * f.ref_b);
    Hinge { axis_a, axis_b, ref_a, ref_b, theta: hinge_angle(&ref_a, &ref_b, &axis_a) }
}

/// The angle about `axis` (a's axis, world) from `a`'s reference `ref_a` to `b`'s `ref_b`,
/// right-handed, in `(−π, π]`: `atan2((ref_a × ref_b)·axis, ref_a·ref_b)`.
pub fn hinge_angle(ref_a: &Vec3, ref_b: &Vec3, axis: &Vec3) -> f64 {
    ref_a.cross(ref_b).dot(axis).atan2(ref_a.dot(ref_b))
}

/// The rotation vector `φ_rel = log(q_b (q_a·rel)⁻¹)` that takes `a`'s carried start orientation
/// of `b` onto `b`'s (zero while a fixed joint holds; `qb` the identity for the world).
pub fn relative_rotation(qa: &UnitQuaternion<f64>, qb: &UnitQuaternion<f64>, relative: &UnitQuaternion<f64>) -> Vec3 {
    (qb * (qa * relative).inverse()).scaled_axis()
}

/// `J_l(φ)ᵀ g` for the left Jacobian of SO(3), `J_l = I + a[φ]× + b[φ]×²` with
/// `a = (1 − cos θ)/θ²`, `b = (θ − sin θ)/θ³` (Taylor series below θ = 10⁻⁴): how a change of
/// the rotation vector `φ` turns the body, `exp(φ + δφ) = exp(J_l δφ)·exp(φ)`.
pub fn left_jacobian_transpose(phi: &Vec3, g: &Vec3) -> Vec3 {
    let t2 = phi.norm_squared();
    let (a, b) = if t2 < 1e-8 {
        (0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0)
    } else {
        let t = t2.sqrt();
        ((1.0 - t.cos()) / t2, (t - t.sin()) / (t2 * t))
    };
    let pg = phi.cross(g);
    g - pg * a + phi.cross(&pg) * b
}

/// `J_l⁻¹(φ)ᵀ g`, with `J_l⁻¹ = I − ½[φ]× + c[φ]×²`, `c = 1/θ² − (1 + cos θ)/(2θ sin θ)`
/// (Taylor series below θ = 10⁻⁴): `log(q·q⁰⁻¹) = φ` changes by `J_l⁻¹(φ)·δ` when the body turns
/// by `δ`.
pub fn left_jacobian_inverse_transpose(phi: &Vec3, g: &Vec3) -> Vec3 {
    let t2 = phi.norm_squared();
    let c = if t2 < 1e-8 {
        1.0 / 12.0 + t2 / 720.0
    } else {
        let t = t2.sqrt();
        1.0 / t2 - (1.0 + t.cos()) / (2.0 * t * t.sin())
    };
    let pg = phi.cross(g);
    g + pg * 0.5 + phi.cross(&pg) * c
}

/// An angular row: no linear gradient, no compliance.
fn angular(row: usize, c: f64, kind: RowKind, angular_a: Vec3, angular_b: Vec3) -> JointRow {
    JointRow { row, c, kind, compliance: 0.0, linear_a: Vec3::zeros(), angular_a, linear_b: Vec3::zeros(), angular_b }
}

/// The anchor rows 0–2 (every joint's, a ball joint's only ones) of frames `f` at the poses
/// `a` and `b`, with compliance `compliance` (m/N), into `out`.
pub fn ball_rows(f: &JointFrame, compliance: f64, a: BodyPose, b: BodyPose, out: &mut JointRows) {
    let Anchors { pa, pb, ra, rb } = anchors(f, a, b);
    for (axis, e) in [Vec3::x(), Vec3::y(), Vec3::z()].into_iter().enumerate() {
        out.push(JointRow {
            row: axis,
            c: e.dot(&(pa - pb)),
            kind: RowKind::Equality,
            compliance,
            linear_a: e,
            angular_a: ra.cross(&e),
            linear_b: -e,
            angular_b: -rb.cross(&e),
        });
    }
}

/// A revolute joint's angular rows at the orientations `qa` and `qb`: the axes' rows 3–4, and
/// the limit rows 5 (`θ − lower ≥ 0`) and 6 (`upper − θ ≥ 0`) while `θ` is within `margin`
/// (rad) of their limit (`margin = ∞`: a row for every finite limit), into `out`.
pub fn revolute_rows(
    f: &JointFrame,
    (lower, upper): (f64, f64),
    margin: f64,
    qa: &UnitQuaternion<f64>,
    qb: &UnitQuaternion<f64>,
    out: &mut JointRows,
) {
    let Hinge { axis_a, axis_b, ref_a, theta, .. } = hinge(f, qa, qb);
    // The axes agree when b's axis has no component along the two directions a carries
    // perpendicular to its own: `C = s·a_b`, with `s` turning with a.
    for (row, s) in [ref_a, axis_a.cross(&ref_a)].into_iter().enumerate() {
        let g = s.cross(&axis_b);
        out.push(angular(3 + row, s.dot(&axis_b), RowKind::Equality, g, -g));
    }
    if theta - lower < margin {
        out.push(angular(5, theta - lower, RowKind::Inequality, -axis_a, axis_a));
    }
    if upper - theta < margin {
        out.push(angular(6, upper - theta, RowKind::Inequality, axis_a, -axis_a));
    }
}

/// A fixed joint's orientation rows 3–5 at the orientations `qa` and `qb`, into `out`.
pub fn fixed_rows(f: &JointFrame, qa: &UnitQuaternion<f64>, qb: &UnitQuaternion<f64>, out: &mut JointRows) {
    // `φ_rel = log(q_b·(q_a·rel)⁻¹)`: turning b by `δω` changes it by `J_l⁻¹(φ_rel)·δω`,
    // turning a by `−J_r⁻¹(φ_rel)·δω`.
    let phi = relative_rotation(qa, qb, &f.relative);
    for (axis, e) in [Vec3::x(), Vec3::y(), Vec3::z()].into_iter().enumerate() {
        let gb = left_jacobian_inverse_transpose(&phi, &e);
        let ga = -left_jacobian_inverse_transpose(&-phi, &e);
        out.push(angular(3 + axis, e.dot(&phi), RowKind::Equality, ga, gb));
    }
}

/// Every row of `joint` (frames `f`) at the poses `a` and `b` of its bodies, in the order of
/// the module docs; a revolute limit's row while the angle is within `limit_margin` (rad) of it.
pub fn joint_rows(joint: &Joint, f: &JointFrame, a: BodyPose, b: BodyPose, limit_margin: f64) -> JointRows {
    let mut out = JointRows::default();
    ball_rows(f, joint.compliance, a, b, &mut out);
    let qa = a.map_or(UnitQuaternion::identity(), |(_, q)| q);
    let qb = b.map_or(UnitQuaternion::identity(), |(_, q)| q);
    match joint.kind {
        JointKind::Ball => {}
        JointKind::Revolute { lower, upper, .. } => revolute_rows(f, (lower, upper), limit_margin, &qa, &qb, &mut out),
        JointKind::Fixed => fixed_rows(f, &qa, &qb, &mut out),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::frame::perpendicular;

    /// Frames at generic start orientations, the axis and the anchor away from every axis.
    fn frame() -> JointFrame {
        let axis = Vec3::new(0.3, 1.0, -0.2).normalize();
        let reference = perpendicular(&axis);
        let (qa, qb) =
            (UnitQuaternion::from_euler_angles(0.4, -0.2, 0.7), UnitQuaternion::from_euler_angles(-0.3, 0.5, 0.2));
        JointFrame {
            anchor_a: Vec3::new(0.2, -0.4, 0.1),
            anchor_b: Vec3::new(-0.3, 0.2, 0.5),
            axis_a: qa.inverse() * axis,
            axis_b: qb.inverse() * axis,
            ref_a: qa.inverse() * reference,
            ref_b: qb.inverse() * reference,
            relative: qa.inverse() * qb,
        }
    }

    /// Checks every row of `rows_at` (rows at the poses `a`, `b`; the world when `b` is `None`)
    /// against central differences of `C`: along each coordinate of each body (positions, world
    /// rotations), or, for the angular coordinates, only along `along` when given (a limit's
    /// gradient is exact about the hinge axis only).
    fn check(rows_at: &dyn Fn(BodyPose, BodyPose) -> JointRows, a: BodyPose, b: BodyPose, along: Option<Vec3>) {
        let rows = rows_at(a, b);
        assert!(!rows.is_empty());
        let eps = 1e-6;
        let value = |a: BodyPose, b: BodyPose, row: usize| rows_at(a, b).iter().find(|r| r.row == row).unwrap().c;
        let moved = |p: BodyPose, d: usize, dir: Option<Vec3>, t: f64| {
            p.map(|(x, q)| match (d, dir) {
                (0..=2, _) => (x + Vec3::ith(d, t), q),
                (_, Some(u)) => (x, UnitQuaternion::from_scaled_axis(u * t) * q),
                _ => (x, UnitQuaternion::from_scaled_axis(Vec3::ith(d - 3, t)) * q),
            })
        };
        for r in rows.iter() {
            for body in [0, 1] {
                if body == 1 && b.is_none() {
                    continue;
                }
                for d in 0..6 {
                    let dir = if d >= 3 { along } else { None };
                    if d > 3 && dir.is_some() {
                        continue;
                    }
                    let at = |t: f64| match body {
                        0 => value(moved(a, d, dir, t), b, r.row),
                        _ => value(a, moved(b, d, dir, t), r.row),
                    };
                    let fd = (at(eps) - at(-eps)) / (2.0 * eps);
                    let (linear, ang) = if body == 0 { (r.linear_a, r.angular_a) } else { (r.linear_b, r.angular_b) };
                    let g = match (d, dir) {
                        (0..=2, _) => linear[d],
                        (_, Some(u)) => ang.dot(&u),
                        _ => ang[d - 3],
                    };
                    assert!((fd - g).abs() < 1e-6, "row {} body {body} coordinate {d}: {g} against {fd}", r.row);
                }
            }
        }
    }

    fn poses() -> (BodyPose, BodyPose) {
        let a = Some((Vec3::new(0.1, 0.2, 0.3), UnitQuaternion::from_euler_angles(0.5, -0.1, 0.8)));
        let b = Some((Vec3::new(-0.5, 0.4, 0.0), UnitQuaternion::from_euler_angles(0.1, 0.9, -0.4)));
        (a, b)
    }

    /// The anchor rows' gradients, between two bodies and to the world.
    #[test]
    fn ball_rows_match_central_differences() {
        let f = frame();
        let rows = |a: BodyPose, b: BodyPose| {
            let mut out = JointRows::default();
            ball_rows(&f, 1e-3, a, b, &mut out);
            out
        };
        let (a, b) = poses();
        check(&rows, a, b, None);
        check(&rows, a, None, None);
        assert!(rows(a, b).iter().all(|r| r.compliance == 1e-3 && r.kind == RowKind::Equality));
    }

    /// A revolute joint's axis rows (every direction, exact), and its limit rows about the
    /// hinge axis; the limits are gathered within the margin only.
    #[test]
    fn revolute_rows_match_central_differences() {
        let f = frame();
        let limits = (-0.2, 0.5);
        let rows = |a: BodyPose, b: BodyPose| {
            let q = |p: BodyPose| p.map_or(UnitQuaternion::identity(), |(_, q)| q);
            let mut out = JointRows::default();
            revolute_rows(&f, limits, f64::INFINITY, &q(a), &q(b), &mut out);
            out
        };
        let (a, b) = poses();
        assert_eq!(rows(a, b).len(), 4, "two axis rows and both limits");
        let axes = |a: BodyPose, b: BodyPose| {
            let mut out = JointRows::default();
            rows(a, b).iter().filter(|r| r.row < 5).for_each(|r| out.push(*r));
            out
        };
        check(&axes, a, b, None);
        check(&axes, a, None, None);
        // Turned about the hinge axis from the start, the limits' gradient is exact about it.
        let axis = Vec3::new(0.3, 1.0, -0.2).normalize();
        let qa0 = UnitQuaternion::from_euler_angles(0.4, -0.2, 0.7);
        let qb0 = UnitQuaternion::from_euler_angles(-0.3, 0.5, 0.2);
        let hinged =
            (Some((Vec3::zeros(), qa0)), Some((Vec3::x(), UnitQuaternion::from_scaled_axis(axis * 0.3) * qb0)));
        let limit_rows = |a: BodyPose, b: BodyPose| {
            let mut out = JointRows::default();
            rows(a, b).iter().filter(|r| r.row >= 5).for_each(|r| out.push(*r));
            out
        };
        let h = hinge(&f, &qa0, &(UnitQuaternion::from_scaled_axis(axis * 0.3) * qb0));
        assert!((h.theta - 0.3).abs() < 1e-12, "θ = {}", h.theta);
        check(&limit_rows, hinged.0, hinged.1, Some(axis));
        let mut near = JointRows::default();
        revolute_rows(&f, limits, 0.1, &qa0, &(UnitQuaternion::from_scaled_axis(axis * 0.45) * qb0), &mut near);
        assert_eq!(near.iter().map(|r| r.row).collect::<Vec<_>>(), [3, 4, 6], "only the upper limit is near");
    }

    /// A fixed joint's orientation rows, exact in every direction (the inverse left Jacobians),
    /// away from the start and to the world.
    #[test]
    fn fixed_rows_match_central_differences() {
        let f = frame();
        let rows = |a: BodyPose, b: BodyPose| {
            let q = |p: BodyPose| p.map_or(UnitQuaternion::identity(), |(_, q)| q);
            let mut out = JointRows::default();
            fixed_rows(&f, &q(a), &q(b), &mut out);
            out
        };
        let (a, b) = poses();
        check(&rows, a, b, None);
        check(&rows, a, None, None);
    }

    /// `joint_rows` is the anchor rows followed by the kind's rows.
    #[test]
    fn joint_rows_gather_the_kinds_rows() {
        let f = frame();
        let (a, b) = poses();
        let joint = |kind| Joint { kind, a: 0, b: Some(1), anchor: Vec3::zeros(), anchor_b: None, compliance: 0.0 };
        let revolute = JointKind::Revolute { axis: Vec3::y(), lower: f64::NEG_INFINITY, upper: f64::INFINITY };
        let rows = |kind| joint_rows(&joint(kind), &f, a, b, 0.1).iter().map(|r| r.row).collect::<Vec<_>>();
        assert_eq!(rows(JointKind::Ball), [0, 1, 2]);
        assert_eq!(rows(revolute), [0, 1, 2, 3, 4]);
        assert_eq!(rows(JointKind::Fixed), [0, 1, 2, 3, 4, 5]);
    }
}
