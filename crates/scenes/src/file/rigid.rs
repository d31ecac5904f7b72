//! The rigid bodies' and joints' items of a scene file: `[[rigid]]` and `[[joint]]`.

use super::*;

/// The `type` of a `[[joint]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointType {
    /// The anchors coincide.
    Ball,
    /// A ball joint that keeps a common axis, with optional limits.
    Revolute,
    /// A ball joint that keeps the relative orientation.
    Fixed,
}

/// One `[[joint]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointFile {
    /// Which joint.
    #[serde(rename = "type")]
    pub kind: JointType,
    /// First rigid body.
    pub a: i64,
    /// Second rigid body; none attaches `a` to the world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<i64>,
    /// World anchor at the start (m).
    pub anchor: [f64; 3],
    /// Where `b` (or the world) holds the anchor at the start, when not at `anchor` (m): a
    /// joint that starts stretched (Solver2D's stretched chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_b: Option<[f64; 3]>,
    /// Revolute axis (world, at the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 3]>,
    /// Revolute lower limit (rad).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    /// Revolute upper limit (rad).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// Compliance of the anchor rows (m/N).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compliance: f64,
}

impl JointFile {
    pub(super) fn to_joint(
        &self,
        k: usize,
        n: usize,
        err: &dyn Fn(String, String) -> SceneError,
    ) -> Result<Joint, SceneError> {
        let f = |name: &str| format!("joint[{k}].{name}");
        let index = |name: &str, i: i64| -> Result<usize, SceneError> {
            if i < 0 || i as usize >= n {
                Err(err(f(name), format!("rigid index {i} out of range (the scene has {n} rigid bodies)")))
            } else {
                Ok(i as usize)
            }
        };
        let a = index("a", self.a)?;
        let b = self.b.map(|b| index("b", b)).transpose()?;
        let kind = match self.kind {
            JointType::Revolute => JointKind::Revolute {
                axis: v3(self
                    .axis
                    .ok_or_else(|| err(f("axis"), "missing: a revolute joint needs axis = [x, y, z]".into()))?),
                lower: self.lower.unwrap_or(f64::NEG_INFINITY),
                upper: self.upper.unwrap_or(f64::INFINITY),
            },
            other => {
                if self.axis.is_some() || self.lower.is_some() || self.upper.is_some() {
                    return Err(err(f("axis"), "axis, lower and upper belong to revolute joints".into()));
                }
                if other == JointType::Ball {
                    JointKind::Ball
                } else {
                    JointKind::Fixed
                }
            }
        };
        Ok(Joint { kind, a, b, anchor: v3(self.anchor), anchor_b: self.anchor_b.map(v3), compliance: self.compliance })
    }

    pub(super) fn from_joint(j: &Joint) -> Self {
        let (kind, axis, lower, upper) = match j.kind {
            JointKind::Ball => (JointType::Ball, None, None, None),
            JointKind::Fixed => (JointType::Fixed, None, None, None),
            JointKind::Revolute { axis, lower, upper } => (
                JointType::Revolute,
                Some(a3(&axis)),
                lower.is_finite().then_some(lower),
                upper.is_finite().then_some(upper),
            ),
        };
        JointFile {
            kind,
            a: j.a as i64,
            b: j.b.map(|b| b as i64),
            anchor: a3(&j.anchor),
            anchor_b: j.anchor_b.as_ref().map(a3),
            axis,
            lower,
            upper,
            compliance: j.compliance,
        }
    }
}

/// The `shape` of a `[[rigid]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeType {
    /// A box (`half_extents`).
    Box,
    /// A solid sphere (`radius`).
    Sphere,
    /// A capsule along its local y axis (`radius`, `half_height`).
    Capsule,
}

fn default_friction() -> f64 {
    DEFAULT_FRICTION
}
fn is_default_friction(x: &f64) -> bool {
    *x == DEFAULT_FRICTION
}
fn identity_q() -> [f64; 4] {
    [1.0, 0.0, 0.0, 0.0]
}
fn is_identity_q(q: &[f64; 4]) -> bool {
    *q == identity_q()
}

/// The orientation `[w, x, y, z]` normalised, or `None` unless its components are finite and
/// not all zero. It is scaled by its largest component first, so that `[1e200, 1e200, 0, 0]`
/// (whose norm overflows) and `[1e-200, 0, 0, 0]` (whose square underflows) normalise like
/// `[1, 1, 0, 0]` and `[1, 0, 0, 0]`. A quaternion that is already unit to rounding is kept bit
/// for bit, so that export and load round-trip exactly.
fn unit_quaternion(q: [f64; 4]) -> Option<nalgebra::UnitQuaternion<f64>> {
    let largest = q.iter().fold(0.0f64, |m, c| m.max(c.abs()));
    if !(largest > 0.0 && largest.is_finite()) || q.iter().any(|c| !c.is_finite()) {
        return None;
    }
    let raw = nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]);
    if (raw.norm() - 1.0).abs() < 4.0 * f64::EPSILON {
        return Some(nalgebra::UnitQuaternion::new_unchecked(raw));
    }
    Some(nalgebra::UnitQuaternion::new_normalize(raw / largest))
}

/// One `[[rigid]]`: a 6-DoF rigid body.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigidFile {
    /// `box` or `sphere`.
    pub shape: ShapeType,
    /// Half extents of a box (m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_extents: Option<[f64; 3]>,
    /// Radius of a sphere or a capsule (m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius: Option<f64>,
    /// Half the length of a capsule's core segment (m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_height: Option<f64>,
    /// Mass (kg); default 1 unless `density` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    /// Density (kg/m³), instead of `mass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f64>,
    /// Centre of mass (m).
    pub x: [f64; 3],
    /// Orientation `[w, x, y, z]`.
    #[serde(default = "identity_q", skip_serializing_if = "is_identity_q")]
    pub q: [f64; 4],
    /// Velocity (m/s).
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub v: [f64; 3],
    /// World angular velocity (rad/s).
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub w: [f64; 3],
    /// Immovable.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fixed: bool,
    /// Friction μ.
    #[serde(default = "default_friction", skip_serializing_if = "is_default_friction")]
    pub friction: f64,
    /// Restitution e.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restitution: f64,
}

impl RigidFile {
    pub(super) fn to_body(
        &self,
        k: usize,
        err: &dyn Fn(String, String) -> SceneError,
    ) -> Result<RigidBody, SceneError> {
        let f = |name: &str| format!("rigid[{k}].{name}");
        let shape = match self.shape {
            ShapeType::Box => {
                if self.radius.is_some() {
                    return Err(err(f("radius"), "a box takes half_extents, not radius".into()));
                }
                let h = self.half_extents.ok_or_else(|| {
                    err(f("half_extents"), "missing: a box needs half_extents = [x, y, z] (m)".into())
                })?;
                Shape::Box { half: v3(h) }
            }
            ShapeType::Sphere => {
                if self.half_extents.is_some() || self.half_height.is_some() {
                    return Err(err(f("half_extents"), "a sphere takes radius only".into()));
                }
                Shape::Sphere {
                    radius: self.radius.ok_or_else(|| err(f("radius"), "missing: a sphere needs radius (m)".into()))?,
                }
            }
            ShapeType::Capsule => {
                if self.half_extents.is_some() {
                    return Err(err(f("half_extents"), "a capsule takes radius and half_height".into()));
                }
                Shape::Capsule {
                    radius: self
                        .radius
                        .ok_or_else(|| err(f("radius"), "missing: a capsule needs radius (m)".into()))?,
                    half_height: self
                        .half_height
                        .ok_or_else(|| err(f("half_height"), "missing: a capsule needs half_height (m)".into()))?,
                }
            }
        };
        if self.shape == ShapeType::Box && self.half_height.is_some() {
            return Err(err(f("half_height"), "a box takes half_extents only".into()));
        }
        let positive = |x: f64| x > 0.0 && x.is_finite();
        let invalid = match shape {
            Shape::Box { half } => (!half.iter().all(|h| positive(*h))).then_some("half_extents"),
            Shape::Sphere { radius } => (!positive(radius)).then_some("radius"),
            Shape::Capsule { radius, half_height } => {
                if !positive(radius) {
                    Some("radius")
                } else {
                    (!positive(half_height)).then_some("half_height")
                }
            }
        };
        if let Some(field) = invalid {
            return Err(err(f(field), "must be a positive length (m)".into()));
        }
        let mass = match (self.mass, self.density) {
            (Some(_), Some(_)) => return Err(err(f("density"), "give mass or density, not both".into())),
            (Some(m), None) => m,
            (None, Some(d)) => {
                if !(d > 0.0 && d.is_finite()) {
                    return Err(err(f("density"), format!("{d} must be positive (kg/m³)")));
                }
                d * shape.volume()
            }
            (None, None) => 1.0,
        };
        let valid_mass = mass > 0.0 && mass.is_finite();
        if !(self.fixed || valid_mass) {
            return Err(err(f("mass"), format!("{mass} must be positive (or set fixed = true)")));
        }
        let q = unit_quaternion(self.q)
            .ok_or_else(|| err(f("q"), "must be a finite, non-zero quaternion [w, x, y, z]".into()))?;
        let mut body =
            if self.fixed { RigidBody::fixed(shape, v3(self.x)) } else { RigidBody::new(shape, mass, v3(self.x)) };
        body.q = q;
        body.v = v3(self.v);
        body.w = v3(self.w);
        body.friction = self.friction;
        body.restitution = self.restitution;
        Ok(body)
    }

    pub(super) fn from_body(b: &RigidBody) -> Self {
        let q = b.q.quaternion();
        RigidFile {
            shape: match b.shape {
                Shape::Box { .. } => ShapeType::Box,
                Shape::Sphere { .. } => ShapeType::Sphere,
                Shape::Capsule { .. } => ShapeType::Capsule,
            },
            half_extents: match b.shape {
                Shape::Box { half } => Some(a3(&half)),
                _ => None,
            },
            radius: match b.shape {
                Shape::Sphere { radius } | Shape::Capsule { radius, .. } => Some(radius),
                Shape::Box { .. } => None,
            },
            half_height: match b.shape {
                Shape::Capsule { half_height, .. } => Some(half_height),
                _ => None,
            },
            mass: (!b.is_fixed()).then(|| b.mass()),
            density: None,
            x: a3(&b.x),
            q: [q.w, q.i, q.j, q.k],
            v: a3(&b.v),
            w: a3(&b.w),
            fixed: b.is_fixed(),
            friction: b.friction,
            restitution: b.restitution,
        }
    }
}
