//! The rows of a rigid block-descent step (step 3 of [`super`]): each one scalar `C` of the
//! poses, with its gradient and the lumped curvature on each body it touches.
//!
//! A body's coordinates are its centre `x` and a rotation vector `θ` applied on the left,
//! `q ← exp(θ)·q`; a gradient is a 6-vector `(∂C/∂x, ∂C/∂θ)`. Angular joint rows are scaled by
//! a length `ℓ` (the sum of the bodies' bounding radii, the 2-D demo's "torque arm") so that
//! every `C` is in metres and one penalty range serves all rows.

use nalgebra::{Matrix3, UnitQuaternion, Vector6};
use solverlab_core::rigid::joint_rows::{hinge_angle, relative_rotation};
use solverlab_core::rigid::{JointFrame, RigidState};
use solverlab_core::Vec3;

/// A 6-vector over a body's coordinates: linear part, then angular part.
pub(super) type Vec6 = Vector6<f64>;

/// What a row measures.
#[derive(Clone, Copy, Debug)]
pub(super) enum Geometry {
    /// Linearised at the start of the step, `C = c0 + J_a·Δp_a + J_b·Δp_b` with `Δp` a body's
    /// motion since the start: a contact's normal or one of its friction directions.
    Linear { ja: Vec6, jb: Vec6, c0: f64 },
    /// The joint's anchors apart along the world axis `e`, `C = e·(p_a − p_b)`.
    Anchor { joint: usize, e: Vec3 },
    /// A direction `u` of `a` (its frame) across a direction `w` of `b` (its frame, or the
    /// world's), `C = ℓ·(R_a u)·(R_b w)`: zero when they are perpendicular.
    Align { joint: usize, u: Vec3, w: Vec3 },
    /// The relative rotation `φ = log(q_b·(q_a·q_rel)⁻¹)` along the world axis `e`, `C = ℓ·e·φ`
    /// (a fixed joint).
    Twist { joint: usize, e: Vec3 },
    /// The hinge angle `θ` against a limit: `C = ℓ·(θ − bound)` (lower) or `ℓ·(bound − θ)`.
    Limit { joint: usize, lower: bool, bound: f64 },
}

/// For a friction direction: its contact's normal row, μ, and whether it is the second of the
/// pair (the pair is evaluated together, at the first).
#[derive(Clone, Copy, Debug)]
pub(super) struct Friction {
    pub(super) normal: usize,
    pub(super) mu: f64,
    pub(super) second: bool,
}

/// One row of the step.
#[derive(Clone, Copy, Debug)]
pub(super) struct Row {
    /// Stable id (warm start across steps).
    pub(super) id: u64,
    /// The bodies whose poses `C` reads (`b` the world when `None`).
    pub(super) a: usize,
    pub(super) b: Option<usize>,
    pub(super) geometry: Geometry,
    /// `ℓ` for the angular joint rows (m), 1 otherwise.
    pub(super) scale: f64,
    /// Penalty (N/m).
    pub(super) k: f64,
    /// Multiplier (N).
    pub(super) lambda: f64,
    /// Share of the multiplier in the force (1, or `s` of the compliant augmented Lagrangian).
    pub(super) s: f64,
    /// Force bounds (N): `(−∞, 0]` for rows that only push, `±μ|λₙ|` for friction.
    pub(super) fmin: f64,
    pub(super) fmax: f64,
    /// Hard (augmented: a multiplier) rather than soft (a spring).
    pub(super) hard: bool,
    /// `α·C*(x⁻)` subtracted from `C` (error regularisation; for inequalities only the
    /// overlap); 0 in the post-stabilisation sweep.
    pub(super) offset: f64,
    pub(super) friction: Option<Friction>,
}

/// The poses the rows read: every body's state, its frame data and its motion since the start,
/// with one body's pose possibly replaced (a trial of the line search).
pub(super) struct Poses<'a> {
    pub(super) st: &'a [RigidState],
    pub(super) frames: &'a [JointFrame],
    /// Per body, `Δp = (x − x⁻, log(q·q⁻⁻¹))`.
    pub(super) dp: &'a [Vec6],
    /// Body `k` at `(x, q)` with motion `Δp` instead.
    pub(super) trial: Option<(usize, Vec3, UnitQuaternion<f64>, Vec6)>,
}

impl Poses<'_> {
    /// The poses `st` with motions `dp`.
    pub(super) fn new<'a>(st: &'a [RigidState], frames: &'a [JointFrame], dp: &'a [Vec6]) -> Poses<'a> {
        Poses { st, frames, dp, trial: None }
    }

    fn x(&self, k: usize) -> Vec3 {
        match self.trial {
            Some((t, x, _, _)) if t == k => x,
            _ => self.st[k].x,
        }
    }

    fn q(&self, k: usize) -> UnitQuaternion<f64> {
        match self.trial {
            Some((t, _, q, _)) if t == k => q,
            _ => self.st[k].q,
        }
    }

    fn dp(&self, k: usize) -> Vec6 {
        match self.trial {
            Some((t, _, _, dp)) if t == k => dp,
            _ => self.dp[k],
        }
    }
}

/// The angular curvature of `e·(R r)` at `θ = 0` (`R r` = `r`, world): `½(e rᵀ + r eᵀ) −
/// (e·r)I`, from `exp(θ)r ≈ r + θ×r + ½θ×(θ×r)`.
fn curvature(e: &Vec3, r: &Vec3) -> Matrix3<f64> {
    (e * r.transpose() + r * e.transpose()) * 0.5 - Matrix3::identity() * e.dot(r)
}

/// The column norms of `m` (AVBD §3.5's diagonal lumping).
fn column_norms(m: &Matrix3<f64>) -> Vec3 {
    Vec3::new(m.column(0).norm(), m.column(1).norm(), m.column(2).norm())
}

fn six(linear: Vec3, angular: Vec3) -> Vec6 {
    Vec6::new(linear.x, linear.y, linear.z, angular.x, angular.y, angular.z)
}

impl Row {
    /// `C` at the poses (with the regularisation offset).
    pub(super) fn value(&self, p: &Poses) -> f64 {
        self.eval(p, None).0
    }

    /// `C`, and for body `body` (when given) its gradient and the column norms of its angular
    /// curvature (to be scaled by `|F|`).
    pub(super) fn eval(&self, p: &Poses, body: Option<usize>) -> (f64, Vec6, Vec3) {
        let on_a = body == Some(self.a);
        let (qa, qb) = (p.q(self.a), self.b.map_or(Default::default(), |k| p.q(k)));
        let zero = (Vec6::zeros(), Vec3::zeros());
        let (c, (grad, lumps)) = match self.geometry {
            Geometry::Linear { ja, jb, c0 } => {
                let c = c0 + ja.dot(&p.dp(self.a)) + self.b.map_or(0.0, |k| jb.dot(&p.dp(k)));
                (c, if on_a { (ja, Vec3::zeros()) } else { (jb, Vec3::zeros()) })
            }
            Geometry::Anchor { joint, e } => {
                let f = &p.frames[joint];
                let ra = qa * f.anchor_a;
                let rb = self.b.map_or(f.anchor_b, |_| qb * f.anchor_b);
                let pb = self.b.map_or(rb, |k| p.x(k) + rb);
                let c = e.dot(&(p.x(self.a) + ra - pb));
                let g = match body {
                    None => zero,
                    Some(_) if on_a => (six(e, ra.cross(&e)), column_norms(&curvature(&e, &ra))),
                    Some(_) => (six(-e, -rb.cross(&e)), column_norms(&curvature(&e, &rb))),
                };
                (c, g)
            }
            Geometry::Align { joint: _, u, w } => {
                let (u, w) = (qa * u, self.b.map_or(w, |_| qb * w));
                let l = self.scale;
                let c = l * u.dot(&w);
                let g = match body {
                    None => zero,
                    Some(_) => {
                        let lumps = column_norms(&curvature(&u, &w)) * l;
                        (
                            if on_a {
                                six(Vec3::zeros(), u.cross(&w) * l)
                            } else {
                                six(Vec3::zeros(), w.cross(&u) * l)
                            },
                            lumps,
                        )
                    }
                };
                (c, g)
            }
            Geometry::Twist { joint, e } => {
                let rel = p.frames[joint].relative;
                let phi = relative_rotation(&qa, &qb, &rel);
                let l = self.scale;
                let sign = if on_a { -1.0 } else { 1.0 };
                (l * e.dot(&phi), (six(Vec3::zeros(), e * (l * sign)), Vec3::zeros()))
            }
            Geometry::Limit { joint, lower, bound } => {
                let f = &p.frames[joint];
                let axis = qa * f.axis_a;
                let (ref_a, ref_b) = (qa * f.ref_a, self.b.map_or(f.ref_b, |_| qb * f.ref_b));
                let theta = hinge_angle(&ref_a, &ref_b, &axis);
                // Turning b about the axis raises θ, turning a lowers it.
                let (c, sign) = if lower { (theta - bound, 1.0) } else { (bound - theta, -1.0) };
                let sign = if on_a { -sign } else { sign };
                let l = self.scale;
                (l * c, (six(Vec3::zeros(), axis * (l * sign)), Vec3::zeros()))
            }
        };
        (c - self.offset, grad, lumps)
    }

    /// The force at `c`: `clamp(kC + sλ, fmin, fmax)`.
    pub(super) fn force(&self, c: f64) -> f64 {
        (self.k * c + self.s * self.lambda).clamp(self.fmin, self.fmax)
    }

    /// The row's energy at `c`, up to a constant: the integral of [`Row::force`] over `C`,
    /// `F²/(2k) + F·(u − F)/k` with `u = kC + sλ` and `F` its clamp (`u²/(2k)` inside the
    /// bounds, continued linearly outside them).
    pub(super) fn energy(&self, c: f64) -> f64 {
        let u = self.k * c + self.s * self.lambda;
        let f = u.clamp(self.fmin, self.fmax);
        (f * f / 2.0 + f * (u - f)) / self.k
    }

    /// Whether the row is an equality (no force bounds).
    pub(super) fn equality(&self) -> bool {
        self.fmin == f64::NEG_INFINITY && self.fmax == f64::INFINITY && self.friction.is_none()
    }

    /// The joint a joint row belongs to, and whether the row is angular.
    pub(super) fn joint(&self) -> Option<(usize, bool)> {
        match self.geometry {
            Geometry::Linear { .. } => None,
            Geometry::Anchor { joint, .. } => Some((joint, false)),
            Geometry::Align { joint, .. } | Geometry::Twist { joint, .. } | Geometry::Limit { joint, .. } => {
                Some((joint, true))
            }
        }
    }
}

/// A friction pair's energy at `(c1, c2)`: `Σᵢ (Fᵢ²/2 + Fᵢ(uᵢ − Fᵢ))/kᵢ` with `F` the forces of
/// [`friction_forces`] (`|u|²/(2k)` inside the disk, `B|u|/k − B²/(2k)` outside for equal `k`,
/// whose gradient is `F`).
pub(super) fn friction_energy(first: &Row, second: &Row, c1: f64, c2: f64) -> f64 {
    let (f1, f2, _) = friction_forces(first, second, c1, c2);
    let (u1, u2) = (first.k * c1 + first.s * first.lambda, second.k * c2 + second.s * second.lambda);
    (f1 * f1 / 2.0 + f1 * (u1 - f1)) / first.k + (f2 * f2 / 2.0 + f2 * (u2 - f2)) / second.k
}

/// A friction pair's forces at `(c1, c2)`: `u = (k₁c₁ + s₁λ₁, k₂c₂ + s₂λ₂)` projected on the
/// disk `|F| ≤ bound` (Coulomb's cone), and whether it was inside (sticking).
pub(super) fn friction_forces(first: &Row, second: &Row, c1: f64, c2: f64) -> (f64, f64, bool) {
    let bound = first.fmax;
    let (u1, u2) = (first.k * c1 + first.s * first.lambda, second.k * c2 + second.s * second.lambda);
    let len = u1.hypot(u2);
    if len < bound {
        (u1, u2, true)
    } else if len > 0.0 {
        (u1 * bound / len, u2 * bound / len, false)
    } else {
        (0.0, 0.0, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::UnitQuaternion;

    fn state(x: Vec3, q: UnitQuaternion<f64>) -> RigidState {
        RigidState { x, q, v: Vec3::zeros(), w: Vec3::zeros(), rest_time: 0.0, asleep: false }
    }

    fn row(geometry: Geometry) -> Row {
        Row {
            id: 0,
            a: 0,
            b: Some(1),
            geometry,
            scale: 0.7,
            k: 1.0,
            lambda: 0.0,
            s: 1.0,
            fmin: f64::NEG_INFINITY,
            fmax: f64::INFINITY,
            hard: true,
            offset: 0.0,
            friction: None,
        }
    }

    /// Checks `row`'s gradient on both bodies against central differences of its value, along
    /// the coordinates `coords` (0–2 position, 3–5 rotation, world axes) and along `extra` (a
    /// rotation direction); with `lumps`, also that the second difference along each rotation
    /// axis is within the lumped curvature.
    fn check(row: &Row, st: &[RigidState; 2], frame: &JointFrame, coords: &[usize], extra: Option<Vec3>, lumps: bool) {
        let dp = [Vec6::zeros(); 2];
        let value = |st: &[RigidState]| row.value(&Poses::new(st, std::slice::from_ref(frame), &dp));
        for body in 0..2 {
            let (_, grad, lump) = row.eval(&Poses::new(st, std::slice::from_ref(frame), &dp), Some(body));
            let moved = |d: usize, dir: Option<Vec3>, t: f64| {
                let mut st = *st;
                match dir {
                    Some(u) => st[body].q = UnitQuaternion::from_scaled_axis(u * t) * st[body].q,
                    None if d < 3 => st[body].x[d] += t,
                    None => {
                        let mut turn = Vec3::zeros();
                        turn[d - 3] = t;
                        st[body].q = UnitQuaternion::from_scaled_axis(turn) * st[body].q;
                    }
                }
                value(&st)
            };
            let eps = 1e-6;
            for &d in coords {
                let fd = (moved(d, None, eps) - moved(d, None, -eps)) / (2.0 * eps);
                assert!(
                    (fd - grad[d]).abs() < 1e-6,
                    "{:?} body {body} coordinate {d}: {fd} against {}",
                    row.geometry,
                    grad[d]
                );
                if lumps && d >= 3 {
                    let h = 1e-4;
                    let second = (moved(d, None, h) - 2.0 * moved(d, None, 0.0) + moved(d, None, -h)) / (h * h);
                    assert!(second.abs() <= lump[d - 3] + 1e-5, "curvature {second} above its lump {}", lump[d - 3]);
                }
            }
            if let Some(u) = extra {
                let fd = (moved(0, Some(u), eps) - moved(0, Some(u), -eps)) / (2.0 * eps);
                let g = grad.fixed_rows::<3>(3).dot(&u);
                assert!((fd - g).abs() < 1e-6, "{:?} body {body} about {u:?}: {fd} against {g}", row.geometry);
            }
        }
    }

    /// The rows' gradients against central differences: the anchor and axis rows exactly, at a
    /// generic pose, with the anchor's lumped curvature bounding its second differences; the twist
    /// row near its zero (its gradient is the small-angle one); the limit row about the hinge axis
    /// (turning either body about it changes the angle one for one).
    #[test]
    fn gradients_match_finite_differences() {
        let axis = Vec3::new(0.3, 1.0, -0.2).normalize();
        let reference = solverlab_core::rigid::frame::perpendicular(&axis);
        let qa = UnitQuaternion::from_euler_angles(0.4, -0.2, 0.7);
        let qb0 = UnitQuaternion::from_euler_angles(-0.3, 0.5, 0.2);
        let frame = JointFrame {
            anchor_a: Vec3::new(0.2, -0.4, 0.1),
            anchor_b: Vec3::new(-0.3, 0.2, 0.5),
            axis_a: qa.inverse() * axis,
            axis_b: qb0.inverse() * axis,
            ref_a: qa.inverse() * reference,
            ref_b: qb0.inverse() * reference,
            relative: qa.inverse() * qb0,
        };
        let (xa, xb) = (Vec3::new(0.1, 0.2, 0.3), Vec3::new(-0.5, 0.4, 0.0));
        let generic = [state(xa, qa), state(xb, UnitQuaternion::from_euler_angles(0.1, 0.9, -0.4))];
        let all = [0, 1, 2, 3, 4, 5];
        check(&row(Geometry::Anchor { joint: 0, e: Vec3::new(0.0, 0.6, 0.8) }), &generic, &frame, &all, None, true);
        check(&row(Geometry::Align { joint: 0, u: frame.ref_a, w: frame.axis_b }), &generic, &frame, &all, None, false);
        let near = [state(xa, qa), state(xb, UnitQuaternion::from_scaled_axis(Vec3::new(1e-7, -2e-7, 1e-7)) * qb0)];
        check(&row(Geometry::Twist { joint: 0, e: Vec3::z() }), &near, &frame, &[3, 4, 5], None, false);
        let hinged = [state(xa, qa), state(xb, UnitQuaternion::from_scaled_axis(axis * 0.3) * qb0)];
        check(
            &row(Geometry::Limit { joint: 0, lower: true, bound: -0.2 }),
            &hinged,
            &frame,
            &[0, 1, 2],
            Some(axis),
            false,
        );
        check(
            &row(Geometry::Limit { joint: 0, lower: false, bound: 0.5 }),
            &hinged,
            &frame,
            &[0, 1, 2],
            Some(axis),
            false,
        );
    }
}
