//! The scene-file format (TOML), read and written.
//!
//! ```toml
//! name = "pendulum"
//! gravity = [0.0, -9.81, 0.0]   # m/s², default as shown
//! damping = 0.0                 # Verlet drag in [0, 1), default 0
//! dt = 0.01                     # frame step in s, default 1/60
//!
//! [[particle]]
//! x = [1.0, 0.0, 0.0]           # m
//! v = [0.0, 0.0, 0.0]           # m/s, default 0
//! mass = 1.0                    # kg, default 1
//! fixed = false                 # true = immovable (w = 0)
//! radius = 0.0                  # m, default 0
//!
//! [[constraint]]
//! type = "distance"             # distance | min_distance | max_distance | pin
//! a = 0                         # particle indices (pin: a and target = [x, y, z])
//! b = 1
//! rest = 1.0                    # m, default: initial distance
//! compliance = 0.0              # m/N, default 0 (rigid)
//!
//! [[plane]]                     # particles stay where normal·x >= offset
//! normal = [0.0, 1.0, 0.0]
//! offset = 0.0
//! friction = 0.0
//! restitution = 0.0
//!
//! [[sphere]]                    # particles stay outside
//! center = [0.0, 0.0, 0.0]
//! radius = 1.0
//!
//! [[block]]                     # solid axis-aligned block: particles stay outside
//! min = [0.0, 0.0, 0.0]         # m (a stair step, a wall)
//! max = [1.0, 0.2, 2.0]
//! friction = 0.5
//!
//! [[removal]]                   # body 2 leaves the scene at t = 2 s (parked far away at rest)
//! body = 2                      # a [[body]] index; or `rigid = k` for a [[rigid]] body
//! time = 2.0
//!
//! [box]                         # optional: particles stay inside
//! min = [0.0, 0.0, 0.0]
//! max = [1000.0, 1000.0, 1000.0]
//! friction = 0.0
//! ```
//!
//! A 6-DoF rigid body (see `solverlab_core::rigid`):
//!
//! ```toml
//! [[rigid]]
//! shape = "box"                 # box | sphere | capsule (along its local y axis)
//! half_extents = [0.25, 0.25, 0.25]  # m (box)
//! radius = 0.2                  # m (sphere, capsule)
//! half_height = 0.3             # m (capsule: half its core segment)
//! mass = 1.0                    # kg; or density = 1000.0 (kg/m³); default mass 1
//! x = [0.0, 0.25, 0.0]          # centre of mass (m)
//! q = [1.0, 0.0, 0.0, 0.0]      # orientation [w, x, y, z], normalised on load; default identity
//! v = [0.0, 0.0, 0.0]           # m/s, default 0
//! w = [0.0, 0.0, 0.0]           # world angular velocity (rad/s), default 0
//! fixed = false                 # immovable
//! friction = 0.6                # μ, default 0.6 (combined as √(μa·μb))
//! restitution = 0.0             # e, default 0 (combined as the larger)
//! ```
//!
//! The inertia tensor follows from the shape and the mass. Joints connect rigid bodies:
//!
//! ```toml
//! [[joint]]
//! type = "revolute"             # ball | revolute | fixed
//! a = 0                         # rigid index
//! b = 1                         # rigid index; leave out to attach a to the world
//! anchor = [0.5, 1.0, 0.0]      # world point at the start (m)
//! axis = [0.0, 0.0, 1.0]        # revolute: world axis at the start
//! lower = -0.5                  # revolute: angle limits (rad), default none
//! upper = 0.5
//! compliance = 0.0              # m/N on the anchor rows, default 0 (rigid)
//! ```
//!
//! A pin also takes `velocity = [x, y, z]` (m/s, default 0): its target moves as
//! `target + velocity·t`. An embedded point, `[[embedded]] particles = [0, 1, 2, 3]` with
//! `weights = [c0, c1, c2, c3]` (summing to 1), is a point `Σ cᵢxᵢ` carried by the particles
//! that collides with the planes, spheres and box (Jakobsen §5). Unknown keys are errors, so a
//! typo never passes silently.

use std::path::Path;

use serde::{Deserialize, Serialize};
use solverlab_core::bodies::BoxBody;
use solverlab_core::model::Removal;
use solverlab_core::rigid::{Joint, JointKind, RigidBody, Shape, DEFAULT_FRICTION};
use solverlab_core::{
    Block, BoxCollider, Constraint, EmbeddedPoint, Kind, Particle, Plane, Scene, Sense, Sphere, Vec3,
};

use crate::SceneError;

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}
fn is_zero3(v: &[f64; 3]) -> bool {
    v.iter().all(|x| *x == 0.0)
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn one() -> f64 {
    1.0
}
fn is_one(x: &f64) -> bool {
    *x == 1.0
}
fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}
fn default_dt() -> f64 {
    1.0 / 60.0
}

/// The whole file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Scene name.
    pub name: String,
    /// Gravity (m/s²).
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Verlet drag in [0, 1).
    #[serde(default)]
    pub damping: f64,
    /// Frame step (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Particles.
    #[serde(default, rename = "particle", skip_serializing_if = "Vec::is_empty")]
    pub particles: Vec<ParticleFile>,
    /// Constraints.
    #[serde(default, rename = "constraint", skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<ConstraintFile>,
    /// Half-spaces.
    #[serde(default, rename = "plane", skip_serializing_if = "Vec::is_empty")]
    pub planes: Vec<PlaneFile>,
    /// Spheres.
    #[serde(default, rename = "sphere", skip_serializing_if = "Vec::is_empty")]
    pub spheres: Vec<SphereFile>,
    /// Embedded points.
    #[serde(default, rename = "embedded", skip_serializing_if = "Vec::is_empty")]
    pub embedded: Vec<EmbeddedFile>,
    /// Box bodies.
    #[serde(default, rename = "body", skip_serializing_if = "Vec::is_empty")]
    pub bodies: Vec<BodyFile>,
    /// Bodies leaving the scene.
    #[serde(default, rename = "removal", skip_serializing_if = "Vec::is_empty")]
    pub removals: Vec<RemovalFile>,
    /// Solid blocks (same fields as the box; particles stay outside).
    #[serde(default, rename = "block", skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BoxFile>,
    /// The box.
    #[serde(default, rename = "box", skip_serializing_if = "Option::is_none")]
    pub bounds: Option<BoxFile>,
    /// 6-DoF rigid bodies.
    #[serde(default, rename = "rigid", skip_serializing_if = "Vec::is_empty")]
    pub rigid: Vec<RigidFile>,
    /// Joints between rigid bodies.
    #[serde(default, rename = "joint", skip_serializing_if = "Vec::is_empty")]
    pub joints: Vec<JointFile>,
}

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
    fn to_joint(&self, k: usize, n: usize, err: &dyn Fn(String, String) -> SceneError) -> Result<Joint, SceneError> {
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
        Ok(Joint { kind, a, b, anchor: v3(self.anchor), compliance: self.compliance })
    }

    fn from_joint(j: &Joint) -> Self {
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
    fn to_body(&self, k: usize, err: &dyn Fn(String, String) -> SceneError) -> Result<RigidBody, SceneError> {
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
        let q = nalgebra::Quaternion::new(self.q[0], self.q[1], self.q[2], self.q[3]);
        if !(q.norm() > 1e-12 && q.norm().is_finite()) {
            return Err(err(f("q"), "must be a finite, non-zero quaternion [w, x, y, z]".into()));
        }
        let mut body =
            if self.fixed { RigidBody::fixed(shape, v3(self.x)) } else { RigidBody::new(shape, mass, v3(self.x)) };
        // Normalised on load; a quaternion that is already unit to rounding is kept bit for bit,
        // so that export and load round-trip exactly.
        body.q = match (q.norm() - 1.0).abs() < 4.0 * f64::EPSILON {
            true => nalgebra::UnitQuaternion::new_unchecked(q),
            false => nalgebra::UnitQuaternion::new_normalize(q),
        };
        body.v = v3(self.v);
        body.w = v3(self.w);
        body.friction = self.friction;
        body.restitution = self.restitution;
        Ok(body)
    }

    fn from_body(b: &RigidBody) -> Self {
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

/// One `[[body]]`: a box carried by the tetrahedron of four of its corners (see
/// `solverlab_core::bodies`), colliding with the other bodies.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyFile {
    /// The particles at the box corners (+,+,+), (+,−,−), (−,+,−), (−,−,+).
    pub particles: [i64; 4],
    /// Half extents (m).
    pub half: [f64; 3],
    /// Friction against other bodies.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub friction: f64,
}

/// One `[[removal]]`: box body `body` or rigid body `rigid` (exactly one) leaves the scene at
/// `time`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemovalFile {
    /// Index of the `[[body]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<i64>,
    /// Index of the `[[rigid]]` body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rigid: Option<i64>,
    /// Time (s).
    pub time: f64,
}

/// One `[[embedded]]`: a point `Σ cᵢ xᵢ` carried by 1–4 particles, colliding with the world.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddedFile {
    /// Particle indices.
    pub particles: Vec<i64>,
    /// Affine weights, one per particle, summing to 1.
    pub weights: Vec<f64>,
}

/// One `[[particle]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParticleFile {
    /// Position (m).
    pub x: [f64; 3],
    /// Velocity (m/s).
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub v: [f64; 3],
    /// Mass (kg); ignored when fixed.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub mass: f64,
    /// Immovable.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fixed: bool,
    /// Radius (m).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub radius: f64,
}

/// The `type` of a `[[constraint]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintType {
    /// `|xb − xa| = rest`.
    Distance,
    /// `|xb − xa| ≥ rest`.
    MinDistance,
    /// `|xb − xa| ≤ rest`.
    MaxDistance,
    /// `xa = target + velocity·t`.
    Pin,
}

/// One `[[constraint]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintFile {
    /// Which constraint.
    #[serde(rename = "type")]
    pub kind: ConstraintType,
    /// First particle.
    pub a: i64,
    /// Second particle (sticks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<i64>,
    /// Rest length (m); default the initial distance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest: Option<f64>,
    /// Compliance (m/N).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compliance: f64,
    /// Pin target (m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<[f64; 3]>,
    /// Pin target velocity (m/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<[f64; 3]>,
}

/// One `[[plane]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneFile {
    /// Normal (normalised on load).
    pub normal: [f64; 3],
    /// Offset (m).
    #[serde(default)]
    pub offset: f64,
    /// Friction μ.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub friction: f64,
    /// Restitution e.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restitution: f64,
}

/// One `[[sphere]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphereFile {
    /// Centre (m).
    pub center: [f64; 3],
    /// Radius (m).
    pub radius: f64,
    /// Friction μ.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub friction: f64,
    /// Restitution e.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restitution: f64,
}

/// The `[box]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxFile {
    /// Lower corner (m).
    pub min: [f64; 3],
    /// Upper corner (m).
    pub max: [f64; 3],
    /// Friction μ.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub friction: f64,
    /// Restitution e.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restitution: f64,
}

fn v3(a: [f64; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}
fn a3(v: &Vec3) -> [f64; 3] {
    [v.x, v.y, v.z]
}

/// Reads and validates a scene file.
pub fn load(path: &Path) -> Result<Scene, SceneError> {
    let source = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| SceneError::new(&source, None, format!("cannot read: {e}")))?;
    parse(&text, &source)
}

/// Parses and validates scene-file text; `source` names it in errors.
pub fn parse(text: &str, source: &str) -> Result<Scene, SceneError> {
    let file: SceneFile = toml::from_str(text).map_err(|e| SceneError::new(source, None, e.to_string().trim_end()))?;
    let scene = file.to_scene(source)?;
    scene.validate().map_err(|e| SceneError::new(source, Some(e.field), e.problem))?;
    Ok(scene)
}

impl SceneFile {
    /// Converts to the model, checking what the model cannot express (missing keys, negative
    /// indices, masses). [`Scene::validate`] checks the rest.
    pub fn to_scene(&self, source: &str) -> Result<Scene, SceneError> {
        let err = |field: String, problem: String| SceneError::new(source, Some(field), problem);
        let mut scene = Scene::new(self.name.clone());
        scene.gravity = v3(self.gravity);
        scene.damping = self.damping;
        scene.dt = self.dt;
        for (i, p) in self.particles.iter().enumerate() {
            let w = if p.fixed {
                0.0
            } else if p.mass > 0.0 && p.mass.is_finite() {
                1.0 / p.mass
            } else {
                return Err(err(
                    format!("particle[{i}].mass"),
                    format!("{} must be positive (or set fixed = true)", p.mass),
                ));
            };
            scene.particles.push(Particle { x: v3(p.x), v: v3(p.v), w, radius: p.radius });
        }
        let n = scene.particles.len();
        let index = |j: usize, name: &str, i: i64| -> Result<usize, SceneError> {
            if i < 0 || i as usize >= n {
                Err(err(
                    format!("constraint[{j}].{name}"),
                    format!("particle index {i} out of range (the scene has {n} particles)"),
                ))
            } else {
                Ok(i as usize)
            }
        };
        for (j, c) in self.constraints.iter().enumerate() {
            let a = index(j, "a", c.a)?;
            let kind = match c.kind {
                ConstraintType::Pin => {
                    if c.b.is_some() || c.rest.is_some() {
                        return Err(err(
                            format!("constraint[{j}]"),
                            "a pin takes a, target and velocity, not b or rest".into(),
                        ));
                    }
                    let target = c.target.ok_or_else(|| {
                        err(format!("constraint[{j}].target"), "missing: a pin needs target = [x, y, z]".into())
                    })?;
                    Kind::Pin { a, target: v3(target), velocity: v3(c.velocity.unwrap_or([0.0; 3])) }
                }
                stick => {
                    if c.target.is_some() || c.velocity.is_some() {
                        return Err(err(format!("constraint[{j}]"), "target and velocity belong to pins".into()));
                    }
                    let b = index(
                        j,
                        "b",
                        c.b.ok_or_else(|| err(format!("constraint[{j}].b"), "missing: a stick needs a and b".into()))?,
                    )?;
                    let rest = c.rest.unwrap_or_else(|| (scene.particles[b].x - scene.particles[a].x).norm());
                    let sense = match stick {
                        ConstraintType::Distance => Sense::Equal,
                        ConstraintType::MinDistance => Sense::AtLeast,
                        _ => Sense::AtMost,
                    };
                    Kind::Stick { a, b, rest, sense }
                }
            };
            scene.constraints.push(Constraint { kind, compliance: c.compliance });
        }
        for p in &self.planes {
            let n = v3(p.normal);
            let len = n.norm();
            scene.planes.push(Plane {
                normal: if len > 0.0 { n / len } else { n },
                offset: p.offset,
                friction: p.friction,
                restitution: p.restitution,
            });
        }
        for s in &self.spheres {
            scene.spheres.push(Sphere {
                center: v3(s.center),
                radius: s.radius,
                friction: s.friction,
                restitution: s.restitution,
            });
        }
        for (k, e) in self.embedded.iter().enumerate() {
            if e.particles.is_empty() || e.particles.len() > 4 || e.particles.len() != e.weights.len() {
                return Err(err(format!("embedded[{k}]"), "needs 1 to 4 particles and one weight per particle".into()));
            }
            let mut point = EmbeddedPoint { particles: [0; 4], weights: [0.0; 4], count: e.particles.len() };
            for (slot, (&i, &c)) in e.particles.iter().zip(&e.weights).enumerate() {
                if i < 0 || i as usize >= n {
                    return Err(err(
                        format!("embedded[{k}].particles"),
                        format!("particle index {i} out of range (the scene has {n} particles)"),
                    ));
                }
                point.particles[slot] = i as usize;
                point.weights[slot] = c;
            }
            scene.embedded.push(point);
        }
        for (k, b) in self.bodies.iter().enumerate() {
            let mut particles = [0; 4];
            for (slot, &i) in b.particles.iter().enumerate() {
                if i < 0 || i as usize >= n {
                    return Err(err(
                        format!("body[{k}].particles"),
                        format!("particle index {i} out of range (the scene has {n} particles)"),
                    ));
                }
                particles[slot] = i as usize;
            }
            scene.bodies.push(BoxBody { particles, half: v3(b.half), friction: b.friction });
        }
        for (k, r) in self.removals.iter().enumerate() {
            let (field, index, rigid) = match (r.body, r.rigid) {
                (Some(b), None) => ("body", b, false),
                (None, Some(b)) => ("rigid", b, true),
                _ => {
                    return Err(err(
                        format!("removal[{k}]"),
                        "give exactly one of body (a [[body]] index) or rigid (a [[rigid]] index)".to_string(),
                    ))
                }
            };
            if index < 0 {
                return Err(err(format!("removal[{k}].{field}"), format!("index {index} is negative")));
            }
            scene.removals.push(Removal { body: index as usize, rigid, time: r.time });
        }
        for b in &self.blocks {
            scene.blocks.push(Block {
                min: v3(b.min),
                max: v3(b.max),
                friction: b.friction,
                restitution: b.restitution,
            });
        }
        if let Some(b) = &self.bounds {
            scene.bounds =
                Some(BoxCollider { min: v3(b.min), max: v3(b.max), friction: b.friction, restitution: b.restitution });
        }
        for (k, r) in self.rigid.iter().enumerate() {
            scene.rigid.push(r.to_body(k, &err)?);
        }
        for (k, j) in self.joints.iter().enumerate() {
            scene.joints.push(j.to_joint(k, scene.rigid.len(), &err)?);
        }
        Ok(scene)
    }

    /// The file form of a scene (what `solverlab scene export` prints).
    pub fn from_scene(scene: &Scene) -> SceneFile {
        SceneFile {
            name: scene.name.clone(),
            gravity: a3(&scene.gravity),
            damping: scene.damping,
            dt: scene.dt,
            particles: scene
                .particles
                .iter()
                .map(|p| ParticleFile {
                    x: a3(&p.x),
                    v: a3(&p.v),
                    mass: if p.w > 0.0 { 1.0 / p.w } else { 1.0 },
                    fixed: p.w == 0.0,
                    radius: p.radius,
                })
                .collect(),
            constraints: scene
                .constraints
                .iter()
                .map(|c| match c.kind {
                    Kind::Stick { a, b, rest, sense } => ConstraintFile {
                        kind: match sense {
                            Sense::Equal => ConstraintType::Distance,
                            Sense::AtLeast => ConstraintType::MinDistance,
                            Sense::AtMost => ConstraintType::MaxDistance,
                        },
                        a: a as i64,
                        b: Some(b as i64),
                        rest: Some(rest),
                        compliance: c.compliance,
                        target: None,
                        velocity: None,
                    },
                    Kind::Pin { a, target, velocity } => ConstraintFile {
                        kind: ConstraintType::Pin,
                        a: a as i64,
                        b: None,
                        rest: None,
                        compliance: c.compliance,
                        target: Some(a3(&target)),
                        velocity: (velocity != Vec3::zeros()).then(|| a3(&velocity)),
                    },
                })
                .collect(),
            planes: scene
                .planes
                .iter()
                .map(|p| PlaneFile {
                    normal: a3(&p.normal),
                    offset: p.offset,
                    friction: p.friction,
                    restitution: p.restitution,
                })
                .collect(),
            spheres: scene
                .spheres
                .iter()
                .map(|s| SphereFile {
                    center: a3(&s.center),
                    radius: s.radius,
                    friction: s.friction,
                    restitution: s.restitution,
                })
                .collect(),
            bodies: scene
                .bodies
                .iter()
                .map(|b| BodyFile { particles: b.particles.map(|i| i as i64), half: a3(&b.half), friction: b.friction })
                .collect(),
            embedded: scene
                .embedded
                .iter()
                .map(|e| EmbeddedFile {
                    particles: e.particles[..e.count].iter().map(|&i| i as i64).collect(),
                    weights: e.weights[..e.count].to_vec(),
                })
                .collect(),
            removals: scene
                .removals
                .iter()
                .map(|r| RemovalFile {
                    body: (!r.rigid).then_some(r.body as i64),
                    rigid: r.rigid.then_some(r.body as i64),
                    time: r.time,
                })
                .collect(),
            blocks: scene
                .blocks
                .iter()
                .map(|b| BoxFile { min: a3(&b.min), max: a3(&b.max), friction: b.friction, restitution: b.restitution })
                .collect(),
            bounds: scene.bounds.as_ref().map(|b| BoxFile {
                min: a3(&b.min),
                max: a3(&b.max),
                friction: b.friction,
                restitution: b.restitution,
            }),
            rigid: scene.rigid.iter().map(RigidFile::from_body).collect(),
            joints: scene.joints.iter().map(JointFile::from_joint).collect(),
        }
    }

    /// The TOML text of this file.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scene file always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PENDULUM: &str = r#"
name = "pendulum"
dt = 0.01
[[particle]]
x = [0.0, 0.0, 0.0]
fixed = true
[[particle]]
x = [1.0, 0.0, 0.0]
[[constraint]]
type = "distance"
a = 0
b = 1
"#;

    #[test]
    fn a_minimal_file_loads_with_documented_defaults() {
        let s = parse(PENDULUM, "p.toml").unwrap();
        assert_eq!(s.gravity, Vec3::new(0.0, -9.81, 0.0));
        assert_eq!(s.damping, 0.0);
        assert_eq!(s.particles[0].w, 0.0);
        assert_eq!(s.particles[1].w, 1.0);
        assert_eq!(s.constraints[0].kind, Kind::Stick { a: 0, b: 1, rest: 1.0, sense: Sense::Equal });
    }

    #[test]
    fn export_then_load_gives_the_same_scene() {
        let s = parse(PENDULUM, "p.toml").unwrap();
        let again = parse(&SceneFile::from_scene(&s).to_toml(), "again").unwrap();
        assert_eq!(s, again);
    }

    const RIGID: &str = r#"
[[rigid]]
shape = "box"
half_extents = [0.5, 0.25, 0.125]
mass = 2.0
x = [0.0, 1.0, 0.0]
q = [1.0, 0.2, 0.0, 0.0]
w = [0.0, 3.0, 0.0]
friction = 0.3
[[rigid]]
shape = "sphere"
radius = 0.5
density = 1000.0
x = [2.0, 1.0, 0.0]
restitution = 0.5
[[rigid]]
shape = "box"
half_extents = [5.0, 0.5, 5.0]
x = [0.0, -0.5, 0.0]
fixed = true
[[rigid]]
shape = "capsule"
radius = 0.1
half_height = 0.3
x = [4.0, 1.0, 0.0]
[[joint]]
type = "revolute"
a = 0
b = 1
anchor = [1.0, 1.0, 0.0]
axis = [0.0, 0.0, 1.0]
lower = -0.5
[[joint]]
type = "ball"
a = 1
anchor = [2.0, 2.0, 0.0]
compliance = 1e-6
"#;

    /// Every `[[rigid]]` key survives export and load, the quaternion is normalised, density
    /// gives the mass (1000 kg/m³ × 4/3·π·0.5³ m³ = 523.6 kg) and the inertia follows.
    #[test]
    fn rigid_bodies_round_trip_with_their_mass_properties() {
        let s = parse(&format!("{PENDULUM}{RIGID}"), "r.toml").unwrap();
        assert_eq!(s.rigid.len(), 4);
        assert_eq!(s.rigid[3].shape, Shape::Capsule { radius: 0.1, half_height: 0.3 });
        assert!((s.rigid[0].q.norm() - 1.0).abs() < 1e-15 && (s.rigid[0].q.i - 0.2 / 1.04f64.sqrt()).abs() < 1e-12);
        assert!((s.rigid[0].mass() - 2.0).abs() < 1e-12 && (s.rigid[0].friction - 0.3).abs() < 1e-15);
        assert!((s.rigid[1].mass() - 523.598_775_598_298_8).abs() < 1e-9, "{}", s.rigid[1].mass());
        assert!((1.0 / s.rigid[1].inv_inertia.x - 0.4 * s.rigid[1].mass() * 0.25).abs() < 1e-9);
        assert!(s.rigid[2].is_fixed() && s.rigid[2].friction == DEFAULT_FRICTION);
        assert_eq!(s.joints.len(), 2);
        assert!(
            matches!(s.joints[0].kind, JointKind::Revolute { lower, upper, .. } if lower == -0.5 && upper == f64::INFINITY)
        );
        assert!(s.joints[1].b.is_none() && s.joints[1].compliance == 1e-6);
        let again = parse(&SceneFile::from_scene(&s).to_toml(), "again").unwrap();
        assert_eq!(s, again);
        // A rigid body's removal round-trips as `rigid = k`.
        let s = parse(&format!("{PENDULUM}{RIGID}\n[[removal]]\nrigid = 1\ntime = 2.0\n"), "r.toml").unwrap();
        assert_eq!(s.removals, vec![solverlab_core::model::Removal { body: 1, rigid: true, time: 2.0 }]);
        let text = SceneFile::from_scene(&s).to_toml();
        assert!(text.contains("rigid = 1") && !text.contains("body = 1"), "{text}");
        assert_eq!(parse(&text, "again").unwrap(), s);
    }

    fn error_of(text: &str) -> String {
        parse(text, "bad.toml").unwrap_err().to_string()
    }

    #[test]
    fn bad_files_name_the_file_field_and_problem() {
        let cases = [
            (
                PENDULUM.replace("b = 1", "b = 7"),
                "bad.toml: constraint[0].b: particle index 7 out of range (the scene has 2 particles)",
            ),
            (PENDULUM.replace("b = 1", "b = -1"), "bad.toml: constraint[0].b: particle index -1 out of range"),
            (
                PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [1.0, 0.0, 0.0]\nmass = -2.0"),
                "bad.toml: particle[1].mass: -2 must be positive",
            ),
            (
                PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [1.0, 0.0, 0.0]\nmass = 0.0"),
                "bad.toml: particle[1].mass: 0 must be positive",
            ),
            (PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [1.0, nan, 0.0]"), "bad.toml: particle[1].x: must be finite"),
            (
                PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [0.0, 0.0, 0.0]"),
                "bad.toml: constraint[0].rest: 0 must be a positive length",
            ),
            (PENDULUM.replace("dt = 0.01", "dt = -1.0"), "bad.toml: dt: -1 must be a positive"),
            (PENDULUM.replace("dt = 0.01", "damping = 1.5"), "bad.toml: damping: 1.5 is outside [0, 1)"),
            (PENDULUM.replace("b = 1", "b = 1\nstiffnes = 2"), "unknown field `stiffnes`"),
            (PENDULUM.replace("type = \"distance\"", "type = \"spring\""), "unknown variant `spring`"),
            (PENDULUM.replace("b = 1", ""), "bad.toml: constraint[0].b: missing"),
            (
                format!("{PENDULUM}\n[[removal]]\nbody = 0\ntime = 1.0\n"),
                "bad.toml: removal[0].body: body index 0 out of range",
            ),
            (
                format!("{PENDULUM}\n[[removal]]\nrigid = 3\ntime = 1.0\n"),
                "bad.toml: removal[0].rigid: rigid index 3 out of range",
            ),
            (
                format!("{PENDULUM}\n[[removal]]\nbody = 0\nrigid = 0\ntime = 1.0\n"),
                "bad.toml: removal[0]: give exactly one of body",
            ),
            (
                format!("{PENDULUM}\n[[block]]\nmin = [0.0, 0.0, 0.0]\nmax = [1.0, 0.0, 1.0]\n"),
                "bad.toml: block[0].max: max must exceed min on every axis (axis 1",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("mass = 2.0", "mass = -1.0"),
                "bad.toml: rigid[0].mass: -1 must be positive",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("half_extents = [0.5, 0.25, 0.125]\n", ""),
                "bad.toml: rigid[0].half_extents: missing",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("0.125]", "0.0]"),
                "bad.toml: rigid[0].half_extents: must be a positive length",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("q = [1.0, 0.2, 0.0, 0.0]", "q = [0.0, 0.0, 0.0, 0.0]"),
                "bad.toml: rigid[0].q: must be a finite, non-zero",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("mass = 2.0", "mass = 2.0\ndensity = 5.0"),
                "bad.toml: rigid[0].density: give mass or density",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("friction = 0.3", "friction = -0.3"),
                "bad.toml: rigid[0].friction: -0.3 must be ≥ 0",
            ),
            (format!("{PENDULUM}{RIGID}").replace("shape = \"box\"", "shape = \"cone\""), "unknown variant `cone`"),
            (
                format!("{PENDULUM}{RIGID}").replace("b = 1\nanchor", "b = 5\nanchor"),
                "bad.toml: joint[0].b: rigid index 5 out of range (the scene has 4 rigid bodies)",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("half_height = 0.3\n", ""),
                "bad.toml: rigid[3].half_height: missing",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("half_height = 0.3", "half_height = -0.3"),
                "bad.toml: rigid[3].half_height: must be a positive length",
            ),
            (format!("{PENDULUM}{RIGID}").replace("axis = [0.0, 0.0, 1.0]\n", ""), "bad.toml: joint[0].axis: missing"),
            (
                format!("{PENDULUM}{RIGID}").replace("lower = -0.5", "lower = 0.5\nupper = -0.5"),
                "bad.toml: joint[0].upper: limits [0.5, -0.5] rad must satisfy lower ≤ upper",
            ),
            (
                format!("{PENDULUM}{RIGID}").replace("a = 1\nanchor", "a = 1\nb = 1\nanchor"),
                "bad.toml: joint[1].b: a joint needs two different bodies",
            ),
        ];
        for (text, expected) in cases {
            let e = error_of(&text);
            assert!(e.contains(expected), "expected `{expected}` in `{e}`");
            assert!(e.starts_with("bad.toml"), "{e}");
        }
    }
}
