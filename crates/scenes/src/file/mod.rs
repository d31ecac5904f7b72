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
//! anchor_b = [0.5, 1.5, 0.0]    # optional: where b (or the world) holds it, if elsewhere (m)
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
use solverlab_core::model::{Removal, RemovedBody};
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

mod items;
mod rigid;
#[cfg(test)]
mod tests;

pub use items::{
    BodyFile, BoxFile, ConstraintFile, ConstraintType, EmbeddedFile, ParticleFile, PlaneFile, RemovalFile, SphereFile,
};
pub use rigid::{JointFile, JointType, RigidFile, ShapeType};

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
    let file: SceneFile = toml::from_str(text).map_err(|e: toml::de::Error| {
        SceneError::new(source, None, solverlab_core::names::with_hint(&e.to_string(), e.message()))
    })?;
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
            if p.fixed && p.v.iter().any(|c| *c != 0.0) {
                return Err(err(
                    format!("particle[{i}].v"),
                    "a fixed particle cannot move: leave v out, or give it a mass (a target that moves is a pin \
                     with a velocity)"
                        .into(),
                ));
            }
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
            let (field, index, body): (_, _, fn(usize) -> RemovedBody) = match (r.body, r.rigid) {
                (Some(b), None) => ("body", b, RemovedBody::BoxBody),
                (None, Some(b)) => ("rigid", b, RemovedBody::Rigid),
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
            scene.removals.push(Removal { body: body(index as usize), time: r.time });
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
                .map(|r| {
                    let (body, rigid) = match r.body {
                        RemovedBody::BoxBody(k) => (Some(k as i64), None),
                        RemovedBody::Rigid(k) => (None, Some(k as i64)),
                    };
                    RemovalFile { body, rigid, time: r.time }
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
