//! The particle items of a scene file and its colliders: `[[particle]]`, `[[constraint]]`,
//! `[[body]]`, `[[embedded]]`, `[[removal]]`, `[[plane]]`, `[[sphere]]` and `[[box]]`.

use super::*;

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
