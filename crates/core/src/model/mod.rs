//! The scene model: particles, constraints and world colliders, in SI units.
//!
//! A [`Scene`] is immutable during a run; the moving part is a [`State`] (positions and previous
//! positions, Jakobsen's `x` and `x*`). Keeping them apart lets an experiment freeze a state and
//! hand identical copies to several solvers.

use crate::Vec3;

mod validate;

/// One particle as it is described in a scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Particle {
    /// Initial position (m).
    pub x: Vec3,
    /// Initial velocity (m/s).
    pub v: Vec3,
    /// Inverse mass `w = 1/m` (1/kg); `0` makes the particle immovable.
    pub w: f64,
    /// Collision radius (m) against colliders; `0` is a point.
    pub radius: f64,
}

impl Particle {
    /// A movable particle of mass `mass` (kg) at rest at `x`.
    pub fn new(x: Vec3, mass: f64) -> Self {
        Self { x, v: Vec3::zeros(), w: 1.0 / mass, radius: 0.0 }
    }

    /// An immovable particle (`w = 0`) at `x`.
    pub fn fixed(x: Vec3) -> Self {
        Self { x, v: Vec3::zeros(), w: 0.0, radius: 0.0 }
    }

    /// The mass (kg); infinite for immovable particles.
    pub fn mass(&self) -> f64 {
        if self.w > 0.0 {
            1.0 / self.w
        } else {
            f64::INFINITY
        }
    }
}

/// Which side of `rest` a stick accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sense {
    /// `|xb − xa| = rest`: Jakobsen's stick (bilateral).
    Equal,
    /// `|xb − xa| ≥ rest`: Jakobsen's angle limits and self-collision sticks (unilateral).
    AtLeast,
    /// `|xb − xa| ≤ rest`: a rope (unilateral).
    AtMost,
}

/// What a constraint holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A distance constraint between particles `a` and `b`.
    Stick {
        /// First particle index.
        a: usize,
        /// Second particle index.
        b: usize,
        /// Rest length (m), positive.
        rest: f64,
        /// Equality or one of the unilateral senses.
        sense: Sense,
    },
    /// Particle `a` held at the world point `target + velocity·t` (Jakobsen's IK and dragging).
    ///
    /// On a movable particle this is a constraint with three rows (one per axis). On an
    /// immovable particle (`w = 0`) it is kinematic: the shared integrator moves the particle to
    /// the target before every solve, so no solver sees it.
    Pin {
        /// The particle index.
        a: usize,
        /// Target position at `t = 0` (m).
        target: Vec3,
        /// Target velocity (m/s).
        velocity: Vec3,
    },
}

/// A constraint: a [`Kind`] plus XPBD compliance.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// What the constraint holds.
    pub kind: Kind,
    /// XPBD compliance `α` (m/N), the inverse stiffness; `0` is rigid.
    pub compliance: f64,
}

impl Constraint {
    /// A rigid equality stick between `a` and `b`.
    pub fn stick(a: usize, b: usize, rest: f64) -> Self {
        Self { kind: Kind::Stick { a, b, rest, sense: Sense::Equal }, compliance: 0.0 }
    }

    /// A rigid unilateral stick: `|xb − xa| ≥ rest`.
    pub fn min_distance(a: usize, b: usize, rest: f64) -> Self {
        Self { kind: Kind::Stick { a, b, rest, sense: Sense::AtLeast }, compliance: 0.0 }
    }

    /// A rigid unilateral stick: `|xb − xa| ≤ rest`.
    pub fn max_distance(a: usize, b: usize, rest: f64) -> Self {
        Self { kind: Kind::Stick { a, b, rest, sense: Sense::AtMost }, compliance: 0.0 }
    }

    /// A static pin of particle `a` at `target`.
    pub fn pin(a: usize, target: Vec3) -> Self {
        Self { kind: Kind::Pin { a, target, velocity: Vec3::zeros() }, compliance: 0.0 }
    }

    /// The same constraint with compliance `alpha` (m/N).
    pub fn with_compliance(mut self, alpha: f64) -> Self {
        self.compliance = alpha;
        self
    }
}

/// A half-space particles stay in: `normal·x ≥ offset + radius`.
#[derive(Clone, Debug, PartialEq)]
pub struct Plane {
    /// Unit outward normal (points into the allowed side).
    pub normal: Vec3,
    /// Offset along the normal (m).
    pub offset: f64,
    /// Friction coefficient μ (dimensionless), default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0 (Jakobsen's perfectly inelastic projection).
    pub restitution: f64,
}

/// A solid sphere particles stay outside of.
#[derive(Clone, Debug, PartialEq)]
pub struct Sphere {
    /// Centre (m).
    pub center: Vec3,
    /// Radius (m).
    pub radius: f64,
    /// Friction coefficient μ, default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0.
    pub restitution: f64,
}

/// Jakobsen's box (§3): particles stay inside `[min, max]` on every axis.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxCollider {
    /// Lower corner (m).
    pub min: Vec3,
    /// Upper corner (m).
    pub max: Vec3,
    /// Friction coefficient μ, default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0.
    pub restitution: f64,
}

/// A solid axis-aligned block particles stay outside of: a stair step, a wall, a table.
///
/// Its contact row is the face of least penetration: with the per-axis outside distances
/// `dₖ = max(minₖ − r − xₖ, xₖ − maxₖ − r)`, `C = maxₖ dₖ` and `∇C = ±eₖ` for the maximising
/// axis (negative `C` inside). Outside a block `C` is the largest axis distance, a lower bound on
/// the true distance, which is all a contact margin needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Lower corner (m).
    pub min: Vec3,
    /// Upper corner (m).
    pub max: Vec3,
    /// Friction coefficient μ, default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0.
    pub restitution: f64,
}

/// A scene event: `body` leaves the scene at `time` (s), for example the heavy top of a stack
/// (Solver2D's warm-start energy test). From the first step that ends at or after `time`, a box
/// body's particles are parked at rest at their initial positions plus [`PARK_OFFSET`], far from
/// everything, and the metrics leave them out; a removed rigid body is parked the same way, at
/// rest and asleep, so that no solver moves it.
#[derive(Clone, Debug, PartialEq)]
pub struct Removal {
    /// The body that leaves, named by the array it indexes.
    pub body: RemovedBody,
    /// When it leaves (s).
    pub time: f64,
}

/// The body a [`Removal`] takes out, by the array its index refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemovedBody {
    /// A box body carried by particles: an index into [`Scene::bodies`].
    BoxBody(usize),
    /// A 6-DoF rigid body: an index into [`Scene::rigid`].
    Rigid(usize),
}

impl Removal {
    /// The index into [`Scene::bodies`] of the box body that leaves by `time`, if it is one.
    pub fn box_body_by(&self, time: f64) -> Option<usize> {
        match self.body {
            RemovedBody::BoxBody(k) if self.time <= time => Some(k),
            _ => None,
        }
    }

    /// The index into [`Scene::rigid`] of the rigid body that leaves by `time`, if it is one.
    pub fn rigid_body_by(&self, time: f64) -> Option<usize> {
        match self.body {
            RemovedBody::Rigid(k) if self.time <= time => Some(k),
            _ => None,
        }
    }
}

/// Where removed bodies wait, relative to their initial positions (m).
pub const PARK_OFFSET: Vec3 = Vec3::new(1000.0, 0.0, 0.0);

/// A point carried by up to four particles, `p = Σ cᵢ xᵢ` with `Σ cᵢ = 1` (Jakobsen §5): a
/// corner of a box embedded in a tetrahedron, a point on a stick. It collides with the world
/// colliders like a particle, and its corrections are spread over the particles by their weights.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddedPoint {
    /// The particles (the first `count` are used).
    pub particles: [usize; 4],
    /// The affine weights `cᵢ` (sum 1; may be negative for points outside the particles' hull).
    pub weights: [f64; 4],
    /// How many particles carry it (1 to 4).
    pub count: usize,
}

impl EmbeddedPoint {
    /// The point's position for particle positions `x`.
    pub fn position(&self, x: &[Vec3]) -> Vec3 {
        (0..self.count).map(|k| x[self.particles[k]] * self.weights[k]).sum()
    }
}

/// A complete scene: what is simulated, independent of any solver.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Name, used in file names and CSV columns.
    pub name: String,
    /// Gravity (m/s²), default `[0, −9.81, 0]`.
    pub gravity: Vec3,
    /// Verlet drag in [0, 1): the update is `x' = x + (1 − damping)(x − x*) + a·h²`. Applied per
    /// (sub)step. Default 0.
    pub damping: f64,
    /// Frame step (s), default 1/60.
    pub dt: f64,
    /// The particles.
    pub particles: Vec<Particle>,
    /// The constraints.
    pub constraints: Vec<Constraint>,
    /// Half-space colliders.
    pub planes: Vec<Plane>,
    /// Sphere colliders (particles stay outside).
    pub spheres: Vec<Sphere>,
    /// The optional box particles stay inside.
    pub bounds: Option<BoxCollider>,
    /// Solid blocks particles stay outside of.
    pub blocks: Vec<Block>,
    /// Points carried by particles that collide with the world colliders.
    pub embedded: Vec<EmbeddedPoint>,
    /// Box bodies (tetrahedra of particles) that collide with each other.
    pub bodies: Vec<crate::bodies::BoxBody>,
    /// Bodies that leave the scene during a run.
    pub removals: Vec<Removal>,
    /// 6-DoF rigid bodies ([`crate::rigid`]); they collide with each other and with the world
    /// colliders, not with particles.
    pub rigid: Vec<crate::rigid::RigidBody>,
    /// Joints between rigid bodies, or between a rigid body and the world.
    pub joints: Vec<crate::rigid::Joint>,
}

impl Scene {
    /// An empty scene with the documented defaults.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            gravity: Vec3::new(0.0, -9.81, 0.0),
            damping: 0.0,
            dt: 1.0 / 60.0,
            particles: Vec::new(),
            constraints: Vec::new(),
            planes: Vec::new(),
            spheres: Vec::new(),
            bounds: None,
            blocks: Vec::new(),
            embedded: Vec::new(),
            bodies: Vec::new(),
            removals: Vec::new(),
            rigid: Vec::new(),
            joints: Vec::new(),
        }
    }

    /// Whether each particle belongs to a body removed at or before `time`; `None` when no
    /// body has been removed by then.
    pub fn removed_particles(&self, time: f64) -> Option<Vec<bool>> {
        let mut gone: Option<Vec<bool>> = None;
        for body in self.removals.iter().filter_map(|r| r.box_body_by(time)) {
            let g = gone.get_or_insert_with(|| vec![false; self.particles.len()]);
            for &i in &self.bodies[body].particles {
                g[i] = true;
            }
        }
        gone
    }

    /// Whether rigid body `k` has left the scene at or before `time`.
    pub fn rigid_removed(&self, k: usize, time: f64) -> bool {
        self.removals.iter().any(|r| r.rigid_body_by(time) == Some(k))
    }

    /// Whether joint `j` still holds at `time`: a joint leaves the scene with either of its
    /// bodies (every family and the metrics skip it from then on).
    pub fn joint_active(&self, j: usize, time: f64) -> bool {
        let joint = &self.joints[j];
        self.removals.is_empty()
            || !(self.rigid_removed(joint.a, time) || joint.b.is_some_and(|b| self.rigid_removed(b, time)))
    }

    /// Adds a particle and returns its index.
    pub fn add(&mut self, p: Particle) -> usize {
        self.particles.push(p);
        self.particles.len() - 1
    }

    /// Adds an equality stick whose rest length is the current distance.
    pub fn stick(&mut self, a: usize, b: usize) -> &mut Constraint {
        let rest = (self.particles[b].x - self.particles[a].x).norm();
        self.constraints.push(Constraint::stick(a, b, rest));
        self.constraints.last_mut().expect("just pushed")
    }

    /// The inverse masses, in particle order.
    pub fn inverse_masses(&self) -> Vec<f64> {
        self.particles.iter().map(|p| p.w).collect()
    }

    /// Whether the scene has any world collider (plane, sphere, box or block).
    pub fn has_colliders(&self) -> bool {
        !self.planes.is_empty() || !self.spheres.is_empty() || self.bounds.is_some() || !self.blocks.is_empty()
    }

    /// Whether the scene has 6-DoF rigid bodies.
    pub fn has_rigid(&self) -> bool {
        !self.rigid.is_empty()
    }

    /// The initial state for a step of `h` seconds: `x* = x − v·h`, so that the Verlet velocity
    /// `(x − x*)/h` equals the scene's initial velocity.
    pub fn initial_state(&self, h: f64) -> State {
        State {
            x: self.particles.iter().map(|p| p.x).collect(),
            x_prev: self.particles.iter().map(|p| p.x - p.v * h).collect(),
            rigid: self.rigid.iter().map(|b| b.initial_state()).collect(),
            time: 0.0,
            step: 0,
        }
    }
}

/// The largest coordinate a scene may place anything at (m): beyond it, `f64` spacing exceeds a
/// micrometre and the energies overflow long before.
pub const MAX_COORDINATE: f64 = 1e6;
/// The largest speed (m/s) and gravity (m/s²) a scene may start with.
pub const MAX_SPEED: f64 = 1e4;
/// The largest angular speed a rigid body may start with (rad/s).
pub const MAX_SPIN: f64 = 1e4;
/// The masses a particle or rigid body may have (kg).
pub const MASS: (f64, f64) = (1e-9, 1e9);
/// The sizes a rigid body may have (half extents, radii, half heights; m).
pub const SIZE: (f64, f64) = (1e-6, 1e6);
/// Every range [`Scene::validate`] holds a scene to, for the documentation: name, range, unit.
pub const RANGES: [(&str, (f64, f64), &str); 5] = [
    ("coordinate", (-MAX_COORDINATE, MAX_COORDINATE), "m"),
    ("speed, and gravity", (0.0, MAX_SPEED), "m/s, m/s²"),
    ("angular speed", (0.0, MAX_SPIN), "rad/s"),
    ("mass", MASS, "kg"),
    ("size of a rigid body", SIZE, "m"),
];

/// A value that is not allowed: which field, and what is wrong with it. The one error type of
/// scene invariants ([`ModelError`]) and solver settings (`solverlab_solvers::ConfigError`).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// The field path, as in the file: `constraint[3].b`, `omega`.
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

impl FieldError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: problem.into() }
    }
}

/// A scene invariant that does not hold.
pub type ModelError = FieldError;

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for FieldError {}

/// The moving part of a simulation: Jakobsen's `x` and `x*`.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Current positions (m).
    pub x: Vec<Vec3>,
    /// Previous positions (m); `(x − x*)/h` is the velocity.
    pub x_prev: Vec<Vec3>,
    /// The rigid bodies' poses and velocities, in [`Scene::rigid`] order.
    pub rigid: Vec<crate::rigid::RigidState>,
    /// Simulated time (s) at `x`.
    pub time: f64,
    /// Steps (substeps) taken so far.
    pub step: u64,
}

impl State {
    /// Whether every coordinate is finite.
    pub fn is_finite(&self) -> bool {
        self.x.iter().chain(self.x_prev.iter()).all(|v| v.iter().all(|c| c.is_finite()))
            && self.rigid.iter().all(|r| r.is_finite())
    }
}
